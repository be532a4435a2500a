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
from dashgen_panels.first_screen import HEALTHY_EMPTY
from dashgen_queries import nodata
from demo_queries import expected_code, merged_rows, panels_by_row

from dashgen.build import build_profile
from dashgen.cli.app import main
from dashgen.demo.scenarios import FIVE_REASONS_NODES, uninitialised_layer
from dashgen.demo.series import inventory_series
from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import ExpandedQuery, Window, expand_text, globals_for, variable_values
from dashgen.live.query_check import ReasonFinder
from dashgen.render.ids import panel_id

ALL_PROFILES = [p.name for p in load_profiles()]


def _at(window) -> str:
    return str(int(window.end))


@pytest.mark.parametrize(
    "key",
    [("long-context-64", "healthy"), ("long-context-64", "five-reasons"), ("h20-16", "healthy"), ("pd-128", "healthy")],
    ids=lambda k: f"{k[0]}:{k[1]}",
)
def test_every_query_executes_on_demo_data(victoriametrics, demo_windows, key):
    window = demo_windows[key]
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            victoriametrics.url,
            "--profile",
            key[0],
            "--at",
            _at(window),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output[-3000:]
    report = json.loads(result.output)["results"]
    assert report["summary"]["error"] == 0
    assert report["summary"]["panels"] > 0
    if key[1] == "healthy":
        empty = [
            (p["title"], t["ref_id"], [r["text"] for r in t["reasons"]])
            for p in report["panels"]
            for t in p["targets"]
            if t["status"] == "empty" and (p["title"], t["ref_id"]) not in HEALTHY_EMPTY
        ]  # nothing firing, nothing missing
        assert not empty, f"healthy demo data leaves targets empty: {empty}"


def test_every_query_of_every_profile_executes(victoriametrics, demo_windows):
    """Profiles without imported data still execute every query (empty is reported, not failed)."""
    window = demo_windows[("long-context-64", "healthy")]
    args = ["validate-queries", "--datasource-url", victoriametrics.url, "--at", _at(window), "--format", "json"]
    for name in ALL_PROFILES:
        args += ["--profile", name]
    result = CliRunner().invoke(main, args)
    # the profiles with no data in this store leave most panels empty, which validate-queries names as a profile
    # that does not describe the store (exit 1); no query fails
    assert result.exit_code in (0, 1), result.output[-3000:]
    if result.exit_code == 1:
        assert "panels return no data" in result.output, result.output[-3000:]
    report = json.loads(result.output)["results"]
    assert report["summary"]["error"] == 0
    assert {p["dashboard"] for p in report["panels"]} >= {f"dg-{name}-cluster" for name in ALL_PROFILES}


def _group_tables(profile, group_title: str):
    (built,) = build_profile(profile)
    return built.document, [
        raw for row, raw in panels_by_row(built.document) if row == group_title and raw.get("type") == "table"
    ]


@pytest.mark.parametrize("scenario,missing", [("healthy", 0), ("five-reasons", 1)])
def test_s2_per_gpu_window_tables_one_row_per_gpu(victoriametrics, demo_windows, scenario, missing):
    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    document, tables = _group_tables(profile, "Per-GPU window statistics")
    assert len(tables) == 1  # mean and peak on one row per GPU (S28)
    ds = Datasource(victoriametrics.url)
    down = {profile.node_names[i] for i, code in FIVE_REASONS_NODES.items() if code == 5} if missing else set()
    expected = {
        (node, str(gpu)) for node in profile.node_names if node not in down for gpu in range(profile.gpus_per_node)
    }
    for table in tables:
        rows = merged_rows(ds, document, table, window, (profile.label("node"), profile.label("gpu")))
        assert rows == expected, f"{table['title']}: {len(rows)} rows, expected {len(expected)}"
    assert len(expected) == profile.total_gpus - missing * profile.gpus_per_node


def test_s2_cache_evidence_tables_one_row_per_node(victoriametrics, demo_windows):
    window = demo_windows[("long-context-64", "healthy")]
    profile = window.profile
    (built,) = build_profile(profile)
    (group,) = [g for g in built.spec.groups if g.title == "Cache evidence"]
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


@pytest.mark.parametrize("scenario", ["five-reasons", "healthy"])
def test_s6_reason_codes_name_the_right_node_and_layer(victoriametrics, demo_windows, scenario):
    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 60),
    }
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


