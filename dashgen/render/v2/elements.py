"""One rendered panel (``dashgen.render.document.render_panel``) -> one v2 ``Panel`` element: queries as
``PanelQuery`` of a ``QueryGroup`` (the data source as the query's ``group`` and ``datasource.name``), options and
field config as ``VizConfig``, transformations in the API version's shape, panel links as v2 ``DataLink``. The
inverse is ``dashgen.document.v2view``. Pure."""

from __future__ import annotations

from typing import Any

from dashgen.document.copying import tree_copy

# What a v2 panel link holds (v1 panel links written as dashboard links carry inert extras: icon, tooltip, ...)
DATA_LINK_KEYS = ("title", "url", "targetBlank")
_QUERY_KEYS_NOT_IN_SPEC = ("refId", "hide", "datasource")


def data_query(datasource: Any, spec: dict[str, Any] | None) -> dict[str, Any]:
    """A v2 ``DataQuery``: the plugin id as ``group``, the data source uid (or variable) as ``datasource.name``."""
    query: dict[str, Any] = {"kind": "DataQuery", "group": "prometheus", "version": "v0", "spec": spec or {}}
    if isinstance(datasource, dict):
        query["group"] = str(datasource.get("type") or "prometheus")
        if datasource.get("uid") is not None:
            query["datasource"] = {"name": str(datasource["uid"])}
    return query


def panel_query(target: dict[str, Any], panel_datasource: Any) -> dict[str, Any]:
    spec = {k: tree_copy(v) for k, v in target.items() if k not in _QUERY_KEYS_NOT_IN_SPEC}
    return {
        "kind": "PanelQuery",
        "spec": {
            "refId": str(target.get("refId", "")),
            "hidden": bool(target.get("hide", False)),
            "query": data_query(target.get("datasource", panel_datasource), spec),
        },
    }


def transformation(raw: dict[str, Any], api_version: str) -> dict[str, Any]:
    """v2: ``{kind: Transformation, group: <id>, spec: {options, ...}}``; v2beta1: ``{kind: <id>, spec: {id, ...}}``."""
    rest = {k: tree_copy(v) for k, v in raw.items() if k != "id"}
    rest.setdefault("options", {})
    if api_version == "v2beta1":
        return {"kind": str(raw.get("id", "")), "spec": {"id": str(raw.get("id", "")), **rest}}
    return {"kind": "Transformation", "group": str(raw.get("id", "")), "spec": rest}


def data_link(link: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"title": str(link.get("title", "")), "url": str(link.get("url", ""))}
    if link.get("targetBlank"):
        out["targetBlank"] = True
    return out


def panel_element(panel: dict[str, Any], api_version: str) -> dict[str, Any]:
    """The v2 element of one rendered panel (not a row). What the renderer writes on every panel is read as
    written; what it leaves out (a text panel's queries and field config, links, a plugin version) is optional in
    v2 too, or set by a team's raw patch (``PanelSpec.extra``)."""
    datasource = panel.get("datasource")
    field_config = tree_copy(panel.get("fieldConfig") or {"defaults": {}, "overrides": []})
    field_config.setdefault("defaults", {})
    field_config.setdefault("overrides", [])
    spec: dict[str, Any] = {
        "id": panel["id"],
        "title": panel["title"],
        "description": panel["description"],
        "links": [data_link(link) for link in panel.get("links") or []],
        "data": {
            "kind": "QueryGroup",
            "spec": {
                "queries": [panel_query(t, datasource) for t in panel.get("targets") or []],
                "transformations": [transformation(t, api_version) for t in panel.get("transformations") or []],
                "queryOptions": {},
            },
        },
        "vizConfig": {
            "kind": "VizConfig",
            "group": str(panel.get("type", "")),
            "version": str(panel.get("pluginVersion", "")),
            "spec": {"options": tree_copy(panel.get("options") or {}), "fieldConfig": field_config},
        },
    }
    if "transparent" in panel:
        spec["transparent"] = bool(panel["transparent"])
    for option in ("maxDataPoints", "interval", "timeFrom", "timeShift", "hideTimeOverride", "cacheTimeout"):
        if option in panel:
            spec["data"]["spec"]["queryOptions"][option] = tree_copy(panel[option])
    return {"kind": "Panel", "spec": spec}
