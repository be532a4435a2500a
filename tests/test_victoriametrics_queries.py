"""Every query of every profile's dashboards against a real VictoriaMetrics holding demo data.

S2: the per-GPU window tables have one row per GPU and the cache-evidence tables one row per node,
merged by their keys the way Grafana's merge transformation does. S6: in the five-reasons scenario
the dashboards' reason queries (queries/nodata.py) name exactly the right reason for each node and
layer, and healthy nodes show none; the generic classifier of validate-queries agrees.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dashgen.build import build_profile
from dashgen.cli import main
from dashgen.datasource import Datasource
from dashgen.demo.scenarios import FIVE_REASONS_NODES, uninitialised_layer
from dashgen.grafana_query import ExpandedQuery, Window, expand_text, globals_for, variable_values
from dashgen.ids import panel_id
from dashgen.lint.model import iter_raw_panels
from dashgen.profile import load_profiles
from dashgen.query_check import DashboardInput, ReasonFinder, plan

ALL_PROFILES = [p.name for p in load_profiles()]


def _at(window) -> str:
    return str(int(window.end))


@pytest.mark.parametrize("key", [("long-context-64", "healthy"), ("long-context-64", "five-reasons"),
                                 ("h20-16", "healthy")], ids=lambda k: f"{k[0]}:{k[1]}")
def test_every_query_executes_on_demo_data(victoriametrics, demo_windows, key):
    window = demo_windows[key]
    result = CliRunner().invoke(main, ["validate-queries", "--datasource-url", victoriametrics.url, "--profile",
                                       key[0], "--at", _at(window), "--format", "json"])
    assert result.exit_code == 0, result.output[-3000:]
    report = json.loads(result.output)
    assert report["summary"]["error"] == 0
    assert report["summary"]["panels"] > 0
    if key[1] == "healthy":
        empty = [(p["title"], t["ref_id"], [r["text"] for r in t["reasons"]])
                 for p in report["panels"] for t in p["targets"] if t["status"] == "empty"]
        assert not empty, f"healthy demo data leaves targets empty: {empty}"


def test_every_query_of_every_profile_executes(victoriametrics, demo_windows):
    """Profiles without imported data still execute every query (empty is reported, not failed)."""
    window = demo_windows[("long-context-64", "healthy")]
    args = ["validate-queries", "--datasource-url", victoriametrics.url, "--at", _at(window), "--format", "json"]
    for name in ALL_PROFILES:
        args += ["--profile", name]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output[-3000:]
    report = json.loads(result.output)
    assert report["summary"]["error"] == 0
    assert {p["dashboard"] for p in report["panels"]} >= {f"dg-{name}-cluster" for name in ALL_PROFILES}


def panels_by_row(document) -> list[tuple[str, dict]]:
    """(row title, panel): a non-collapsed row owns the top-level panels after it, a collapsed one its nested panels."""
    found, row = [], ""
    for raw, nested_in in iter_raw_panels(document):
        if raw.get("type") == "row":
            row = raw.get("title") or ""
            continue
        found.append((nested_in or row, raw))
    return found


def _group_tables(profile, group_title: str):
    (built,) = build_profile(profile)
    return built.document, [raw for row, raw in panels_by_row(built.document)
                            if row == group_title and raw.get("type") == "table"]


def merged_rows(ds: Datasource, document, panel, window, keys: tuple[str, ...]) -> set[tuple[str, ...]]:
    """Run a table panel's instant queries and merge their frames on ``keys`` (Grafana's merge)."""
    span = Window(window.end, window.hours * 3600)
    planned = plan([DashboardInput("t", {**document, "panels": [panel]}, window.profile)], span)
    rows: set[tuple[str, ...]] = set()
    for planned_panel in planned:
        for query in planned_panel.queries:
            assert query.kind == "instant", f"{panel['title']}: table target {query.ref_id} is not instant"
            for item in ds.query(query.expr, query.end).result:
                rows.add(tuple(item["metric"].get(k, "") for k in keys))
    return rows


@pytest.mark.parametrize("scenario,missing", [("healthy", 0), ("five-reasons", 1)])
def test_s2_per_gpu_window_tables_one_row_per_gpu(victoriametrics, demo_windows, scenario, missing):
    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    document, tables = _group_tables(profile, "Per-GPU window statistics")
    assert len(tables) == 2
    ds = Datasource(victoriametrics.url)
    down = {profile.node_names[i] for i, code in FIVE_REASONS_NODES.items() if code == 5} if missing else set()
    expected = {(node, str(gpu)) for node in profile.node_names if node not in down
                for gpu in range(profile.gpus_per_node)}
    for table in tables:
        rows = merged_rows(ds, document, table, window, (profile.label("node"), profile.label("gpu")))
        assert rows == expected, f"{table['title']}: {len(rows)} rows, expected {len(expected)}"
    assert len(expected) == profile.total_gpus - missing * profile.gpus_per_node


def test_s2_cache_evidence_tables_one_row_per_node(victoriametrics, demo_windows):
    window = demo_windows[("long-context-64", "healthy")]
    profile = window.profile
    (built,) = build_profile(profile)
    group = next((g for g in built.spec.groups if g.title == "Cache evidence"), None)
    if group is None:
        pytest.skip("no 'Cache evidence' group in the rendered dashboards yet")
    # Domain layout 1: (a) occupancy, (b) reuse and physical reads/writes, (c) missing-data reasons.
    keys = [panel.key for panel in group.panels if panel.kind == "table"][:3]
    assert len(keys) == 3, keys
    by_id = {raw.get("id"): raw for _row, raw in panels_by_row(built.document)}
    ds = Datasource(victoriametrics.url)
    for key in keys:
        table = by_id[panel_id(key)]
        rows = merged_rows(ds, built.document, table, window, (profile.label("node"),))
        assert {r[0] for r in rows} == set(profile.node_names), key
        assert len(rows) == profile.nodes == 8, key


def _nodata():
    try:
        from queries import nodata
    except ImportError:
        return None
    return nodata if hasattr(nodata, "layers") and hasattr(nodata, "reason_code") else None


def expected_code(nodata, profile, node: str, layer) -> int:
    """The reason the five-reasons scenario puts on (node, layer), from the scenario's definition."""
    code = FIVE_REASONS_NODES.get(profile.node_names.index(node), 0)
    shared_target = not getattr(layer, "per_node_target", True)  # Mooncake master: one target for all nodes
    if code == 5:
        return 0 if shared_target else 5
    if code == 4:
        return 4 if layer.key == uninitialised_layer(profile) else 0
    if code == 3:
        return 0 if shared_target else 3
    if code == 1:  # no traffic: the engine is idle, so its HiCache tiers move no bytes either
        if layer.idle_code == nodata.NO_TRAFFIC:
            return 1
        return nodata.NO_IO if layer.key.startswith("hicache") else 0
    if code == 2:
        return 2 if layer.key == "disk" else 0
    return 0


