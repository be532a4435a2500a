"""S26 and S31-S34, the first screen, and the profile facts it reads: the Now row is the first row of every
profile's dashboard and fits one screen; it holds the firing alerts with their entity, coverage against the
profile's expected count, the node x layer matrix (missing data and health, one staleness bound) and the
replica state; the heavy groups start collapsed, so the dashboard opens with no more queries than before the
incident layout (S34); the expected target count is derived from the profile in one place (S23); ``[collector]``
errors name the file and the field. Against VictoriaMetrics: firing alerts name their node and GPU, 0 firing
is told from a silent rule evaluator, a health state and a missing-data reason combine into the worst, one
dead copy of an HA pair fails no node.
"""

from __future__ import annotations

import copy
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from dashgen_panels import COLLAPSED_ON_OPEN, GROUPS, client_health, collector, first_screen
from dashgen_queries import health, nodata, now, now_records
from dashgen_queries import serving as sv
from dashgen_queries import vmagent as va

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles, profile_from_dict
from dashgen.deployment.targets import expected_targets, expected_total
from dashgen.document.on_open import queries_in_all_panels, queries_on_open
from dashgen.errors import ProfileError

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {p.name: p for p in load_profiles([], ROOT / "profiles")}
FIRST_SCREEN_UNITS = 20


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    return {name: build_profile(profile)[0].document for name, profile in PROFILES.items()}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_s26_the_now_row_is_first_and_fits_one_screen(documents, name: str) -> None:
    panels = documents[name]["panels"]
    assert panels[0]["type"] == "row" and panels[0]["title"] == "Now" and not panels[0].get("collapsed")
    rows = [i for i, p in enumerate(panels) if p["type"] == "row"]
    now = panels[1 : rows[1]]
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in now)
    assert bottom <= FIRST_SCREEN_UNITS, bottom
    assert panels[rows[1]]["gridPos"]["y"] == bottom  # the next row starts right below
    titles = {p["title"] for p in now}
    # a video pool (S25) is read by its jobs: its instances' state and the job SLO, not replicas and tokens
    # with a gateway the SLO stat leads with the client's share beside the engine's (S33)
    engine_slo = (
        "SLO health: client and engine, worse first"
        if PROFILES[name].exported("gateway")
        else "SLO health (lowest model and SLI)"
    )
    serving = (
        ("Instance serving state", "Job SLO health (share of jobs meeting the SLO)")
        if name == "video-200"
        else ("Replica serving state", engine_slo)
    )
    assert {
        "Alerts firing",
        first_screen.FIRING_TITLE,
        "Targets up / expected",
        "Targets per source: up, expected, missing",
        "Missing targets",
        first_screen.MATRIX_TITLE,
        *serving,
    } <= titles
    for panel in now:  # a full grid, no hole left by an optional panel
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
    widths: dict[int, int] = {}
    for panel in now:
        widths[panel["gridPos"]["y"]] = widths.get(panel["gridPos"]["y"], 0) + panel["gridPos"]["w"]
    assert set(widths.values()) == {24}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_s26_now_queries_alerts_of_this_deployment_and_the_profiles_expected_count(documents, name: str) -> None:
    profile = PROFILES[name]
    panels = {p["title"]: p for p in documents[name]["panels"] if p["type"] != "row"}
    firing = panels["Alerts firing"]["targets"][0]["expr"]
    assert f'cluster="{profile.deployment}"' in firing and 'alertstate="firing"' in firing
    coverage = {t["refId"]: t["expr"] for t in panels["Targets up / expected"]["targets"]}
    assert coverage["B"].startswith(f"(vector({expected_total(profile)})) and on() ")  # while the evaluator records
    assert nodata.EVALUATOR_HEARTBEAT in coverage["B"] and now_records.TARGETS_UP in coverage["A"]
    matrix = panels[first_screen.MATRIX_TITLE]
    (panel_query,) = [t["expr"] for t in matrix["targets"]]  # the recorded not-ok cells, or the evaluator's line
    assert panel_query.count(now_records.NOT_OK) == 1 and nodata.LAYER_REASON not in panel_query
    assert panel_query.count(nodata.EVALUATOR_HEARTBEAT) == 1 and "up{" not in panel_query
    # the record's rule: every node and layer in one query, not ok ones only
    query = now_records.record(profile, now_records.NOT_OK).rule + " or " + panel_query
    # each recorded series is read by one selector for all layers (the S32 order taken in one worst-of, not by
    # reading the reasons on both sides of the health states), the inventory and up once (the collector's
    # silence): nothing per layer or per node
    assert query.count(nodata.LAYER_REASON) == 1  # the cells; the evaluator's freshness never reads it
    assert query.count(nodata.EVALUATOR_HEARTBEAT) == 1  # the evaluator's freshness: one series per deployment
    assert nodata.LAYER_REASON not in firing and nodata.EVALUATOR_HEARTBEAT in firing
    assert query.count(health.LAYER_HEALTH) == 1
    assert query.count("up{") == (1 if profile.collector else 0)
    for title in now.layer_titles(profile).values():
        assert f'"{nodata.LAYER_LABEL}", "{title}"' in query
    if profile.collector:  # a silent node overrides every cell (its code on every profile node of the inventory)
        assert f"* 0 + {va.SILENT})" in query
    assert not [t for t in matrix["transformations"] if t["id"] == "groupingToMatrix"]
    texts = {
        o["text"]
        for m in matrix["fieldConfig"]["defaults"]["mappings"]
        if m["type"] == "value"
        for o in m["options"].values()
    }
    assert {"collector silent", "collection failed", "uninitialised", "ok"} <= texts
    assert {state.text for state in health.STATES} <= texts  # S32: the health states have their texts


