"""One panel drawn from its data: the HTML of its box and, for a chart, the spec uPlot draws in the page.

Pure: panel JSON + :class:`~dashgen.preview.frames.PanelData` -> :class:`Drawn`. What Grafana would
show: a time series (uPlot; the y axis from fieldConfig ``min`` / ``max`` or the data, its ticks in the
panel's unit), a stat (big number, threshold or mapping colour, ``noValue``), a table (columns as the
transformations name them, units and mappings in cells), a bar gauge, a state timeline, markdown text,
and "No data" when nothing came back (never a zero line).

The box carries what a test reads: ``data-panel-key``, ``data-panel-type``, ``data-series`` (series
drawn), ``data-points`` (non-null points drawn); the page's script adds ``data-y-min`` / ``data-y-max``
from the axis uPlot actually drew.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashgen.preview import markdown
from dashgen.preview.frames import PanelData, Series
from dashgen.preview.layout import mapping_at
from dashgen.preview.units import (
    CLASSIC_PALETTE,
    axis_range,
    axis_ticks,
    colour,
    format_value,
    map_value,
    threshold_colour,
)
from dashgen.render.clipping import panel_clipped

MAX_TABLE_ROWS = 200
DATA_TYPES = ("timeseries", "stat", "table", "bargauge", "state-timeline")


@dataclass
class Drawn:
    """A panel's inner HTML, its box attributes and, for a time series, the chart spec for the page script."""

    body: str
    attributes: dict[str, str] = field(default_factory=dict)
    chart: dict[str, Any] | None = None


def _defaults(panel: Mapping[str, Any]) -> Mapping[str, Any]:
    config = mapping_at(panel, "fieldConfig")
    defaults = config.get("defaults")
    return defaults if isinstance(defaults, Mapping) else {}


def _decimals(defaults: Mapping[str, Any]) -> int | None:
    raw = defaults.get("decimals")
    return int(raw) if isinstance(raw, int | float) else None


def _fmt(value: float | None, defaults: Mapping[str, Any], now: float) -> tuple[str, str | None]:
    """(text, colour) of a value: a mapping first, else the unit; the colour of the mapping or thresholds."""
    text, mapped = map_value(value, defaults.get("mappings"))
    shown = text if text is not None else format_value(value, defaults.get("unit"), _decimals(defaults), now)
    return shown, mapped or threshold_colour(value, defaults.get("thresholds"))


def no_data(defaults: Mapping[str, Any], errors: list[str]) -> str:
    """Grafana's empty panel: the panel's ``noValue`` text or "No data" (the first query error when all failed)."""
    if errors:
        return f'<div class="nodata error" title="{html.escape(errors[0])}">{html.escape(errors[0][:300])}</div>'
    text = str(defaults.get("noValue") or "No data")
    return f'<div class="nodata">{html.escape(text)}</div>'


