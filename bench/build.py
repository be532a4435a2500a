"""Build benchmark: ``dashgen build`` of every profile (whole process) against a process that renders the same
grafanalib objects with grafanalib's own encoder and nothing else; plus in-process stage timings."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.harness import DASHGEN, PYTHON, ROOT, BenchResult, Row, checked, interleaved, run_child

REPEAT = 4
STAGES = (
    "load profiles",
    "spec building",
    "grafanalib objects",
    "grafanalib encode",
    "normalise",
    "validate",
    "query syntax check",
    "canonical encode + sha",
)


def _stage_times() -> dict[str, float]:
    """One in-process pass over every profile, timed stage by stage (what build_profile does, split up)."""
    from grafanalib._gen import DashboardEncoder

    from dashgen.build import check_queries
    from dashgen.dashboard import dashboard_specs
    from dashgen.deployment.profile import load_profiles, profiles_dir
    from dashgen.render.canonical import content_sha, encode
    from dashgen.render.document import to_grafanalib
    from dashgen.render.normalise import normalise_dashboard
    from dashgen.render.validate import validate_dashboard

    spent = dict.fromkeys(STAGES, 0.0)

    def timed(stage: str, function, *args):
        began = time.perf_counter()
        value = function(*args)
        spent[stage] += time.perf_counter() - began
        return value

    profiles = timed("load profiles", load_profiles, [], profiles_dir())
    for profile in profiles:
        for spec in timed("spec building", dashboard_specs, profile):
            dashboard = timed("grafanalib objects", to_grafanalib, spec)
            raw = timed(
                "grafanalib encode", lambda d: json.loads(json.dumps(d.to_json_data(), cls=DashboardEncoder)), dashboard
            )
            document = timed("normalise", normalise_dashboard, raw, spec.schema_version)
            problems = timed("validate", validate_dashboard, document, spec.uid)
            assert not problems, problems
            problems = timed("query syntax check", check_queries, document, profile, spec.uid)
            assert not problems, problems
            timed("canonical encode + sha", lambda d: (encode(d), content_sha(d)), document)
    return spent


def run(repeat: int = REPEAT) -> BenchResult:
    result = BenchResult("build")
    work = Path(tempfile.mkdtemp(prefix="dashgen-bench-build-"))
    try:

        def dashgen_build() -> float:
            out = work / "dashgen"
            shutil.rmtree(out, ignore_errors=True)
            return checked(run_child([DASHGEN, "build", "--out", str(out)]), "dashgen build").seconds

        def baseline() -> float:
            out = work / "grafanalib"
            shutil.rmtree(out, ignore_errors=True)
            return checked(run_child([PYTHON, "-m", "bench.baseline_grafanalib", str(out)]), "baseline").seconds

        def import_only() -> float:
            return checked(run_child([PYTHON, "-c", "import dashgen.cli"]), "import dashgen.cli").seconds

        def cold_build() -> float:
            """The build with an empty validator cache (a first run, or a fresh CI machine)."""
            out, cache = work / "cold", work / "cache"
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            env = {**os.environ, "DASHGEN_CACHE_DIR": str(cache)}
            return checked(run_child([DASHGEN, "build", "--out", str(out)], env=env), "cold build").seconds

        def version() -> float:
            return checked(run_child([DASHGEN, "--version"]), "dashgen --version").seconds

        def interpreter() -> float:
            return checked(run_child([PYTHON, "-c", "pass"]), "python -c pass").seconds

        runs = interleaved(
            [
                ("dashgen build", dashgen_build),
                ("grafanalib only", baseline),
                ("import dashgen.cli", import_only),
                ("cold", cold_build),
                ("version", version),
                ("interpreter", interpreter),
            ],
            repeat,
        )
        files = sorted((work / "dashgen").rglob("*.json"))
        panels = sum(_count_panels(json.loads(f.read_text())) for f in files)
        result.add(
            Row(
                "build",
                "grafanalib only",
                "s",
                runs["grafanalib only"],
                note="process: specs -> to_grafanalib -> write_dashboard (baseline)",
            )
        )
        result.add(
            Row(
                "build",
                "dashgen build",
                "s",
                runs["dashgen build"],
                baseline="grafanalib only",
                note=f"process: {len(files)} dashboards, {panels} panels",
            )
        )
        result.add(
            Row(
                "build",
                "dashgen build (empty validator cache)",
                "s",
                runs["cold"],
                baseline="grafanalib only",
                note="DASHGEN_CACHE_DIR emptied before each run: the schema validator compiled (~40 ms)",
            )
        )
        result.add(
            Row(
                "build",
                "import dashgen.cli",
                "s",
                runs["import dashgen.cli"],
                baseline="grafanalib only",
                note="process start + imports of every command family, no work",
            )
        )
        result.add(Row("build", "python -c pass", "s", runs["interpreter"], note="interpreter start (baseline)"))
        result.add(
            Row(
                "build",
                "dashgen --version",
                "s",
                runs["version"],
                baseline="python -c pass",
                note="process wall; target < 0.3 s",
            )
        )

        stage_runs: dict[str, list[float]] = {stage: [] for stage in STAGES}
        _stage_times()  # warm-up: imports, schema compilation, caches
        for _ in range(repeat):
            for stage, seconds in _stage_times().items():
                stage_runs[stage].append(seconds)
        totals = [sum(stage_runs[s][i] for s in STAGES) for i in range(repeat)]
        result.add(Row("build", "in-process: all stages", "s", totals, note="warm, 4 profiles"))
        for stage in STAGES:
            result.add(Row("build", f"  stage: {stage}", "s", stage_runs[stage], baseline="in-process: all stages"))
        result.details = {
            "dashboards": len(files),
            "panels": panels,
            "stage_share": {s: round(statistics.median(stage_runs[s]) / statistics.median(totals), 3) for s in STAGES},
            "note": "ratios of stage rows are shares of the in-process total",
            "cwd": str(ROOT),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.resolve_ratios()
    return result


def _count_panels(document: dict) -> int:
    count = 0
    for panel in document.get("panels", []):
        count += panel.get("type") != "row"
        count += sum(1 for child in panel.get("panels") or [] if child.get("type") != "row")
    return count
