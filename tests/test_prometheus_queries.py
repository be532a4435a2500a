"""Every query of every profile's dashboards against a real Prometheus 2.x holding demo data (issue 12,
item 5): the same checks as the VictoriaMetrics tests, so a query that only MetricsQL accepts, or that
only VictoriaMetrics' evaluation answers, fails here.

Each profile's healthy scenario is backfilled with promtool (``tests/prometheus.py``) into its own
10-minute window. Every target runs as Grafana would (instant and/or range, through
``dashgen.live.query_check``); no target errors, none is empty unless the demo has no series of a
metric it reads, the per-GPU window tables have one row per GPU, the cache-evidence tables one row
per node, and the healthy reason codes read ok on every node and layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from dashgen_panels.first_screen import HEALTHY_EMPTY
from dashgen_queries import nodata
from demo_queries import merged_rows, panels_by_row
from prometheus import DemoPrometheus, start_demo

from dashgen.build import build_profile
from dashgen.deployment.model import TEXT
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_text, globals_for, variable_values
from dashgen.live.query_check import DashboardInput, PanelCheck, plan, run_checks
from dashgen.live.selectors import metric_names
from dashgen.render.ids import panel_id

PROFILES = [p.name for p in load_profiles()]
REFERENCE = "long-context-64"  # the profile the VictoriaMetrics tests check rows and reasons on
Checks = Callable[[str], list[PanelCheck]]


@pytest.fixture(scope="module")
def prometheus_demo() -> Iterator[DemoPrometheus]:
    demo = start_demo()
    try:
        yield demo
    finally:
        demo.stop()


@pytest.fixture(scope="module")
def dashboard_checks(prometheus_demo: DemoPrometheus) -> Checks:
    """Every target of a profile's built dashboards, run once per profile (as ``validate-queries`` does)."""
    done: dict[str, list[PanelCheck]] = {}

    def checks(name: str) -> list[PanelCheck]:
        if name not in done:
            window = prometheus_demo.windows[name]
            span = Window(window.end, window.hours * 3600)
            ds = Datasource(prometheus_demo.url, timeout=60)
            inputs = [
                DashboardInput(f"{b.profile}/{b.uid}", b.document, window.profile)
                for b in build_profile(window.profile)
            ]

            def label_values(match: str, label: str) -> list[str]:
                return ds.label_values(label, [match], span.start, span.end)

            done[name] = run_checks(ds, plan(inputs, span, label_values=label_values), span, workers=4, timeout=60)
        return done[name]

    return checks


@pytest.mark.parametrize("name", PROFILES)
def test_every_query_runs_on_prometheus_without_error(dashboard_checks: Checks, name: str) -> None:
    checks = dashboard_checks(name)
    assert sum(len(panel.targets) for panel in checks) > 0
    errors = [
        f"{panel.dashboard} / {panel.title!r} / {target.ref_id} {target.kind}: HTTP {target.error_status}: "
        f"{target.error_message}\n    {target.query}"
        for panel in checks
        for target in panel.targets
        if target.status == "error"
    ]
    assert not errors, f"{len(errors)} queries fail on Prometheus:\n" + "\n".join(errors)


@pytest.mark.parametrize("name", PROFILES)
def test_no_query_goes_empty_on_prometheus_where_the_demo_has_data(
    prometheus_demo: DemoPrometheus, dashboard_checks: Checks, name: str
) -> None:
    """Prometheus' own evaluation (rate needs two samples in its window, no look-back before it) must
    not turn healthy data into No Data; a target may be empty only when it reads a metric the demo
    has no series of for this profile."""
    held = prometheus_demo.names[name]
    empty = [
        (panel.title, target.ref_id, target.kind, [r.text for r in target.reasons], target.query)
        for panel in dashboard_checks(name)
        for target in panel.targets
        if target.status == "empty"
        and set(metric_names(target.query)) <= held
        and (panel.title, target.ref_id) not in HEALTHY_EMPTY
    ]  # nothing firing, nothing missing
    assert not empty, f"healthy demo data leaves targets empty on Prometheus: {empty}"


def _group_tables(profile: Profile, title: str) -> tuple[dict, list[dict]]:
    (built,) = build_profile(profile)
    return built.document, [
        raw for row, raw in panels_by_row(built.document) if row == title and raw.get("type") == "table"
    ]


