"""Stat and bar gauge panels in the preview hold what Grafana's own ``getFieldDisplayValues`` gives those panels:
every calculation or every row (``reduceOptions``), the fields ``reduceOptions.fields`` picks, the names, and
each value's min and max (a bar gauge without a min starts its bars at the data's smallest value). The values
are checked in Node on every shipped @grafana/data minor; the bars' fill and a state timeline's segments in a
real headless Chromium."""

from __future__ import annotations

import re
from html import unescape

import grafana_node
import pytest
from grafana_node import call
from victoriametrics import program_or_skip

from dashgen.live.expand import ExpandedQuery
from dashgen.preview.browser import Browser, find_browser
from dashgen.preview.draw import draw
from dashgen.preview.frames import Answer, request
from dashgen.preview.layout import layout
from dashgen.preview.page import GRAFANA_DATA, Shown, page, page_height


@pytest.fixture(params=GRAFANA_DATA)
def minor(request):
    grafana_node.use(request.param)
    yield request.param
    grafana_node.use(GRAFANA_DATA[-1])


def _per_node(values: list[str], fmt: str = "time_series") -> Answer:
    query = ExpandedQuery("A", "instant", "m", "m", 0, 60, 0, 15, 60)
    result = [{"metric": {"node": f"n{i}"}, "value": [60, v]} for i, v in enumerate(values)]
    return Answer(query, {"expr": "m", "refId": "A", "format": fmt, "legendFormat": "{{node}}"}, "vector", result)


def _values(panel: dict, answers: list[Answer]) -> list[tuple]:
    (result,) = call("applyPanels", [request(panel, answers, 600)])
    assert result["kind"] == "values", result
    return [(v["name"], v["text"], v.get("min"), v.get("max")) for v in result["values"]]


def test_stat_values_follow_reduce_options_as_grafana_s_stat_does(minor):
    answer = _per_node(["1", "2"], fmt="table")
    every_row = {"type": "stat", "options": {"reduceOptions": {"values": True, "calcs": []}}}
    assert _values(every_row, [answer]) == [("n0", "1", 1, 2), ("n1", "2", 1, 2)]
    two_calcs = {"type": "stat", "options": {"reduceOptions": {"calcs": ["min", "max"]}}}
    assert [v[1] for v in _values(two_calcs, [answer])] == ["1", "2"]
    labels_too = {"type": "stat", "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "/^node$/"}}}
    assert _values(labels_too, [answer]) == [("node", "n1", None, None)]


def test_a_bar_gauge_without_min_spans_the_data_s_range(minor):
    bars = {"type": "bargauge", "options": {"reduceOptions": {"calcs": ["lastNotNull"]}}}
    answer = _per_node(["50", "60", "70"])
    assert [v[2:] for v in _values(bars, [answer])] == [(50, 70)] * 3
    from_zero = {**bars, "fieldConfig": {"defaults": {"min": 0}, "overrides": []}}
    assert [v[2:] for v in _values(from_zero, [answer])] == [(0, 70)] * 3


def test_the_page_fills_each_bar_from_grafana_s_min_and_max(tmp_path):
    binary = program_or_skip(find_browser(), "chromium not installed (Debian package 'chromium')")
    panel = {
        "id": 1,
        "type": "bargauge",
        "title": "bars",
        "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"]}},
    }
    (item,) = layout({"panels": [panel]})
    shown = [Shown(item, "bars", draw(panel, [_per_node(["50", "60", "70"])], "panel-0", 60))]
    html = tmp_path / "bars.html"
    html.write_text(page("bars", "bars", shown, (0, 60)), encoding="utf-8")
    with Browser(binary, timeout=60) as browser:
        dom = browser.render(html, None, 800, page_height(shown))
    widths = [float(w) for w in re.findall(r'class="fill" style="width: ([0-9.]+)%', dom)]
    assert widths == [0, 50, 100], widths


def test_the_page_draws_a_timeline_merged_by_threshold_as_one_segment_per_label(tmp_path):
    """A state timeline coloured by thresholds with mergeValues: consecutive values with the same threshold
    label are one segment (Grafana's merge), whatever their raw values; without mergeValues, the mappings."""
    binary = program_or_skip(find_browser(), "chromium not installed (Debian package 'chromium')")
    query = ExpandedQuery("A", "range", "m", "m", 0, 600, 60, 60, 240)
    values = [[i * 60, str(v)] for i, v in enumerate([0, 1, 1, 2, 0])]
    answer = Answer(
        query,
        {"expr": "m", "refId": "A", "legendFormat": "{{b}}"},
        "matrix",
        [{"metric": {"b": "b1"}, "values": values}],
    )
    steps = [{"color": "green", "value": None}, {"color": "red", "value": 2}]
    mappings = [{"type": "value", "options": {"0": {"text": "down"}, "1": {"text": "up"}, "2": {"text": "gone"}}}]
    field = {"defaults": {"color": {"mode": "thresholds"}, "thresholds": {"steps": steps}, "mappings": mappings}}
    drawn = {}
    for merge in (True, False):
        panel = {
            "id": 1,
            "type": "state-timeline",
            "title": "states",
            "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
            "options": {"mergeValues": merge},
            "fieldConfig": field,
        }
        (item,) = layout({"panels": [panel]})
        shown = [Shown(item, "states", draw(panel, [answer], "panel-0", 600))]
        html = tmp_path / f"states-{merge}.html"
        html.write_text(page("states", "states", shown, (0, 600)), encoding="utf-8")
        with Browser(binary, timeout=60) as browser:
            dom = browser.render(html, None, 800, page_height(shown))
        drawn[merge] = [unescape(text) for text in re.findall(r'class="seg"[^>]*>([^<]*)<', dom)]
    assert drawn == {True: ["< 2", "2+", "< 2"], False: ["down", "up", "gone", "down"]}
