"""The v2 dashboard schema in the stand-in (grafana-api.md §13): what a Grafana 13 UI save turns a v1
dashboard into, and Grafana's lossy v2 → v1 down-conversion.

``to_v2`` keeps what a v1 dashboard says (panels as ``elements``, rows as a ``RowsLayout`` of
``GridLayout`` items, variables, annotations, links, time settings). ``to_v1`` is lossy the way §13
describes: tabs become expanded rows, nested rows and tabs are flattened, an ``AutoGridLayout``
becomes computed ``gridPos`` (width 24 / columns, heights 5 / 9 / 14), rows with hidden headers lose
their row panel, and ``conditionalRendering`` is dropped. ``rows_to_tabs`` and ``auto_grid`` are the
v2-only edits a person can make, for tests.
"""

from __future__ import annotations

import copy
from typing import Any

_HEIGHTS = {"short": 5, "standard": 9, "tall": 14}
_DASHBOARD_KEYS = ("title", "description", "tags", "editable", "links", "graphTooltip", "liveNow", "preload")


def _element(panel: dict[str, Any]) -> dict[str, Any]:
    if isinstance(panel.get("libraryPanel"), dict):  # a v1 library reference becomes a LibraryPanelKind
        ref = panel["libraryPanel"]
        return {
            "kind": "LibraryPanel",
            "spec": {
                "id": panel.get("id"),
                "title": panel.get("title", ""),
                "libraryPanel": {"name": ref.get("name", ""), "uid": ref.get("uid", "")},
            },
        }
    queries = [
        {
            "kind": "PanelQuery",
            "spec": {
                "refId": t.get("refId", ""),
                "hidden": bool(t.get("hide", False)),
                "query": {
                    "kind": "DataQuery",
                    "group": (t.get("datasource") or {}).get("type", "prometheus")
                    if isinstance(t.get("datasource"), dict)
                    else "prometheus",
                    "version": "v0",
                    "spec": {k: v for k, v in t.items() if k not in ("refId", "hide", "datasource")},
                },
                "datasource": copy.deepcopy(t.get("datasource")),
            },
        }
        for t in panel.get("targets") or []
        if isinstance(t, dict)
    ]
    return {
        "kind": "Panel",
        "spec": {
            "id": panel.get("id"),
            "title": panel.get("title", ""),
            "description": panel.get("description", ""),
            "links": copy.deepcopy(panel.get("links") or []),
            "data": {
                "kind": "QueryGroup",
                "spec": {
                    "queries": queries,
                    "transformations": copy.deepcopy(panel.get("transformations") or []),
                    "queryOptions": {},
                },
            },
            "vizConfig": {
                "kind": "VizConfig",
                "group": panel.get("type", "timeseries"),
                "version": panel.get("pluginVersion", ""),
                "spec": {
                    "options": copy.deepcopy(panel.get("options") or {}),
                    "fieldConfig": copy.deepcopy(panel.get("fieldConfig") or {}),
                },
            },
            "datasource": copy.deepcopy(panel.get("datasource")),
        },
    }


def _item(panel: dict[str, Any], base_y: int = 0) -> dict[str, Any]:
    grid = panel.get("gridPos") or {}
    return {
        "kind": "GridLayoutItem",
        "spec": {
            "x": grid.get("x", 0),
            "y": max(0, grid.get("y", 0) - base_y),
            "width": grid.get("w", 12),
            "height": grid.get("h", 8),
            "element": {"kind": "ElementReference", "name": f"panel-{panel.get('id')}"},
        },
    }


