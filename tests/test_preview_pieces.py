"""The preview's pure Python parts: the grid's compaction and folded rows, the tab a v2 dashboard opens on,
markdown that cannot inject markup, and a data panel's box (its request for the page's copy of @grafana/data).
What a panel shows from its data is @grafana/data's, held to it in tests/test_preview_grafana.py."""

from __future__ import annotations

from dashgen.live.expand import ExpandedQuery
from dashgen.preview import markdown
from dashgen.preview.draw import draw
from dashgen.preview.frames import Answer
from dashgen.preview.layout import layout

RANGE_RESULT = "matrix"  # a range answer's resultType


def _range(ref: str = "A", start: float = 0, end: float = 600, step: float = 60) -> ExpandedQuery:
    return ExpandedQuery(ref, "range", "m", "m", start, end, step, step, 4 * step)


def test_a_data_panel_box_carries_its_request_and_no_data_of_its_own():
    panel = {"type": "timeseries", "fieldConfig": {"defaults": {"noValue": "nothing ran"}}}
    answer = Answer(
        _range(), {"legendFormat": "{{pod}}"}, RANGE_RESULT, [{"metric": {"pod": "a"}, "values": [[0, "1"]]}]
    )
    drawn = draw(panel, [answer], "panel-3", 0)
    assert drawn.body == '<div class="dg-draw" id="panel-3"></div>' and drawn.attributes == {"data-series": "1"}
    assert drawn.spec is not None
    (sent,) = drawn.spec["request"]["answers"]
    assert sent["legendFormat"] == "{{pod}}" and sent["stepMs"] == 60_000 and sent["format"] == "time_series"
    assert drawn.spec["request"]["startMs"] == 0 and drawn.spec["request"]["endMs"] == 600_000


def test_a_failed_query_is_counted_on_the_box():
    drawn = draw({"type": "stat"}, [Answer(_range(), {}, error="HTTP 422: bad")], "p", 0)
    assert drawn.attributes == {"data-series": "0", "data-errors": "1", "data-points": "0"}
    assert "HTTP 422: bad" in drawn.body and drawn.spec is None


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


def test_the_page_carries_the_bundle_of_the_profile_s_grafana_minor():
    from dashgen.preview.page import asset, page

    for minor in ("11.6", "12.3"):
        text = page("t", "u", [], (0, 60), grafana=minor)
        version = asset(f"grafana-data/{minor}/VERSION").splitlines()[0]
        assert f'data-grafana-data="{minor}"' in text and f"{version} (Apache-2.0)" in text
        assert asset(f"grafana-data/{minor}/grafana-data.iife.min.js")[:2000] in text


def test_a_table_s_request_carries_the_clipping_rule_of_its_width_and_field_config():
    """The page marks the columns past the edge with render.clipping's rule: the spec carries the width the columns
    share at 1920 px, the floor and the fixed widths, as clipping computes them for the same panel."""
    from dashgen.render.clipping import clipped, sizing, table_pixels

    query = ExpandedQuery("A", "instant", "m", "m", 0, 60, 0, 15, 60)
    answer = Answer(query, {"expr": "m", "refId": "A"}, "vector", [{"metric": {"node": "n1"}, "value": [60, "1"]}])
    panel = {"type": "table", "gridPos": {"x": 0, "y": 0, "w": 4, "h": 8}}
    rule = draw(panel, [answer], "t", 60).spec["clip"]
    assert rule["available"] == table_pixels(4) and rule["minWidth"] == 150 and rule["width"] is None
    assert clipped(["Node", "Job", "State"], rule["available"], sizing(panel)) == ["Job", "State"]
    narrow = {**panel, "fieldConfig": {"defaults": {"custom": {"minWidth": 90}}, "overrides": []}}
    assert draw(narrow, [answer], "t", 60).spec["clip"]["minWidth"] == 90
    fixed = {
        **panel,
        "fieldConfig": {
            "defaults": {},
            "overrides": [
                {"matcher": {"id": "byName", "options": "Node"}, "properties": [{"id": "custom.width", "value": 60}]}
            ],
        },
    }
    assert draw(fixed, [answer], "t", 60).spec["clip"]["fixed"] == {"Node": 60.0}
    text = {"type": "timeseries", "gridPos": {"x": 0, "y": 0, "w": 4, "h": 8}}
    assert "clip" not in draw(text, [answer], "t", 60).spec


class _Silent:
    """A data source every query of which answers with no series."""

    def query(self, expr, time=None, timeout=None):
        from dashgen.live.datasource import QueryResult

        return QueryResult("vector", [])

    def query_range(self, expr, start, end, step, timeout=None):
        from dashgen.live.datasource import QueryResult

        return QueryResult("matrix", [])


def test_a_v2_dashboard_in_tabs_is_drawn_on_the_tab_grafana_opens_it_on():
    """Grafana opens a v2 dashboard laid out in tabs on its first tab; the preview drew every tab's panels as
    expanded rows on one page. --expand-rows still draws every tab."""
    from dashgen.build import build_all
    from dashgen.deployment.profile import load_profiles
    from dashgen.document.v2view import tab_of_panels
    from dashgen.live.expand import Window
    from dashgen.preview.run import Settings, Source, draw_dashboard

    (profile,) = load_profiles(["pd-128"])
    (built,) = build_all([profile], "v2")
    tabs = tab_of_panels(built.document)
    first = next(iter(tabs.values()))
    source = Source("pd-128", built.document, profile)
    window = Window(end=3600.0, length=3600.0)
    opened = draw_dashboard(_Silent(), source, Settings(window))
    assert opened.panels == sum(1 for tab in tabs.values() if tab == first) < len(tabs)
    assert f"tab &#x27;{first}&#x27; of {len(set(tabs.values()))} (--expand-rows: every tab)" in opened.html
    every = draw_dashboard(_Silent(), source, Settings(window, expand_rows=True))
    assert every.panels == len(tabs)
