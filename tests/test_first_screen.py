"""S26, the first screen, and the profile facts it reads: the Now row is the first row of every profile's
dashboard and fits one screen; it holds the alert state, coverage against the profile's expected count, the
node x layer matrix and the replica state; the heavy groups start collapsed, so the dashboard opens with
fewer queries than with them open; the expected target count is derived from the profile in one place (S23);
``[collector]`` errors name the file and the field.
"""

from __future__ import annotations

import copy
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from dashgen_panels import COLLAPSED_ON_OPEN, GROUPS, collector, first_screen
from dashgen_queries import nodata
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
    now = panels[1:rows[1]]
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in now)
    assert bottom <= FIRST_SCREEN_UNITS, bottom
    assert panels[rows[1]]["gridPos"]["y"] == bottom  # the next row starts right below
    titles = {p["title"] for p in now}
    # a video pool (S25) is read by its jobs: its instances' state and the job SLO, not replicas and tokens
    serving = (("Instance serving state", "Job SLO health (share of jobs meeting the SLO)") if name == "video-200"
               else ("Replica serving state", "SLO health (lowest model and SLI)"))
    assert {"Alerts firing", "Firing alerts by name and severity", "Targets up / expected",
            "Targets per source: up, expected, missing", "Missing targets", "Node × layer health",
            *serving} <= titles
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
    assert coverage["B"] == f"vector({expected_total(profile)})"
    matrix = panels["Node × layer health"]
    columns = [t["expr"] for t in matrix["targets"]]
    assert len(columns) == 1 + len(nodata.layers(profile))  # the collector, then each evidence layer
    # a silent node overrides every cell (its code on every profile node of the inventory)
    assert all(f"* 0 + {va.SILENT})" in expr for expr in columns), columns
    texts = {o["text"] for m in matrix["fieldConfig"]["defaults"]["mappings"] if m["type"] == "value"
             for o in m["options"].values()}
    assert {"collector silent", "collection failed", "uninitialised", "ok"} <= texts


def test_s23_expected_targets_are_derived_from_the_profile() -> None:
    long_context = PROFILES["long-context-64"]
    assert {e.job: e.count for e in expected_targets(long_context)} == {
        "sglang": 8, "dcgm": 8, "gpm": 8, "node": 8, "vmagent": 8, "mooncake-master": 1, "gateway": 4}
    assert expected_total(long_context) == 45
    # h20-16: 2 nodes x (SGLang, DCGM, node_exporter, vmagent); GPM, gateway and Mooncake are not deployed
    assert expected_total(PROFILES["h20-16"]) == 8
    no_collector = replace(long_context, collector=None)
    assert expected_total(no_collector) == 34  # 4 x 8 per-node targets, 1 master, 1 gateway (the default)
    fewer = replace(long_context, collector=replace(long_context.collector, targets={"gateway": 1}))
    assert expected_total(fewer) == 42


def test_s26_heavy_groups_start_collapsed_and_the_dashboard_opens_with_fewer_queries(documents) -> None:
    for name, document in documents.items():
        collapsed = {p["title"] for p in document["panels"] if p["type"] == "row" and p.get("collapsed")}
        rows = {p["title"] for p in document["panels"] if p["type"] == "row"}
        heavy = {m.TITLE for m in GROUPS if m.__name__.rsplit(".", 1)[-1] in COLLAPSED_ON_OPEN} & rows
        assert heavy | {collector.TITLE} <= collapsed, name
        assert first_screen.TITLE not in collapsed
        opened = queries_on_open(document)
        # The dashboard before the Now row: every group but the per-GPU timelines open, no Now, no Collector.
        new = {first_screen.TITLE, collector.TITLE}
        before = sum(len(p.get("targets") or []) for row in _rows(document) if row[0] not in new
                     and row[0] != "Per-GPU timelines" for p in row[1])
        assert opened < before, (name, opened, before)
        assert opened < queries_in_all_panels(document) / 2, name


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