def to_v2(v1: dict[str, Any]) -> dict[str, Any]:
    """The v2 spec a Grafana 13 UI save writes for a v1 dashboard."""
    elements: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    loose: list[dict[str, Any]] = []
    current: list[dict[str, Any]] | None = None
    base = 0  # items' y is relative to their row (v2 GridLayout inside a RowsLayoutRow)
    for panel in v1.get("panels") or []:
        if panel.get("type") == "row":
            current = []
            base = (panel.get("gridPos") or {}).get("y", 0) + 1
            for child in panel.get("panels") or []:
                elements[f"panel-{child.get('id')}"] = _element(child)
                current.append(_item(child, base))
            rows.append(
                {
                    "kind": "RowsLayoutRow",
                    "spec": {
                        "title": panel.get("title", ""),
                        "collapse": bool(panel.get("collapsed", False)),
                        "layout": {"kind": "GridLayout", "spec": {"items": current}},
                    },
                }
            )
            continue
        elements[f"panel-{panel.get('id')}"] = _element(panel)
        (current if current is not None else loose).append(_item(panel, base if current is not None else 0))
    if rows:
        if loose:
            rows.insert(
                0,
                {
                    "kind": "RowsLayoutRow",
                    "spec": {
                        "title": "",
                        "collapse": False,
                        "hideHeader": True,
                        "layout": {"kind": "GridLayout", "spec": {"items": loose}},
                    },
                },
            )
        layout = {"kind": "RowsLayout", "spec": {"rows": rows}}
    else:
        layout = {"kind": "GridLayout", "spec": {"items": loose}}
    spec = {k: copy.deepcopy(v1[k]) for k in _DASHBOARD_KEYS if k in v1}
    spec.update(
        {
            "timeSettings": {
                "from": (v1.get("time") or {}).get("from", "now-6h"),
                "to": (v1.get("time") or {}).get("to", "now"),
                "autoRefresh": v1.get("refresh", ""),
                "timezone": v1.get("timezone", "browser"),
            },
            "variables": copy.deepcopy((v1.get("templating") or {}).get("list") or []),
            "annotations": copy.deepcopy((v1.get("annotations") or {}).get("list") or []),
            "elements": elements,
            "layout": layout,
        }
    )
    return spec


def _panel(element: dict[str, Any], grid: dict[str, int]) -> dict[str, Any]:
    spec = element.get("spec") or {}
    if element.get("kind") == "LibraryPanel":  # the v1 reference: the model lives in the library element
        return {
            "id": spec.get("id"),
            "title": spec.get("title", ""),
            "gridPos": grid,
            "libraryPanel": dict(spec.get("libraryPanel") or {}),
        }
    viz = spec.get("vizConfig") or {}
    targets = []
    for query in (spec.get("data") or {}).get("spec", {}).get("queries", []):
        q = query.get("spec") or {}
        target = dict((q.get("query") or {}).get("spec") or {}, refId=q.get("refId", ""))
        if q.get("datasource") is not None:
            target["datasource"] = q["datasource"]
        targets.append(target)
    panel = {
        "id": spec.get("id"),
        "title": spec.get("title", ""),
        "type": viz.get("group", "timeseries"),
        "gridPos": grid,
        "targets": targets,
        "options": (viz.get("spec") or {}).get("options", {}),
        "fieldConfig": (viz.get("spec") or {}).get("fieldConfig", {}),
    }
    for key in ("description", "datasource"):
        if spec.get(key):
            panel[key] = spec[key]
    if viz.get("version"):
        panel["pluginVersion"] = viz["version"]
    return panel


