"""v1 templating variables, annotations and dashboard links -> their v2 kinds (``QueryVariable``,
``CustomVariable``, ``DatasourceVariable``, ``ConstantVariable``, ``TextVariable``, ``IntervalVariable``;
``AnnotationQuery``; ``DashboardLink``). Grafana's numeric v1 codes become the v2 names; a string variable
query becomes ``{"__legacyStringValue": ...}``, as Grafana's own conversion writes it. The inverse is
``dashgen.document.v2view``. Pure."""

from __future__ import annotations

from typing import Any

from dashgen.document.copying import tree_copy
from dashgen.document.v2view import HIDE, REFRESH, SORT, VARIABLE_TYPES
from dashgen.render.v2.elements import data_query

WRITTEN_TYPES = ("query", "custom", "datasource", "constant", "textbox", "interval")  # the v1 types written as v2
KINDS = {v1: v2 for v2, v1 in VARIABLE_TYPES.items() if v1 in WRITTEN_TYPES}  # v1 type -> v2 variable kind
_OPTIONAL = ("label", "description", "allValue")


class UnsupportedVariable(ValueError):
    """A v1 variable dashgen cannot write as a v2 variable (its type has no v2 conversion here)."""


def _code(names: tuple[str, ...], value: Any, default: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
        return names[default]
    return names[value]


def _option(raw: Any) -> dict[str, Any]:
    raw = raw if isinstance(raw, dict) else {}
    out = {"text": tree_copy(raw.get("text", "")), "value": tree_copy(raw.get("value", ""))}
    if "selected" in raw:
        out["selected"] = bool(raw["selected"])
    return out


def variable_kind(variable: dict[str, Any]) -> dict[str, Any]:
    """The v2 variable of one v1 variable; raises :class:`UnsupportedVariable` for another type."""
    kind = KINDS.get(str(variable.get("type", "")))
    name = str(variable.get("name", ""))
    if kind is None:
        raise UnsupportedVariable(f"variable {name!r}: type {variable.get('type')!r} has no v2 form in dashgen")
    spec: dict[str, Any] = {
        "name": name,
        "current": _option(variable.get("current")),
        "hide": _code(HIDE, variable.get("hide"), 0),
        "skipUrlSync": bool(variable.get("skipUrlSync", False)),
    }
    spec.update({key: tree_copy(variable[key]) for key in _OPTIONAL if key in variable})
    query = variable.get("query", "")
    if kind in ("QueryVariable", "CustomVariable", "DatasourceVariable"):
        spec["options"] = [_option(o) for o in variable.get("options") or []]
        spec["multi"] = bool(variable.get("multi", False))
        spec["includeAll"] = bool(variable.get("includeAll", False))
        spec["allowCustomValue"] = bool(variable.get("allowCustomValue", True))
    if kind == "QueryVariable":
        text = query if isinstance(query, str) else None
        spec["query"] = data_query(
            variable.get("datasource"),
            {"__legacyStringValue": text} if text is not None else tree_copy(query),
        )
        spec["refresh"] = _code(REFRESH, variable.get("refresh"), 1)
        spec["regex"] = str(variable.get("regex", ""))
        spec["sort"] = _code(SORT, variable.get("sort"), 0)
        if "definition" in variable:
            spec["definition"] = str(variable["definition"])
    elif kind == "DatasourceVariable":
        spec["pluginId"] = str(query)
        spec["refresh"] = _code(REFRESH, variable.get("refresh"), 1)
        spec["regex"] = str(variable.get("regex", ""))
    elif kind == "IntervalVariable":
        spec.update(
            query=str(query),
            options=[_option(o) for o in variable.get("options") or []],
            auto=bool(variable.get("auto", False)),
            auto_min=str(variable.get("auto_min", "")),
            auto_count=int(variable.get("auto_count", 0) or 0),
            refresh="onTimeRangeChanged",
        )
    else:
        spec["query"] = str(query)
    return {"kind": kind, "spec": spec}


def annotation_kind(annotation: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "query": data_query(annotation.get("datasource"), tree_copy(annotation.get("target") or {})),
        "enable": bool(annotation.get("enable", True)),
        "hide": bool(annotation.get("hide", False)),
        "iconColor": str(annotation.get("iconColor", "")),
        "name": str(annotation.get("name", "")),
    }
    if annotation.get("builtIn"):
        spec["builtIn"] = True
    return {"kind": "AnnotationQuery", "spec": spec}


def dashboard_link(link: dict[str, Any]) -> dict[str, Any]:
    out = {
        "title": str(link.get("title", "")),
        "type": "dashboards" if link.get("type") == "dashboards" else "link",
        "icon": str(link.get("icon", "external link")),
        "tooltip": str(link.get("tooltip", "")),
        "tags": [str(t) for t in link.get("tags") or []],
        "asDropdown": bool(link.get("asDropdown", False)),
        "targetBlank": bool(link.get("targetBlank", False)),
        "includeVars": bool(link.get("includeVars", False)),
        "keepTime": bool(link.get("keepTime", False)),
    }
    if "url" in link:
        out["url"] = str(link["url"])
    return out
