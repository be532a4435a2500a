"""S25 on a real VictoriaMetrics: video-200's demo data (SGLang Diffusion, simulated job by job in
``dashgen.demo.diffusion_series``) read through the dashboard's own queries, expanded as Grafana would.

- every Jobs panel returns data, and each per-instance target one series per instance (25);
- the stuck-instance scenario shows on the throughput panel (the stuck instance at 0 jobs/hour, every other
  above 0), in the Stuck instances table and in the VideoInstanceStuck alert's expression, for that
  instance only; a healthy pool has none;
- the Missing-data reasons table classifies a video pool: busy engines ok, the five-reasons faults on the
  right node and layer (no traffic = no finished non-warm-up job, collection failed, insufficient samples).
"""

from __future__ import annotations

import time

import pytest
from demo_queries import expected_code

from dashgen.build import build_profile
from dashgen.demo import recorder
from dashgen.demo.run import import_demo
from dashgen.demo.scenarios import FIVE_REASONS_NODES, LOST_NODE_INDEX
from dashgen.deployment.profile import load_profiles
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_text, globals_for, variable_values
from dashgen.live.query_check import DashboardInput, plan
from dashgen.rules import rule_groups

HOURS = 2.0
STEP = 30.0  # the store keeps one sample per 30 s (video-200's [store] resolution)
# scenario -> hours before the anchor its window ends: far from the session's other windows (0-10 h).
WINDOWS = {"healthy": 20, "stuck-instance": 24, "five-reasons": 28}
# Hours of the scenario written before its window: a counter that first appears inside the window counts as I/O
# (S6: a created counter moved), so "no I/O" needs the flat counter to exist before the window, as it does in
# production. Without it the test passed only when another test had written video-200 data there.
LEAD_IN = {"five-reasons": HOURS}
JOBS_ROW = "Jobs (video generation)"