def test_s21_another_deployment_with_the_same_node_names_is_in_the_store_and_in_no_table(victoriametrics, demo_windows):
    """The healthy window also holds a shadow deployment with long-context-64's node names and the five-reasons
    faults (tests/victoriametrics.py SHADOWS): unscoped, a query sees both; the dashboard's queries see one. The
    healthy tables above (one row per node / GPU, every reason 'ok', no empty target) hold with it present."""
    window = demo_windows[("long-context-64", "healthy")]
    ds = Datasource(victoriametrics.url)
    clusters = {
        item["metric"].get("cluster") for item in ds.query('count by (cluster) (up{job="sglang"})', window.end).result
    }
    assert clusters == {"long-context-64", "long-context-64-shadow"}
    (built,) = build_profile(window.profile)
    node_variable = next(v for v in built.document["templating"]["list"] if v["name"] == "node")
    assert 'cluster="long-context-64"' in node_variable["query"]


def test_s6_generic_classifier_names_each_reason(victoriametrics, demo_windows):
    """validate-queries' own classifier, on per-node queries of the five-reasons scenario."""
    window = demo_windows[("long-context-64", "five-reasons")]
    profile = window.profile
    names = profile.node_names
    layer_metric = {
        "hicache_storage": "sglang:storage_prefetch_unfulfilled_tokens_total",
        "hicache": "sglang:hicache_host_total_tokens",
    }[uninitialised_layer(profile)]
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
    assert sorted(cases) == sorted(FIVE_REASONS_NODES) == [1, 2, 3, 4, 5], "one case per reason"
    for code, expr in cases.items():
        assert not ds.query(expr, window.end).result, f"case {code} is not empty: {expr}"
        reason = finder.generic(ExpandedQuery("A", "instant", expr, expr, 0, window.end, 0, 1, 4), profile)
        assert reason.code == code, f"{expr}: {reason}"
        healthy = expr.replace(node_of[code], names[6])
        assert ds.query(healthy, window.end).result, f"healthy node is empty too: {healthy}"


# -- synthetic series on the session's VictoriaMetrics, each test in its own window --------------
# Each window ends a whole number of days before the demo windows, so no query sees another's data.


def _window_end(demo_windows, days: int) -> float:
    return demo_windows[("long-context-64", "healthy")].end - days * 86400