def test_s23_expected_targets_are_derived_from_the_profile() -> None:
    long_context = PROFILES["long-context-64"]
    assert {e.job: e.count for e in expected_targets(long_context)} == {
        "sglang": 8,
        "dcgm": 8,
        "gpm": 8,
        "node": 8,
        "vmagent": 8,
        "mooncake-master": 1,
        "gateway": 4,
    }
    assert expected_total(long_context) == 45
    # h20-16: 2 nodes x (SGLang, DCGM, node_exporter, vmagent); GPM, gateway and Mooncake are not deployed
    assert expected_total(PROFILES["h20-16"]) == 8
    no_collector = replace(long_context, collector=None)
    assert expected_total(no_collector) == 34  # 4 x 8 per-node targets, 1 master, 1 gateway (the default)
    fewer = replace(long_context, collector=replace(long_context.collector, targets={"gateway": 1}))
    assert expected_total(fewer) == 42


# Queries the dashboard sent on open, and those of its Now row, before the incident layout (S34): the layout may
# move and open rows, never make the dashboard (or its first row) cost more.
# +1 on default field lists: the NVLink table asks the store for its counters whatever field list the profile assumes
OPEN_BUDGET = {"h20-16": 51, "long-context-64": 55, "pd-128": 80, "video-200": 48}
NOW_BUDGET = {"h20-16": 14, "long-context-64": 18, "pd-128": 15, "video-200": 15}


def test_s26_heavy_groups_start_collapsed_and_the_dashboard_opens_with_fewer_queries(documents) -> None:
    assert sorted(documents) == sorted(OPEN_BUDGET) == sorted(NOW_BUDGET)
    for name, document in documents.items():
        collapsed = {p["title"] for p in document["panels"] if p["type"] == "row" and p.get("collapsed")}
        rows = {p["title"] for p in document["panels"] if p["type"] == "row"}
        heavy = {m.TITLE for m in GROUPS if m.__name__.rsplit(".", 1)[-1] in COLLAPSED_ON_OPEN} & rows
        assert heavy | {collector.TITLE} <= collapsed, name
        assert first_screen.TITLE not in collapsed
        opened = queries_on_open(document)
        assert opened <= OPEN_BUDGET[name], (name, opened)
        assert opened < queries_in_all_panels(document) / 2, name
        now = _rows(document)[0]
        assert now[0] == first_screen.TITLE
        assert sum(len(p.get("targets") or []) for p in now[1]) <= NOW_BUDGET[name], name


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_s34_under_the_now_row_the_rows_localise_then_review_then_reference(documents, name: str) -> None:
    """The localising rows (SLO / engine state, requests and gateway, GPU health and the per-GPU table, disks and
    node health) come before the cache-evidence review, and reference material (capacity anatomy, sizes) last."""
    titles = [title for title, _ in _rows(documents[name])]
    position = {title: i for i, title in enumerate(titles)}
    review = [i for t, i in position.items() if t.startswith("Cache evidence") or t == "Missing data and freshness"]
    localising = [
        i
        for t, i in position.items()
        if t in ("GPU health", "Per-GPU window statistics", "Gateway")
        or t.startswith(("Requests:", "Node health", "Disks, CPU"))
    ]
    reference_rows = [
        i for t, i in position.items() if t.startswith(("Capacity anatomy", "Cache disk sizes", "Scratch disk sizes"))
    ]
    assert localising and review and reference_rows
    assert max(localising) < min(review) and max(review) < min(reference_rows)
    assert reference_rows[-1] == len(titles) - 1


def _rows(document: dict) -> list[tuple[str, list[dict]]]:
    rows: list[tuple[str, list[dict]]] = []
    for panel in document["panels"]:
        if panel["type"] == "row":
            rows.append((panel["title"], list(panel.get("panels") or [])))
        else:
            rows[-1][1].append(panel)
    return rows


def _raw(name: str = "long-context-64") -> dict:
    return tomllib.loads((ROOT / "profiles" / f"{name}.toml").read_text())


