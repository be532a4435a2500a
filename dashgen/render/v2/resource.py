"""The whole v2 resource of one dashboard: ``{apiVersion, kind, metadata, spec}`` from its DashboardSpec and its
rendered v1 document, so both schemas carry the very same panels. ``spec.elements`` holds one element per panel
keyed by its stable key; ``spec.layout`` is a ``TabsLayout`` of the spec's tabs (the first screen first), each a
``RowsLayout`` of the rows it holds (collapsed as in v1) with a ``GridLayout`` of the row's panels at their v1
positions (``y`` counted from the row's top), or an ``AutoGridLayout`` where the group asks for one; a row
shown only while it has data where the group is about one pool kind of a profile that mixes kinds. Pure."""

from __future__ import annotations

import copy
from typing import Any

from dashgen.document import iter_panels
from dashgen.render.ids import panel_id
from dashgen.render.spec import DashboardSpec, GroupSpec
from dashgen.render.v2.elements import panel_element
from dashgen.render.v2.variables import annotation_kind, dashboard_link, variable_kind

API_GROUP = "dashboard.grafana.app"
CURSOR_SYNC = ("Off", "Crosshair", "Tooltip")  # v1 graphTooltip 0 / 1 / 2
PROFILE_ANNOTATION = "dashgen.io/profile"


def _grid_item(key: str, panel: dict[str, Any], top: int) -> dict[str, Any]:
    grid = panel.get("gridPos") or {}
    return {
        "kind": "GridLayoutItem",
        "spec": {
            "x": int(grid.get("x", 0)),
            "y": int(grid.get("y", 0)) - top,
            "width": int(grid.get("w", 12)),
            "height": int(grid.get("h", 8)),
            "element": {"kind": "ElementReference", "name": key},
        },
    }


# A row shown only while its panels return data (``GroupSpec.when_data``).
WHEN_DATA = {
    "kind": "ConditionalRenderingGroup",
    "spec": {
        "visibility": "show",
        "condition": "and",
        "items": [{"kind": "ConditionalRenderingData", "spec": {"value": True}}],
    },
}


def auto_grid(keys: list[str], panels: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``AutoGridLayout`` of the row's panels in reading order: as many columns as the v1 row's widest line of
    panels holds (at most 4), Grafana's standard column width and row height."""
    lines: dict[int, int] = {}
    for raw in panels:
        y = int((raw.get("gridPos") or {}).get("y", 0))
        lines[y] = lines.get(y, 0) + 1
    columns = max(1, min(4, max(lines.values(), default=1)))
    return {
        "kind": "AutoGridLayout",
        "spec": {
            "maxColumnCount": columns,
            "columnWidthMode": "standard",
            "rowHeightMode": "standard",
            "fillScreen": False,
            "items": [
                {"kind": "AutoGridLayoutItem", "spec": {"element": {"kind": "ElementReference", "name": key}}}
                for key in keys
            ],
        },
    }


def _row(group: GroupSpec, by_id: dict[int, dict[str, Any]]) -> dict[str, Any]:
    panels = [(p.key, by_id[panel_id(p.key)]) for p in group.panels]
    top = min((int((raw.get("gridPos") or {}).get("y", 0)) for _, raw in panels), default=0)
    if group.auto_grid:
        grid = auto_grid([key for key, _ in panels], [raw for _, raw in panels])
    else:
        grid = {"kind": "GridLayout", "spec": {"items": [_grid_item(k, raw, top) for k, raw in panels]}}
    spec: dict[str, Any] = {"title": group.title, "collapse": group.collapsed}
    if group.when_data:
        spec["conditionalRendering"] = copy.deepcopy(WHEN_DATA)
    spec["layout"] = grid
    return {"kind": "RowsLayoutRow", "spec": spec}


def _tabs(spec: DashboardSpec) -> list[tuple[str, tuple[str, ...]]]:
    """The spec's tabs; a spec without any (a test's) gets one tab holding every row."""
    if spec.tabs:
        return [(title, keys) for title, keys in spec.tabs]
    return [(spec.title, tuple(group.key for group in spec.groups))]


def layout(spec: DashboardSpec, by_id: dict[int, dict[str, Any]]) -> dict[str, Any]:
    groups = {group.key: group for group in spec.groups}
    tabs = [
        {
            "kind": "TabsLayoutTab",
            "spec": {
                "title": title,
                "layout": {"kind": "RowsLayout", "spec": {"rows": [_row(groups[key], by_id) for key in keys]}},
            },
        }
        for title, keys in _tabs(spec)
    ]
    return {"kind": "TabsLayout", "spec": {"tabs": tabs}}


def _time_settings(document: dict[str, Any]) -> dict[str, Any]:
    timepicker = document.get("timepicker") or {}
    time = document.get("time") or {}
    out: dict[str, Any] = {
        "timezone": str(document.get("timezone", "browser")),
        "from": str(time.get("from", "now-6h")),
        "to": str(time.get("to", "now")),
        "autoRefresh": str(document.get("refresh") or ""),
        "autoRefreshIntervals": list(timepicker.get("refresh_intervals") or []),
        "hideTimepicker": bool(timepicker.get("hidden", False)),
        "fiscalYearStartMonth": int(document.get("fiscalYearStartMonth", 0) or 0),
    }
    if document.get("weekStart"):
        out["weekStart"] = document["weekStart"]
    return out


def render_v2(spec: DashboardSpec, document: dict[str, Any], api_version: str) -> dict[str, Any]:
    """The v2 resource of a dashboard whose v1 rendering is ``document``.

    Raises ``KeyError`` when a panel of the spec is missing from the document and ``UnsupportedVariable``
    for a variable type without a v2 form."""
    by_id = {
        site.raw["id"]: dict(site.raw)
        for site in iter_panels(document)
        if site.raw.get("type") != "row" and isinstance(site.raw.get("id"), int)
    }
    elements = {p.key: panel_element(by_id[panel_id(p.key)], api_version) for p in spec.panels()}
    tooltip = document.get("graphTooltip", 0)
    body: dict[str, Any] = {
        "title": str(document.get("title", "")),
        "description": str(document.get("description", "")),
        "tags": list(document.get("tags") or []),
        "editable": bool(document.get("editable", True)),
        "cursorSync": CURSOR_SYNC[tooltip] if tooltip in (0, 1, 2) else "Off",
        "preload": bool(document.get("preload", False)),
        "liveNow": bool(document.get("liveNow", False)),
        "timeSettings": _time_settings(document),
        "links": [dashboard_link(link) for link in document.get("links") or []],
        "annotations": [annotation_kind(a) for a in (document.get("annotations") or {}).get("list") or []],
        "variables": [variable_kind(v) for v in (document.get("templating") or {}).get("list") or []],
        "elements": elements,
        "layout": layout(spec, by_id),
    }
    return {
        "apiVersion": f"{API_GROUP}/{api_version}",
        "kind": "Dashboard",
        "metadata": {"name": spec.uid, "annotations": {PROFILE_ANNOTATION: spec.profile}},
        "spec": copy.deepcopy(body),
    }
