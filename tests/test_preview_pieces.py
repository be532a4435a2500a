"""The preview's pure parts: a gap in a range answer stays a gap, Grafana's units and axis, the table
transformations, the grid's compaction and folded rows, and markdown that cannot inject markup."""

from __future__ import annotations

from dashgen.live.expand import ExpandedQuery
from dashgen.preview import markdown
from dashgen.preview.draw import draw, y_axis
from dashgen.preview.frames import Answer, Series, grouping_to_matrix, organize, table, time_series
from dashgen.preview.layout import layout
from dashgen.preview.units import axis_range, format_value, threshold_colour

RANGE_RESULT = "matrix"  # a range answer's resultType


def _range(ref: str = "A", start: float = 0, end: float = 600, step: float = 60) -> ExpandedQuery:
    return ExpandedQuery(ref, "range", "m", "m", start, end, step, step, 4 * step)


def test_a_missing_step_stays_a_gap_not_a_zero():
    values = [[t, "1"] for t in (0, 60, 120, 300, 360)]  # 180 and 240 missing
    data = time_series(
        [Answer(_range(), {"legendFormat": "{{pod}}"}, RANGE_RESULT, [{"metric": {"pod": "a"}, "values": values}])]
    )
    (series,) = data.series
    assert data.times[:6] == [0, 60, 120, 180, 240, 300]
    assert series.values[3] is None and series.values[4] is None
    assert series.points == 5 and series.name == "a"


def test_no_answer_draws_no_data_with_the_panels_own_text():
    panel = {"type": "timeseries", "fieldConfig": {"defaults": {"noValue": "nothing ran"}}}
    drawn = draw(panel, time_series([Answer(_range(), {}, RANGE_RESULT, [])]), "c", 0)
    assert "nothing ran" in drawn.body and drawn.chart is None
    assert drawn.attributes == {"data-series": "0", "data-points": "0"}


def test_grafana_units():
    assert format_value(0.5, "percentunit") == "50%"
    assert format_value(0.987, "percentunit", 1) == "98.7%"
    assert format_value(3 * 1024**3, "bytes") == "3 GiB"
    assert format_value(0.25, "s") == "250 ms"
    assert format_value(1500, "short") == "1.5 K"
    assert format_value(7, "suffix: of 200") == "7 of 200"


def test_a_fixed_axis_is_kept_and_an_open_one_rounds_out():
    assert axis_range(0.2, 0.7, 0, 1) == (0, 1)
    low, high = axis_range(3.0, 97.0, 0, None)
    assert low == 0 and high >= 97
    panel = {"fieldConfig": {"defaults": {"unit": "percentunit", "min": 0, "max": 1}}}
    axis = y_axis(panel, [Series("a", {}, [0.4, None, 0.6])])
    assert (axis["min"], axis["max"]) == (0, 1) and axis["labels"][0] == "0%" and axis["labels"][-1] == "100%"


def test_the_threshold_colour_is_the_highest_step_reached():
    steps = {"steps": [{"color": "green", "value": None}, {"color": "red", "value": 1}]}
    assert threshold_colour(0, steps) == "#73bf69" and threshold_colour(3, steps) == "#f2495c"


def test_merged_table_columns_are_named_and_ordered_as_organize_says():
    def instant(ref: str, value: str) -> Answer:
        query = ExpandedQuery(ref, "instant", "m", "m", 0, 60, 0, 15, 60)
        return Answer(query, {"expr": "m", "refId": ref}, "vector", [{"metric": {"job": "dcgm"}, "value": [60, value]}])

    steps = [
        {"id": "merge", "options": {}},
        {
            "id": "organize",
            "options": {
                "excludeByName": {"Time": True},
                "indexByName": {"job": 0, "Value #A": 1, "Value #B": 2},
                "renameByName": {"job": "Source", "Value #A": "Up", "Value #B": "Expected"},
            },
        },
    ]
    data = table([instant("A", "7"), instant("B", "8")], steps)
    assert data.columns == ["Source", "Up", "Expected"]
    assert data.rows == [{"Source": "dcgm", "Up": 7.0, "Expected": 8.0}]


def test_grouping_to_matrix_and_organize():
    rows = [{"node": "n1", "layer": "gpu", "Value": 0.0}, {"node": "n1", "layer": "disk", "Value": 2.0}]
    columns, matrix = grouping_to_matrix(rows, {"columnField": "layer", "rowField": "node", "valueField": "Value"})
    assert columns == ["node\\layer", "gpu", "disk"] and matrix == [{"node\\layer": "n1", "gpu": 0.0, "disk": 2.0}]
    columns, _ = organize(columns, matrix, {"renameByName": {"node\\layer": "Node"}, "indexByName": {"disk": 1}})
    assert columns[0] == "Node"