@pytest.mark.parametrize(
    ("mutate", "field", "words"),
    [
        (lambda c: c.update(cpu_quota="half"), "collector.cpu_quota", "CPUQuota"),
        (lambda c: c.pop("memory_limit"), "collector.memory_limit", "missing"),
        (lambda c: c.update(send_queue_limit="lots"), "collector.send_queue_limit", ""),
        (lambda c: c.update(send_queue_limit=0), "collector.send_queue_limit", "more than 0"),
        (lambda c: c.update(tasks_max=0), "collector.tasks_max", "at least 1"),
        (lambda c: c.update(job="has space"), "collector.job", ""),
        (lambda c: c.update(restart="no"), "collector.restart", "unknown field"),
        (lambda c: c["targets"].update(dcgm=8), "collector.targets.dcgm", "one target per node"),
        (lambda c: c["targets"].update(gateway=0), "collector.targets.gateway", "at least 1"),
    ],
)
def test_collector_section_errors_name_the_file_and_the_field(mutate, field: str, words: str) -> None:
    raw = copy.deepcopy(_raw())
    mutate(raw["collector"])
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(raw, "profiles/long-context-64.toml")
    assert caught.value.path == "profiles/long-context-64.toml" and caught.value.field == field, str(caught.value)
    assert words in str(caught.value)


def test_collector_targets_of_a_source_not_exported_are_refused() -> None:
    raw = copy.deepcopy(_raw("h20-16"))
    raw["collector"]["targets"] = {"gateway": 2}  # h20-16 does not deploy the gateway
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(raw, "profiles/h20-16.toml")
    assert caught.value.field == "collector.targets.gateway" and "not exported" in str(caught.value)


def test_s23_a_profile_without_a_collector_section_says_so_instead_of_drawing_bounds() -> None:
    raw = copy.deepcopy(_raw())
    del raw["collector"]
    profile = profile_from_dict(raw, "profiles/long-context-64.toml")
    assert profile.collector is None
    document = build_profile(profile)[0].document
    row = next(p for p in document["panels"] if p["type"] == "row" and p["title"] == collector.TITLE)
    assert [p["title"] for p in row["panels"]] == ["Collector bounds: not stated"]
    matrix = next(p for p in document["panels"] if p.get("title") == first_screen.MATRIX_TITLE)
    assert all(f"* 0 + {va.SILENT})" not in t["expr"] for t in matrix["targets"])
    assert all("up{" not in t["expr"] for t in matrix["targets"])  # no collector silence to read


def _now_panels(profile_name: str) -> dict[str, dict]:
    document = build_profile(PROFILES[profile_name])[0].document
    return {p["title"]: p for p in document["panels"] if p["type"] != "row"}


def _instant(victoriametrics, expr: str, at: float) -> list[dict]:
    """The instant query at the window end, variables as Grafana expands them ($node = All, a 1 h range)."""
    from dashgen.live.datasource import Datasource
    from dashgen.live.expand import Window, expand_text, globals_for

    values = {"node": ".*", **globals_for(Window(at, 3600), 15.0, 60.0)}
    return Datasource(victoriametrics.url).query(expand_text(expand_text(expr, values), values), at).result


def test_s26_healthy_demo_reads_every_expected_target_up_and_every_cell_ok(victoriametrics, demo_windows) -> None:
    window = demo_windows[("long-context-64", "healthy")]
    panels = _now_panels("long-context-64")
    up, expected = (panels["Targets up / expected"]["targets"][i]["expr"] for i in (0, 1))
    assert [s["value"][1] for s in _instant(victoriametrics, up, window.end)] == ["45"]
    assert [s["value"][1] for s in _instant(victoriametrics, expected, window.end)] == ["45"]
    (matrix,) = panels[first_screen.MATRIX_TITLE]["targets"]
    # every layer of every node ok or idle: the list of what is not ok is empty (and the evaluator records)
    assert _matrix(_instant(victoriametrics, matrix["expr"], window.end)) == {}
    # vmalert replayed the rule file up to the window end: nothing fires, and that is a real 0 (S7)
    count = panels["Alerts firing"]["targets"][0]["expr"]
    assert [s["value"][1] for s in _instant(victoriametrics, count, window.end)] == ["0"]
    firing = _instant(victoriametrics, panels[first_screen.FIRING_TITLE]["targets"][0]["expr"], window.end)
    assert [s["metric"]["alertname"] for s in firing] == [sv.NONE_FIRING_TEXT]


def _matrix(series: list[dict]) -> dict[str, dict[str, str]]:
    """The verdicts that are not ok as cells: layer title -> node -> code (a cell not listed is ok or idle). A
    node with two lines for one layer would be two verdicts for one cell: refused."""
    cells: dict[str, dict[str, str]] = {}
    for item in series:
        column, node = item["metric"][nodata.LAYER_LABEL], item["metric"]["node"]
        assert set(item["metric"]) == {"node", nodata.LAYER_LABEL}, item["metric"]
        assert node not in cells.setdefault(column, {}), (column, node)
        cells[column][node] = item["value"][1]
    return cells


