"""The preview's copy of Grafana's @grafana/data, run in Node (Debian's nodejs) on hand-made answers: the
Prometheus data source's frames (legendFormat, ``Value`` / ``Value #A``, gaps), the panels' transformations,
every unit the dashboards use formatted as ``getValueFormat`` does, the axis labels, legends and the bundle's
own hygiene (pinned version, no eval for the page's Content-Security-Policy).

Expected texts are Grafana's documented output of these calls (e.g. ``toSeconds`` scales 0.000096 s to
"96 µs"); the shapes are what Grafana's transformations make of the frames."""

from __future__ import annotations

import json
import math
from pathlib import Path

import grafana_node
import pytest
from grafana_node import bundle, call

from dashgen.live.expand import ExpandedQuery
from dashgen.preview.frames import Answer, request
from dashgen.preview.page import GRAFANA_DATA, grafana_minor

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, params=GRAFANA_DATA)
def minor(request):
    """Every test on every shipped @grafana/data minor (the profiles' Grafana versions)."""
    grafana_node.use(request.param)
    yield request.param
    grafana_node.use(GRAFANA_DATA[-1])


def _instant(ref: str, rows: list[tuple[dict[str, str], str]], expr: str = "m") -> Answer:
    query = ExpandedQuery(ref, "instant", expr, expr, 0, 60, 0, 15, 60)
    result = [{"metric": labels, "value": [60, value]} for labels, value in rows]
    return Answer(query, {"expr": expr, "refId": ref, "format": "table", "instant": True}, "vector", result)


def _range(ref: str, series: list[tuple[dict[str, str], list]], legend: str | None = None, end: float = 600) -> Answer:
    query = ExpandedQuery(ref, "range", "m", "m", 0, end, 60, 60, 240)
    result = [{"metric": labels, "values": values} for labels, values in series]
    return Answer(query, {"expr": "m", "refId": ref, "legendFormat": legend}, "matrix", result)


def _apply(panel: dict, answers: list[Answer]) -> dict:
    (result,) = call("applyPanels", [request(panel, answers, 600)])
    assert result["kind"] != "error", result
    return result


def _texts(result: dict) -> list[list[str]]:
    return [[cell["text"] for cell in row] for row in result["rows"]]


# -- frames and transformations ---------------------------------------------------------------------------


def test_merge_joins_several_queries_label_sets_into_one_row_per_node():
    """The issue's table: GPU/Host columns from one query, Store from another; merge + organize -> one row per
    node, every column filled (dashgen's own merge made two rows per node)."""
    nodes = [f"n{i}" for i in range(8)]
    gpu = _instant("A", [({"node": n, "tier": "gpu"}, "0.5") for n in nodes])
    store = _instant("B", [({"node": n}, "0.25") for n in nodes])
    panel = {
        "type": "table",
        "transformations": [
            {"id": "merge", "options": {}},
            {"id": "organize", "options": {"excludeByName": {"Time": True}, "renameByName": {"Value #A": "GPU"}}},
        ],
        "fieldConfig": {"defaults": {"unit": "percentunit"}, "overrides": []},
    }
    result = _apply(panel, [gpu, store])
    assert [c["name"] for c in result["columns"]] == ["node", "tier", "GPU", "Value #B"]
    # the label sets differ (B has no tier) and still make one row per node: merge joins on the shared fields
    assert _texts(result) == [[n, "gpu", "50%", "25%"] for n in nodes]
    apart = _instant("B", [({"node": n, "tier": "host"}, "0.25") for n in nodes])
    assert len(_apply(panel, [gpu, apart])["rows"]) == 16  # a conflicting label value keeps the rows apart


def test_one_table_query_is_named_value_and_a_rename_of_value_a_does_not_apply():
    """Grafana names a lone table query's column "Value"; an organize that renames "Value #A" leaves it."""
    answer = _instant("A", [({"replica": "r0"}, "0")])
    rename = {"excludeByName": {"Time": True}, "renameByName": {"Value #A": "State", "replica": "Replica"}}
    panel = {
        "type": "table",
        "transformations": [{"id": "merge", "options": {}}, {"id": "organize", "options": rename}],
    }
    result = _apply(panel, [answer])
    assert [c["name"] for c in result["columns"]] == ["Replica", "Value"]
    two = _apply(panel, [answer, _instant("B", [({"replica": "r0"}, "1")])])
    assert [c["name"] for c in two["columns"]] == ["Replica", "State", "Value #B"]


