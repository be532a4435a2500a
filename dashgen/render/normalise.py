"""The one normalisation step between grafanalib's output and the canonical dashboard JSON.

grafanalib 0.7.1 emits pre-Grafana-7 keys, nulls and harmful defaults (``maxDataPoints: 100``,
``intervalFactor: 2``, ``schemaVersion: 12``, Stat ``noValue: "none"``, ``steps: ""``...). Grafana
would migrate or rewrite each of them on load, so a UI save would differ from the file. This
module removes or rewrites them for every panel at once, so panel code never works around them.
"""

from __future__ import annotations

from typing import Any

DASHBOARD_DROP = {"__inputs", "hideControls", "rows", "sharedCrosshair", "style", "gnetId", "id", "version"}
PANEL_DROP = {"editable", "error", "height", "minSpan", "span", "maxDataPoints", "cacheTimeout", "hideTimeOverride"}
TABLE_DROP = {"color", "columns", "fontSize", "styles"}
TARGET_DROP = {"query", "target", "metric", "step", "intervalFactor"}
VARIABLE_DROP = {"tags", "tagsQuery", "tagValuesQuery", "useTags", "auto", "auto_count", "auto_min"}
ROW_KEEP = {"type", "collapsed", "title", "gridPos", "id", "panels"}

BUILTIN_ANNOTATION = {
    "builtIn": 1,
    "datasource": {"type": "grafana", "uid": "-- Grafana --"},
    "enable": True,
    "hide": True,
    "iconColor": "rgba(0, 211, 255, 1)",
    "name": "Annotations & Alerts",
    "type": "dashboard",
}


def normalise_dashboard(doc: dict[str, Any], schema_version: int) -> dict[str, Any]:
    """Return a new dashboard dict in the shape the target Grafana saves, with no nulls."""
    doc = dict(doc)
    for key in DASHBOARD_DROP:
        doc.pop(key, None)
    doc["schemaVersion"] = schema_version
    timepicker = dict(doc.get("timepicker") or {})
    timepicker.pop("time_options", None)
    timepicker.pop("nowDelay", None)
    doc["timepicker"] = timepicker
    doc["annotations"] = {"list": [dict(BUILTIN_ANNOTATION)]}
    doc["panels"] = [_panel(panel) for panel in doc.get("panels", [])]
    doc["templating"] = {"list": [_variable(var) for var in doc.get("templating", {}).get("list", [])]}
    if not doc.get("links"):
        doc.pop("links", None)  # Grafana 13 reads an empty array back as absent
    return _clean(doc)


def normalised_panel(panel: dict[str, Any]) -> dict[str, Any]:
    """One panel of grafanalib's JSON as ``normalise_dashboard`` leaves it in the document."""
    return _clean(_panel(panel))


def normalised(value: Any) -> Any:
    """Any other part of grafanalib's JSON (a dashboard link) as ``normalise_dashboard`` leaves it: no nulls."""
    return _clean(value)


def normalised_variable(variable: dict[str, Any]) -> dict[str, Any]:
    """One templating variable as ``normalise_dashboard`` leaves it in the document."""
    return _clean(_variable(variable))


def _panel(panel: dict[str, Any]) -> dict[str, Any]:
    panel = dict(panel)
    if panel.get("type") == "row":
        row = {key: value for key, value in panel.items() if key in ROW_KEEP}
        row["panels"] = [_panel(child) for child in panel.get("panels", [])]
        return row
    for key in PANEL_DROP:
        panel.pop(key, None)
    if panel.get("type") == "table":
        _table(panel)
    field_config = panel.setdefault("fieldConfig", {})
    field_config.setdefault("defaults", {})
    field_config.setdefault("overrides", [])
    defaults = field_config["defaults"]
    _thresholds(defaults)
    if defaults.get("custom") == {}:
        defaults.pop("custom")
    if panel.get("type") == "timeseries":
        _timeseries(defaults)
    if panel.get("type") == "text":
        panel.pop("fieldConfig", None)
        panel.pop("targets", None)
        panel.pop("datasource", None)
        panel.pop("transformations", None)
    panel["targets"] = [_target(target) for target in panel.get("targets", [])] if "targets" in panel else None
    if panel.get("options") == []:
        panel["options"] = {}
    for empty in ("links", "transformations"):
        if panel.get(empty) == []:
            panel.pop(empty)
    if panel.get("interval") == "":
        panel.pop("interval")
    return panel


