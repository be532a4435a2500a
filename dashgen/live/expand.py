"""Expand a Grafana panel target into the query Grafana's Prometheus backend would send.

Pure: dashboard JSON + window + evaluation time + scrape interval -> :class:`ExpandedQuery`.

- ``$__range`` = window in seconds (``3600s``), ``$__range_s``, ``$__range_ms``.
- ``$__interval`` = window / max data points, rounded the way Grafana rounds, at least the
  minimum interval (the panel's or target's ``interval``, else the scrape interval).
- ``$__rate_interval`` = max($__interval + scrape interval, 4 x scrape interval) (Grafana's formula).
- Template variables (Grafana's value policy over the substitution core of ``dashgen.document``):
  their current selection; ``All`` expands to the variable's ``allValue``
  (``.+``) or, without one, the regex join of its option values. Custom ``text : value`` options
  use the value. Multi values are joined ``(a|b)`` with Grafana's regex escaping.
- ``instant: true`` (and ``range`` not true) -> one instant query at the window end, else a range
  query over the window with step = ``$__interval``; both flags -> both queries, as Grafana runs them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dashgen.document import Reference, substitute

LATEST_TIME = 253_402_300_799.0  # 9999-12-31T23:59:59Z: the last instant an RFC 3339 time can name
LONGEST_SPAN = 100 * 31_536_000.0  # seconds: a window or interval longer than 100 years is no store's
DEFAULT_SCRAPE_SECONDS = 15.0
DEFAULT_MAX_DATA_POINTS = 1000
_DURATION_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d|w|y)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}

# Grafana's roundInterval (pkg/tsdb/intervalv2): upper bound (ms, exclusive) -> rounded interval (ms).
_ROUNDING: tuple[tuple[int, int], ...] = (
    (10, 1),
    (15, 10),
    (35, 20),
    (75, 50),
    (150, 100),
    (350, 200),
    (750, 500),
    (1500, 1000),
    (3500, 2000),
    (7500, 5000),
    (12500, 10000),
    (17500, 15000),
    (25000, 20000),
    (45000, 30000),
    (90000, 60000),
    (210000, 120000),
    (450000, 300000),
    (750000, 600000),
    (1050000, 900000),
    (1500000, 1200000),
    (2700000, 1800000),
    (5400000, 3600000),
    (9000000, 7200000),
    (16200000, 10800000),
    (24300000, 21600000),
    (64800000, 43200000),
    (129600000, 86400000),
    (604800000, 86400000 * 7),
    (1814400000, 86400000 * 30),
)


def parse_duration(text: str) -> float:
    """Seconds from ``15s``, ``1h``, ``90m``, ``250ms`` (one unit); raises ValueError."""
    match = _DURATION_RE.match(text.strip())
    if not match:
        raise ValueError(f"expected a duration like '30s', '1h' or '6h', got {text!r}")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def parse_span(text: str) -> float:
    """Seconds of a window or an interval given by a person (``--window``, ``--scrape-interval``): a duration as
    :func:`parse_duration`, longer than 0 and at most :data:`LONGEST_SPAN`; raises ValueError."""
    seconds = parse_duration(text)
    if not 0 < seconds <= LONGEST_SPAN:
        raise ValueError(f"expected a duration longer than 0 and at most 100y, got {text!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest exact Prometheus duration: ``1h``, ``90s``, ``1500ms``."""
    ms = int(round(seconds * 1000))
    for unit, size in (("d", 86400000), ("h", 3600000), ("m", 60000), ("s", 1000)):
        if ms % size == 0 and ms >= size:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def round_interval(seconds: float) -> float:
    """Grafana's rounding of a calculated interval to a 'nice' value."""
    ms = seconds * 1000
    for bound, rounded in _ROUNDING:
        if ms < bound:
            return rounded / 1000
    return 365 * 86400.0


def calculate_interval(window: float, max_data_points: int, min_interval: float) -> float:
    return max(round_interval(window / max(max_data_points, 1)), min_interval)


def rate_interval(interval: float, scrape: float) -> float:
    """Grafana: max($__interval + scrape interval, 4 x scrape interval)."""
    return max(interval + scrape, 4 * scrape)


# -- template variables ---------------------------------------------------------------------------

_REGEX_SPECIAL = re.compile(r"[$^*{}\[\]'+?.()|]")


def regex_escape(value: str) -> str:
    """Grafana's prometheusSpecialRegexEscape for multi/all variable values."""
    return _REGEX_SPECIAL.sub(lambda m: "\\\\" + m.group(0), value.replace("\\", "\\\\\\\\"))


def _custom_options(query: str) -> list[str]:
    values = []
    for part in re.split(r"(?<!\\),", query):
        part = part.strip()
        if not part:
            continue
        text, sep, value = part.partition(" : ")
        values.append(value.strip() if sep else text)
    return values


