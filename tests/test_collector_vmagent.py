"""S23 on a real vmagent: the Collector group's queries and the collector alerts read vmagent's own series,
the coverage reads the profile's expected count, and a stopped vmagent turns its node *collector silent*.

A real ``vmagent`` (Debian package victoria-metrics) runs on 127.0.0.1, scrapes itself and a tiny local
exporter (``gpm_sample_valid`` of two GPUs: the only thing not from vmagent, and it is the exporter's own
data), relabels both targets with long-context-64's ``node`` and ``job`` labels, adds the deployment label
with ``-remoteWrite.label`` and remote-writes into the session's VictoriaMetrics. A second remote-write URL
nobody listens on makes vmagent's send queue really fill. No vmagent metric is mocked. The profile is
long-context-64 with its own deployment value (no demo window of the session store can leak in), the
collector's scrape interval at 1 s and a store without offset (the test store's flags), so the silent bound
is 3 s. Every wait polls with a bounded deadline; nothing asserts on time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from vmagent import Exporter, start_vmagent

from dashgen.build import build_profile
from dashgen.demo.series import inventory_series
from dashgen.demo.vmlauncher import free_port
from dashgen.deployment.model import Store
from dashgen.deployment.profile import Profile, load_profile
from dashgen.deployment.targets import expected_targets, expected_total
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_target, variable_values
from dashgen.rules import rule_groups

ROOT = Path(__file__).resolve().parent.parent
BASE = load_profile(ROOT / "profiles" / "long-context-64.toml")
assert BASE.collector is not None
GPM = BASE.source("gpm")
PROFILE: Profile = replace(
    BASE,
    deployment="lc64-vmagent-test",
    store=Store(),
    collector=replace(BASE.collector, scrape_interval="1s", scrape_interval_seconds=1.0),
    # the GPM source as this stack samples it: vmagent scrapes the exporter every second into a store that keeps
    # every sample (what the profile loads as with such a store). At the production store's 30 s the GPM panel
    # steps by 30 s, aligned: it had no point after vmagent's first scrape until the next 30 s boundary (0-30 s).
    sources={
        **BASE.sources,
        "gpm": replace(GPM, sample_interval=GPM.scrape_interval, sample_interval_seconds=GPM.scrape_interval_seconds),
    },
)
# The same deployment with bounds vmagent really crosses: 1 MiB of memory, 1 KiB of send queue.
TIGHT: Profile = replace(
    PROFILE, collector=replace(PROFILE.collector, memory_limit_bytes=1 << 20, send_queue_limit_bytes=1024)
)
NODE = PROFILE.node_names[0]
EXPORTED = (
    '# TYPE gpm_sample_valid gauge\ngpm_sample_valid{gpu="0",uuid="GPU-0"} 1\n'
    'gpm_sample_valid{gpu="1",uuid="GPU-1"} 1\n'
)
DEADLINE = 90.0
WINDOW = 300.0


@pytest.fixture(scope="module")
def stack(victoriametrics):
    exporter = Exporter(EXPORTED)
    dead = f"http://127.0.0.1:{free_port()}/api/v1/write"  # nobody listens: its queue fills for real
    agent = start_vmagent(PROFILE, NODE, exporter.port, [f"{victoriametrics.url}/api/v1/write", dead])
    datasource = Datasource(victoriametrics.url, timeout=30)
    # The node inventory, as vmalert or Prometheus records it from the rule file (the matrix joins on it):
    # every profile node of this deployment, from before the test until after it.
    now = time.time()
    datasource.import_series(
        inventory_series(PROFILE, Topology(PROFILE), now - 2 * WINDOW, now + 2 * DEADLINE + WINDOW + 3600)
    )
    datasource.flush()
    try:
        yield datasource, agent
    finally:
        agent.cleanup()
        exporter.stop()


def poll(datasource: Datasource, check: Callable[[], str | None], deadline: float = DEADLINE) -> None:
    """Call ``check`` until it returns None (done) or the deadline passes; then fail with its last word. Each look
    first makes what vmagent wrote searchable (``force_flush``): the store shows new samples only seconds later by
    itself (every panel had data ~10 s after vmagent's start, 2-3 s with the flush)."""
    end = time.monotonic() + deadline
    problem = "not checked"
    while time.monotonic() < end:
        datasource.flush()
        problem = check()
        if problem is None:
            return
        time.sleep(0.1)
    pytest.fail(f"within {deadline:g} s: {problem}")


def panels_of(row: str, profile: Profile = PROFILE) -> tuple[list[dict], dict]:
    """The panels under the row titled ``row`` (collapsed or not) of the profile's dashboard, and the dashboard."""
    document = build_profile(profile)[0].document
    panels = [
        site.raw
        for site in iter_panels(document)
        if (site.row == row or site.section == row) and site.raw.get("type") != "row"
    ]
    return panels, document


def run_panel(datasource: Datasource, document: dict, panel: dict) -> dict[str, int]:
    """refId -> series returned, for every query Grafana would send for the panel (window: the last 5 min)."""
    now = time.time()
    values = variable_values(
        document["templating"]["list"], lambda match, label: datasource.label_values(label, [match], now - WINDOW, now)
    )
    counts: dict[str, int] = {}
    for target in panel.get("targets") or []:
        for query in expand_target(panel, target, values, Window(now, WINDOW), scrape_seconds=1.0):
            if query.kind == "instant":
                result = datasource.query(query.expr, query.end)
            else:
                result = datasource.query_range(query.expr, query.start, query.end, query.step)
            counts[f"{query.ref_id} {query.kind}"] = result.series
    return counts


def instant(datasource: Datasource, expr: str) -> list[dict]:
    return datasource.query(expr, time.time()).result


def alert_expr(profile: Profile, name: str) -> str:
    return next(rule.expr for group in rule_groups(profile) for rule in group.alerts() if rule.alert == name)


def test_s23_every_collector_panel_returns_vmagents_own_series(stack) -> None:
    datasource, _agent = stack
    panels, document = panels_of("Collector (vmagent)")
    assert len(panels) == 11, [p["title"] for p in panels]

    def check() -> str | None:
        empty = {
            panel["title"]: counts
            for panel in panels
            if not all((counts := run_panel(datasource, document, panel)).values()) or not counts
        }
        return f"panels without data: {empty}" if empty else None

    poll(datasource, check)
    nodes = {s["metric"].get("node") for s in instant(datasource, 'up{cluster="lc64-vmagent-test"}')}
    assert nodes == {NODE}


def test_s23_coverage_reads_the_profiles_expected_count(stack) -> None:
    datasource, _agent = stack
    assert expected_total(PROFILE) == 45
    # No rule evaluator runs in this stack: the counts as the now group's rule records them (queries.now_records)
    from dashgen_queries import now_records
    from dashgen_queries import vmagent as va

    up_by_job = now_records.record(PROFILE, now_records.TARGETS_UP).rule

    def check() -> str | None:
        up = instant(datasource, f"sum({up_by_job})")
        return None if up and up[0]["value"][1] == "2" else f"targets up: {up}"

    poll(datasource, check)
    expected = instant(datasource, va.expected_total_expr(PROFILE))
    assert [float(s["value"][1]) for s in expected] == [45.0]
    per_job = va.missing_by_job(PROFILE, up=up_by_job)
    missing = {s["metric"]["job"]: float(s["value"][1]) for s in instant(datasource, per_job)}
    want = {
        entry.job: float(entry.count - (1 if entry.job in ("vmagent", "gpm") else 0))
        for entry in expected_targets(PROFILE)
    }
    assert missing == want
    fired = {
        s["metric"]["job"]: float(s["value"][1])
        for s in instant(datasource, alert_expr(PROFILE, "TargetCoverageBelowExpected"))
    }
    assert fired == want


def test_s23_collector_alerts_read_vmagents_series_and_fire_past_their_bounds(stack) -> None:
    datasource, _agent = stack

    def nodes(expr: str) -> set[str]:
        return {s["metric"].get("node") for s in instant(datasource, expr)}

    def tight_fire() -> str | None:
        fired = {
            name: nodes(alert_expr(TIGHT, name)) for name in ("CollectorMemoryNearLimit", "CollectorSendQueueNearBound")
        }
        return None if all(v == {NODE} for v in fired.values()) else f"with 1 MiB / 1 KiB bounds: {fired}"

    poll(datasource, tight_fire)
    # At the profile's real bounds (512 MiB, 1 GB) a fresh vmagent is far below both, and it dropped nothing.
    for name in ("CollectorMemoryNearLimit", "CollectorSendQueueNearBound", "CollectorDroppingSamples"):
        assert nodes(alert_expr(PROFILE, name)) == set(), name
    dropping = alert_expr(PROFILE, "CollectorDroppingSamples").replace(" > 0)", " >= 0)")
    assert nodes(dropping) == {NODE}  # the same expression without its threshold: vmagent's own counters
    silent = nodes(alert_expr(PROFILE, "CollectorSilent"))
    assert silent == set(PROFILE.node_names) - {NODE}


def _matrix_collector(datasource: Datasource, at: float | None = None) -> dict[str, float]:
    """The Now row's verdicts of the Collector layer (its lines of the one query; a node not listed is ok) at
    ``at`` (default: now). No rule evaluator runs in this stack: the verdicts as the now group's rule computes them
    (what the matrix reads recorded, ``queries.now_records``)."""
    from dashgen_queries.now import not_ok_cells

    query = not_ok_cells(PROFILE).replace("$node", ".*")
    column = "Collector (vmagent)"
    result = datasource.query(query, time.time() if at is None else at).result
    return {s["metric"]["node"]: float(s["value"][1]) for s in result if s["metric"].get("layer") == column}


def test_s23_a_stopped_vmagent_turns_its_node_collector_silent(stack) -> None:
    """The node's vmagent stops: CollectorSilent fires (its own bound, a few scrape intervals), and the matrix's
    Collector column turns silent once the Now row's one staleness bound has passed since the last sample, not
    before (S32: the cells and the collector read one bound). The matrix is read at those times directly."""
    from dashgen_panels.first_screen import staleness_seconds
    from dashgen_queries.vmagent import SILENT

    datasource, agent = stack

    def serving() -> str | None:
        cells = _matrix_collector(datasource)
        return None if NODE not in cells else f"collector cells: {cells}"

    poll(datasource, serving)
    assert {n for n, v in _matrix_collector(datasource).items() if v == SILENT} == set(PROFILE.node_names) - {NODE}
    agent.stop()
    stopped = time.time()

    def silent() -> str | None:
        alert = {s["metric"]["node"] for s in instant(datasource, alert_expr(PROFILE, "CollectorSilent"))}
        return None if NODE in alert else f"after the stop: CollectorSilent {sorted(alert)}"

    poll(datasource, silent)
    bound = staleness_seconds(PROFILE)
    assert bound > 60
    assert NODE not in _matrix_collector(datasource, stopped + bound - 30)  # its last sample is inside the bound
    after = _matrix_collector(datasource, stopped + bound + 5)
    assert after.get(NODE) == SILENT and set(after.values()) == {SILENT}