def _table(panel: dict[str, Any]) -> None:
    for key in TABLE_DROP:
        panel.pop(key, None)
    top_mappings = panel.pop("mappings", None)
    defaults = panel.setdefault("fieldConfig", {}).setdefault("defaults", {})
    if top_mappings and "mappings" not in defaults:
        defaults["mappings"] = top_mappings
    custom = defaults.setdefault("custom", {})
    display_mode = custom.pop("displayMode", None)
    custom.setdefault("cellOptions", {"type": display_mode or "auto"})
    custom.setdefault("inspect", False)


def _timeseries(defaults: dict[str, Any]) -> None:
    custom = defaults.setdefault("custom", {})
    if custom.get("stacking") in ({}, None):
        custom["stacking"] = {"group": "A", "mode": "none"}
    # S7: a gap stays a gap.
    custom["spanNulls"] = False
    custom.setdefault("insertNulls", False)


def _thresholds(defaults: dict[str, Any]) -> None:
    thresholds = defaults.get("thresholds")
    if thresholds is None:
        return
    steps = thresholds.get("steps")
    if not steps:
        steps = [{"color": "green", "value": None}]
    steps = [{"color": step.get("color", "green"), "value": step.get("value")} for step in steps]
    steps[0]["value"] = None
    defaults["thresholds"] = {"mode": thresholds.get("mode") or "absolute", "steps": steps}


def _target(target: dict[str, Any]) -> dict[str, Any]:
    target = {key: value for key, value in target.items() if key not in TARGET_DROP}
    if target.get("interval") == "":
        target.pop("interval")
    if target.get("legendFormat") == "":
        target.pop("legendFormat")
    if target.get("hide") is False:
        target.pop("hide")
    return target


def _variable(var: dict[str, Any]) -> dict[str, Any]:
    var = {key: value for key, value in var.items() if key not in VARIABLE_DROP}
    current = var.get("current")
    if isinstance(current, dict):
        current = {k: v for k, v in current.items() if k != "tags" and v is not None}
        if current:
            var["current"] = current
        else:
            var.pop("current")
    return var


def _clean(value: Any, in_steps: bool = False) -> Any:
    """Drop None recursively (threshold step values excepted) and write integral floats as ints."""
    kind = type(value)  # exact types: the input is decoded JSON (dict, list, str, int, float, bool, None)
    if kind is dict:
        cleaned: dict[str, Any] = {}
        for key, item in value.items():
            if item is None:
                if not (in_steps and key == "value"):
                    continue
                cleaned[key] = None
            elif type(item) in _LEAVES:
                cleaned[key] = item
            else:
                cleaned[key] = _clean(item, in_steps=key == "steps" or (in_steps and type(item) is dict))
        return cleaned
    if kind is list:
        return [item if type(item) in _LEAVES else _clean(item, in_steps=in_steps) for item in value]
    if kind is float and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if kind in _LEAVES or value is None or kind is float:
        return value
    return _clean_other(value, in_steps)


_LEAVES = frozenset({str, int, bool})


def _clean_other(value: Any, in_steps: bool) -> Any:
    """Subclasses of the JSON types (not produced by json.loads, but accepted as before)."""
    if isinstance(value, dict):
        return _clean(dict(value), in_steps)
    if isinstance(value, list):
        return _clean(list(value), in_steps)
    if isinstance(value, float):
        return _clean(float(value), in_steps)
    return value