def test_s23_failing_targets_are_a_target_fact_the_collector_stays_ok(victoriametrics, demo_windows) -> None:
    """five-reasons: the collection-failed node's targets read up == 0, but its collector is alive (it writes
    those zeros): the Collector cell is ok, the layers read 'collection failed', the alerts name the targets."""
    from dashgen.demo.scenarios import FIVE_REASONS_NODES

    profile = PROFILES["long-context-64"]
    window = demo_windows[("long-context-64", "five-reasons")]
    failed = profile.node_names[next(i for i, code in FIVE_REASONS_NODES.items() if code == nodata.FAILED)]
    panels = _now_panels("long-context-64")
    (matrix,) = panels[first_screen.MATRIX_TITLE]["targets"]
    cells = _matrix(_instant(victoriametrics, matrix["expr"], window.end))
    assert failed not in cells.get("Collector (vmagent)", {})  # the collector is ok: not listed
    assert cells[nodata.engine_layer(profile).title][failed] == str(nodata.FAILED)
    firing = _instant(victoriametrics, panels[first_screen.FIRING_TITLE]["targets"][0]["expr"], window.end)
    engine = [s for s in firing if s["metric"]["alertname"] == "EngineMetricsScrapeFailing"]
    assert {s["metric"]["entity"].split()[0] for s in engine} == {failed}  # S31: the alert names its node
    assert all(0 < float(s["value"][1]) <= window.end * 1000 for s in engine)  # and since when (ms)
    missing = _instant(victoriametrics, panels["Missing targets"]["targets"][0]["expr"], window.end)
    assert {s["metric"]["node"] for s in missing} == {failed}


def _codes(victoriametrics, expr: str, at: float, window_seconds: float = 3600) -> dict[str, str]:
    from dashgen.live.datasource import Datasource
    from dashgen.live.expand import Window, expand_text, globals_for

    values = {"node": ".*", **globals_for(Window(at, window_seconds), 15.0, 60.0)}
    result = Datasource(victoriametrics.url).query(expand_text(expand_text(expr, values), values), at).result
    return {s["metric"]["node"]: s["value"][1] for s in result}


@pytest.mark.parametrize("scenario", ["five-reasons", "healthy"])
def test_s26_the_matrix_reads_the_reasons_vmalert_recorded_as_the_live_reasons_over_its_window(
    victoriametrics, demo_windows, scenario: str
) -> None:
    """The recorded codes (vmalert -replay of rules/<profile>.yml's layer-health group) equal the reason codes
    the Missing-data reasons table computes live over the same 15 minutes: a recorded cell and its live reason
    cannot drift apart, and the five-reasons faults land on their nodes."""
    window = demo_windows[("long-context-64", scenario)]
    profile = PROFILES["long-context-64"]
    at = window.end
    for layer in nodata.layers(profile):
        recorded = _codes(victoriametrics, nodata.recorded_reason(profile, layer), at)
        live = _codes(victoriametrics, nodata.reason_code(profile, layer), at, nodata.RECORDED_WINDOW_SECONDS)
        assert recorded == live, layer.title
        assert set(recorded) == set(profile.node_names), layer.title
    if scenario == "five-reasons":
        from dashgen.demo.scenarios import FIVE_REASONS_NODES

        engine = _codes(victoriametrics, nodata.recorded_reason(profile, nodata.engine_layer(profile)), at)
        assert {engine[profile.node_names[i]] for i, code in FIVE_REASONS_NODES.items() if code == nodata.FAILED} == {
            str(nodata.FAILED)
        }


def test_s26_a_store_without_the_recorded_reasons_leaves_the_layer_cells_empty_not_ok(victoriametrics) -> None:
    """No rule evaluator, no recorded codes: the matrix says nothing for the layers (no made-up 'ok', S7)."""
    profile = replace(PROFILES["long-context-64"], deployment="never-recorded")
    layers = nodata.layers(profile)
    assert len(layers) == 7, "engine, Host and Storage tiers, Mooncake, GPM, DCGM, disk"
    for layer in layers:
        assert _codes(victoriametrics, nodata.recorded_reason(profile, layer), time.time()) == {}


def test_s26_the_recorded_reason_rules_keep_no_grafana_variable_and_fix_the_window() -> None:
    from dashgen.rules.recording import layer_health_records

    checked = 0
    for profile in PROFILES.values():
        rules = [r for r in layer_health_records(profile) if r.record == nodata.LAYER_REASON]
        assert [dict(r.labels)[nodata.LAYER_LABEL] for r in rules] == [layer.key for layer in nodata.layers(profile)]
        for rule in rules:
            assert "$node" not in rule.expr and "$__" not in rule.expr, rule.expr[:80]
            assert "[3600s]" not in rule.expr and f"[{nodata.RECORDED_WINDOW_SECONDS}s]" in rule.expr
            checked += 1
    assert checked == sum(len(nodata.layers(profile)) for profile in PROFILES.values()) >= 3 * len(PROFILES)


# --- hand-made series of deployments of their own (S31, S32): no demo query reads them ----------------------

STEP = 15  # seconds between the hand-made samples