def draw(panel: Mapping[str, Any], data: PanelData | None, chart_id: str, now: float) -> Drawn:
    """The panel's body; ``data`` is None for a panel without queries (text) or not queried (folded)."""
    kind = str(panel.get("type") or "")
    defaults = _defaults(panel)
    if kind == "text":
        options = panel.get("options") or {}
        content = str(options.get("content") or "")
        if options.get("mode") == "html":
            body = f'<div class="text"><pre>{html.escape(content)}</pre></div>'
        else:
            body = f'<div class="text markdown">{markdown.render(content)}</div>'
        return Drawn(body)
    if data is None:
        return Drawn('<div class="nodata">not queried</div>')
    drawn = [s for s in data.series if s.points]
    failed = {"data-errors": str(len(data.errors))} if data.errors else {}
    attributes = {"data-series": str(len(drawn)), "data-points": str(sum(s.points for s in drawn)), **failed}
    if kind == "table":
        attributes = {"data-series": str(data.returned), "data-points": str(len(data.rows)), **failed}
        past = panel_clipped(panel, data.columns) if data.rows else []
        attributes["data-clipped-columns"] = str(len(past))
        if past:
            attributes["data-clipped"] = " | ".join(past)
        body = _table(data, defaults, now, past) if data.rows else no_data(defaults, data.errors)
        return Drawn(body, attributes)
    if not drawn:
        return Drawn(no_data(defaults, data.errors), {"data-series": "0", "data-points": "0", **failed})
    if kind == "timeseries":
        attributes["data-unit"] = str(defaults.get("unit") or "")
        return Drawn(_legend_and_chart(panel, drawn, chart_id, now), attributes, _chart(panel, data, drawn, chart_id))
    if kind == "stat":
        return Drawn(_stat(panel, drawn, defaults, now), attributes)
    if kind == "bargauge":
        return Drawn(_bars(drawn, defaults, now), attributes)
    if kind == "state-timeline":
        return Drawn(_timeline(data, drawn, defaults, now), attributes)
    return Drawn(f'<div class="nodata">panel type {html.escape(kind)} is not previewed</div>', attributes)


# -- time series ----------------------------------------------------------------------------------


CALCS: dict[str, tuple[str, Callable[[list[float]], float]]] = {
    "mean": ("Mean", lambda v: sum(v) / len(v)),
    "max": ("Max", max),
    "min": ("Min", min),
    "lastNotNull": ("Last *", lambda v: v[-1]),
    "last": ("Last", lambda v: v[-1]),
    "sum": ("Total", sum),
}


