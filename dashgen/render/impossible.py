"""S38, the one definition: a value a bounded quantity cannot take is a fault of the query or the data, shown as
an error and never hidden past the panel's fixed axis.

A ratio (``percent`` 0-100, ``percentunit`` 0-1) whose field fixes its axis at the ratio's bounds (min AND max, as S5
wants) cannot leave that axis either way; any other quantity whose panel fixes its axis at 0 (a rate, a count,
bytes/s, seconds, a ratio unit with no fixed top) cannot go below it. A ratio unit without a fixed top is not always
a share (node_load1 * 100 / cores passes 100 %): that axis is S5's finding, not a value S38 can call impossible. A
quantity that is legitimately signed (an error budget left, negative once overspent) is ``signed`` in its spec: it
keeps only the "above 100 %" side; lint cannot read that from the JSON, so such panels are named in
``dashgen/data/lint-exclusions.toml`` with the reason. Each such bound becomes
one Grafana range value mapping to a red text: stat, table cell, bar gauge, gauge and state timeline show the
text in place of the number, and a time series shows it in its legend's calculations (mean, median, max, last)
and tooltip, which format values with the same display processor, while its fixed axis stays as S5 wants.
The renderer appends them to every dashgen panel it writes (``with_impossible_values``); an imported panel renders
as Grafana stored it (the import's round trip) and gets them when a profile builds it as a team panel
(``dashgen.render.team_fit``); lint asks every panel for them (``missing_impossible_texts``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from dashgen.render.imported import ImportedEvidence
from dashgen.render.spec import RATIO_UNITS, Evidence

IMPOSSIBLE_COLOUR = "red"
TEXT_UNIT = "string"  # Grafana's unit for a value shown as its text
ABOVE_FULL = "impossible: above 100 %"
BELOW_ZERO = "impossible: below 0"
NEGATIVE = "impossible: negative"
# What a bounded time series says of itself, since its graph cannot draw a point past the fixed axis.
TIMESERIES_NOTE = (
    "A value past this axis is a query or data fault (S38): the legend and tooltip read "
    f'"{ABOVE_FULL}" / "{BELOW_ZERO}" or "{NEGATIVE}" in place of the number'
)
# JSON has no infinity, and Grafana 11's range mapping reads a missing bound as 0: an open end is the largest double.
OPEN_END = sys.float_info.max
# How far past its bound a value may land by floating-point rounding (a share of sums of float counters) and still
# be read as the bound: this fraction of the axis span (of 1 for a bound at 0 alone).
ROUNDING = 1e-9


def impossible_mappings(unit: object, low: object, high: object, signed: bool = False) -> tuple[dict[str, Any], ...]:
    """The range mappings a panel of ``unit`` whose axis runs from ``low`` to ``high`` must carry: above and below a
    ratio's axis fixed at its bounds, or below 0 for any other axis fixed at 0; none for a quantity without a known
    bound. A ``signed`` quantity may go below its axis: only the ratio's top is left. A field shown as text (the
    ``string`` unit: a table's label columns) has no numeric bound."""
    if unit == TEXT_UNIT:
        return ()
    if _fixes_ratio_axis(unit, low, high):
        bottom, top = RATIO_UNITS[str(unit)]
        slack = (top - bottom) * ROUNDING
        above = _range(top + slack, OPEN_END, ABOVE_FULL)
        return (above,) if signed else (above, _range(-OPEN_END, bottom - slack, BELOW_ZERO))
    if _is_zero(low) and not signed:
        return (_range(-OPEN_END, -ROUNDING, NEGATIVE),)
    return ()


def _fixes_ratio_axis(unit: object, low: object, high: object) -> bool:
    """A ratio unit whose field fixes its axis at the ratio's own bounds."""
    if not isinstance(unit, str) or unit not in RATIO_UNITS:
        return False
    bottom, top = RATIO_UNITS[unit]
    return _float(low) == bottom and _float(high) == top


def renderer_adds(evidence: Evidence | None) -> bool:
    """Whether the renderer adds the mappings and the time series' note (and the kit a table's label columns as
    text, ``kit.text_columns_as_text``) to a panel of this evidence: to dashgen's own panels, not to an imported
    one (it renders as Grafana stored it)."""
    return not isinstance(evidence, ImportedEvidence)


def with_impossible_values(
    mappings: Iterable[Any], unit: object, low: object, high: object, signed: bool = False
) -> tuple[Any, ...]:
    """``mappings`` (as given, whatever an imported panel holds) then the impossible-value ones they lack. After,
    because Grafana takes the first mapping that matches: a panel's own value, special (null / NaN) and state
    mappings keep their texts."""
    own = tuple(mappings)
    return own + tuple(m for m in impossible_mappings(unit, low, high, signed) if m not in own)


def without_impossible_values(mappings: Iterable[Any], unit: object, low: object, high: object) -> tuple[Any, ...]:
    """``mappings`` less the impossible-value ones the renderer adds anyway (what an import of a rendered panel
    writes as the panel's own)."""
    added = impossible_mappings(unit, low, high)
    return tuple(m for m in mappings if m not in added)


def reads_signed(mappings: Iterable[Any], unit: object, low: object, high: object) -> bool:
    """Whether ``mappings`` hold what the renderer writes for a ``signed`` spec of this axis and lack the rest (an
    import of a rendered signed panel reads it back as signed)."""
    present = list(mappings)
    every, kept = impossible_mappings(unit, low, high), impossible_mappings(unit, low, high, signed=True)
    return bool(kept) and every != kept and all(m in present for m in kept) and not all(m in present for m in every)


def missing_impossible_texts(mappings: Iterable[object], unit: object, low: object, high: object) -> list[str]:
    """The texts of the impossible-value mappings ``mappings`` does not cover: a range mapping to a text that
    reaches at least as far past the bound (another text or colour is the panel's choice)."""
    present = [m for m in mappings if isinstance(m, Mapping) and m.get("type") == "range"]
    return [
        wanted["options"]["result"]["text"]
        for wanted in impossible_mappings(unit, low, high)
        if not any(_covers(m.get("options"), wanted["options"]) for m in present)
    ]


def is_bounded(unit: object, low: object, high: object, signed: bool = False) -> bool:
    """Whether a panel of ``unit`` whose axis runs from ``low`` to ``high`` shows a quantity with an impossible
    side."""
    return bool(impossible_mappings(unit, low, high, signed))


def _range(start: float, end: float, text: str) -> dict[str, Any]:
    return {
        "type": "range",
        "options": {"from": start, "to": end, "result": {"text": text, "color": IMPOSSIBLE_COLOUR}},
    }


def _covers(options: object, wanted: Mapping[str, Any]) -> bool:
    """A range mapping ``options`` whose result has a text and whose range holds every value ``wanted`` maps."""
    if not isinstance(options, Mapping) or not isinstance(options.get("result"), Mapping):
        return False
    start, end = _float(options.get("from")), _float(options.get("to"))
    if start is None or end is None or not options["result"].get("text"):
        return False
    if wanted["to"] == OPEN_END:  # above the top: from at most a rounding past it, up to (nearly) any value
        return start <= wanted["from"] and end >= OPEN_END / 2
    return end >= wanted["to"] and start <= -OPEN_END / 2


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _is_zero(value: object) -> bool:
    return _float(value) == 0.0
