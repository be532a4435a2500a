"""Grafana's migrations of retired panel plugins, as its frontend applies them when it opens an old panel:
``graph`` -> ``timeseries`` (``graphToTimeseriesOptions``), ``singlestat`` -> ``stat`` (or ``gauge``),
``table-old`` -> ``table``, and old value mappings -> current ones (schema 30).

Each function takes the panel JSON and returns the migrated panel and the notes of what changed or could
not be carried (a note is reported on import). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Keys every panel keeps through a plugin change (what is not the plugin's own options).
PANEL_KEYS = (
    "id",
    "gridPos",
    "title",
    "description",
    "datasource",
    "targets",
    "links",
    "transparent",
    "repeat",
    "repeatDirection",
    "maxPerRow",
    "interval",
    "maxDataPoints",
    "timeFrom",
    "timeShift",
    "hideTimeOverride",
    "transformations",
    "libraryPanel",
    "cacheTimeout",
    "span",
    "height",
)
REDUCERS = {
    "avg": "mean",
    "min": "min",
    "max": "max",
    "current": "lastNotNull",
    "total": "sum",
    "first": "first",
    "delta": "delta",
    "diff": "diff",
    "range": "range",
    "last_time": "lastNotNull",
    "name": "lastNotNull",
}
THRESHOLD_COLOURS = {"critical": "red", "warning": "orange", "ok": "green"}


def _d(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _l(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else number


def _kept(panel: Mapping[str, Any]) -> dict[str, Any]:
    return {key: panel[key] for key in PANEL_KEYS if key in panel and panel[key] is not None}


def _axis(axis: Any) -> dict[str, Any]:
    """A graph y-axis as field defaults (``getFieldConfigFromOldAxis``)."""
    if not isinstance(axis, Mapping):
        return {}
    custom: dict[str, Any] = {"axisPlacement": "auto" if axis.get("show", True) else "hidden"}
    if axis.get("label"):
        custom["axisLabel"] = axis["label"]
    if axis.get("logBase") in (2, 10):
        custom["scaleDistribution"] = {"type": "log", "log": axis["logBase"]}
    out: dict[str, Any] = {
        "unit": axis.get("format"),
        "decimals": _number(axis.get("decimals")),
        "min": _number(axis.get("min")),
        "max": _number(axis.get("max")),
        "custom": custom,
    }
    return {key: value for key, value in out.items() if value is not None}


def _series_override(override: Mapping[str, Any], notes: list[str]) -> dict[str, Any] | None:
    alias = override.get("alias")
    if not isinstance(alias, str) or not alias:
        return None
    regex = len(alias) > 1 and alias.startswith("/") and alias.endswith("/")
    matcher = {"id": "byRegexp", "options": alias[1:-1]} if regex else {"id": "byName", "options": alias}
    props: list[dict[str, Any]] = []
    for name, value in override.items():
        if name == "alias":
            continue
        if name == "yaxis":
            if value == 2:
                props.append({"id": "custom.axisPlacement", "value": "right"})
        elif name == "color":
            props.append({"id": "color", "value": {"mode": "fixed", "fixedColor": value}})
        elif name == "fill" and (fill := _number(value)) is not None:
            props.append({"id": "custom.fillOpacity", "value": fill * 10})
        elif name == "linewidth":
            props.append({"id": "custom.lineWidth", "value": value})
        elif name == "lines" and value is False:
            props.append({"id": "custom.lineWidth", "value": 0})
        elif name == "points":
            props.append({"id": "custom.showPoints", "value": "always" if value else "never"})
        elif name == "bars" and value:
            props.append({"id": "custom.drawStyle", "value": "bars"})
        elif name == "stack":
            props.append({"id": "custom.stacking", "value": {"mode": "normal", "group": str(value)}})
        elif name == "transform" and value == "negative-Y":
            props.append({"id": "custom.transform", "value": "negative-Y"})
        elif name == "legend" and value is False:
            props.append({"id": "custom.hideFrom", "value": {"legend": True, "tooltip": False, "viz": False}})
        elif name == "steppedLine" and value:
            props.append({"id": "custom.lineInterpolation", "value": "stepAfter"})
        else:
            notes.append(f"series override {alias!r}: {name} not migrated")
    return {"matcher": matcher, "properties": props} if props else None


def _graph_thresholds(thresholds: Any, defaults: dict[str, Any]) -> None:
    if not isinstance(thresholds, list) or not thresholds:
        return
    steps: list[dict[str, Any]] = [{"color": "transparent", "value": None}]
    style = "line"
    numbered = [
        (value, t) for t in thresholds if isinstance(t, Mapping) and (value := _number(t.get("value"))) is not None
    ]
    for value, item in sorted(numbered, key=lambda pair: pair[0]):
        mode = item.get("colorMode")
        if mode == "custom":
            colour = item.get("lineColor") or item.get("fillColor")
        else:
            colour = THRESHOLD_COLOURS.get(mode) if isinstance(mode, str) else None
        steps.append({"color": colour or "red", "value": value})
        if item.get("fill"):
            style = "line+area" if item.get("line", True) else "area"
    defaults["thresholds"] = {"mode": "absolute", "steps": steps}
    defaults.setdefault("custom", {})["thresholdsStyle"] = {"mode": style}


def graph_to_timeseries(panel: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``graph`` -> ``timeseries``: axes, draw style, fill, legend, tooltip, stacking, thresholds, overrides."""
    notes: list[str] = []
    yaxes = _l(panel.get("yaxes"))
    defaults = _axis(yaxes[0] if yaxes else None)
    custom = defaults.setdefault("custom", {})
    bars, lines, points = bool(panel.get("bars")), panel.get("lines", True), bool(panel.get("points"))
    custom["drawStyle"] = "bars" if bars else "line" if lines else "points"
    if points:
        custom["showPoints"] = "always"
        if (radius := _number(panel.get("pointradius"))) is not None:
            custom["pointSize"] = 2 + radius * 2
    elif custom["drawStyle"] != "points":
        custom["showPoints"] = "never"
    if (line_width := _number(panel.get("linewidth"))) is not None:
        custom["lineWidth"] = line_width
    if panel.get("dashes"):
        custom["lineStyle"] = {"fill": "dash", "dash": [panel.get("dashLength", 10), panel.get("spaceLength", 10)]}
    if (fill := _number(panel.get("fill"))) is not None:
        custom["fillOpacity"] = fill * 10
    if (gradient := _number(panel.get("fillGradient"))) is not None and gradient > 0:
        custom["gradientMode"] = "opacity"
        custom["fillOpacity"] = gradient * 10
    if panel.get("steppedLine"):
        custom["lineInterpolation"] = "stepAfter"
    if panel.get("stack"):
        custom["stacking"] = {"mode": "percent" if panel.get("percentage") else "normal", "group": "A"}
    null_mode = panel.get("nullPointMode")
    if null_mode == "connected":
        custom["spanNulls"] = True
    elif null_mode == "null as zero":
        notes.append("nullPointMode 'null as zero' has no time series equivalent: gaps stay gaps")
    _graph_thresholds(panel.get("thresholds"), defaults)
    overrides = _l(_d(panel.get("fieldConfig")).get("overrides"))
    for alias, colour in _d(panel.get("aliasColors")).items():
        overrides.append(
            {
                "matcher": {"id": "byName", "options": alias},
                "properties": [{"id": "color", "value": {"mode": "fixed", "fixedColor": colour}}],
            }
        )
    for override in _l(panel.get("seriesOverrides")):
        if isinstance(override, Mapping) and (rule := _series_override(override, notes)) is not None:
            overrides.append(rule)
    legend_in = _d(panel.get("legend"))
    legend: dict[str, Any] = {"displayMode": "list", "showLegend": True, "placement": "bottom", "calcs": []}
    if legend_in:
        if legend_in.get("show", True):
            legend["displayMode"] = "table" if legend_in.get("alignAsTable") else "list"
        else:
            legend["showLegend"] = False
        if legend_in.get("rightSide"):
            legend["placement"] = "right"
        if legend_in.get("values"):
            legend["calcs"] = [REDUCERS[k] for k in ("min", "max", "avg", "current", "total") if legend_in.get(k)]
        if legend_in.get("sideWidth"):
            legend["width"] = legend_in["sideWidth"]
    tooltip_in = _d(panel.get("tooltip"))
    tooltip = {"mode": "multi" if tooltip_in.get("shared") else "single", "sort": "none"}
    if tooltip_in.get("shared") and tooltip_in.get("sort") in (1, 2):
        tooltip["sort"] = "asc" if tooltip_in["sort"] == 1 else "desc"
    if (
        len(yaxes) > 1
        and isinstance(yaxes[1], Mapping)
        and not any(isinstance(o, Mapping) and o.get("yaxis") == 2 for o in _l(panel.get("seriesOverrides")))
    ):
        pass  # the right axis shows nothing unless a series is moved to it
    elif len(yaxes) > 1:
        notes.append("right y-axis settings (unit, min, max) not migrated; its series keep the left axis' unit")
    xaxis = _d(panel.get("xaxis"))
    if xaxis.get("mode") not in (None, "time"):
        notes.append(f"x-axis mode {xaxis['mode']!r} not migrated (drawn over time)")
    if panel.get("timeRegions"):
        notes.append("time regions not migrated")
    out = _kept(panel)
    out.update(
        {
            "type": "timeseries",
            "fieldConfig": {"defaults": defaults, "overrides": overrides},
            "options": {"legend": legend, "tooltip": tooltip},
        }
    )
    return out, notes