def variable_values(
    variables: list[Mapping[str, Any]],
    label_values: Callable[[str, str], list[str]] | None = None,
) -> dict[str, str]:
    """Each variable's interpolated text for a Prometheus query, in the dashboard's default selection.

    ``label_values(match, label)`` answers ``label_values(match, label)`` queries for a query variable
    with ``All`` selected and no ``allValue`` (Grafana then joins every value it found).
    """
    resolved: dict[str, str] = {}
    for raw in variables:
        name = str(raw.get("name") or "")
        kind = raw.get("type")
        if not name or kind == "datasource":
            continue
        current = raw.get("current")
        selected = current.get("value") if isinstance(current, Mapping) else None
        selected = [str(v) for v in selected] if isinstance(selected, list) else ([str(selected)] if selected else [])
        option_values = [
            str(o.get("value"))
            for o in raw.get("options") or []
            if isinstance(o, Mapping) and o.get("value") not in (None, "$__all")
        ]
        query = raw.get("query")
        query = query.get("query", "") if isinstance(query, Mapping) else str(query or "")
        if kind == "custom" and not option_values:
            option_values = _custom_options(query)
        multi = bool(raw.get("multi")) or bool(raw.get("includeAll"))
        if not selected or "$__all" in selected or "All" in selected:
            if raw.get("allValue"):
                resolved[name] = str(raw["allValue"])
                continue
            values = option_values
            if not values and kind == "query" and label_values is not None:
                match = re.match(r"^\s*label_values\((.*),\s*(\w+)\s*\)\s*$", query)
                if match:
                    values = label_values(expand_text(match.group(1), resolved), match.group(2))
            selected = values
        if not selected:
            resolved[name] = ""
        elif not multi:
            resolved[name] = selected[0]
        else:
            escaped = [regex_escape(v) for v in selected]
            resolved[name] = escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
    return resolved


def expand_text(text: str, values: Mapping[str, str]) -> str:
    """Replace ``$name``, ``${name}``, ``${name:fmt}`` and ``[[name]]`` everywhere (Grafana does not skip quotes).

    The value is the variable's interpolated text whatever the format. Unknown names, and references
    whose name or format is not a word, are left as written, so the data source reports them.
    """

    def grafana_value(ref: Reference) -> str | None:
        return values.get(ref.name) if ref.is_plain else None

    return substitute(text, grafana_value)


# -- targets --------------------------------------------------------------------------------------


QueryKind = Literal["instant", "range"]


@dataclass(frozen=True)
class ExpandedQuery:
    """One query to send: ``kind`` instant (at ``end``) or range ([start, end] by ``step``)."""

    ref_id: str
    kind: QueryKind
    expr: str
    original: str
    start: float
    end: float
    step: float
    interval: float
    rate_interval: float


@dataclass(frozen=True)
class Window:
    """The dashboard time range: ``end`` (unix seconds) and its length in seconds."""

    end: float
    length: float

    @property
    def start(self) -> float:
        return self.end - self.length


def globals_for(window: Window, interval: float, rate: float) -> dict[str, str]:
    seconds = int(round(window.length))
    return {
        "__range": f"{seconds}s",
        "__range_s": str(seconds),
        "__range_ms": str(int(round(window.length * 1000))),
        "__interval": format_duration(interval),
        "__interval_ms": str(int(round(interval * 1000))),
        "__rate_interval": format_duration(rate),
        "__rate_interval_ms": str(int(round(rate * 1000))),
        "__from": str(int(window.start * 1000)),
        "__to": str(int(window.end * 1000)),
    }


def _min_interval(panel: Mapping[str, Any], target: Mapping[str, Any], scrape: float) -> float:
    for raw in (target.get("interval"), panel.get("interval")):
        if isinstance(raw, str) and raw.strip():
            text = raw.strip().lstrip(">")
            try:
                return parse_duration(text)
            except ValueError:
                continue
    return scrape


def expand_target(
    panel: Mapping[str, Any],
    target: Mapping[str, Any],
    variables: Mapping[str, str],
    window: Window,
    scrape_seconds: float = DEFAULT_SCRAPE_SECONDS,
    max_data_points: int = DEFAULT_MAX_DATA_POINTS,
) -> list[ExpandedQuery]:
    """The queries Grafana would run for one target (empty when the target is hidden or has no expr)."""
    expr = target.get("expr")
    if not isinstance(expr, str) or not expr.strip() or target.get("hide"):
        return []
    points = panel.get("maxDataPoints") or max_data_points
    min_step = _min_interval(panel, target, scrape_seconds)
    interval = calculate_interval(window.length, int(points), min_step)
    # Grafana: "Scrape interval" in $__rate_interval is the query's Min step when one is set, else the data
    # source's scrape interval.
    rate = rate_interval(interval, min_step)
    values = {**variables, **globals_for(window, interval, rate)}
    expanded = expand_text(expr, values)
    # Variables may carry variables (chained); a second pass settles them.
    expanded = expand_text(expanded, values)
    instant = bool(target.get("instant"))
    wants_range = bool(target.get("range")) or not instant
    ref = str(target.get("refId") or "")
    queries = []
    if instant:
        queries.append(ExpandedQuery(ref, "instant", expanded, expr, window.start, window.end, 0, interval, rate))
    if wants_range:
        step = max(interval, 0.001)
        start = math.floor(window.start / step) * step
        queries.append(ExpandedQuery(ref, "range", expanded, expr, start, window.end, step, interval, rate))
    return queries


def parse_time(text: str, now: float) -> float:
    """Unix seconds from ``now``, ``now-2h``, a unix timestamp (s or ms) or an RFC 3339 time."""
    from datetime import datetime

    text = text.strip()
    if text == "now":
        return now
    if text.startswith("now-"):
        return _in_range(now - parse_duration(text[4:]), text)
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        return _in_range(value / 1000 if value > 1e11 else value, text)
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ValueError(f"expected 'now', 'now-2h', unix seconds or an RFC 3339 time, got {text!r}") from None
    return _in_range(stamp, text)


def _in_range(seconds: float, text: str) -> float:
    """``seconds`` when it is a time a store can hold: after 1970 and before the year 10000 (NaN, infinities,
    0, negative and 24-digit times are refused as input errors: no store holds a sample there)."""
    if not (math.isfinite(seconds) and 0 < seconds <= LATEST_TIME):
        raise ValueError(f"expected a time after 1970 and before the year 10000, got {text!r}")
    return seconds