def _deployment(case: str):
    """long-context-64 under a deployment of its own, and the time its series end (30 min ago: every sample is
    in the past, whatever the store's latency offset)."""
    return replace(PROFILES["long-context-64"], deployment=f"screen-{case}"), int(time.time()) // 60 * 60 - 1800


def _points(name: str, labels: dict[str, str], value: float, start: int, end: int) -> dict:
    stamps = list(range(start, end + 1, STEP))
    return {
        "metric": {"__name__": name, **labels},
        "values": [value] * len(stamps),
        "timestamps": [t * 1000 for t in stamps],
    }


def _write(victoriametrics, series: list[dict]) -> None:
    from dashgen.live.datasource import Datasource

    datasource = Datasource(victoriametrics.url)
    datasource.import_series(series)
    datasource.flush()


def _nodes(
    profile, end: int, nodes: tuple[str, ...], *, up_until: dict[str, int] | None = None, beat_until: int | None = None
) -> list[dict]:
    """The inventory of ``nodes`` and an engine target up on each (until ``up_until[node]``, else ``end``), and the
    rule evaluator's heartbeat (until ``beat_until``, else ``end``)."""
    from dashgen_queries.inventory import INVENTORY

    cluster = {"cluster": profile.deployment}
    series = [_points(nodata.EVALUATOR_HEARTBEAT, cluster, 1, end - 1800, end if beat_until is None else beat_until)]
    for node in nodes:
        series.append(_points(INVENTORY, {**cluster, "node": node, "segment_host": node}, 1, end - 1800, end))
        series.append(
            _points(
                "up",
                {**cluster, "job": "sglang", "node": node, "instance": f"{node}:30000"},
                1,
                end - 1800,
                (up_until or {}).get(node, end),
            )
        )
    return series


def _recorded(profile, name: str, node: str, layer: str, code: float, start: int, end: int) -> dict:
    return _points(name, {"cluster": profile.deployment, "node": node, nodata.LAYER_LABEL: layer}, code, start, end)


def test_s31_what_is_wrong_now_names_entity_layer_cause_and_since_when(victoriametrics) -> None:
    """Three alerts fire as vmalert writes them: two with a hold (ALERTS firing, ALERTS_FOR_STATE = activation
    time), one with for: 0 (no ALERTS_FOR_STATE) about a gateway's circuit-broken backend. One line each: the
    entity written out (node and GPU; the backend, not the gateway's host), the catalogue's layer, likely cause
    and row to open, and since when, the for: 0 alert's from its first ALERTS sample; the count says 3."""
    profile, end = _deployment("alerts")
    cluster = {"cluster": profile.deployment}
    catalogue = {"layer": "gpu", "cause": "GPU fell off the bus", "look": "GPU health"}
    xid = {**cluster, "alertname": "GpuXidFatal", "severity": "critical", "node": "n1", "gpu": "3", **catalogue}
    hot = {**cluster, "alertname": "GpuTemperatureHigh", "severity": "warning", "node": "n2", "gpu": "5"}
    breaker = {**cluster, "alertname": "GatewayBreakerOpen", "severity": "warning", "node": "gw-host"}
    breaker |= {"instance": "gw-host:30080", "worker": "http://n3:30000"}
    series = [
        *_nodes(profile, end, ("n1", "n2")),
        _recorded(profile, nodata.LAYER_REASON, "n1", "engine", 0, end - 1800, end),
        _points("ALERTS", {**breaker, "alertstate": "firing"}, 1, end - 300, end),
    ]
    for labels, since in ((xid, end - 600), (hot, end - 120)):
        series.append(_points("ALERTS", {**labels, "alertstate": "firing"}, 1, since, end))
        series.append(_points(sv.FOR_STATE, labels, since, since, end))
    _write(victoriametrics, series)
    rows = _instant(victoriametrics, now.wrong_now(profile), end)
    by_alert = {row["metric"]["alertname"]: row for row in rows}
    assert set(by_alert) == {"GpuXidFatal", "GpuTemperatureHigh", "GatewayBreakerOpen"}
    assert all(set(row["metric"]) <= set(now.wrong_now_labels(profile)) for row in rows)  # nothing else to clip
    shown = {name: {k: v.strip() for k, v in row["metric"].items()} for name, row in by_alert.items()}
    assert shown["GpuXidFatal"] == {"alertname": "GpuXidFatal", "severity": "critical", "entity": "n1 GPU 3"} | {
        k: v for k, v in catalogue.items()
    }
    assert shown["GpuTemperatureHigh"]["entity"] == "n2 GPU 5"
    assert shown["GatewayBreakerOpen"]["entity"] == "worker http://n3:30000"  # not the gateway's host
    assert float(by_alert["GpuXidFatal"]["value"][1]) == (end - 600) * 1000  # activation time, ms
    assert float(by_alert["GpuTemperatureHigh"]["value"][1]) == (end - 120) * 1000
    since = float(by_alert["GatewayBreakerOpen"]["value"][1]) / 1000  # for: 0: its first ALERTS sample
    assert end - 300 - 60 <= since <= end - 300 + 60, since - end
    assert [s["value"][1] for s in _instant(victoriametrics, sv.firing_count(profile), end)] == ["3"]