@pytest.mark.parametrize("name", PROFILES)
def test_per_gpu_window_tables_one_row_per_gpu_on_prometheus(prometheus_demo: DemoPrometheus, name: str) -> None:
    window = prometheus_demo.windows[name]
    profile = window.profile
    document, tables = _group_tables(profile, "Per-GPU window statistics")
    assert tables, f"{name}: no 'Per-GPU window statistics' tables"
    ds = Datasource(prometheus_demo.url, timeout=60)
    expected = {(node, str(gpu)) for node in profile.node_names for gpu in range(profile.gpus_per_node)}
    assert len(expected) == profile.total_gpus
    for table in tables:
        rows = merged_rows(ds, document, table, window, (profile.label("node"), profile.label("gpu")))
        assert rows == expected, f"{table['title']}: {len(rows)} rows, expected {len(expected)}"


@pytest.mark.parametrize("name", PROFILES)
def test_cache_evidence_tables_one_row_per_node_on_prometheus(prometheus_demo: DemoPrometheus, name: str) -> None:
    window = prometheus_demo.windows[name]
    profile = window.profile
    (built,) = build_profile(profile)
    groups = [g for g in built.spec.groups if g.title == "Cache evidence"]
    if not profile.has_kind(TEXT):  # S25: a video pool keeps no KV prefix cache, so it has no cache evidence
        assert groups == [], name
        return
    (group,) = groups
    # Domain layout 1: (a) occupancy, (b) reuse and physical reads/writes, (c) missing-data reasons.
    keys = [panel.key for panel in group.panels if panel.kind == "table"][:3]
    assert len(keys) == 3, keys
    by_id = {raw.get("id"): raw for _row, raw in panels_by_row(built.document)}
    ds = Datasource(prometheus_demo.url, timeout=60)
    for key in keys:
        rows = merged_rows(ds, built.document, by_id[panel_id(key)], window, (profile.label("node"),))
        assert {row[0] for row in rows} == set(profile.node_names), key
        assert len(rows) == profile.nodes, key


def test_healthy_reason_codes_read_ok_on_every_node_on_prometheus(prometheus_demo: DemoPrometheus) -> None:
    """The dashboards' No Data reason queries (queries/nodata.py) on healthy data at real scrape
    intervals: one row per node for every layer, every code 0 (ok)."""
    window = prometheus_demo.windows[REFERENCE]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 60),
    }
    ds = Datasource(prometheus_demo.url, timeout=60)
    wrong = {}
    for layer in nodata.layers(profile):
        result = ds.query(expand_text(nodata.reason_code(profile, layer), values), window.end).result
        per_node = {item["metric"][profile.label("node")]: int(float(item["value"][1])) for item in result}
        assert sorted(per_node) == sorted(profile.node_names), f"{layer.key}: one row per node"
        wrong.update({(node, layer.key): code for node, code in per_node.items() if code != nodata.OK})
    assert not wrong, f"(node, layer): code on healthy data {wrong}"


def test_cost_reads_prometheus_stats_and_its_gate_exits_1_over_budget(prometheus_demo: DemoPrometheus):
    """``dashgen cost`` on Prometheus (issue 19): samples scanned are ``stats=all``'s totalQueryableSamples
    (a window count's samples, exactly), Prometheus reports no series count (None), and a panel budget below
    the heaviest panel exits 1 naming it."""
    import json

    from click.testing import CliRunner

    from dashgen.cli.app import main
    from dashgen.live.cost import stats_from_answer

    window = prometheus_demo.windows[REFERENCE]
    profile = window.profile
    ds = Datasource(prometheus_demo.url, timeout=60)
    seconds = int(window.hours * 3600)
    result, answer = ds.query_with_stats(
        f'count_over_time(up{{cluster="{profile.deployment}"}}[{seconds}s])', window.end - seconds, window.end
    )
    stats = stats_from_answer(answer)
    assert stats.origin == "prometheus" and stats.series_fetched is None
    assert stats.samples_scanned == sum(int(float(item["value"][1])) for item in result.result) > 0

    args = [
        "cost",
        "--datasource-url",
        prometheus_demo.url,
        "--profile",
        REFERENCE,
        "--at",
        str(window.end),
        "--window",
        f"{seconds}s",
        "--format",
        "json",
    ]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output[-2000:]
    (data,) = json.loads(first.output)["results"]
    assert data["dashboards"][0]["samples_scanned"] > 0 and data["dashboards"][0]["series_fetched"] is None
    heaviest = max(data["panels"], key=lambda p: p["samples_scanned"] or 0)
    gated = CliRunner().invoke(main, [*args, "--budget-samples", str(heaviest["samples_scanned"] - 1)])
    assert gated.exit_code == 1
    (over,) = json.loads(gated.output)["results"]
    assert any(f"panel {heaviest['title']!r}: samples scanned" in m for m in over["over_budget"])