def test_grouping_to_matrix_then_organize():
    rows = [
        ({"node": "n1", "layer": "gpu"}, "0"),
        ({"node": "n1", "layer": "disk"}, "2"),
        ({"node": "n2", "layer": "gpu"}, "1"),
    ]
    panel = {
        "type": "table",
        "transformations": [
            {"id": "groupingToMatrix", "options": {"rowField": "node", "columnField": "layer", "valueField": "Value"}},
            {
                "id": "organize",
                "options": {
                    "renameByName": {"node\\layer": "Node"},
                    "indexByName": {"node\\layer": 0, "disk": 1, "gpu": 2},
                },
            },
        ],
    }
    result = _apply(panel, [_instant("A", rows)])
    assert [c["name"] for c in result["columns"]] == ["Node", "disk", "gpu"]
    assert len(result["rows"]) == 2


def test_join_by_field_and_reduce_run_without_eval():
    """joinByField is the transformation whose row copy @grafana/data compiles with new Function; the bundle's
    closure gives the same outer join."""
    a = _instant("A", [({"node": "n1"}, "1"), ({"node": "n2"}, "2")])
    b = _instant("B", [({"node": "n2"}, "20"), ({"node": "n3"}, "30")])
    panel = {
        "type": "table",
        "transformations": [
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
            {"id": "joinByField", "options": {"byField": "node", "mode": "outer"}},
        ],
    }
    result = _apply(panel, [a, b])
    assert sorted(map(tuple, _texts(result))) == [("n1", "1", ""), ("n2", "2", "20"), ("n3", "", "30")]
    series = _range("A", [({"pod": "a"}, [[0, "1"], [60, "3"]])], "{{pod}}")
    reduced = _apply(
        {"type": "table", "transformations": [{"id": "reduce", "options": {"reducers": ["max", "mean"]}}]}, [series]
    )
    assert _texts(reduced) == [["a", "3", "2"]]


def test_legend_format_names_and_a_missing_step_stays_a_gap():
    values = [[t, "1"] for t in (0, 60, 120, 300, 360)]  # 180 and 240 missing
    result = _apply({"type": "timeseries"}, [_range("A", [({"pod": "a", "__name__": "m"}, values)], "pod {{pod}}")])
    (series,) = result["series"]
    assert series["name"] == "pod a"
    assert series["values"][:7] == [1, 1, 1, None, None, 1, 1]
    unnamed = _apply({"type": "timeseries"}, [_range("A", [({"__name__": "up", "job": "x", "a": "1"}, values)])])
    assert unnamed["series"][0]["name"] == 'up{a="1", job="x"}'


def test_malformed_samples_from_a_data_source_are_gaps_not_errors():
    """A string timestamp, a word for a value, a sample of the wrong shape, an item that is no series: left out
    or null, and the other series still drawn."""
    good = ({"pod": "a"}, [[0, "1"], [60, "2"]])
    odd = ({"pod": "odd"}, [["abc", "1"], [60, "not a number"], "x", [120]])
    answer = _range("A", [good, odd], "{{pod}}")
    answer = Answer(answer.query, answer.target, "matrix", [*answer.result, "not a series", None])
    result = _apply({"type": "timeseries"}, [answer])
    by_name = {s["name"]: s for s in result["series"]}
    assert by_name["a"]["values"][:2] == [1, 2]
    assert all(v is None for v in by_name["odd"]["values"])
    query = ExpandedQuery("A", "instant", "m", "m", 0, 60, 0, 15, 60)
    table = Answer(query, {"format": "table"}, "vector", [{"metric": {"pod": "odd"}, "value": ["abc", "x"]}, 7])
    assert _apply({"type": "table"}, [table])["rows"] == []


# -- units, axes, legends -----------------------------------------------------------------------------------