@pytest.mark.parametrize("evaluator", ["fresh", "silent"])
def test_s7_none_firing_is_a_real_0_only_while_the_rule_evaluator_records(victoriametrics, evaluator: str) -> None:
    """No alert fires. The rule file's recorded series are fresh (last written now): the count is 0 and the table
    has its 'none firing' row. The evaluator stopped 10 minutes ago (older than the one staleness bound): both
    are empty, so the panels read 'rule evaluator silent', never a made-up 0; the verdict list says so in one line.
    Only the one-series heartbeat is read: a node's reason recorded until now (fresh case: none at all; silent
    case: written by something else until now) changes nothing."""
    profile, end = _deployment(f"evaluator-{evaluator}")
    stopped = end if evaluator == "fresh" else end - 600
    assert end - stopped in (0, 600) and first_screen.staleness_seconds(profile) < 600
    reasons = (
        [] if evaluator == "fresh" else [_recorded(profile, nodata.LAYER_REASON, "n1", "engine", 0, end - 1800, end)]
    )
    _write(victoriametrics, [*_nodes(profile, end, ("n1",), beat_until=stopped), *reasons])
    count = [s["value"][1] for s in _instant(victoriametrics, sv.firing_count(profile), end)]
    table = _instant(victoriametrics, now.wrong_now(profile), end)
    if evaluator == "fresh":
        assert count == ["0"]
        assert [(row["metric"].get("alertname"), row["value"][1]) for row in table] == [
            (sv.NONE_FIRING_TEXT, str(sv.NONE_FIRING))
        ]
    else:
        assert count == [] and table == []
    # the verdicts: none to list while the evaluator records; one line saying it is silent, never an empty list
    verdicts = _matrix(_instant(victoriametrics, now.not_ok_cells(profile), end))
    silent = {now.EVALUATOR_LAYER: {now.EVALUATOR_NODE: str(now.EVALUATOR_SILENT)}}
    assert verdicts == ({} if evaluator == "fresh" else silent)


def test_s32_a_cell_is_the_worst_of_its_missing_data_reason_and_its_health(victoriametrics) -> None:
    """Recorded per node for the engine layer: n1 'no traffic' with 'stalled' recorded -> stalled (a queue is
    never 'no traffic'); n2 'collection failed' with 'GPU thermal' recorded -> collection failed (unreadable
    data wins); n3 ok with nothing recorded -> ok; n4 ok with 'clock off' on the clock layer -> the Clock column
    says so; n5's collector recorded 'dropping samples'."""
    profile, end = _deployment("worst")
    start = end - 1800
    engine = nodata.engine_layer(profile).key
    reason, state = nodata.LAYER_REASON, health.LAYER_HEALTH
    series = [*_nodes(profile, end, ("n1", "n2", "n3", "n4", "n5"))]
    for node, code in (
        ("n1", nodata.NO_TRAFFIC),
        ("n2", nodata.FAILED),
        ("n3", nodata.OK),
        ("n4", nodata.OK),
        ("n5", nodata.OK),
    ):
        series.append(_recorded(profile, reason, node, engine, code, start, end))
    series += [
        _recorded(profile, state, "n1", engine, health.ENGINE_STALLED.code, start, end),
        _recorded(profile, state, "n2", engine, health.GPU_THERMAL.code, start, end),
        _recorded(profile, state, "n4", health.CLOCK_LAYER, health.CLOCK_OFF.code, start, end),
        _recorded(profile, state, "n5", health.COLLECTOR_LAYER, health.COLLECTOR_DROPPING.code, start, end),
    ]
    _write(victoriametrics, series)
    cells = _matrix(_instant(victoriametrics, now.not_ok_cells(profile), end))
    assert cells == {  # n3 and the ok cells of the others are not listed
        nodata.engine_layer(profile).title: {"n1": str(health.ENGINE_STALLED.code), "n2": str(nodata.FAILED)},
        "Clock": {"n4": str(health.CLOCK_OFF.code)},
        "Collector (vmagent)": {"n5": str(health.COLLECTOR_DROPPING.code)},
    }