def test_the_grid_floats_panels_up_and_folds_collapsed_rows():
    body = {
        "panels": [
            {"type": "row", "title": "Now", "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1}, "panels": []},
            {"type": "stat", "id": 1, "gridPos": {"x": 0, "y": 40, "w": 12, "h": 4}},
            {
                "type": "row",
                "title": "More",
                "collapsed": True,
                "gridPos": {"x": 0, "y": 44, "w": 24, "h": 1},
                "panels": [{"type": "timeseries", "id": 2, "gridPos": {"x": 0, "y": 45, "w": 24, "h": 8}}],
            },
        ]
    }
    folded = layout(body)
    assert [(i.raw.get("id"), i.y) for i in folded][1:] == [(1, 1), (None, 5)] and folded[2].folded
    opened = layout(body, expand_rows=True)
    assert [(i.raw.get("id"), i.y) for i in opened][1:] == [(1, 1), (None, 5), (2, 6)] and not opened[2].folded


def test_markdown_is_escaped_before_it_is_marked_up():
    html = markdown.render("**bold** and `<b>code</b>` <script>alert(1)</script>\n\n- one\n- two")
    assert "<strong>bold</strong>" in html and "<code>&lt;b&gt;code&lt;/b&gt;</code>" in html
    assert "<script>" not in html and "<ul><li>one</li><li>two</li></ul>" in html


def test_a_stat_with_graph_mode_area_draws_a_sparkline_broken_at_gaps():
    panel = {"type": "stat", "options": {"graphMode": "area", "colorMode": "value"}, "fieldConfig": {"defaults": {}}}
    values = [[t, "1" if t != 240 else "NaN"] for t in range(0, 601, 60)]
    data = time_series([Answer(_range(), {}, RANGE_RESULT, [{"metric": {"a": "b"}, "values": values}])])
    drawn = draw(panel, data, "c", 0)
    assert drawn.body.count("<polyline") == 2 and 'class="spark"' in drawn.body
    assert drawn.attributes["data-points"] == "10"


def test_one_query_s_value_is_named_by_its_ref_id_when_the_panel_renames_it_so():
    query = ExpandedQuery("A", "instant", "m", "m", 0, 60, 0, 15, 60)
    answer = Answer(query, {"expr": "m", "refId": "A"}, "vector", [{"metric": {"replica": "r0"}, "value": [60, "0"]}])
    rename = {"excludeByName": {"Time": True}, "renameByName": {"Value #A": "State", "replica": "Replica"}}
    data = table([answer], [{"id": "merge", "options": {}}, {"id": "organize", "options": rename}])
    assert data.columns == ["Replica", "State"] and data.rows == [{"Replica": "r0", "State": 0.0}]
    assert table([answer]).columns == ["Time", "replica", "Value"]  # Grafana's name without the panel's rename


def test_a_table_legend_shows_the_legend_s_calculations_in_the_panel_s_unit():
    panel = {
        "type": "timeseries",
        "options": {"legend": {"displayMode": "table", "calcs": ["mean", "max", "lastNotNull"]}},
        "fieldConfig": {"defaults": {"unit": "percentunit", "decimals": 0}},
    }
    values = [[0, "0.5"], [60, "1"], [120, "0.75"]]
    data = time_series(
        [Answer(_range(end=120), {"legendFormat": "ok"}, RANGE_RESULT, [{"metric": {}, "values": values}])]
    )
    body = draw(panel, data, "c", 0).body
    assert "<th>Mean</th><th>Max</th><th>Last *</th>" in body
    assert "<td>75%</td><td>100%</td><td>75%</td>" in body


def test_a_table_column_past_the_panel_s_edge_at_1920_px_is_reported_and_marked():
    def answer(labels: dict) -> Answer:
        query = ExpandedQuery("A", "instant", "m", "m", 0, 60, 0, 15, 60)
        return Answer(query, {"expr": "m", "refId": "A"}, "vector", [{"metric": labels, "value": [60, "1"]}])

    organize = {
        "id": "organize",
        "options": {"excludeByName": {"Time": True}, "renameByName": {"node": "Node", "job": "Job", "Value": "State"}},
    }
    panel = {"type": "table", "gridPos": {"x": 0, "y": 0, "w": 4, "h": 8}, "transformations": [organize]}
    data = table([answer({"node": "n1", "job": "sglang"})], [organize])
    drawn = draw(panel, data, "t", 60)
    # 280 px for three columns of at least 150 px (Job, Node, State): Node partly and State wholly past the edge
    assert drawn.attributes["data-clipped-columns"] == "2"
    assert drawn.attributes["data-clipped"] == "Node | State"
    assert drawn.body.count('class="clipped"') == 2 and "past the edge at 1920 px: Node, State" in drawn.body
    narrow = {**panel, "fieldConfig": {"defaults": {"custom": {"minWidth": 90}}}}
    drawn = draw(narrow, data, "t", 60)
    assert drawn.attributes["data-clipped-columns"] == "0" and "clipped" not in drawn.body