def _legend_and_chart(panel: Mapping[str, Any], series: list[Series], chart_id: str, now: float) -> str:
    """The chart's box and Grafana's legend: a list of names, or (``displayMode: table``) a table with the
    legend's calculations (mean, max, last non-null, ...) in the panel's unit."""
    legend = (panel.get("options") or {}).get("legend") or {}
    if legend.get("showLegend") is False:
        return f'<div class="chart" id="{chart_id}"></div>'
    swatch = [f'<i style="background:{CLASSIC_PALETTE[i % len(CLASSIC_PALETTE)]}"></i>' for i in range(len(series))]
    calcs = [c for c in legend.get("calcs") or [] if c in CALCS]
    if legend.get("displayMode") != "table" or not calcs:
        items = "".join(f'<span class="item">{swatch[i]}{html.escape(s.name)}</span>' for i, s in enumerate(series))
        return f'<div class="chart" id="{chart_id}"></div><div class="legend">{items}</div>'
    defaults = _defaults(panel)
    head = "".join(f"<th>{CALCS[c][0]}</th>" for c in calcs)
    rows = []
    for i, s in enumerate(series):
        values = [v for v in s.values if v is not None]
        cells = "".join(f"<td>{html.escape(_fmt(CALCS[c][1](values), defaults, now)[0])}</td>" for c in calcs)
        rows.append(f"<tr><th>{swatch[i]}{html.escape(s.name)}</th>{cells}</tr>")
    return (
        f'<div class="chart" id="{chart_id}"></div><div class="legend table-legend"><table>'
        f"<thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def y_axis(panel: Mapping[str, Any], series: list[Series]) -> dict[str, Any]:
    """The y axis Grafana draws: fixed ``min`` / ``max`` kept, open sides from the data; ticks in the unit."""
    defaults = _defaults(panel)
    custom = mapping_at(defaults, "custom")
    values = [v for s in series for v in s.values if v is not None and math.isfinite(v)]
    log = (custom.get("scaleDistribution") or {}).get("type") == "log"
    fixed_min, fixed_max = _number(defaults.get("min")), _number(defaults.get("max"))
    if log:
        positive = [v for v in values if v > 0] or [1.0]
        base = float((custom.get("scaleDistribution") or {}).get("log") or 10)
        low = base ** math.floor(math.log(min(positive), base))
        high = base ** math.ceil(math.log(max(positive), base))
        high = high if high > low else low * base
        ticks, power = [], low
        while power <= high * 1.0001:
            ticks.append(power)
            power *= base
        return _axis(low, high, ticks, defaults, log_base=base)
    low, high = axis_range(min(values, default=None), max(values, default=None), fixed_min, fixed_max)
    return _axis(low, high, axis_ticks(low, high), defaults)


def _axis(low: float, high: float, ticks: list[float], defaults: Mapping[str, Any], log_base: float = 0) -> dict:
    unit, decimals = defaults.get("unit"), _decimals(defaults)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 0
    # tick labels show as many decimals as the step needs, unless the panel fixes them
    places = decimals if decimals is not None else (max(0, -math.floor(math.log10(step))) if 0 < step < 1 else None)
    if unit == "percentunit" and decimals is None and step:
        places = max(0, -math.floor(math.log10(step * 100))) if step * 100 < 1 else 0
    labels = [format_value(t, unit, places) for t in ticks]
    return {"min": low, "max": high, "ticks": ticks, "labels": labels, "log": log_base}


def _chart(panel: Mapping[str, Any], data: PanelData, drawn: list[Series], chart_id: str) -> dict[str, Any]:
    defaults = _defaults(panel)
    custom = mapping_at(defaults, "custom")
    thresholds_mode = (custom.get("thresholdsStyle") or {}).get("mode") or "off"
    steps = [
        {"value": s.get("value"), "color": colour(s.get("color"))}
        for s in (defaults.get("thresholds") or {}).get("steps") or []
    ]
    times = data.times or [0.0]
    return {
        "id": chart_id,
        "times": times,
        "series": [
            {"name": s.name, "color": CLASSIC_PALETTE[i % len(CLASSIC_PALETTE)], "values": list(s.values)}
            for i, s in enumerate(drawn)
        ],
        "y": y_axis(panel, drawn),
        "fill": float(custom.get("fillOpacity") or 0) / 100,
        "width": float(custom.get("lineWidth") or 1),
        "thresholds": {"mode": thresholds_mode, "steps": steps},
    }


# -- stat, bar gauge, state timeline --------------------------------------------------------------


def _stat(panel: Mapping[str, Any], series: list[Series], defaults: Mapping[str, Any], now: float) -> str:
    options = panel.get("options") or {}
    mode = options.get("colorMode") or "value"
    named = options.get("textMode") in ("value_and_name", "name") or len(series) > 1
    tiles = []
    for s in series:
        text, tint = _fmt(s.last(), defaults, now)
        tint = tint or colour("green")
        style = f"background:{tint};color:#fff" if mode == "background" else f"color:{tint}"
        name = f'<div class="name">{html.escape(s.name)}</div>' if named else ""
        spark = (
            sparkline(s.values, tint if mode != "background" else "#ffffff")
            if options.get("graphMode") == "area"
            else ""
        )
        tiles.append(f'<div class="tile" style="{style}">{name}<div class="big">{html.escape(text)}</div>{spark}</div>')
    # Grafana's VizRepeater: horizontal stacks the numbers in a column; auto does so in a panel higher than wide
    stacked = " stacked" if options.get("orientation") == "horizontal" else ""
    return f'<div class="stat{stacked}">{"".join(tiles)}</div>'


def sparkline(values: Sequence[float | None], tint: str) -> str:
    """Grafana's stat ``graphMode: area``: the series as a filled SVG line under the number (gaps break it)."""
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return ""
    low, high = min(v for _, v in points), max(v for _, v in points)
    span, last = (high - low) or 1.0, max(len(values) - 1, 1)
    runs: list[list[str]] = [[]]
    for i, value in enumerate(values):
        if value is None:
            runs.append([])
            continue
        runs[-1].append(f"{i / last * 100:.2f},{30 - (value - low) / span * 28:.2f}")
    lines = "".join(
        f'<polyline points="{" ".join(run)}" fill="none" stroke="{tint}" stroke-width="1.5" '
        'vector-effect="non-scaling-stroke"/>'
        for run in runs
        if len(run) > 1
    )
    return f'<svg class="spark" viewBox="0 0 100 30" preserveAspectRatio="none">{lines}</svg>'


def _bars(series: list[Series], defaults: Mapping[str, Any], now: float) -> str:
    values = [s.last() or 0.0 for s in series]
    low = _number(defaults.get("min"))
    low = 0.0 if low is None else low
    high = _number(defaults.get("max"))
    high = max(values + [low + 1]) if high is None else high
    rows = []
    for s, value in zip(series, values, strict=True):
        text, tint = _fmt(value, defaults, now)
        share = 0 if high <= low else max(0.0, min(1.0, (value - low) / (high - low)))
        rows.append(
            f'<div class="bar"><span class="name">{html.escape(s.name)}</span><span class="track">'
            f'<span class="fill" style="width:{share * 100:.1f}%;background:{tint}"></span></span>'
            f'<span class="value" style="color:{tint}">{html.escape(text)}</span></div>'
        )
    return f'<div class="bars">{"".join(rows)}</div>'


def _timeline(data: PanelData, series: list[Series], defaults: Mapping[str, Any], now: float) -> str:
    count = max(len(data.times), 1)
    rows = []
    for s in series:
        segments, start = [], 0
        values = list(s.values)
        for i in range(1, len(values) + 1):
            if i == len(values) or values[i] != values[start]:
                if values[start] is not None:
                    text, tint = _fmt(values[start], defaults, now)
                    left, width = start / count * 100, (i - start) / count * 100
                    segments.append(
                        f'<span class="seg" title="{html.escape(text)}" '
                        f'style="left:{left:.2f}%;width:{width:.2f}%;background:{tint}">{html.escape(text)}</span>'
                    )
                start = i
        rows.append(
            f'<div class="lane"><span class="name">{html.escape(s.name)}</span>'
            f'<span class="band">{"".join(segments)}</span></div>'
        )
    return f'<div class="timeline">{"".join(rows)}</div>'


# -- table ----------------------------------------------------------------------------------------


def _cell(value: Any, column: str, defaults: Mapping[str, Any], now: float) -> str:
    custom = mapping_at(defaults, "custom")
    cell = (custom.get("cellOptions") or {}).get("type")
    if value is None:
        return "<td></td>"
    if isinstance(value, float) and column == "Time":
        return f"<td>{html.escape(format_value(value, 'dateTimeFromNow', None, now))}</td>"
    if isinstance(value, float):
        text, tint = _fmt(value, defaults, now)
        style = ""
        if tint and cell == "color-background":
            style = f' style="background:{tint};color:#fff"'
        elif tint and cell == "color-text":
            style = f' style="color:{tint}"'
        return f'<td class="num"{style}>{html.escape(text)}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _table(data: PanelData, defaults: Mapping[str, Any], now: float, past: Sequence[str] = ()) -> str:
    """The rows as Grafana's table shows them; a column past the panel's edge at 1920 px (``past``) is marked in
    its header and named under the table: Grafana would show it only after scrolling sideways."""
    head = "".join(
        f'<th class="clipped" title="past the panel\'s edge at 1920 px">&#8677; {html.escape(c)}</th>'
        if c in past
        else f"<th>{html.escape(c)}</th>"
        for c in data.columns
    )
    body = "".join(
        "<tr>" + "".join(_cell(row.get(c), c, defaults, now) for c in data.columns) + "</tr>"
        for row in data.rows[:MAX_TABLE_ROWS]
    )
    more = len(data.rows) - MAX_TABLE_ROWS
    tail = f'<div class="more">{more} more rows</div>' if more > 0 else ""
    if past:
        names = html.escape(", ".join(past))
        tail += f'<div class="clipped-note">past the edge at 1920 px: {names}</div>'
    return f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}</div>'