def test_s32_one_staleness_bound_for_the_collector_and_every_cell(victoriametrics) -> None:
    """n1's collector last delivered a bit inside the bound, n2's a bit past it, and the rule evaluator recorded
    both nodes' reasons as long ago as n1's last sample: n1 reads its recorded cells and a live collector, n2
    reads 'collector silent' (for every layer). With two bounds (the collector's own silence after 3 scrape
    intervals) n1 would read silent beside recorded cells: the verdict that flipped on every refresh."""
    profile, end = _deployment("bound")
    bound = first_screen.staleness_seconds(profile)
    assert va.silent_after_seconds(profile) < bound - 60  # the collector's own bound would call n1 silent
    inside, past = end - int(bound) + 45, end - int(bound) - 45
    engine = nodata.engine_layer(profile).key
    series = [
        *_nodes(profile, end, ("n1", "n2"), up_until={"n1": inside, "n2": past}),
        _recorded(profile, nodata.LAYER_REASON, "n1", engine, nodata.OK, end - 1800, inside),
        _recorded(profile, nodata.LAYER_REASON, "n2", engine, nodata.OK, end - 1800, inside),
    ]
    _write(victoriametrics, series)
    cells = _matrix(_instant(victoriametrics, now.not_ok_cells(profile), end))
    # n2 is one line, its collector silent (standing for every layer); n1 is ok: not listed
    assert cells == {"Collector (vmagent)": {"n2": str(va.SILENT)}}


@pytest.mark.parametrize(
    ("copies", "failed"),
    [((0, 1), False), ((1, 0), False), ((0, 0), True), ((1, 1), False)],
    ids=["first-dead", "second-dead", "both-dead", "both-up"],
)
def test_s32_one_dead_copy_of_the_mooncake_master_ha_pair_fails_no_node(victoriametrics, copies, failed) -> None:
    """The Store layer reads one shared target (the Mooncake master, an HA pair of two copies): a node's cell is
    'collection failed' only when no copy answers, never because one of the two is down."""
    profile, end = _deployment("ha-" + "".join(map(str, copies)))
    layer = nodata.mooncake_layer(profile)
    assert not layer.per_node_target
    series = _nodes(profile, end, ("n1", "n2"))
    for index, up in enumerate(copies):
        series.append(
            _points(
                "up",
                {"cluster": profile.deployment, "job": layer.job, "instance": f"master-{index}:9003"},
                up,
                end - 1800,
                end,
            )
        )
    _write(victoriametrics, series)
    codes = _codes(victoriametrics, nodata.collection_failed(profile, layer), end)
    assert codes == ({"n1": str(nodata.FAILED), "n2": str(nodata.FAILED)} if failed else {})


