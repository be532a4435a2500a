"""Publish benchmark: 50 dashboards against the Grafana stand-in with 20 ms injected latency per request.

The stand-in runs in this process (a thread); the release runs in a child process (``--worker``), so client
and server do not share a GIL and the child's own peak RSS is the publish's memory. The child drives
``dashgen.publish`` directly — export + backup, ``plan_release``, ``execute_plan`` — in three phases
(create all, republish unchanged, publish a changed title on all), pausing after each one so this process
can read the stand-in's request log. Wall time is compared with the floor the latency sets: every request
in sequence (today's pipeline), and the critical path with unbounded concurrency.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import PYTHON, ROOT, BenchResult, Row, peak_rss_mib

DASHBOARDS = 50
LATENCY = 0.02
REPEAT = 2
PHASES = ("create", "unchanged", "changed")
TOKEN = "glsa_bench_0123456789abcdef0123456789"
# Releases measured in this process, kept for bench.memory (a second run of 50 dashboards costs ~50 s).
LAST_RELEASES: list[dict[str, Any]] = []


# -- the child: one release per phase --------------------------------------------------------------


def _targets(revision: int):
    from dashgen.build import build_all
    from dashgen.deployment.profile import load_profiles, profiles_dir
    from dashgen.publish.plan import PublishTarget
    from dashgen.render.canonical import content_sha
    from dashgen.render.ids import panel_id

    built = build_all(load_profiles([], profiles_dir()))
    targets = []
    for index in range(DASHBOARDS):
        source = built[index % len(built)]
        document = copy.deepcopy(source.document)
        document["uid"] = f"dg-bench-{index:02d}"
        document["title"] = f"{document['title']} (bench {index:02d}{f', rev {revision}' if revision else ''})"
        keys = {panel_id(p.key): p.key for p in source.spec.panels()}
        targets.append(PublishTarget(source.profile, document["uid"], document, content_sha(document), keys))
    return targets


def worker(url: str, work: Path) -> None:
    """Run the three phases; after each, print one JSON line and wait for a line on stdin."""
    from dashgen.cli.publish import export_live
    from dashgen.grafana.client import GrafanaClient
    from dashgen.publish import ledger as ledger_file
    from dashgen.publish.execute import execute_plan, now_stamp
    from dashgen.publish.plan import plan_release

    targets = {0: _targets(0), 1: _targets(1)}
    ledger, backups = work / "ledger.jsonl", work / "backups"
    with GrafanaClient(url, token=TOKEN, read_timeout=10) as client:
        for phase in PHASES:
            chosen = targets[1 if phase == "changed" else 0]
            began = time.perf_counter()
            live = export_live(client, [t.uid for t in chosen], backups, now_stamp())
            exported = time.perf_counter()
            plan = plan_release(chosen, live, ledger_file.read(ledger))
            planned = time.perf_counter()
            outcomes = execute_plan(plan, client, ledger_path=ledger, backup_dir=backups, git_commit="bench",
                                    grafana_url=url)
            done = time.perf_counter()
            actions = sorted({d.action for d in plan.dashboards})
            results = sorted({o.outcome for o in outcomes})
            print(json.dumps({"phase": phase, "wall": done - began, "export": exported - began,
                              "plan": planned - exported, "execute": done - planned, "actions": actions,
                              "outcomes": results,
                              "max_rss_mib": peak_rss_mib()}), flush=True)
            sys.stdin.readline()


# -- the parent --------------------------------------------------------------------------------------


def _one_release(standin_factory) -> dict[str, Any]:
    standin = standin_factory()
    standin.start()
    work = Path(tempfile.mkdtemp(prefix="dashgen-bench-publish-"))
    phases: dict[str, Any] = {}
    try:
        process = subprocess.Popen([PYTHON, "-m", "bench.publish", "--worker", standin.url, str(work)], cwd=ROOT,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = 0
        for _ in PHASES:
            line = process.stdout.readline()
            if not line:
                process.wait(timeout=30)
                raise RuntimeError(f"publish worker died: {process.stderr.read()[-2000:]}")
            report = json.loads(line)
            log = standin.request_log[seen:]
            seen = len(standin.request_log)
            report["requests"] = len(log)
            report["by_kind"] = _kinds(log)
            phases[report["phase"]] = report
            process.stdin.write("\n")
            process.stdin.flush()
        process.stdin.close()
        process.wait(timeout=60)
        process.stdout.close()
        process.stderr.close()
        if process.returncode != 0:
            raise RuntimeError(f"publish worker exited {process.returncode}")
        phases["max_rss_mib"] = max(phases[phase]["max_rss_mib"] for phase in PHASES)
    finally:
        standin.stop()
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return phases


def _kinds(log) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for entry in log:
        path = entry.path.split("?")[0]
        kind = f"{entry.method} {'/api/dashboards/uid/*' if path.startswith('/api/dashboards/uid/') else path}"
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))


EXPECTED = {"create": (["create"], ["published"]), "unchanged": (["unchanged"], ["unchanged"]),
            "changed": (["update"], ["published"])}
# Requests one dashboard needs in sequence once the export is done: POST + read-back GET when it writes.
WRITE_CHAIN = {"create": 2, "unchanged": 0, "changed": 2}


def releases(repeat: int) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from standin import GrafanaStandin
    finally:
        sys.path.remove(str(ROOT / "tests"))
    done = [_one_release(lambda: GrafanaStandin(mode="grafana12", token=TOKEN, latency=LATENCY))
            for _ in range(repeat)]
    LAST_RELEASES[:] = done
    return done


def run(repeat: int = REPEAT, jobs: tuple[int, ...] = (8,)) -> BenchResult:
    result = BenchResult("publish")
    releases_ = releases(repeat)
    for phase in PHASES:
        reports = [r[phase] for r in releases_]
        for report in reports:
            if (report["actions"], report["outcomes"]) != EXPECTED[phase]:
                raise AssertionError(f"publish {phase}: plan {report['actions']} outcomes {report['outcomes']}")
        requests = reports[0]["requests"]
        per_dashboard = requests / DASHBOARDS
        sequential = requests * LATENCY
        chain = 1 + WRITE_CHAIN[phase]  # export GET, then the write chain
        unbounded = chain * LATENCY
        result.add(Row("publish", f"{phase}: sequential floor", "s", [sequential],
                       note=f"{requests} requests ({per_dashboard:g}/dashboard: "
                            f"{', '.join(f'{k} x{v}' for k, v in reports[0]['by_kind'].items())}) x 20 ms"))
        result.add(Row("publish", f"{phase}: wall (50 dashboards)", "s", [r["wall"] for r in reports],
                       baseline=f"{phase}: sequential floor",
                       note=f"export {_median(reports, 'export'):.2f} s, plan {_median(reports, 'plan'):.2f} s, "
                            f"execute {_median(reports, 'execute'):.2f} s"))
        for n in jobs:
            rounds = math.ceil(DASHBOARDS / n)
            floor = rounds * chain * LATENCY
            result.add(Row("publish", f"{phase}: floor with --jobs {n}", "s", [floor],
                           note=f"not implemented; {rounds} rounds x {chain} requests x 20 ms"))
        result.add(Row("publish", f"{phase}: floor, unbounded concurrency", "s", [unbounded],
                       note=f"critical path {chain} request(s) x 20 ms"))
    result.add(Row("publish", "requests per unchanged dashboard", "requests",
                   [releases_[0]["unchanged"]["requests"] / DASHBOARDS], note="export GET only; no write"))
    result.add(Row("publish", "requests per changed dashboard", "requests",
                   [releases_[0]["changed"]["requests"] / DASHBOARDS], note="export GET + POST + read-back GET"))
    result.details = {
        "dashboards": DASHBOARDS, "latency_s": LATENCY, "standin": "tests/standin GrafanaStandin(grafana12)",
        "phases": {phase: {k: v for k, v in releases_[0][phase].items() if k != "phase"} for phase in PHASES},
        "worker_max_rss_mib": [r["max_rss_mib"] for r in releases_],
    }
    result.resolve_ratios()
    return result


def _median(reports: list[dict[str, Any]], key: str) -> float:
    values = sorted(r[key] for r in reports)
    return values[len(values) // 2]


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], Path(sys.argv[3]))
    else:
        sys.exit("usage: python -m bench.publish --worker URL WORKDIR (run the benchmark with python -m bench)")