def _dashboard_units() -> set[str]:
    units: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("unit"), str):
                units.add(node["unit"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in (ROOT / "dashboards").glob("*/*.json"):
        walk(json.loads(path.read_text()))
    return units


SPREAD = [0, 0.000096, 0.000184, 0.0125, 0.5, 1, 7, 59.5, 100, 1000, 12446, 3.2e6, 1.5e9, 2.5e12]

# getValueFormat's text for some of the values above, as @grafana/data 12.3 formats them: pinned so that a
# rebuilt bundle that changes them is seen (``suffix:`` keeps Grafana's own space before the suffix)
KNOWN = {
    "count:tok/s": {12446: "12.4K tok/s", 7: "7 tok/s", 0.5: "0.500 tok/s", 3.2e6: "3.20M tok/s"},
    "count:tok/min": {12446: "12.4K tok/min"},
    "s": {
        0.000096: "96 µs",
        0.000184: "184 µs",
        0.0125: "12.5 ms",
        100: "1.67 mins",
        1000: "16.7 mins",
        59.5: "59.5 s",
    },
    "percentunit": {0.5: "50%", 1: "100%"},
    "bytes": {1000: "1000 B", 3.2e6: "3.05 MiB", 1.5e9: "1.40 GiB"},
    "suffix: of 64": {7: "7  of 64"},
    "short": {12446: "12.4 K", 1.5e9: "1.50 Bil"},
}


def test_every_unit_the_dashboards_use_formats_as_get_value_format_does():
    units = _dashboard_units()
    assert {"count:tok/s", "s", "percentunit", "bytes"} <= units
    for unit in sorted(units):
        texts = call("display", {"unit": unit}, SPREAD)
        by_value = dict(zip(SPREAD, (t["text"] for t in texts), strict=True))
        assert all(by_value.values()), (unit, by_value)
        # nothing of the unit's id leaks into the text (the seed showed "ount:tok/s")
        assert not any("count:" in text or "suffix:" in text for text in by_value.values()), (unit, by_value)
        for value, expected in KNOWN.get(unit, {}).items():
            assert by_value[value] == expected, (unit, value, by_value[value])


def test_sub_millisecond_axis_ticks_and_a_log_axis_read_in_the_unit():
    assert call("axisLabels", {"unit": "s"}, [0, 0.00005, 0.0001, 0.00015], 0.00005) == [
        "0 s",
        "50 µs",
        "100 µs",
        "150 µs",
    ]
    # a log axis: uPlot's splits at powers of ten, each in the display processor's own scale
    labels = call("axisLabels", {"unit": "s"}, [0.1, 1, 10, 100, 1000], 0.1)
    assert labels == ["100 ms", "1 s", "10 s", "1.7 mins", "16.7 mins"]  # decimals guessed from the step (0.1)
    assert call("axisLabels", {"unit": "count:tok/s"}, [0, 5000, 10000], 5000) == ["0 tok/s", "5K tok/s", "10K tok/s"]


def test_the_legend_sorts_as_the_panel_says_with_grafana_s_calculation_names():
    series = [({"pod": p}, [[0, v], [60, v]]) for p, v in (("a", "1"), ("b", "3"), ("c", "2"))]
    legend = {"displayMode": "table", "calcs": ["mean", "max", "lastNotNull"], "sortBy": "Mean", "sortDesc": True}
    panel = {
        "type": "timeseries",
        "options": {"legend": legend},
        "fieldConfig": {"defaults": {"unit": "percentunit", "decimals": 0}},
    }
    result = _apply(panel, [_range("A", series, "{{pod}}", end=60)])
    assert [s["name"] for s in result["series"]] == ["b", "c", "a"]
    assert [c["name"] for c in result["series"][0]["calcs"]] == ["Mean", "Max", "Last *"]
    assert [c["text"] for c in result["series"][0]["calcs"]] == ["300%", "300%", "300%"]


def test_a_per_node_series_that_stopped_shows_no_last_value_and_a_live_one_keeps_its_own():
    """The shipped per-node Store panel with two nodes: node-1 reported to the end, node-2's segments were lost at
    minute 5 of 10. Grafana's own null insert and reducers (both shipped minors) leave node-2's Last empty (its
    old 64 GiB read as current before) and node-1's at 64 GiB; the columns other than Last still cover the range."""
    panel = _shipped_panel("long-context-64", "Store memory mounted per node")
    gib64 = str(64 * 2**30)
    live = ({"node": "node-1"}, [[t, gib64] for t in range(0, 601, 60)])
    lost = ({"node": "node-2"}, [[t, gib64] for t in range(0, 301, 60)])
    result = _apply(panel, [_range("A", [live, lost], "{{node}}")])
    # the column named Last* / Last, whichever the panel asks for: the old "lastNotNull" read 64 GiB for node-2
    last = {s["name"]: [c["text"] for c in s["calcs"] if c["name"].startswith("Last")] for s in result["series"]}
    assert last == {"node-1": ["64 GiB"], "node-2": [""]}, last
    maxima = {s["name"]: {c["id"]: c["text"] for c in s["calcs"]}["max"] for s in result["series"]}
    assert maxima == {"node-1": "64 GiB", "node-2": "64 GiB"}, maxima


def test_every_shipped_time_series_legend_shows_last_rather_than_last_not_null():
    """The column above holds on every time series of every profile (one definition in the renderer), and a
    calculation outside Grafana's cached standard set is asked for, so the legend recomputes on the nulled series."""
    legends = set()
    for path in sorted((ROOT / "dashboards").glob("*/*.json")):

        def every(panels):
            for panel in panels:
                yield panel
                yield from every(panel.get("panels") or [])

        for panel in every(json.loads(path.read_text()).get("panels") or []):
            if panel.get("type") == "timeseries":
                legends.add(tuple(panel["options"]["legend"]["calcs"]))
    assert legends == {("mean", "median", "max", "last")}, legends


def test_thresholds_mappings_and_overrides_colour_and_name_the_cells():
    defaults = {
        "unit": "percentunit",
        "thresholds": {
            "mode": "absolute",
            "steps": [{"color": "green", "value": None}, {"color": "red", "value": 0.9}],
        },
        "mappings": [{"type": "value", "options": {"0": {"text": "idle", "color": "blue"}}}],
    }
    overrides = [
        {"matcher": {"id": "byName", "options": "Value"}, "properties": [{"id": "displayName", "value": "Busy"}]}
    ]
    panel = {"type": "table", "fieldConfig": {"defaults": defaults, "overrides": overrides}}
    result = _apply(panel, [_instant("A", [({"gpu": "0"}, "0.95"), ({"gpu": "1"}, "0"), ({"gpu": "2"}, "0.5")])])
    assert [c["name"] for c in result["columns"]] == ["Time", "gpu", "Busy"]
    cells = [row[2] for row in result["rows"]]
    assert [c["text"] for c in cells] == ["95%", "idle", "50%"]
    red, blue, green = (call("colour", name) for name in ("red", "blue", "green"))
    assert [c["color"] for c in cells] == [red, blue, green]


# -- the bundle itself ----------------------------------------------------------------------------------------


def test_each_profile_s_grafana_minor_has_its_pinned_bundle_and_it_runs_under_a_strict_csp(minor):
    text = bundle(minor).read_text(encoding="utf-8")
    assert "new Function" not in text and "eval(" not in text
    version = (bundle(minor).parent / "VERSION").read_text().splitlines()[0]
    lock = json.loads((ROOT / "bundles" / "grafana-data" / minor / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/@grafana/data"]["version"]
    assert version == f"@grafana/data {pinned}" and pinned.startswith(minor + ".")
    assert call("formatValue", "percentunit", 0.5, None) == "50%"
    targets = {
        line.split('"')[1]
        for p in (ROOT / "profiles").glob("*.toml")
        for line in p.read_text().splitlines()
        if line.startswith("grafana_version")
    }
    assert {grafana_minor(t) for t in targets} <= set(GRAFANA_DATA) and all(grafana_minor(t) == t for t in targets)


def test_a_grafana_newer_or_older_than_every_bundle_gets_the_nearest():
    assert (
        grafana_minor("13.2") == GRAFANA_DATA[-1]
        and grafana_minor("12.4") == "12.3"
        and grafana_minor("12.0") == "11.6"
    )
    assert grafana_minor("10.4") == GRAFANA_DATA[0] and grafana_minor(None) == GRAFANA_DATA[-1]


@pytest.mark.parametrize("value", [math.pi, 1e-9, -42.0])
def test_format_value_and_display_agree(value):
    """The page's two ways to a text (a cell's display processor, an axis' getValueFormat) agree without decimals."""
    (shown,) = call("display", {"unit": "short"}, [value])
    assert shown["text"] == call("formatValue", "short", value, None)


def _shipped_panel(profile: str, title_start: str) -> dict:
    document = json.loads((ROOT / "dashboards" / profile / f"dg-{profile}-cluster.json").read_text())

    def every(panels):
        for panel in panels:
            yield panel
            yield from every(panel.get("panels") or [])

    (panel,) = [p for p in every(document["panels"]) if p.get("title", "").startswith(title_start)]
    return panel


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64", "pd-128", "video-200"])
def test_the_first_screens_problem_list_shows_its_labels_as_text_beside_the_date_unit(profile):
    """The list's value is a time (unit dateTimeFromNow); Grafana parses every value of a field with a date unit
    as a date, so label columns without an override read "NaN" (the all-clear row's Alert did)."""
    panel = _shipped_panel(profile, "What is wrong now")
    clear = _instant("A", [({"alertname": "none firing"}, "0")])
    texts = _texts(_apply(panel, [clear]))
    assert texts[0][0] == "none firing" and texts[0][-1].startswith("all clear"), texts
    labels = {
        "severity": "critical",
        "entity": "node-3 GPU 5",
        "layer": "GPU",
        "alertname": "GpuXidError",
        "cause": "GPU Xid error",
        "look": "GPU health",
    }
    firing = _instant("A", [(labels, str(60_000 - 300_000))])
    (row,) = _texts(_apply(panel, [firing]))
    assert row[:-1] == ["critical", "node-3 GPU 5", "GPU", "GpuXidError", "GPU Xid error", "GPU health"], row
    assert "NaN" not in row and "ago" in row[-1], row


def test_a_table_shows_its_rows_in_the_panel_s_sort_order():
    """options.sortBy is the order Grafana's table opens in: the first entry decides, the next orders its ties,
    on the raw values (a verdict code sorts as a number, not as its mapped text); a name no column has is
    skipped. The preview drew the rows in the answer's order, so the worst verdict could sit below the fold."""
    rows = [
        ({"node": "n2", "layer": "GPU"}, "0"),
        ({"node": "n9", "layer": "Disk"}, "1001"),
        ({"node": "n1", "layer": "Host"}, "0"),
        ({"node": "n3", "layer": "GPU"}, "9"),
        ({"node": "n1", "layer": "GPU"}, "1001"),
    ]
    panel = _shipped_panel("pd-128", "Node × layer health")
    texts = _texts(_apply(panel, [_instant("A", rows)]))
    assert [row[:2] for row in texts] == [["n1", "GPU"], ["n9", "Disk"], ["n3", "GPU"], ["n1", "Host"], ["n2", "GPU"]]
    numbers = {
        "type": "table",
        "options": {"sortBy": [{"displayName": "gone", "desc": True}, {"displayName": "Value"}]},
    }
    values = [({"node": f"n{i}"}, v) for i, v in enumerate(["10", "9", "100", "-1"])]
    assert [row[-1] for row in _texts(_apply(numbers, [_instant("A", values)]))] == ["-1", "9", "10", "100"]


def test_a_cell_without_a_value_shows_the_field_s_no_value_or_its_null_and_empty_mappings():
    """Grafana's table passes every cell through the field's display, a null one too, and its Prometheus data
    source gives a series without a label "" in that label's column: such cells show the value mappings of
    null / empty or the field's noValue (the preview left them blank)."""
    a = _instant("A", [({"node": "n1", "gpu": "0"}, "1"), ({"node": "n2"}, "2")])
    b = _instant("B", [({"node": "n1", "gpu": "0"}, "5")])
    mappings = [
        {"type": "special", "options": {"match": "empty", "result": {"text": "(no label)"}}},
        {"type": "special", "options": {"match": "null", "result": {"text": "(no answer)"}}},
    ]
    panel = {
        "type": "table",
        "transformations": [
            {"id": "merge", "options": {}},
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
        ],
        "fieldConfig": {"defaults": {"mappings": mappings}, "overrides": []},
    }
    assert _texts(_apply(panel, [a, b])) == [["0", "n1", "1", "5"], ["(no label)", "n2", "2", "(no answer)"]]
    silent = {**panel, "fieldConfig": {"defaults": {"noValue": "silent"}, "overrides": []}}
    assert _texts(_apply(silent, [a, b])) == [["0", "n1", "1", "5"], ["silent", "n2", "2", "silent"]]


def test_percentage_thresholds_read_each_field_s_own_range_when_field_min_max_is_set():
    """fieldMinMax is one of Grafana's standard field options: with it a percentage threshold is a share of the
    field's own min..max, not of every field of the panel (the preview dropped the option, so 10 of 1..10 read
    as 1 % of 1..1000 and stayed green)."""
    a = _instant("A", [({"node": "n1"}, "1"), ({"node": "n2"}, "10")])
    b = _instant("B", [({"node": "n1"}, "100"), ({"node": "n2"}, "1000")])
    steps = [{"color": "green", "value": None}, {"color": "red", "value": 50}]
    defaults = {"thresholds": {"mode": "percentage", "steps": steps}, "fieldMinMax": True}
    panel = {
        "type": "table",
        "transformations": [
            {"id": "merge", "options": {}},
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
        ],
        "fieldConfig": {"defaults": defaults, "overrides": []},
    }
    red, green = call("colour", "red"), call("colour", "green")
    colours = [[cell["color"] for cell in row[1:]] for row in _apply(panel, [a, b])["rows"]]
    assert colours == [[green, green], [red, red]]
    panel["fieldConfig"]["defaults"] = {**defaults, "fieldMinMax": False}
    assert [[cell["color"] for cell in row[1:]] for row in _apply(panel, [a, b])["rows"]] == [
        [green, green],
        [green, red],
    ]


def test_a_base_threshold_written_null_is_minus_infinity_as_grafana_loads_it():
    """Grafana's dashboard load (getPanelOptionsWithDefaults) makes every thresholds' first step -Infinity; read
    as null, a negative value never passed the base step (-5 with a step at -10 stayed the base colour)."""
    steps = [{"color": "green", "value": None}, {"color": "yellow", "value": -10}, {"color": "red", "value": 0}]
    panel = {"type": "table", "fieldConfig": {"defaults": {"thresholds": {"mode": "absolute", "steps": steps}}}}
    (row,) = _apply(panel, [_instant("A", [({"node": "n1"}, "-5")])])["rows"]
    assert row[-1]["text"] == "-5" and row[-1]["color"] == call("colour", "yellow")


def test_a_state_timeline_coloured_by_thresholds_merges_values_by_threshold_as_grafana_s_does():
    """Grafana's state timeline, with mergeValues (its default) and the field coloured by thresholds, shows each
    value as its threshold step's label and colour, value mappings unread (prepareTimelineFields /
    mergeThresholdValues). The shipped timelines were written so (Grafana showed one base-step bar, "-∞+"); they
    are coloured 'fixed' now, and show their mappings merged."""
    values = [[i * 60, str(v)] for i, v in enumerate([0, 1, 2, 1, 0])]
    answer = _range("A", [({"backend": "b1"}, values)], "{{backend}}")
    shipped = _shipped_panel("long-context-64", "Gateway: backend health")
    (series,) = _apply(shipped, [answer])["series"]
    assert [t["text"] for t in series["texts"] if t][:2] == ["unhealthy", "healthy"]
    by_threshold = {"color": {"mode": "thresholds"}}
    panel = {
        **shipped,
        "fieldConfig": {**shipped["fieldConfig"], "defaults": {**shipped["fieldConfig"]["defaults"], **by_threshold}},
    }
    (series,) = _apply(panel, [answer])["series"]
    assert {(t["text"], t["color"]) for t in series["texts"] if t} == {("-∞+", call("colour", "green"))}
    mapped = {**panel, "options": {**panel["options"], "mergeValues": False}}
    (series,) = _apply(mapped, [answer])["series"]
    assert [t["text"] for t in series["texts"] if t][:2] == ["unhealthy", "healthy"]
    steps = [{"color": "green", "value": None}, {"color": "red", "value": 2}]
    two = {**panel, "fieldConfig": {"defaults": {"color": {"mode": "thresholds"}, "thresholds": {"steps": steps}}}}
    (series,) = _apply(two, [answer])["series"]
    assert [t["text"] for t in series["texts"] if t] == ["< 2", "< 2", "2+", "< 2", "< 2"]