@pytest.mark.parametrize(("mutate", "field", "words"), [
    (lambda c: c.update(cpu_quota="half"), "collector.cpu_quota", "CPUQuota"),
    (lambda c: c.pop("memory_limit"), "collector.memory_limit", "missing"),
    (lambda c: c.update(send_queue_limit="lots"), "collector.send_queue_limit", ""),
    (lambda c: c.update(send_queue_limit=0), "collector.send_queue_limit", "more than 0"),
    (lambda c: c.update(tasks_max=0), "collector.tasks_max", "at least 1"),
    (lambda c: c.update(job="has space"), "collector.job", ""),
    (lambda c: c.update(restart="no"), "collector.restart", "unknown field"),
    (lambda c: c["targets"].update(dcgm=8), "collector.targets.dcgm", "one target per node"),
    (lambda c: c["targets"].update(gateway=0), "collector.targets.gateway", "at least 1"),
])
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
    matrix = next(p for p in document["panels"] if p.get("title") == "Node × layer health")
    assert all(f"vector({va.SILENT})" not in t["expr"] for t in matrix["targets"])


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
    for target in panels["Node × layer health"]["targets"]:
        cells = {s["metric"]["node"]: s["value"][1] for s in _instant(victoriametrics, target["expr"], window.end)}
        assert cells == dict.fromkeys(PROFILES["long-context-64"].node_names, "0"), target["expr"][:80]


def test_s23_failing_targets_are_a_target_fact_the_collector_stays_ok(victoriametrics, demo_windows) -> None:
    """five-reasons: the collection-failed node's targets read up == 0, but its collector is alive (it writes
    those zeros): the Collector cell is ok, the layers read 'collection failed', the alerts name the targets."""
    from dashgen.demo.scenarios import FIVE_REASONS_NODES

    profile = PROFILES["long-context-64"]
    window = demo_windows[("long-context-64", "five-reasons")]
    failed = profile.node_names[next(i for i, code in FIVE_REASONS_NODES.items() if code == nodata.FAILED)]
    panels = _now_panels("long-context-64")
    matrix = [t["expr"] for t in panels["Node × layer health"]["targets"]]
    collector_cells = {s["metric"]["node"]: s["value"][1] for s in _instant(victoriametrics, matrix[0], window.end)}
    assert collector_cells[failed] == "0"
    engine = {s["metric"]["node"]: s["value"][1] for s in _instant(victoriametrics, matrix[1], window.end)}
    assert engine[failed] == str(nodata.FAILED)
    firing = _instant(victoriametrics, panels["Firing alerts by name and severity"]["targets"][0]["expr"], window.end)
    assert "EngineMetricsScrapeFailing" in {s["metric"]["alertname"] for s in firing}
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
        victoriametrics, demo_windows, scenario: str) -> None:
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
        assert {engine[profile.node_names[i]] for i, code in FIVE_REASONS_NODES.items()
                if code == nodata.FAILED} == {str(nodata.FAILED)}


def test_s26_a_store_without_the_recorded_reasons_leaves_the_layer_cells_empty_not_ok(victoriametrics) -> None:
    """No rule evaluator, no recorded codes: the matrix says nothing for the layers (no made-up 'ok', S7)."""
    profile = replace(PROFILES["long-context-64"], deployment="never-recorded")
    for layer in nodata.layers(profile):
        assert _codes(victoriametrics, nodata.recorded_reason(profile, layer), time.time()) == {}


def test_s26_the_recorded_reason_rules_keep_no_grafana_variable_and_fix_the_window() -> None:
    from dashgen.rules.recording import layer_health_records

    for profile in PROFILES.values():
        rules = [r for r in layer_health_records(profile) if r.record == nodata.LAYER_REASON]
        assert [dict(r.labels)[nodata.LAYER_LABEL] for r in rules] == [layer.key for layer in nodata.layers(profile)]
        for rule in rules:
            assert "$node" not in rule.expr and "$__" not in rule.expr, rule.expr[:80]
            assert "[3600s]" not in rule.expr and f"[{nodata.RECORDED_WINDOW_SECONDS}s]" in rule.expr