def _steps(start: float, end: float, step: float) -> list[int]:
    count = int((end - start) // step) + 1
    return [int((start + i * step) * 1000) for i in range(count)]


def _series(name: str, labels: dict, start: float, end: float, step: float, value) -> dict:
    stamps = _steps(start, end, step)
    values = [float(value(ms / 1000) if callable(value) else value) for ms in stamps]
    return {
        "metric": {"__name__": name, "cluster": "long-context-64", **labels},
        "values": values,
        "timestamps": stamps,
    }


def _run(ds: Datasource, profile, expr: str, end: float) -> dict[str, float]:
    """An instant query at ``end`` with the dashboard's variables (All nodes, a 1 h range), by node."""
    (built,) = build_profile(profile)
    values = {**variable_values(built.document["templating"]["list"]), **globals_for(Window(end, 3600), 60, 60)}
    result = ds.query(expand_text(expr, values), end).result
    return {item["metric"].get(profile.label("node"), ""): float(item["value"][1]) for item in result}


def _loaded(victoriametrics, series: list[dict]) -> Datasource:
    """The store with ``series`` imported and searchable."""
    ds = Datasource(victoriametrics.url)
    ds.import_series(series)
    ds.flush()
    return ds


def _prefill_counter(profile, node: str, tp: str, dp: str, mode: str, grows: float, start: float, end: float) -> dict:
    """One rank's logical prefill counter (``mode``) from an hour before ``start`` to ``end``: 1000 until
    ``start``, then ``grows`` more an hour."""
    from dashgen_queries import hicache as sg

    labels = _engine(profile, node, tp_rank=tp, dp_rank=dp, mode=mode)
    return _series(
        sg.PREFILL_EFFECTIVE, labels, start - 3600, end, 5, lambda t: 1000 + grows * max(0.0, t - start) / 3600
    )


def _engine(profile, node: str, **extra: str) -> dict:
    return {
        "job": profile.source("sglang").job,
        "node": node,
        "instance": f"{node}:30000",
        "tp_rank": "0",
        "pp_rank": "0",
        "dp_rank": "0",
        **extra,
    }


def test_s7_counter_created_inside_the_window_keeps_its_first_event(victoriametrics, demo_windows):
    """#5: a counter that appears (at its first event) inside the window with 5000 reads 5000, not 0,
    and its tier is not 'no I/O'; a counter that existed before the window keeps the plain increase."""
    from dashgen_panels.cache_evidence import reuse_columns
    from dashgen_queries import hicache as sg

    (profile,) = load_profiles(["long-context-64"])
    end = _window_end(demo_windows, 1)
    start, earlier = end - 3600, end - 7200
    created, grew, flat = profile.node_names[2], profile.node_names[3], profile.node_names[5]
    series = []
    for node in (created, grew, flat):
        up_labels = {"job": profile.source("sglang").job, "node": node, "instance": f"{node}:30000"}
        series.append(_series("up", up_labels, earlier, end, 15, 1))
        series.append(_series(sg.DEFERRED, _engine(profile, node, reason="host_capacity"), earlier, end, 5, 0))
    series.append(_series(sg.BACKUPED, _engine(profile, created), start + 1800, end, 5, 5000))
    series.append(
        _series(sg.BACKUPED, _engine(profile, grew), earlier, end, 5, lambda t: 4000 if t < start + 1800 else 5000)
    )
    series.append(_series(sg.BACKUPED, _engine(profile, flat), earlier, end, 5, 4000))
    ds = _loaded(victoriametrics, series)

    column = dict(reuse_columns(profile, Topology(profile)))["Host→Store backed-up (tokens)"]
    got = _run(ds, profile, column, end)
    assert got == {created: 5000, grew: 1000, flat: 0}
    plain = _run(ds, profile, sg.one_rank(profile, f"increase({sg.series(profile, sg.BACKUPED)}[$__range])"), end)
    assert plain[created] == 0, "VictoriaMetrics' plain increase no longer drops the first event: revisit"

    (layer,) = [layer for layer in nodata.layers(profile) if layer.key == "hicache_storage"]
    codes = _run(ds, profile, nodata.reason_code(profile, layer), end)
    assert (codes[created], codes[grew], codes[flat]) == (nodata.OK, nodata.OK, nodata.NO_IO)


def test_s7_first_event_increase_never_counts_the_first_value_twice(victoriametrics, demo_windows):
    """VictoriaMetrics' increase counts a new series from 0 when its first value is small next to its
    first step; the first-event-aware increase must not add that value a second time."""
    from dashgen_queries import hicache as sg

    (profile,) = load_profiles(["long-context-64"])
    end = _window_end(demo_windows, 2)
    start = end - 3600
    node = profile.node_names[6]
    shapes = {
        "0": (lambda t: 50 if t < start + 1815 else 6000, 6000),  # small first value, then a big step
        "1": (lambda t: 1 + (t - start - 1800) // 5, 361),  # a ramp from 1
        "2": (lambda t: 5000 if t < start + 2400 else 6000, 6000),
    }  # large first value
    series = [
        _series(sg.BACKUPED, _engine(profile, node, tp_rank=rank), start + 1800, end, 5, shape)
        for rank, (shape, _) in shapes.items()
    ]
    ds = _loaded(victoriametrics, series)
    expr = sg.first_event_increase(sg.series(profile, sg.BACKUPED))
    (built,) = build_profile(profile)
    values = {**variable_values(built.document["templating"]["list"]), **globals_for(Window(end, 3600), 60, 60)}
    result = ds.query(expand_text(expr, values), end).result
    got = {item["metric"]["tp_rank"]: float(item["value"][1]) for item in result}
    assert got == {rank: want for rank, (_, want) in shapes.items()}


def test_s3_dp_groups_are_added_tp_ranks_are_not(victoriametrics, demo_windows):
    """#13: a logical counter under DP attention: two dp_ranks add up, two tp_ranks of one group do not."""
    from dashgen_queries import hicache as sg

    (profile,) = load_profiles(["long-context-64"])
    end = _window_end(demo_windows, 3)
    start = end - 3600
    two_dp, one_dp = profile.node_names[4], profile.node_names[5]
    series = [
        _prefill_counter(profile, node, tp, dp, "input", grows, start, end)
        for node, groups in ((two_dp, {"0": 100, "1": 40}), (one_dp, {"0": 100}))
        for dp, grows in groups.items()
        for tp in ("0", "1")  # both TP ranks of a DP group carry the same logical count
    ]
    ds = _loaded(victoriametrics, series)
    got = _run(ds, profile, sg.stage_reuse(profile, "input"), end)
    assert got == {two_dp: pytest.approx(140, abs=0.5), one_dp: pytest.approx(100, abs=0.5)}


def test_logical_counts_read_on_the_logging_ranks_equal_every_rank(victoriametrics, demo_windows):
    """Issue 42: the stage counts read only each DP group's logging rank (``on_logging_ranks``), an eighth of the
    series at TP8, and give what reading every rank gave: DP attention with global TP ranks (group 1 logs on
    tp_rank 4), zeros on the other ranks; a stage without DP attention; a stage whose every rank reports a copy."""
    from dashgen_queries import hicache as sg

    (profile,) = load_profiles(["long-context-64"])
    end = _window_end(demo_windows, 6)
    start = end - 3600
    dp_attention, plain, copies = profile.node_names[1], profile.node_names[2], profile.node_names[3]
    logging = {dp_attention: {"0": ("0", 100), "4": ("1", 40)}, plain: {"0": ("0", 70)}}
    series = []
    for node in (dp_attention, plain, copies):
        for tp in range(8):
            dp = ("0" if tp < 4 else "1") if node == dp_attention else "0"
            _, grows = logging.get(node, {}).get(str(tp), (dp, 0 if node != copies else 30))
            series += [
                _prefill_counter(profile, node, str(tp), dp, mode, grows, start, end)
                for mode in ("input", "device_hit")
            ]
    ds = _loaded(victoriametrics, series)
    narrowed = sg.stage_reuse(profile, "input")
    every = sg.series(profile, sg.PREFILL_EFFECTIVE, 'mode="input"')
    every_rank = sg.one_rank(profile, f"increase({every}[$__range])")
    assert "tp_rank=" in narrowed and "tp_rank" not in every_rank
    want = {dp_attention: pytest.approx(140, abs=0.5), plain: pytest.approx(70, abs=0.5), copies: pytest.approx(30)}
    assert _run(ds, profile, narrowed, end) == want
    assert _run(ds, profile, every_rank, end) == want


@pytest.mark.parametrize("with_unmapped", [True, False], ids=["unmapped-host", "all-mapped"])
def test_s11_segments_map_to_nodes_by_ip_and_unmapped_hosts_are_reported(victoriametrics, demo_windows, with_unmapped):
    """#4: segments named by IP land on their node through the profile's node_addresses; a segment
    whose host no node maps to is counted, and a node without segments then reads 'segment host not
    mapped' instead of 'uninitialised'."""
    from dashgen_queries import mooncake as mc

    (profile,) = load_profiles(["long-context-64"])
    end = _window_end(demo_windows, 4 if with_unmapped else 5)
    earlier = end - 7200
    holder, empty = profile.node_names[0], profile.node_names[1]
    master = {"job": profile.source("mooncake_master").job, "node": holder, "instance": f"{holder}:9003"}
    series = [_series("up", master, earlier, end, 15, 1)]
    for node in profile.node_names:
        series.append(
            _series(
                "up",
                {"job": profile.source("sglang").job, "node": node, "instance": f"{node}:30000"},
                earlier,
                end,
                15,
                1,
            )
        )
    hosts = [f"{profile.node_address(holder)}:12300", f"{profile.node_address(holder)}:12301"]
    if with_unmapped:
        hosts.append("10.99.0.1:12300")
    for segment in hosts:
        series.append(_series(mc.CAPACITY, {**master, "segment": segment}, earlier, end, 15, 8 * 2**30))
        series.append(_series(mc.ALLOCATED, {**master, "segment": segment}, earlier, end, 15, 2**30))
    # the node inventory as the rule file's recorder writes it: segment host -> node comes from it (issue 19)
    series.extend(inventory_series(profile, Topology(profile), earlier, end))
    ds = _loaded(victoriametrics, series)

    assert profile.node_address(holder) == "10.12.0.10"
    assert _run(ds, profile, mc.per_node_gib(profile, mc.ALLOCATED), end) == {holder: 2.0}
    assert _run(ds, profile, mc.segments_per_node(profile), end) == {holder: 2.0}
    assert list(_run(ds, profile, mc.unmapped_segments(profile), end).values()) == [1.0 if with_unmapped else 0.0]
    (layer,) = [layer for layer in nodata.layers(profile) if layer.key == "mooncake"]
    codes = _run(ds, profile, nodata.reason_code(profile, layer), end)
    assert sorted(codes) == sorted(profile.node_names)
    assert codes[holder] == nodata.OK
    assert codes[empty] == (nodata.UNMAPPED if with_unmapped else nodata.UNINITIALISED)


# -- S22: a GPU that fell off the bus (the gpu-missing scenario) -----------------------------------------


def _panel(document, title_start: str) -> dict:
    (panel,) = [raw for _row, raw in panels_by_row(document) if raw.get("title", "").startswith(title_start)]
    return panel


def _mapped(panel: dict, value: float) -> str:
    """The text Grafana shows for ``value`` through the panel's value mappings (first matching mapping)."""
    for mapping in panel["fieldConfig"]["defaults"]["mappings"]:
        options = mapping["options"]
        if mapping["type"] == "value" and str(int(value)) in options:
            return options[str(int(value))]["text"]
        if mapping["type"] == "range" and options["from"] <= value <= options["to"]:
            return options["result"]["text"]
    return str(value)


@pytest.mark.parametrize("scenario", ["gpu-missing", "healthy"])
def test_s22_a_gpu_that_fell_off_the_bus_is_gpu_missing_not_ok(victoriametrics, demo_windows, scenario):
    """gpu-missing: lc-node-03's GPU 5 reports an Xid 79 and vanishes at 40 % of the window while its exporters stay
    up. The reasons table reads "GPU missing (7 of 8)" in both GPU layers on exactly that node, and GPUs reporting
    reads 63 of 64; the healthy window shows neither."""

    from dashgen.demo.scenarios import lost_gpu

    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 60),
    }
    ds = Datasource(victoriametrics.url)
    reasons = _panel(built.document, "Missing-data reasons per node")
    lost_node = lost_gpu(profile)[0] if scenario == "gpu-missing" else None
    gpu_layers = [layer for layer in nodata.layers(profile) if layer.gpus_seen is not None]
    assert [layer.key for layer in gpu_layers] == ["gpm", "dcgm"]
    for layer in gpu_layers:
        result = ds.query(expand_text(nodata.reason_code(profile, layer), values), window.end).result
        shown = {item["metric"]["node"]: _mapped(reasons, float(item["value"][1])) for item in result}
        assert sorted(shown) == sorted(profile.node_names), layer.key
        missing = {node: text for node, text in shown.items() if text.startswith("GPU missing")}
        assert missing == ({lost_node: "GPU missing (7 of 8)"} if lost_node else {}), layer.key
        if lost_node:
            assert shown[lost_node] != "ok"
    stat = _panel(built.document, "GPUs reporting")
    assert stat["fieldConfig"]["defaults"]["unit"] == f"suffix: of {profile.total_gpus}" == "suffix: of 64"
    (target,) = stat["targets"]
    (item,) = ds.query(expand_text(target["expr"], values), window.end).result
    reporting = int(float(item["value"][1]))
    assert reporting == (63 if lost_node else 64)
    steps = stat["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert [s["color"] for s in steps] == ["red", "green"] and steps[1]["value"] == profile.total_gpus


def test_s17_store_mounted_per_replica_is_the_global_segment_size_on_demo_data(victoriametrics, demo_windows):
    """Issue 13.4: the Store capacity the master reports, grouped by engine replica (each segment once over HA
    masters), equals the profile's global_segment_size per replica: 256 GiB for each of long-context-64's two."""
    from dashgen_queries import mooncake as mc

    from dashgen.deployment.topology import Topology

    window = demo_windows[("long-context-64", "healthy")]
    profile = window.profile
    topology = Topology(profile)
    expr = mc.per_replica_bytes(profile, topology, mc.CAPACITY).replace("$node", ".+")
    result = Datasource(victoriametrics.url).query(expr, window.end).result
    per_replica = {item["metric"]["replica"]: float(item["value"][1]) for item in result}
    assert per_replica == {replica.key: float(profile.capacity.global_segment_size) for replica in topology.replicas}
    assert profile.capacity.global_segment_size == 256 * 2**30


def test_missing_targets_read_up_twice_and_name_failing_and_gone_targets(victoriametrics, demo_windows):
    """Issue 42: the first screen's Missing targets reads ``up`` twice (now, and over the window), not three
    times, and still lists a target failing now as failing, one seen in the window but silent now as gone, and
    no target that answers."""
    import promql_parser as pp
    from dashgen_queries import vmagent as va

    from dashgen.lint.promql import walk

    (profile,) = load_profiles(["long-context-64"])
    end = _window_end(demo_windows, 7)
    earlier = end - 3600
    ok, failing, gone = profile.node_names[0], profile.node_names[1], profile.node_names[2]
    series = [
        _series("up", {"job": "node", "node": ok, "instance": f"{ok}:9100"}, earlier, end, 15, 1),
        _series("up", {"job": "node", "node": failing, "instance": f"{failing}:9100"}, earlier, end, 15, 0),
        _series("up", {"job": "node", "node": gone, "instance": f"{gone}:9100"}, earlier, end - 1200, 15, 1),
    ]
    ds = _loaded(victoriametrics, series)
    expr = va.missing_targets(profile)
    reads = [n for n, _ in walk(pp.parse(expr.replace("$__range", "3600s"))) if isinstance(n, pp.VectorSelector)]
    assert len(reads) == 2, expr
    assert _run(ds, profile, expr, end) == {failing: va.FAILING, gone: va.GONE}