def _old_mappings(panel: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``valueMaps`` / ``rangeMaps`` of a singlestat (``convertOldAngularValueMappings``)."""
    kind = panel.get("mappingType")
    if not kind:
        kind = 1 if panel.get("valueMaps") else 2 if panel.get("rangeMaps") else 0
    old = panel.get("valueMaps") if kind == 1 else panel.get("rangeMaps") if kind == 2 else []
    return upgrade_mappings([{**m, "type": kind} for m in _l(old) if isinstance(m, Mapping)])


def upgrade_mappings(old: list[Any]) -> list[dict[str, Any]]:
    """Old mappings (``{type: 1, value, text}`` / ``{type: 2, from, to, text}``) -> current ones (schema 30)."""
    values: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    for mapping in old:
        if not isinstance(mapping, Mapping):
            continue
        if mapping.get("type") in ("value", "range", "special", "regex") and "options" in mapping:
            out.append(dict(mapping))
            continue
        result = {"text": mapping.get("text")}
        if mapping.get("type") in (1, "1"):
            if mapping.get("value") == "null":
                out.append({"type": "special", "options": {"match": "null", "result": result}})
            else:
                values[str(mapping.get("value"))] = {**result, "index": len(values)}
        elif mapping.get("type") in (2, "2"):
            if mapping.get("from") == "null" and mapping.get("to") == "null":
                out.append({"type": "special", "options": {"match": "null", "result": result}})
            else:
                out.append(
                    {
                        "type": "range",
                        "options": {
                            "from": _number(mapping.get("from")),
                            "to": _number(mapping.get("to")),
                            "result": result,
                        },
                    }
                )
    return ([{"type": "value", "options": values}] if values else []) + out


def singlestat_to_stat(panel: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``singlestat`` -> ``stat`` (``gauge`` when its gauge was shown): reducer, unit, thresholds, mappings."""
    notes: list[str] = []
    colours = _l(panel.get("colors"))
    limits = [_number(v) for v in str(panel.get("thresholds") or "").split(",") if v.strip()]
    steps = [{"color": colours[0] if colours else "green", "value": None}]
    steps += [
        {"color": colours[i + 1] if i + 1 < len(colours) else "red", "value": v}
        for i, v in enumerate(limits)
        if v is not None
    ]
    defaults: dict[str, Any] = {
        "unit": panel.get("format") or "none",
        "mappings": _old_mappings(panel),
        "thresholds": {"mode": "absolute", "steps": steps},
        "color": {"mode": "thresholds"},
    }
    if _number(panel.get("decimals")) is not None:
        defaults["decimals"] = _number(panel["decimals"])
    if isinstance(panel.get("nullText"), str) and panel["nullText"]:
        defaults["noValue"] = panel["nullText"]
    calc = REDUCERS.get(str(panel.get("valueName") or "avg"), "mean")
    options: dict[str, Any] = {
        "reduceOptions": {"calcs": [calc], "fields": "", "values": False},
        "orientation": "horizontal",
        "textMode": "auto",
        "justifyMode": "auto",
    }
    gauge = _d(panel.get("gauge"))
    plugin = "gauge" if gauge.get("show") else "stat"
    if plugin == "gauge":
        defaults["min"], defaults["max"] = _number(gauge.get("minValue")), _number(gauge.get("maxValue"))
        options.update(
            {
                "showThresholdLabels": bool(gauge.get("thresholdLabels")),
                "showThresholdMarkers": gauge.get("thresholdMarkers", True),
            }
        )
    else:
        options["colorMode"] = (
            "background" if panel.get("colorBackground") else "value" if panel.get("colorValue") else "none"
        )
        options["graphMode"] = "area" if _d(panel.get("sparkline")).get("show") else "none"
    for old in ("prefix", "postfix"):
        if panel.get(old):
            notes.append(f"{old} {panel[old]!r} not migrated")
    out = _kept(panel)
    out.update(
        {
            "type": plugin,
            "fieldConfig": {"defaults": {k: v for k, v in defaults.items() if v is not None}, "overrides": []},
            "options": options,
        }
    )
    return out, notes


TABLE_TRANSFORMS = {
    "timeseries_to_rows": "seriesToRows",
    "timeseries_to_columns": "seriesToColumns",
    "timeseries_aggregations": "reduce",
    "table": "merge",
}


def _style_properties(style: Mapping[str, Any]) -> list[dict[str, Any]]:
    props: list[dict[str, Any]] = []
    if style.get("alias"):
        props.append({"id": "displayName", "value": style["alias"]})
    if style.get("type") == "hidden":
        props.append({"id": "custom.hidden", "value": True})
    if style.get("type") == "date":
        props.append({"id": "unit", "value": f"time: {style.get('dateFormat') or 'YYYY-MM-DD HH:mm:ss'}"})
    elif style.get("unit"):
        props.append({"id": "unit", "value": style["unit"]})
    if _number(style.get("decimals")) is not None:
        props.append({"id": "decimals", "value": _number(style["decimals"])})
    if style.get("colorMode") in ("cell", "row", "value"):
        cell = "color-text" if style["colorMode"] == "value" else "color-background"
        props.append({"id": "custom.cellOptions", "value": {"type": cell}})
    if style.get("align") and style["align"] != "auto":
        props.append({"id": "custom.align", "value": style["align"]})
    limits = [_number(v) for v in _l(style.get("thresholds")) if _number(v) is not None]
    colours = _l(style.get("colors"))
    if limits:
        steps = [{"color": colours[0] if colours else "green", "value": None}]
        steps += [
            {"color": colours[i + 1] if i + 1 < len(colours) else "red", "value": v} for i, v in enumerate(limits)
        ]
        props.append({"id": "thresholds", "value": {"mode": "absolute", "steps": steps}})
    if style.get("link") and style.get("linkUrl"):
        props.append({"id": "links", "value": [{"title": style.get("linkTooltip") or "", "url": style["linkUrl"]}]})
    return props


def table_old_to_table(panel: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``table-old`` (the Angular table) -> ``table``: styles become defaults and overrides."""
    notes: list[str] = []
    defaults: dict[str, Any] = {"custom": {"align": "auto", "cellOptions": {"type": "auto"}, "inspect": False}}
    overrides: list[dict[str, Any]] = []
    for style in _l(panel.get("styles")):
        if not isinstance(style, Mapping):
            continue
        pattern = str(style.get("pattern") or "")
        props = _style_properties(style)
        if pattern == "/.*/":
            for prop in props:
                path, value = prop["id"].split("."), prop["value"]
                (defaults.setdefault("custom", {}) if path[0] == "custom" else defaults)[path[-1]] = value
        elif props:
            regex = len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/")
            matcher = {"id": "byRegexp", "options": pattern[1:-1]} if regex else {"id": "byName", "options": pattern}
            overrides.append({"matcher": matcher, "properties": props})
    out = _kept(panel)
    transform = panel.get("transform")
    if transform in TABLE_TRANSFORMS:
        step: dict[str, Any] = {"id": TABLE_TRANSFORMS[transform], "options": {}}
        if transform == "timeseries_aggregations":
            columns = [c.get("value") for c in _l(panel.get("columns")) if isinstance(c, Mapping)]
            step["options"] = {"reducers": [REDUCERS.get(str(c), str(c)) for c in columns]}
        out["transformations"] = [step, *_l(out.get("transformations"))]
    elif transform:
        notes.append(f"table transform {transform!r} not migrated")
    options: dict[str, Any] = {
        "showHeader": panel.get("showHeader", True),
        "cellHeight": "sm",
        "footer": {"show": False, "reducer": ["sum"], "countRows": False, "fields": ""},
    }
    sort = _d(panel.get("sort"))
    if sort.get("col") is not None:
        notes.append("sort by column index not migrated (the new table sorts by column name)")
    out.update({"type": "table", "fieldConfig": {"defaults": defaults, "overrides": overrides}, "options": options})
    return out, notes


PLUGIN_MIGRATIONS = {
    "graph": graph_to_timeseries,
    "singlestat": singlestat_to_stat,
    "grafana-singlestat-panel": singlestat_to_stat,
    "table-old": table_old_to_table,
}
