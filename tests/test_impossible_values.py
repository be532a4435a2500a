"""S38: a value a bounded quantity cannot take (a share above 100 %, a negative rate) is shown as an error, from
one definition (``dashgen.render.impossible``): every shipped panel with a bounded quantity carries its red range
mappings after its own, Grafana's display code reads them as the red text (and a time series' legend does), and
lint finds a panel without them."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from bounded_panels import RATIO_UNITS, s38_findings, shipped_panels

from dashgen.lint.findings import Severity
from dashgen.render.grafanalib_bridge import build_panel
from dashgen.render.impossible import (
    ABOVE_FULL,
    BELOW_ZERO,
    IMPOSSIBLE_COLOUR,
    NEGATIVE,
    TIMESERIES_NOTE,
    impossible_mappings,
)
from dashgen.render.kit import State, States, ratio_axis, stat, timeseries
from dashgen.render.layout import GridPos
from dashgen.render.spec import Evidence, Target

EVIDENCE = Evidence("test source", "a share", "none")
# Panels of each shipped dashboard with a ratio axis (S5) and with another axis fixed at 0; of the ratio panels, the
# signed ones (the error budget left, negative once overspent) that map only the values above 100 %.
RATIO_PANELS = {"h20-16": 19, "long-context-64": 35, "pd-128": 38, "video-200": 18}
SIGNED_BUDGETS = {"h20-16": 1, "long-context-64": 1, "pd-128": 1, "video-200": 1}
FIXED_AT_ZERO = {"h20-16": 18, "long-context-64": 27, "pd-128": 25, "video-200": 21}


def _texts(item: dict[str, Any]) -> list[str]:
    mappings = item["fieldConfig"]["defaults"].get("mappings") or []
    return [m["options"]["result"]["text"] for m in mappings if m.get("type") == "range"]


@pytest.mark.parametrize("profile", sorted(RATIO_PANELS))
def test_every_shipped_bounded_panel_maps_its_impossible_values_to_red_text(profile: str) -> None:
    kinds: Counter[str] = Counter()
    for item in shipped_panels(profile):
        defaults = item["fieldConfig"]["defaults"]
        if defaults.get("unit") in RATIO_UNITS and "error budget left" in item["title"].lower():
            kinds["signed"] += 1
            assert _texts(item)[-1:] == [ABOVE_FULL] and BELOW_ZERO not in _texts(item), item["title"]
        elif defaults.get("unit") in RATIO_UNITS:
            kinds["ratio"] += 1
            assert _texts(item)[-2:] == [ABOVE_FULL, BELOW_ZERO], item["title"]
        elif defaults.get("min") == 0:
            kinds["zero"] += 1
            assert _texts(item)[-1:] == [NEGATIVE], item["title"]
        else:
            assert not set(_texts(item)) & {ABOVE_FULL, BELOW_ZERO, NEGATIVE}, item["title"]
        if item["type"] == "timeseries" and set(_texts(item)) & {ABOVE_FULL, BELOW_ZERO, NEGATIVE}:
            assert TIMESERIES_NOTE in item["description"], item["title"]
    signed = SIGNED_BUDGETS[profile]
    assert kinds == {"ratio": RATIO_PANELS[profile] - signed, "signed": signed, "zero": FIXED_AT_ZERO[profile]}


def _rendered(spec) -> dict[str, Any]:
    return build_panel(spec, 1, GridPos(0, 0, 12, 8)).to_json_data()


def test_a_panel_s_own_mappings_come_first_so_no_impossible_range_shadows_them() -> None:
    states = States.of([State(1, "full", "green"), State(2, "stopped", "red")])
    null = {"type": "special", "options": {"match": "null", "result": {"text": "not reported", "color": "gray"}}}
    spec = stat("t.s", "Share", EVIDENCE, [Target("m")], mappings=(null, *states.mappings()), **ratio_axis("percent"))
    mappings = _rendered(spec)["fieldConfig"]["defaults"]["mappings"]
    assert mappings[:2] == [null, *states.mappings()]
    assert [m["options"]["result"]["text"] for m in mappings[2:]] == [ABOVE_FULL, BELOW_ZERO]
    # a panel that already has them (an imported copy of a dashgen panel) does not get them twice
    again = stat("t.s", "Share", EVIDENCE, [Target("m")], mappings=mappings, **ratio_axis("percent"))
    assert _rendered(again)["fieldConfig"]["defaults"]["mappings"] == mappings


def test_the_bounds_sit_past_the_axis_by_a_rounding_only() -> None:
    above, below = impossible_mappings("percent", 0, 100)
    assert 100 < above["options"]["from"] < 100.001 and -0.001 < below["options"]["to"] < 0
    assert all(m["options"]["result"]["color"] == IMPOSSIBLE_COLOUR for m in (above, below))
    assert impossible_mappings("s", 1, None) == () and impossible_mappings("s", None, None) == ()


def test_a_bounded_time_series_keeps_its_fixed_axis_and_says_how_a_fault_shows() -> None:
    spec = timeseries("t.t", "Share", EVIDENCE, [Target("m")], **ratio_axis("percentunit"))
    rendered = _rendered(spec)
    defaults = rendered["fieldConfig"]["defaults"]
    assert (defaults["min"], defaults["max"]) == (0, 1)
    assert rendered["description"].endswith(TIMESERIES_NOTE + ".")
    plain = _rendered(timeseries("t.u", "Latency", EVIDENCE, [Target("m")], unit="s"))
    assert TIMESERIES_NOTE not in plain["description"] and not plain["fieldConfig"]["defaults"].get("mappings")


# --- lint ---------------------------------------------------------------------------------


def test_s38_a_ratio_panel_without_the_mappings_is_an_error() -> None:
    (finding,) = s38_findings({"unit": "percentunit", "min": 0, "max": 1})
    assert finding.severity is Severity.ERROR and ABOVE_FULL in finding.message and BELOW_ZERO in finding.message
    # only the upper bound mapped: the lower one is still missing
    upper = list(impossible_mappings("percent", 0, 100)[:1])
    (half,) = s38_findings({"unit": "percent", "min": 0, "max": 100, "mappings": upper})
    assert BELOW_ZERO in half.message and ABOVE_FULL not in half.message
    # a column made a share by an override is a bounded field too
    share = [{"id": "unit", "value": "percent"}, {"id": "min", "value": 0}, {"id": "max", "value": 100}]
    override = {"matcher": {"id": "byName", "options": "x"}, "properties": share}
    assert [f.message.split(":")[0] for f in s38_findings({"unit": "s"}, [override])] == ["fieldConfig.overrides[0]"]


def test_s38_a_rate_fixed_at_zero_without_the_mapping_is_a_warning() -> None:
    (finding,) = s38_findings({"unit": "reqps", "min": 0})
    assert finding.severity is Severity.WARNING and NEGATIVE in finding.message


@pytest.mark.parametrize("unit, low, high", [("percent", 0, 100), ("percentunit", 0, 1), ("reqps", 0, None)])
def test_s38_a_panel_with_the_mappings_is_clean(unit: str, low: float | None, high: float | None) -> None:
    mappings = list(impossible_mappings(unit, low, high))
    assert s38_findings({"unit": unit, "min": low, "max": high, "mappings": mappings}) == []


def test_s38_a_quantity_without_a_bound_needs_no_mapping() -> None:
    assert s38_findings({"unit": "s"}) == [] and s38_findings({"unit": "celsius", "min": 20}) == []
