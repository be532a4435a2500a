"""The classic (v1) view of a v2 dashboard resource (``dashboard.grafana.app/v2*``), so every reader of
dashboard JSON (lint, diff, import, cost, the query checks) reads a v2 dashboard the one way it reads v1.

The view is lossless for what dashgen writes (``dashgen.render.v2`` is its inverse): each element becomes the
panel it was rendered from (id, type, title, description, data source, targets, field config, options,
transformations, links), variables and annotations get their v1 types and codes back, and the layout is laid
out the way ``dashgen.render.layout`` lays out v1 rows: tabs in order, each tab's rows as row panels (a
collapsed row holding its panels), a grid's items at the row's top plus their ``y``. What v1 cannot say (tabs,
nested layouts, conditional rendering) is not in the view; ``layout_outline`` says it. Pure, standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashgen.document.copying import tree_copy

V2_GROUP = "dashboard.grafana.app/"
LATEST_SCHEMA_VERSION = 42  # what Grafana's v2 -> v1 conversion writes
# v1 code -> v2 name (Grafana's VariableHide, VariableRefresh, VariableSort); v2 variable kind -> v1 type.
# The one definition: the v2 renderer (``dashgen.render.v2.variables``) writes with the same tables.
HIDE = ("dontHide", "hideLabel", "hideVariable", "inControlsMenu")
REFRESH = ("never", "onDashboardLoad", "onTimeRangeChanged")
SORT = (
    "disabled",
    "alphabeticalAsc",
    "alphabeticalDesc",
    "numericalAsc",
    "numericalDesc",
    "alphabeticalCaseInsensitiveAsc",
    "alphabeticalCaseInsensitiveDesc",
    "naturalAsc",
    "naturalDesc",
)
VARIABLE_TYPES = {
    "QueryVariable": "query",
    "CustomVariable": "custom",
    "DatasourceVariable": "datasource",
    "ConstantVariable": "constant",
    "TextVariable": "textbox",
    "IntervalVariable": "interval",
    "GroupByVariable": "groupby",
    "AdhocVariable": "adhoc",
    "SwitchVariable": "switch",
}
_V1_ABSENT = {("skipUrlSync", False), ("allowCustomValue", True), ("regex", "")}  # v2 requires, v1 leaves out
_CURSOR = {"Off": 0, "Crosshair": 1, "Tooltip": 2}


def is_v2_version(api_version: str) -> bool:
    """Whether an API version (``v2beta1``, ``v2``, or with its group ``dashboard.grafana.app/v2``) is the v2
    dashboard model: every v2 version starts with ``v2`` (alpha and beta ones included), v0/v1 do not."""
    return api_version.rsplit("/", 1)[-1].startswith("v2")


def is_v2(doc: Any) -> bool:
    """A v2 dashboard resource: ``apiVersion`` ``dashboard.grafana.app/v2…`` with a spec holding ``elements``."""
    if not isinstance(doc, Mapping):
        return False
    version = doc.get("apiVersion")
    return (
        isinstance(version, str)
        and version.startswith(V2_GROUP)
        and is_v2_version(version)
        and isinstance(doc.get("spec"), Mapping)
        and isinstance(doc["spec"].get("elements"), Mapping)
    )


def _datasource(query: Mapping[str, Any]) -> dict[str, Any] | None:
    name = (query.get("datasource") or {}).get("name") if isinstance(query.get("datasource"), Mapping) else None
    if name is None:
        return None
    return {"type": str(query.get("group", "")), "uid": name}


def _target(panel_query: Mapping[str, Any]) -> dict[str, Any]:
    spec = panel_query.get("spec") or {}
    query = spec.get("query") or {}
    target = tree_copy(dict(query.get("spec") or {}))
    datasource = _datasource(query)
    if datasource is not None:
        target["datasource"] = datasource
    target["refId"] = spec.get("refId", "")
    if spec.get("hidden"):
        target["hide"] = True
    return target


def _transformation(raw: Mapping[str, Any]) -> dict[str, Any]:
    spec = dict(raw.get("spec") or {})
    if raw.get("kind") == "Transformation":  # v2: the id is the group
        return {"id": raw.get("group", ""), **tree_copy(spec)}
    spec.setdefault("id", raw.get("kind", ""))  # v2beta1: the kind is the id, the spec is the v1 transformation
    return tree_copy(spec)


def element_panel(element: Mapping[str, Any]) -> dict[str, Any]:
    """The v1 panel of one v2 element (a library panel becomes a ``libraryPanel`` reference)."""
    spec = element.get("spec") or {}
    if element.get("kind") == "LibraryPanel":
        ref = spec.get("libraryPanel") or {}
        return {"id": spec.get("id"), "title": spec.get("title", ""), "libraryPanel": tree_copy(dict(ref))}
    viz = spec.get("vizConfig") or {}
    data = (spec.get("data") or {}).get("spec") or {}
    targets = [_target(q) for q in data.get("queries") or [] if isinstance(q, Mapping)]
    panel: dict[str, Any] = {"id": spec.get("id"), "title": spec.get("title", ""), "type": viz.get("group", "")}
    if spec.get("description") is not None:
        panel["description"] = spec["description"]
    if targets:
        panel["datasource"] = next((t["datasource"] for t in targets if "datasource" in t), None)
        panel["targets"] = targets
    viz_spec = viz.get("spec") or {}
    field_config = tree_copy(dict(viz_spec.get("fieldConfig") or {}))
    if targets or field_config.get("defaults") or field_config.get("overrides"):
        panel["fieldConfig"] = field_config
    panel["options"] = tree_copy(viz_spec.get("options") or {})
    if "transparent" in spec:
        panel["transparent"] = spec["transparent"]
    if data.get("transformations"):
        panel["transformations"] = [_transformation(t) for t in data["transformations"] if isinstance(t, Mapping)]
    if spec.get("links"):
        panel["links"] = tree_copy(list(spec["links"]))
    if viz.get("version"):
        panel["pluginVersion"] = viz["version"]
    for option, value in (data.get("queryOptions") or {}).items():
        panel[option] = tree_copy(value)
    return panel


def _code(names: tuple[str, ...], value: Any) -> Any:
    return names.index(value) if value in names else value


def variable(kind: Mapping[str, Any]) -> dict[str, Any]:
    """The v1 templating variable of one v2 variable kind."""
    spec = dict(kind.get("spec") or {})
    out: dict[str, Any] = {"type": VARIABLE_TYPES.get(str(kind.get("kind")), str(kind.get("kind")))}
    for key, value in spec.items():
        if key == "hide":
            out["hide"] = _code(HIDE, value)
        elif key == "refresh":
            out["refresh"] = _code(REFRESH, value)
        elif key == "sort":
            out["sort"] = _code(SORT, value)
        elif key == "pluginId":
            out["query"] = value
        elif key == "query" and isinstance(value, Mapping):
            query_spec = value.get("spec") or {}
            legacy = query_spec.get("__legacyStringValue") if isinstance(query_spec, Mapping) else None
            out["query"] = legacy if legacy is not None else tree_copy(query_spec)
            datasource = _datasource(value)
            if datasource is not None:
                out["datasource"] = datasource
        elif isinstance(value, (str, bool)) and (key, value) in _V1_ABSENT:
            continue
        else:
            out[key] = tree_copy(value)
    return out


def _annotation(kind: Mapping[str, Any]) -> dict[str, Any]:
    spec = dict(kind.get("spec") or {})
    query = spec.pop("query", None) or {}
    out: dict[str, Any] = {k: tree_copy(v) for k, v in spec.items()}
    if out.get("builtIn"):
        out["builtIn"] = 1
        out["type"] = "dashboard"
    datasource = _datasource(query)
    if datasource is not None:
        out["datasource"] = datasource
    if query.get("spec"):
        out["target"] = tree_copy(dict(query["spec"]))
    return out


def _link(link: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tree_copy(v) for k, v in link.items() if k not in ("placement", "origin")}


class _Placer:
    """Lays v2 rows out as v1 rows: the same algorithm as ``dashgen.render.layout`` (a collapsed row's panels
    below those of earlier collapsed rows, an expanded row's panels pushing the next row down)."""

    def __init__(self, elements: Mapping[str, Any]) -> None:
        self.elements = elements
        self.y = 0
        self.reserved = 0
        self.panels: list[dict[str, Any]] = []
        self.row_id = 0

    def grid(self, layout: Mapping[str, Any], top: int) -> tuple[list[dict[str, Any]], int]:
        placed, bottom = [], top
        spec = layout.get("spec") or {}
        items = [i for i in spec.get("items") or [] if isinstance(i, Mapping)]
        columns = int(spec.get("maxColumnCount", 3) or 3)
        for index, item in enumerate(items):
            s = item.get("spec") or {}
            name = str((s.get("element") or {}).get("name", ""))
            if layout.get("kind") == "AutoGridLayout":  # Grafana's own down-conversion: 24 / columns, height 9
                width = 24 // columns
                grid = {"h": 9, "w": width, "x": index % columns * width, "y": top + index // columns * 9}
            else:
                grid = {"h": s.get("height", 8), "w": s.get("width", 12), "x": s.get("x", 0), "y": top + s.get("y", 0)}
            panel = element_panel(self.elements.get(name) or {})
            panel["gridPos"] = grid
            placed.append(panel)
            bottom = max(bottom, grid["y"] + grid["h"])
        return placed, bottom

    def row(self, title: str, collapsed: bool, layout: Mapping[str, Any], header: bool = True) -> None:
        if layout.get("kind") in ("RowsLayout", "TabsLayout"):  # nested: flattened, as Grafana does
            self.entries(layout)
            return
        row = {"collapsed": collapsed, "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}, "panels": [], "title": title}
        if header:
            self.y += 1
        panels, bottom = self.grid(layout, max(self.y, self.reserved))
        if header:
            row.update(id=None, type="row")
            self.panels.append(row)
        if header and collapsed:
            row["panels"] = panels
            self.reserved = max(self.reserved, bottom)
        else:
            self.panels.extend(panels)
            self.y = bottom

    def entries(self, layout: Mapping[str, Any]) -> None:
        kind, spec = layout.get("kind"), layout.get("spec") or {}
        if kind not in ("RowsLayout", "TabsLayout"):
            self.row("", False, layout, header=False)
            return
        for entry in spec.get("rows" if kind == "RowsLayout" else "tabs") or []:
            s = (entry or {}).get("spec") or {}
            self.row(
                str(s.get("title", "")),
                bool(s.get("collapse", False)),
                s.get("layout") or {},
                header=not s.get("hideHeader"),
            )


def _row_ids(panels: list[dict[str, Any]]) -> None:
    """Row panels (v2 rows have no id) get ids after the panels' largest, in order."""
    used = [p["id"] for p in panels if isinstance(p.get("id"), int)]
    used += [c["id"] for p in panels for c in p.get("panels") or [] if isinstance(c.get("id"), int)]
    next_id = max(used, default=0) + 1
    for panel in panels:
        if panel.get("type") == "row" and panel.get("id") is None:
            panel["id"], next_id = next_id, next_id + 1


def classic_view(resource: Mapping[str, Any]) -> dict[str, Any]:
    """The v1 dashboard a v2 resource reads as (see the module docstring)."""
    spec = resource.get("spec") or {}
    placer = _Placer(spec.get("elements") or {})
    placer.entries(spec.get("layout") or {})
    _row_ids(placer.panels)
    time = spec.get("timeSettings") or {}
    view: dict[str, Any] = {
        "annotations": {"list": [_annotation(a) for a in spec.get("annotations") or [] if isinstance(a, Mapping)]},
        "description": spec.get("description", ""),
        "editable": spec.get("editable", True),
        "graphTooltip": _CURSOR.get(spec.get("cursorSync", "Off"), 0),
        "links": [_link(link) for link in spec.get("links") or [] if isinstance(link, Mapping)],
        "panels": placer.panels,
        "refresh": time.get("autoRefresh", ""),
        "schemaVersion": LATEST_SCHEMA_VERSION,
        "tags": list(spec.get("tags") or []),
        "templating": {"list": [variable(v) for v in spec.get("variables") or [] if isinstance(v, Mapping)]},
        "time": {"from": time.get("from", "now-6h"), "to": time.get("to", "now")},
        "timepicker": {
            "hidden": bool(time.get("hideTimepicker", False)),
            "refresh_intervals": list(time.get("autoRefreshIntervals") or []),
        },
        "timezone": time.get("timezone", "browser"),
        "title": spec.get("title", ""),
        "uid": (resource.get("metadata") or {}).get("name"),
    }
    if not view["links"]:
        del view["links"]
    for key in ("liveNow", "preload"):
        if spec.get(key):
            view[key] = spec[key]
    return view


def opened_tab(resource: Mapping[str, Any]) -> tuple[dict[str, Any], str, int] | None:
    """A v2 resource laid out in tabs as Grafana opens it (no tab named in the address): the same resource with
    its first tab only, that tab's title and how many tabs there are; None when its layout is not tabs."""
    spec = resource.get("spec") or {}
    layout = spec.get("layout") or {}
    if not isinstance(layout, Mapping) or layout.get("kind") != "TabsLayout":
        return None
    inner = layout.get("spec") or {}
    tabs = [t for t in inner.get("tabs") or [] if isinstance(t, Mapping)]
    if not tabs:
        return None
    first = {**layout, "spec": {**inner, "tabs": tabs[:1]}}
    title = str((tabs[0].get("spec") or {}).get("title", ""))
    return {**resource, "spec": {**spec, "layout": first}}, title, len(tabs)


def tab_of_panels(resource: Mapping[str, Any]) -> dict[Any, str]:
    """Panel id -> the title of the (outermost) tab that shows it; empty when the layout has no tabs."""
    spec = resource.get("spec") or {}
    elements = spec.get("elements") or {}
    found: dict[Any, str] = {}

    def walk(layout: Any, tab: str | None) -> None:
        if not isinstance(layout, Mapping):
            return
        kind, inner = layout.get("kind"), layout.get("spec") or {}
        for item in inner.get("items") or []:
            name = (((item or {}).get("spec") or {}).get("element") or {}).get("name")
            element = elements.get(name) if isinstance(name, str) else None
            if tab is not None and isinstance(element, Mapping):
                found[(element.get("spec") or {}).get("id")] = tab
        for entry in inner.get("tabs" if kind == "TabsLayout" else "rows") or []:
            entry_spec = (entry or {}).get("spec") or {}
            title = str(entry_spec.get("title", "")) if kind == "TabsLayout" and tab is None else tab
            walk(entry_spec.get("layout"), title)

    walk(spec.get("layout"), None)
    return found


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def layout_outline(doc: Any) -> str:
    """The layout in words, for a diff: a v2 dashboard's tabs with their row counts, a v1 dashboard's rows."""
    if not is_v2(doc):
        body = doc if isinstance(doc, Mapping) else {}
        rows = sum(1 for p in body.get("panels") or [] if isinstance(p, Mapping) and p.get("type") == "row")
        return _count(rows, "row")
    layout = doc["spec"].get("layout") or {}
    if layout.get("kind") != "TabsLayout":
        return str(layout.get("kind", ""))
    tabs = [t.get("spec") or {} for t in (layout.get("spec") or {}).get("tabs") or [] if isinstance(t, Mapping)]
    parts = [
        f"{t.get('title', '')} ({_count(len(((t.get('layout') or {}).get('spec') or {}).get('rows') or []), 'row')})"
        for t in tabs
    ]
    return f"{_count(len(tabs), 'tab')}: " + ", ".join(parts)