def test_s32_the_first_screen_guide_explains_every_matrix_state_and_the_bound() -> None:
    """docs/first-screen.md names every state a matrix cell can show (missing-data reasons, the silent collector,
    every health state) with the row to open next, and the one staleness bound of every profile; the README links
    it."""
    guide = (ROOT / "docs" / "first-screen.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in guide.splitlines() if line.startswith("| ")}
    texts = [text for text, _ in nodata.REASONS.values()] + [nodata.GPU_MISSING_TEXT + " (k of N)", va.SILENT_TEXT]
    texts += [state.text for state in health.STATES]
    for text in texts:
        assert text in rows, f"docs/first-screen.md has no row for the state {text!r}"
    for profile in PROFILES.values():
        assert f"{first_screen.staleness_seconds(profile):g} s" in guide, profile.name
    assert "docs/first-screen.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_s33_the_top_line_leads_with_what_is_wrong_and_leaves_the_client_health_slot(name: str) -> None:
    """The top line starts with what is wrong now; its own panels take 24 - CLIENT_SLOT columns: the
    client-visible health (S33) of a deployment with a gateway fits after the SLO; without it the list of what is
    wrong takes the slot."""
    profile = PROFILES[name]
    top = [
        first_screen.firing_table(profile),
        first_screen.slo_panel(profile),
        first_screen.firing_count_panel(profile),
        first_screen.coverage_panel(profile),
    ]
    assert sum(panel.width for panel in top if panel is not None) == 24 - first_screen.CLIENT_SLOT
    now_row = _rows(build_profile(profile)[0].document)[0][1]
    first = min(now_row, key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"]))
    assert first["title"] == first_screen.FIRING_TITLE
    by_title = {p["title"]: p for p in now_row}
    client = client_health.client_now_panel(profile, first_screen.KEY, first_screen.TOP)
    wide = by_title[first_screen.FIRING_TITLE]["gridPos"]["w"]
    if client is None:  # no gateway: the list of what is wrong takes the slot
        assert wide == first_screen.WRONG_NOW_WIDTH + first_screen.CLIENT_SLOT
    else:  # the client-visible health sits right after the SLO, in the slot
        slo = next(p for t, p in by_title.items() if "SLO health" in t)
        assert by_title[client.title]["gridPos"]["w"] == first_screen.CLIENT_SLOT
        assert by_title[client.title]["gridPos"]["x"] == slo["gridPos"]["x"] + slo["gridPos"]["w"]
        assert wide == first_screen.WRONG_NOW_WIDTH


def test_s26_replica_serving_state_reads_each_series_once_and_names_every_state(victoriametrics) -> None:
    """Replicas r0 serving (both nodes up, tokens move), r1 a stage down (b1 has no engine target at all), r2
    stalled (requests in flight, no token moves), r3 idle, r4 a stage down though its tokens move (e0's target reads
    0), r5 serving with two engine targets on its node, one of them down beside one up, r6 a stage down though
    its tokens move (g0 has no up series at all: its target left the scrape, its counter's last samples remain).
    The query reads up, the token counter and the queue once and the inventory twice (issue 42: the first
    screen's replica state read the inventory eight times, then four)."""
    from dashgen_queries.inventory import INVENTORY

    profile, end = _deployment("replicas")
    query = sv.replica_state(profile)
    assert query.count(INVENTORY) == 2 and query.count(sv.TOKENS) == 1 and query.count("up{") == 1, query
    assert query.count(sv.WAITING) == 1, query
    start = end - 1800
    cluster = {"cluster": profile.deployment}
    nodes = {"a0": "r0", "a1": "r0", "b0": "r1", "b1": "r1", "c0": "r2", "d0": "r3", "e0": "r4", "f0": "r5"}
    nodes |= {"g0": "r6"}
    series = []
    for node, replica in nodes.items():
        series.append(
            _points(INVENTORY, {**cluster, "node": node, "segment_host": node, "replica": replica}, 1, start, end)
        )
    engine = {**cluster, "job": "sglang"}
    targets = {"a0": 1, "a1": 1, "b0": 1, "c0": 1, "d0": 1, "e0": 0, "f0": 1}
    for node, value in targets.items():
        series.append(_points("up", {**engine, "node": node, "instance": f"{node}:30000"}, value, start, end))
    series.append(_points("up", {**engine, "node": "f0", "instance": "f0:30001"}, 0, start, end))
    stamps = list(range(start, end + 1, STEP))
    for node in ("a0", "a1", "e0", "f0", "g0"):  # tokens move
        series.append(
            {
                "metric": {"__name__": sv.TOKENS, **engine, "node": node, "instance": f"{node}:30000"},
                "values": [10.0 * i for i in range(len(stamps))],
                "timestamps": [t * 1000 for t in stamps],
            }
        )
    for node in ("c0", "d0"):  # tokens stand still
        series.append(_points(sv.TOKENS, {**engine, "node": node, "instance": f"{node}:30000"}, 500, start, end))
    for node, waiting in {"a0": 2, "c0": 3, "d0": 0}.items():
        series.append(_points(sv.WAITING, {**engine, "node": node, "instance": f"{node}:30000"}, waiting, start, end))
    _write(victoriametrics, series)
    states = {s["metric"][sv.REPLICA_LABEL]: int(s["value"][1]) for s in _instant(victoriametrics, query, end)}
    assert states == {
        "r0": sv.SERVING,
        "r1": sv.STAGE_DOWN,
        "r2": sv.STALLED,
        "r3": sv.IDLE,
        "r4": sv.STAGE_DOWN,
        "r5": sv.SERVING,
        "r6": sv.STAGE_DOWN,
    }


def test_s32_the_worst_of_reason_and_health_holds_for_every_code_with_each_series_read_once(victoriametrics) -> None:
    """The matrix reads the recorded reasons and health states once each and still takes the worst per cell:
    insufficient samples lose to any state and stand alone without one; every unreadable reason (uninitialised
    up to 'k of N GPUs missing') wins over the highest state code; a state alone is itself."""
    profile, end = _deployment("worst-codes")
    start = end - 1800
    engine = nodata.engine_layer(profile).key
    reason, state = nodata.LAYER_REASON, health.LAYER_HEALTH
    query = now.not_ok_cells(profile)
    assert query.count(reason) == 1 and query.count(state) == 1, query
    highest = max(s.code for s in health.STATES)
    most = nodata.MAX_GPUS_PER_NODE
    assert highest < now.BAND and nodata.GPU_MISSING_BASE * most + most - 1 < now.BAND
    missing = (nodata.GPU_MISSING_BASE * profile.gpus_per_node + 5, nodata.GPU_MISSING_BASE * most + most - 1)
    unreadable = (nodata.UNINITIALISED, nodata.FAILED, nodata.UNMAPPED, *missing)
    cases = {  # node -> (recorded reason, recorded state or None, the cell's code or None when not listed)
        "i1": (nodata.INSUFFICIENT, health.ENGINE_STALLED.code, health.ENGINE_STALLED.code),
        "i2": (nodata.INSUFFICIENT, None, nodata.INSUFFICIENT),
        "i3": (nodata.NO_TRAFFIC, highest, highest),
        "i4": (nodata.OK, None, None),
        **{f"u{i}": (code, highest, code) for i, code in enumerate(unreadable)},
    }
    series = [*_nodes(profile, end, tuple(cases))]
    for node, (code, health_code, _) in cases.items():
        series.append(_recorded(profile, reason, node, engine, code, start, end))
        if health_code is not None:
            series.append(_recorded(profile, state, node, engine, health_code, start, end))
    _write(victoriametrics, series)
    cells = _matrix(_instant(victoriametrics, query, end))
    expected = {node: str(cell) for node, (_, _, cell) in cases.items() if cell is not None}
    assert cells == {nodata.engine_layer(profile).title: expected}
