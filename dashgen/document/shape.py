"""The shapes a dashboard reader relies on (``dashgen import`` and ``dashgen lint``), checked before anything
else, so a malformed dashboard is one clear line naming the field (``panels[3].fieldConfig.defaults.custom:
expected an object, found int``) and never a traceback from deep inside rendering or the diff, nor a lint that
reads ``"panels": "x"`` as no panels and passes. Only what Grafana itself would refuse or misread is checked;
unknown keys and values are the reader's business (carried raw). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class BadShape(ValueError):
    """A dashboard field has a type Grafana's model does not allow."""


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _expect(value: Any, kinds: tuple[type, ...], where: str, what: str) -> None:
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise BadShape(f"{where}: expected {what}, found {_kind(value)}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _optional(owner: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str, what: str) -> Any:
    if key in owner and owner[key] is not None:
        _expect(owner[key], kinds, _join(where, key), what)
        return owner[key]
    return None


def _objects(owner: Mapping[str, Any], key: str, where: str) -> list[Any]:
    items = _optional(owner, key, (list,), where, "a list")
    for index, item in enumerate(items or []):
        _expect(item, (dict,), f"{_join(where, key)}[{index}]", "an object")
    return items or []


def _field_config(panel: Mapping[str, Any], where: str) -> None:
    field_config = _optional(panel, "fieldConfig", (dict,), where, "an object")
    if field_config is None:
        return
    at = f"{where}.fieldConfig"
    defaults = _optional(field_config, "defaults", (dict,), at, "an object") or {}
    for key in ("custom", "color"):
        _optional(defaults, key, (dict,), f"{at}.defaults", "an object")
    for key in ("unit", "noValue", "displayName"):
        _optional(defaults, key, (str,), f"{at}.defaults", "a string")
    for key in ("mappings", "links"):
        _objects(defaults, key, f"{at}.defaults")
    thresholds = _optional(defaults, "thresholds", (dict,), f"{at}.defaults", "an object")
    if thresholds is not None:
        _objects(thresholds, "steps", f"{at}.defaults.thresholds")
    for index, override in enumerate(_objects(field_config, "overrides", at)):
        _optional(override, "matcher", (dict,), f"{at}.overrides[{index}]", "an object")
        for number, prop in enumerate(_objects(override, "properties", f"{at}.overrides[{index}]")):
            _optional(prop, "id", (str,), f"{at}.overrides[{index}].properties[{number}]", "a string")


def _panel(panel: Any, where: str) -> None:
    _expect(panel, (dict,), where, "an object")
    for key in ("type", "title", "description"):
        _optional(panel, key, (str,), where, "a string")
    grid = _optional(panel, "gridPos", (dict,), where, "an object")
    for key in ("x", "y", "w", "h"):
        if grid is not None and key in grid:
            _expect(grid[key], (int,), f"{where}.gridPos.{key}", "an integer")
            if (key == "w" and not 1 <= grid[key] <= 24) or grid[key] < 0:
                raise BadShape(f"{where}.gridPos.{key}: {grid[key]} is outside Grafana's 24-column grid")
    _optional(panel, "id", (int,), where, "an integer")
    _optional(panel, "datasource", (dict, str), where, "an object or a string")
    for index, target in enumerate(_objects(panel, "targets", where)):
        for key in ("expr", "legendFormat", "refId", "interval"):
            _optional(target, key, (str,), f"{where}.targets[{index}]", "a string")
        _optional(target, "datasource", (dict, str), f"{where}.targets[{index}]", "an object or a string")
    for key in ("transformations", "links"):
        _objects(panel, key, where)
    options = _optional(panel, "options", (dict,), where, "an object")
    if options is not None:
        for key in ("legend", "tooltip", "reduceOptions"):
            _optional(options, key, (dict,), f"{where}.options", "an object")
    _field_config(panel, where)
    for key in ("yaxes", "seriesOverrides", "styles", "valueMaps", "rangeMaps"):
        _optional(panel, key, (list,), where, "a list")
    for key in ("legend", "tooltip", "aliasColors", "gauge", "sparkline", "xaxis"):
        _optional(panel, key, (dict,), where, "an object")
    for index, nested in enumerate(_optional(panel, "panels", (list,), where, "a list") or []):
        _panel(nested, f"{where}.panels[{index}]")


def _variable(variable: Mapping[str, Any], where: str) -> None:
    """A template variable: Grafana's model requires its name (what queries write as ``$name``) and type."""
    for key in ("name", "type"):
        if key not in variable:
            raise BadShape(f"{where}.{key}: missing (a variable has a name and a type)")
        _expect(variable[key], (str,), f"{where}.{key}", "a string")
    for key in ("label", "description"):
        _optional(variable, key, (str,), where, "a string")
    _optional(variable, "datasource", (dict, str), where, "an object or a string")
    _optional(variable, "current", (dict,), where, "an object")
    _objects(variable, "options", where)


def check_shape(body: Mapping[str, Any]) -> None:
    """Raise :class:`BadShape` at the first field an import cannot read."""
    for index, panel in enumerate(_optional(body, "panels", (list,), "", "a list") or []):
        _panel(panel, f"panels[{index}]")
    for index, row in enumerate(_objects(body, "rows", "")):
        for number, panel in enumerate(_optional(row, "panels", (list,), f"rows[{index}]", "a list") or []):
            _panel(panel, f"rows[{index}].panels[{number}]")
    templating = _optional(body, "templating", (dict,), "", "an object")
    if templating is not None:
        for index, variable in enumerate(_objects(templating, "list", "templating")):
            _variable(variable, f"templating.list[{index}]")
    annotations = _optional(body, "annotations", (dict,), "", "an object")
    if annotations is not None:
        _objects(annotations, "list", "annotations")
    for key in ("title", "uid"):
        _optional(body, key, (str,), "", "a string")
    for key in ("time", "timepicker"):
        _optional(body, key, (dict,), "", "an object")