@pytest.fixture(scope="module")
def video(victoriametrics):
    profile = load_profiles(["video-200"])[0]
    anchor = (time.time() // 3600) * 3600 - 3600
    datasource = Datasource(victoriametrics.url, timeout=120)
    ends = {}
    for scenario, before in WINDOWS.items():
        ends[scenario] = anchor - before * 3600
        import_demo(datasource, profile, scenario, ends[scenario], HOURS + LEAD_IN.get(scenario, 0.0), STEP)
    datasource.flush()
    # The Now row's recorded reason codes in every window (the S6 test reads them in each), and every record the
    # dashboard reads (the per-GPU table's, the whole window's rates, the stage bands) in the healthy window, the one
    # validate-queries reads; the stuck-instance and five-reasons windows are read through the Jobs panels, the
    # Stuck instances table and the alerts' expressions, on the raw series.
    for scenario, end in ends.items():
        if scenario == "healthy":
            recorder.replay_for_dashboards(victoriametrics.url, [profile], end - HOURS * 3600, end)
        else:
            recorder.replay(victoriametrics.url, [profile], end - recorder.REPLAY_SECONDS, end)
    datasource.flush()
    (built,) = build_profile(profile)
    return profile, built.document, ends, Datasource(victoriametrics.url)


def _panels(document, row: str) -> list[dict]:
    found, current = [], None
    for panel in document["panels"]:
        if panel["type"] == "row":
            current = panel["title"]
            found += [p for p in panel.get("panels", []) if current == row]
        elif current == row:
            found.append(panel)
    return found


def _results(video, panel: dict, scenario: str) -> dict[str, list[dict]]:
    """refId -> the series the panel's target returns over the scenario's window (range, or instant)."""
    profile, document, ends, ds = video
    planned = plan(
        [DashboardInput("t", {**document, "panels": [panel]}, profile)], Window(ends[scenario], HOURS * 3600)
    )
    out: dict[str, list[dict]] = {}
    for planned_panel in planned:
        for query in planned_panel.queries:
            if query.kind == "instant":
                out[query.ref_id] = ds.query(query.expr, query.end).result
            else:
                out[query.ref_id] = ds.query_range(query.expr, query.start, query.end, query.step).result
    return out


# Per-instance targets present only while their instance has jobs waiting (not on every instance of healthy data).
WHILE_WAITING = ("since last dispatch",)


def test_s25_every_jobs_panel_returns_per_instance_data(video):
    """Every Jobs target is judged by its result labels, not its legend: a result that carries the node label is a
    per-instance view and covers all 25 instances; the others are the pool views beside them (issue 34)."""
    profile, document, _ends, _ds = video
    node = profile.label("node")
    panels = _panels(document, JOBS_ROW)
    assert len(panels) >= 12
    checked, pool = 0, 0
    for panel in panels:
        results = _results(video, panel, "healthy")
        for target in panel["targets"]:
            series = results[target["refId"]]
            assert series, f"{panel['title']} {target['refId']}: no data on healthy demo data"
            nodes = {item["metric"].get(node) for item in series} - {None}
            if not nodes:
                pool += 1
                continue
            if any(word in target.get("legendFormat", "") for word in WHILE_WAITING):
                continue
            assert nodes == set(profile.node_names), f"{panel['title']}: {len(nodes)} of 25 instances"
            checked += 1
    # queued, running, outcomes, jobs/hour, jobs in window, latency p95, queue time p95, stage p95, batch, GPU memory
    assert checked >= 10 and pool >= 3, (checked, pool)
    titles = {p["title"] for p in panels}
    assert {
        "Host latency per pipeline stage p95, per instance (s)",
        "Job queue time per instance: p95, and seconds since the last dispatch while jobs wait (s)",
    } <= titles


def test_s25_a_stuck_instance_stands_out_on_the_per_instance_queue_time_panel(video):
    profile, document, _ends, _ds = video
    node = profile.label("node")
    stuck = profile.node_names[LOST_NODE_INDEX]
    (panel,) = [p for p in _panels(document, JOBS_ROW) if p["title"].startswith("Job queue time per instance")]
    since = _last(_results(video, panel, "stuck-instance")["B"], node)
    others = [v for n, v in since.items() if n != stuck]
    assert since[stuck] > 1200 and (not others or since[stuck] > 10 * max(others)), since


def _last(series: list[dict], node: str) -> dict[str, float]:
    return {item["metric"][node]: float(item["values"][-1][1]) for item in series}


def test_s25_stuck_instance_shows_on_the_throughput_panel_the_table_and_the_alert(video):
    profile, document, ends, ds = video
    node = profile.label("node")
    stuck = profile.node_names[LOST_NODE_INDEX]
    (throughput,) = [p for p in _panels(document, JOBS_ROW) if p["title"].startswith("Throughput per instance")]
    per_hour = _last(_results(video, throughput, "stuck-instance")["A"], node)
    assert per_hour[stuck] == 0
    others = {n: v for n, v in per_hour.items() if n != stuck}
    assert len(others) == 24 and min(others.values()) > 0, others
    (table,) = [
        p
        for p in _panels(document, "Job SLO and health (video generation)")
        if p["title"].startswith("Stuck instances")
    ]
    assert {item["metric"][node] for item in _results(video, table, "stuck-instance")["A"]} == {stuck}
    assert _results(video, table, "healthy")["A"] == []
    (alert,) = [rule for group in rule_groups(profile) for rule in group.alerts() if rule.alert == "VideoInstanceStuck"]
    assert {item["metric"][node] for item in ds.query(alert.expr, ends["stuck-instance"]).result} == {stuck}
    assert ds.query(alert.expr, ends["healthy"]).result == []
    (pool,) = [rule for group in rule_groups(profile) for rule in group.alerts() if rule.alert == "VideoPoolStuck"]
    assert ds.query(pool.expr, ends["stuck-instance"]).result == []  # the other 24 instances keep finishing


@pytest.mark.parametrize("scenario", ["healthy", "stuck-instance", "five-reasons"])
def test_s25_s6_reasons_classify_a_video_pool(video, scenario):
    from dashgen_queries import nodata

    profile, document, ends, ds = video
    values = {
        **variable_values(document["templating"]["list"]),
        **globals_for(Window(ends[scenario], HOURS * 3600), 60, 60),
    }
    layers = nodata.layers(profile)
    engine = next(layer for layer in layers if layer.key == "engine")
    assert engine.title == "Engine (SGLang Diffusion)" and "sglang:diffusion_" in engine.presence
    got, want = {}, {}
    for layer in layers:
        result = ds.query(expand_text(nodata.reason_code(profile, layer), values), ends[scenario]).result
        per_node = {item["metric"][profile.label("node")]: int(float(item["value"][1])) for item in result}
        assert sorted(per_node) == sorted(profile.node_names), f"{layer.key}: one row per node"
        for name in profile.node_names:
            got[(name, layer.key)] = per_node[name]
            want[(name, layer.key)] = expected_code(nodata, profile, name, layer) if scenario == "five-reasons" else 0
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not wrong, f"(node, layer): (got, expected) {wrong}"
    if scenario == "five-reasons":  # the engine layer: collection failed, insufficient samples, no traffic
        codes = {FIVE_REASONS_NODES[i]: got[(profile.node_names[i], "engine")] for i in (1, 3, 4)}
        assert codes == {5: 5, 3: 3, 1: 1}


def test_s25_every_query_of_the_video_dashboard_executes_and_none_is_empty_on_healthy_data(video, victoriametrics):
    import json

    from click.testing import CliRunner

    from dashgen.cli.app import main

    _profile, _document, ends, _ds = video
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            victoriametrics.url,
            "--profile",
            "video-200",
            "--at",
            str(int(ends["healthy"])),
            "--window",
            "2h",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output[-3000:]
    report = json.loads(result.output)["results"]
    assert report["summary"]["error"] == 0 and report["summary"]["panels"] > 40
    empty = [(p["title"], t["ref_id"]) for p in report["panels"] for t in p["targets"] if t["status"] == "empty"]
    # the Stuck instances table is empty on a healthy pool by design (no instance stuck), and so are the first
    # screen's targets that list what fires or is missing
    from dashgen_panels.first_screen import HEALTHY_EMPTY

    assert ("Stuck instances: jobs waiting or running, none finished", "A") in empty
    assert set(empty) <= HEALTHY_EMPTY, empty
