"""What a person saving a dashboard in Grafana's UI does to its JSON (grafana-api.md §7.2).

``ui_normalise`` returns a copy of a stored dashboard as the frontend would save it back:
schemaVersion bumped with the migrations' edits, data-source references as objects, panels
given ids, gridPos, pluginVersion and defaulted fieldConfig/options, and the dashboard-level
defaults including the built-in annotation.
"""

from __future__ import annotations

from typing import Any

from dashgen.document.copying import tree_copy

BUILTIN_ANNOTATION: dict[str, Any] = {
    "builtIn": 1,
    "datasource": {"type": "grafana", "uid": "-- Grafana --"},
    "enable": True,
    "hide": True,
    "iconColor": "rgba(0, 211, 255, 1)",
    "name": "Annotations & Alerts",
    "type": "dashboard",
}

_THRESHOLDS = {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 80}]}

_TIMESERIES_CUSTOM: dict[str, Any] = {
    "axisBorderShow": False,
    "axisCenteredZero": False,
    "axisColorMode": "text",
    "axisLabel": "",
    "axisPlacement": "auto",
    "barAlignment": 0,
    "barWidthFactor": 0.6,
    "drawStyle": "line",
    "fillOpacity": 0,
    "gradientMode": "none",
    "hideFrom": {"legend": False, "tooltip": False, "viz": False},
    "insertNulls": False,
    "lineInterpolation": "linear",
    "lineWidth": 1,
    "pointSize": 5,
    "scaleDistribution": {"type": "linear"},
    "showPoints": "auto",
    "spanNulls": False,
    "stacking": {"group": "A", "mode": "none"},
    "thresholdsStyle": {"mode": "off"},
}

_REDUCE = {"calcs": ["lastNotNull"], "fields": "", "values": False}

_PLUGIN_OPTIONS: dict[str, dict[str, Any]] = {
    "timeseries": {
        "legend": {"calcs": [], "displayMode": "list", "placement": "bottom", "showLegend": True},
        "tooltip": {"hideZeros": False, "mode": "single", "sort": "none"},
    },
    "stat": {
        "colorMode": "value",
        "graphMode": "area",
        "justifyMode": "auto",
        "orientation": "auto",
        "percentChangeColorMode": "standard",
        "reduceOptions": _REDUCE,
        "showPercentChange": False,
        "textMode": "auto",
        "wideLayout": True,
    },
    "gauge": {
        "minVizHeight": 75,
        "minVizWidth": 75,
        "orientation": "auto",
        "reduceOptions": _REDUCE,
        "showThresholdLabels": False,
        "showThresholdMarkers": True,
        "sizing": "auto",
    },
    "bargauge": {
        "displayMode": "gradient",
        "maxVizHeight": 300,
        "minVizHeight": 16,
        "minVizWidth": 8,
        "namePlacement": "auto",
        "orientation": "auto",
        "reduceOptions": _REDUCE,
        "showUnfilled": True,
        "sizing": "auto",
        "valueMode": "color",
    },
    "table": {
        "cellHeight": "sm",
        "footer": {"countRows": False, "fields": "", "reducer": ["sum"], "show": False},
        "showHeader": True,
    },
}

_DASHBOARD_DEFAULTS: dict[str, Any] = {
    "editable": True,
    "fiscalYearStartMonth": 0,
    "graphTooltip": 0,
    "links": [],
    "preload": False,
    "refresh": "",
    "tags": [],
    "time": {"from": "now-6h", "to": "now"},
    "timepicker": {},
    "timezone": "browser",
    "weekStart": "",
}