def _flatten(layout: dict[str, Any], elements: dict[str, Any], y: list[int]) -> list[dict[str, Any]]:
    """Panels of a layout in reading order; rows and tabs become (expanded) row panels."""
    kind, spec = layout.get("kind"), layout.get("spec") or {}
    out: list[dict[str, Any]] = []
    if kind == "GridLayout":
        base = y[0]
        for item in spec.get("items", []):
            s = item.get("spec") or {}
            name = (s.get("element") or {}).get("name", "")
            grid = {"x": s.get("x", 0), "y": base + s.get("y", 0), "w": s.get("width", 12), "h": s.get("height", 8)}
            out.append(_panel(elements.get(name, {}), grid))
            y[0] = max(y[0], grid["y"] + grid["h"])
    elif kind == "AutoGridLayout":
        columns = int(spec.get("maxColumnCount", 3) or 3)
        width, height = 24 // columns, _HEIGHTS.get(spec.get("rowHeight", "standard"), 9)
        for index, item in enumerate(spec.get("items", [])):
            name = ((item.get("spec") or {}).get("element") or {}).get("name", "")
            grid = {"x": (index % columns) * width, "y": y[0] + (index // columns) * height, "w": width, "h": height}
            out.append(_panel(elements.get(name, {}), grid))
        rows = -(-len(spec.get("items", [])) // columns)
        y[0] += rows * height
    elif kind in ("RowsLayout", "TabsLayout"):
        for entry in spec.get("rows" if kind == "RowsLayout" else "tabs", []):
            s = entry.get("spec") or {}
            if not s.get("hideHeader"):
                out.append(
                    {
                        "type": "row",
                        "title": s.get("title", ""),
                        "collapsed": False,
                        "panels": [],
                        "gridPos": {"x": 0, "y": y[0], "w": 24, "h": 1},
                        "id": None,
                    }
                )
                y[0] += 1
            out += _flatten(s.get("layout") or {}, elements, y)
    return out


def to_v1(spec: dict[str, Any]) -> dict[str, Any]:
    """Grafana's lossy down-conversion of a v2 spec to a v1 dashboard (§13)."""
    panels = _flatten(spec.get("layout") or {}, spec.get("elements") or {}, [0])
    used = {p["id"] for p in panels if isinstance(p.get("id"), int)}
    next_id = max(used | {0}) + 1
    for panel in panels:
        if panel.get("id") is None:
            panel["id"], next_id = next_id, next_id + 1
    time = spec.get("timeSettings") or {}
    v1 = {k: copy.deepcopy(spec[k]) for k in _DASHBOARD_KEYS if k in spec}
    v1.update(
        {
            "panels": panels,
            "templating": {"list": copy.deepcopy(spec.get("variables") or [])},
            "annotations": {"list": copy.deepcopy(spec.get("annotations") or [])},
            "time": {"from": time.get("from", "now-6h"), "to": time.get("to", "now")},
            "refresh": time.get("autoRefresh", ""),
            "timezone": time.get("timezone", "browser"),
        }
    )
    return v1


def rows_to_tabs(spec: dict[str, Any]) -> dict[str, Any]:
    """A person's v2-only edit: the rows become tabs, the first one shown only for one variable value."""
    layout = spec.get("layout") or {}
    if layout.get("kind") != "RowsLayout":
        return spec
    tabs = [
        {
            "kind": "TabsLayoutTab",
            "spec": {"title": r["spec"].get("title") or "Overview", "layout": r["spec"]["layout"]},
        }
        for r in layout["spec"]["rows"]
    ]
    if tabs:
        tabs[0]["spec"]["conditionalRendering"] = {
            "kind": "ConditionalRenderingGroup",
            "spec": {
                "visibility": "show",
                "condition": "and",
                "items": [
                    {
                        "kind": "ConditionalRenderingVariable",
                        "spec": {"variable": "node", "operator": "equals", "value": "node-01"},
                    }
                ],
            },
        }
    spec["layout"] = {"kind": "TabsLayout", "spec": {"tabs": tabs}}
    return spec


def auto_grid(spec: dict[str, Any], columns: int = 3) -> dict[str, Any]:
    """A person's v2-only edit: every panel in one auto-grid."""
    spec["layout"] = {
        "kind": "AutoGridLayout",
        "spec": {
            "maxColumnCount": columns,
            "rowHeight": "standard",
            "items": [
                {"kind": "AutoGridLayoutItem", "spec": {"element": {"kind": "ElementReference", "name": n}}}
                for n in spec.get("elements") or {}
            ],
        },
    }
    return spec
