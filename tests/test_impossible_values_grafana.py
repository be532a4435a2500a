"""S38 in Grafana's own display code (the shipped @grafana/data, run in Node by ``grafana_node``): a shipped ratio
panel shows an impossible value as the red "impossible" text and a possible one as its number, in a stat and in a
time series' legend (whose calculations Grafana formats with the same display processor: ``getDisplayValuesForCalcs``
calls ``field.display``); a panel fixed at 0 shows a negative rate as "impossible: negative"."""

from __future__ import annotations

import grafana_node
import pytest
from bounded_panels import RATIO_UNITS, series_shown, shipped_panels
from grafana_node import call

from dashgen.preview.page import GRAFANA_DATA
from dashgen.render.impossible import ABOVE_FULL, BELOW_ZERO, IMPOSSIBLE_COLOUR, NEGATIVE


@pytest.fixture(autouse=True, params=GRAFANA_DATA)
def minor(request):
    """Every test on every shipped @grafana/data minor (the profiles' Grafana versions)."""
    grafana_node.use(request.param)
    yield request.param
    grafana_node.use(GRAFANA_DATA[-1])


def _first(kind: str, unit: str) -> dict:
    return next(
        p for p in shipped_panels("pd-128") if p["type"] == kind and p["fieldConfig"]["defaults"].get("unit") == unit
    )


def test_a_shipped_ratio_stat_shows_an_impossible_share_as_red_text_and_keeps_a_possible_one() -> None:
    red = call("colour", IMPOSSIBLE_COLOUR)
    config = {**_first("stat", "percentunit")["fieldConfig"]["defaults"], "decimals": 0}
    above, possible, full, empty, below = call("display", config, [1.3, 0.99, 1.0, 0.0, -0.2])
    assert (above["text"], above["color"]) == (ABOVE_FULL, red)
    assert (below["text"], below["color"]) == (BELOW_ZERO, red)
    assert [possible["text"], full["text"], empty["text"]] == ["99%", "100%", "0%"]


def test_a_shipped_ratio_time_series_names_an_impossible_value_in_its_legend() -> None:
    panel = _first("timeseries", "percentunit")
    series = series_shown(panel, {"a": [0.5] * 5 + [1.3] * 6, "b": [0.5] * 11})
    calcs = {c["id"]: c["text"] for c in series["a"]["calcs"]}
    assert calcs["max"] == calcs["last"] == ABOVE_FULL
    assert ABOVE_FULL not in {c["text"] for c in series["b"]["calcs"]}
    assert (series["a"]["min"], series["a"]["max"]) == (0, 1)  # the axis stays fixed (S5)


def test_a_shipped_rate_fixed_at_zero_shows_a_negative_value_as_impossible() -> None:
    panel = next(
        p
        for p in shipped_panels("pd-128")
        if p["type"] == "stat"
        and p["fieldConfig"]["defaults"].get("min") == 0
        and p["fieldConfig"]["defaults"].get("unit") not in RATIO_UNITS
    )
    negative, zero = call("display", panel["fieldConfig"]["defaults"], [-3.0, 0.0])
    assert (negative["text"], negative["color"]) == (NEGATIVE, call("colour", IMPOSSIBLE_COLOUR))
    assert zero["text"] != NEGATIVE


def test_a_shipped_error_budget_left_shows_an_overspent_budget_as_its_negative_number() -> None:
    """A budget left is negative once overspent (its thresholds colour that red): the number, never "impossible";
    above 100 % is still impossible (nothing spent is 100 %)."""
    panel = next(p for p in shipped_panels("pd-128") if p["title"].startswith("Error budget left"))
    overspent, above = call("display", {**panel["fieldConfig"]["defaults"], "decimals": 0}, [-0.12, 1.3])
    assert overspent["text"] == "-12%" and overspent["text"] != BELOW_ZERO
    assert above["text"] == ABOVE_FULL