@pytest.mark.parametrize("scenario", ["five-reasons", "healthy"])
def test_s6_reason_codes_name_the_right_node_and_layer(victoriametrics, demo_windows, scenario):
    nodata = _nodata()
    if nodata is None:
        pytest.skip("queries.nodata not available")
    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {**variable_values(built.document["templating"]["list"]),
              **globals_for(Window(window.end, window.hours * 3600), 60, 60)}
    ds = Datasource(victoriametrics.url)
    got, want = {}, {}
    for layer in nodata.layers(profile):
        result = ds.query(expand_text(nodata.reason_code(profile, layer), values), window.end).result
        per_node = {item["metric"][profile.label("node")]: int(float(item["value"][1])) for item in result}
        assert sorted(per_node) == sorted(profile.node_names), f"{layer.key}: one row per node"
        for node in profile.node_names:
            got[(node, layer.key)] = per_node[node]
            want[(node, layer.key)] = expected_code(nodata, profile, node, layer) if scenario != "healthy" else 0
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not wrong, f"(node, layer): (got, expected) {wrong}"


def test_s6_generic_classifier_names_each_reason(victoriametrics, demo_windows):
    """validate-queries' own classifier, on per-node queries of the five-reasons scenario."""
    window = demo_windows[("long-context-64", "five-reasons")]
    profile = window.profile
    names = profile.node_names
    layer_metric = {"hicache_storage": "sglang:storage_prefetch_unfulfilled_tokens_total",
                    "hicache": "sglang:hicache_host_total_tokens"}[uninitialised_layer(profile)]
    node_of = {code: names[index] for index, code in FIVE_REASONS_NODES.items()}
    cases = {
        5: f'gpm_power_watts{{node="{node_of[5]}"}}',
        4: f'{layer_metric}{{node="{node_of[4]}"}}',
        3: f'count_over_time(gpm_power_watts{{node="{node_of[3]}"}}[1h]) > 100',
        1: f'rate(sglang:realtime_tokens_total{{node="{node_of[1]}"}}[5m]) > 0',
        2: f'rate(node_disk_reads_completed_total{{node="{node_of[2]}", device=~"nvme.+"}}[5m]) > 0',
    }
    ds = Datasource(victoriametrics.url)
    finder = ReasonFinder(ds, Window(window.end, window.hours * 3600), timeout=30)
    for code, expr in cases.items():
        assert not ds.query(expr, window.end).result, f"case {code} is not empty: {expr}"
        reason = finder.generic(ExpandedQuery("A", "instant", expr, expr, 0, window.end, 0, 1, 4), profile)
        assert reason.code == code, f"{expr}: {reason}"
        healthy = expr.replace(node_of[code], names[6])
        assert ds.query(healthy, window.end).result, f"healthy node is empty too: {healthy}"