def ui_normalise(
    dashboard: dict[str, Any],
    *,
    grafana_version: str,
    latest_schema_version: int,
    datasources: dict[str, dict[str, str]],
    default_datasource: dict[str, str],
    drop_empty_tags: bool,
) -> dict[str, Any]:
    """The dashboard as the UI would save it. ``datasources`` maps a name or uid to ``{type, uid}``."""
    dash = tree_copy(dashboard)
    for key, value in _DASHBOARD_DEFAULTS.items():
        dash.setdefault(key, tree_copy(value))
    dash.pop("style", None)  # deprecated; the scenes serializer no longer writes it

    annotations = dash.setdefault("annotations", {}).setdefault("list", [])
    if not any(isinstance(a, dict) and a.get("builtIn") == 1 for a in annotations):
        annotations.insert(0, tree_copy(BUILTIN_ANNOTATION))

    templating = dash.setdefault("templating", {}).setdefault("list", [])
    for variable in templating:
        if isinstance(variable, dict) and "datasource" in variable and variable.get("type") == "query":
            variable["datasource"] = _ds_ref(variable["datasource"], datasources, default_datasource)

    old_schema = int(dash.get("schemaVersion") or 0)
    if old_schema < 41:
        dash.get("timepicker", {}).pop("time_options", None)
    dash["schemaVersion"] = max(old_schema, latest_schema_version)

    panels = dash.setdefault("panels", [])
    next_id = [max([p.get("id", 0) for p in _all_panels(panels) if isinstance(p.get("id"), int)] + [0]) + 1]
    y = 0
    for panel in panels:
        _normalise_panel(
            panel,
            y,
            next_id,
            grafana_version,
            datasources,
            default_datasource,
            migrate_v42=old_schema < 42 <= latest_schema_version,
        )
        y = panel["gridPos"]["y"] + panel["gridPos"]["h"]
        for child in panel.get("panels") or []:  # collapsed rows keep their panels inside
            _normalise_panel(
                child,
                y,
                next_id,
                grafana_version,
                datasources,
                default_datasource,
                migrate_v42=old_schema < 42 <= latest_schema_version,
            )

    if drop_empty_tags and dash.get("tags") == []:
        del dash["tags"]
    return dash


def _all_panels(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for panel in panels:
        out.append(panel)
        out.extend(panel.get("panels") or [])
    return out


def _normalise_panel(
    panel: dict[str, Any],
    y: int,
    next_id: list[int],
    grafana_version: str,
    datasources: dict[str, dict[str, str]],
    default_ds: dict[str, str],
    *,
    migrate_v42: bool,
) -> None:
    if not isinstance(panel.get("id"), int):
        panel["id"] = next_id[0]
        next_id[0] += 1
    panel.setdefault("gridPos", {"h": 8, "w": 12, "x": 0, "y": y})
    if panel.get("type") == "row":
        panel.setdefault("collapsed", False)
        return
    panel["pluginVersion"] = grafana_version
    panel["datasource"] = _ds_ref(panel.get("datasource"), datasources, default_ds)
    refs = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    used = {t.get("refId") for t in panel.get("targets") or [] if isinstance(t, dict)}
    for target in panel.get("targets") or []:
        if not target.get("refId"):
            target["refId"] = next(r for r in refs if r not in used)
            used.add(target["refId"])
        target["datasource"] = (
            _ds_ref(target["datasource"], datasources, default_ds)
            if "datasource" in target
            else tree_copy(panel["datasource"])
        )

    plugin = str(panel.get("type") or "timeseries")
    field_config = panel.setdefault("fieldConfig", {})
    defaults = field_config.setdefault("defaults", {})
    defaults.setdefault("color", {"mode": "palette-classic" if plugin == "timeseries" else "thresholds"})
    defaults.setdefault("mappings", [])
    defaults.setdefault("thresholds", tree_copy(_THRESHOLDS))
    if plugin == "timeseries":
        _merge_defaults(defaults.setdefault("custom", {}), _TIMESERIES_CUSTOM)
    field_config.setdefault("overrides", [])
    _merge_defaults(panel.setdefault("options", {}), _PLUGIN_OPTIONS.get(plugin, {}))
    if migrate_v42:
        _hide_tooltip_where_viz_hidden(field_config)


def _hide_tooltip_where_viz_hidden(node: Any) -> None:
    """Schema migration v42: ``hideFrom.tooltip: true`` wherever ``hideFrom.viz`` is true."""
    if isinstance(node, dict):
        hide = node.get("hideFrom")
        if isinstance(hide, dict) and hide.get("viz") is True:
            hide["tooltip"] = True
        for value in node.values():
            _hide_tooltip_where_viz_hidden(value)
    elif isinstance(node, list):
        for value in node:
            _hide_tooltip_where_viz_hidden(value)


def _merge_defaults(target: dict[str, Any], defaults: dict[str, Any]) -> None:
    for key, value in defaults.items():
        if key not in target:
            target[key] = tree_copy(value)
        elif isinstance(value, dict) and isinstance(target[key], dict):
            _merge_defaults(target[key], value)


def _ds_ref(value: Any, datasources: dict[str, dict[str, str]], default_ds: dict[str, str]) -> Any:
    """Data-source string → ``{type, uid}`` object; none → the default written explicitly (v33/v36)."""
    if value is None:
        return dict(default_ds)
    if isinstance(value, str):
        if value in datasources:
            return dict(datasources[value])
        return {"type": default_ds.get("type", "prometheus"), "uid": value}
    return value
