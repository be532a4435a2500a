"""The whole v2 resource of one dashboard: ``{apiVersion, kind, metadata, spec}`` rendered from its DashboardSpec by
the code that renders the v1 document (``dashgen.render.document``: the same placements, the same panel JSON, the
same dashboard-wide settings), so both schemas carry the very same panels and v2 never reads the v1 document back.
``spec.elements`` holds one element per panel keyed by its stable key; ``spec.layout`` is a ``TabsLayout`` of the
spec's tabs (the first screen first), each a ``RowsLayout`` of the rows it holds (collapsed as in v1) with a
``GridLayout`` of the row's panels at their v1 positions (``y`` counted from the row's top), or an
``AutoGridLayout`` where the group asks for one; a row shown only while it has data where the group is about one
pool kind of a profile that mixes kinds. Pure."""

from __future__ import annotations

from typing import Any

from dashgen.document.copying import tree_copy
from dashgen.render.document import (
    EDITABLE,
    GRAPH_TOOLTIP,
    REFRESH_INTERVALS,
    TIME_TO,
    TIMEZONE,
    Placement,
    placements,
    render_links,
    render_panel,
    render_variables,
)
from dashgen.render.layout import GridPos
from dashgen.render.memo import JsonMemo, Memo, json_answer
from dashgen.render.normalise import BUILTIN_ANNOTATION
from dashgen.render.spec import DashboardSpec
from dashgen.render.v2.elements import panel_element
from dashgen.render.v2.variables import annotation_kind, dashboard_link, variable_kind

API_GROUP = "dashboard.grafana.app"
CURSOR_SYNC = ("Off", "Crosshair", "Tooltip")  # v1 graphTooltip 0 / 1 / 2
PROFILE_ANNOTATION = "dashgen.io/profile"


def _grid_item(key: str, pos: GridPos, top: int) -> dict[str, Any]:
    return {
        "kind": "GridLayoutItem",
        "spec": {
            "x": pos.x,
            "y": pos.y - top,
            "width": pos.w,
            "height": pos.h,
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


def auto_grid(keys: list[str], positions: list[GridPos]) -> dict[str, Any]:
    """An ``AutoGridLayout`` of the row's panels in reading order: as many columns as the v1 row's widest line of
    panels holds (at most 4), Grafana's standard column width and row height."""
    lines: dict[int, int] = {}
    for pos in positions:
        lines[pos.y] = lines.get(pos.y, 0) + 1
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


def _row(placement: Placement) -> dict[str, Any]:
    group, _header, placed = placement
    top = min((pos.y for _, pos in placed), default=0)
    if group.auto_grid:
        grid = auto_grid([panel.key for panel, _ in placed], [pos for _, pos in placed])
    else:
        grid = {"kind": "GridLayout", "spec": {"items": [_grid_item(p.key, pos, top) for p, pos in placed]}}
    spec: dict[str, Any] = {"title": group.title, "collapse": group.collapsed}
    if group.when_data:
        spec["conditionalRendering"] = tree_copy(WHEN_DATA)
    spec["layout"] = grid
    return {"kind": "RowsLayoutRow", "spec": spec}


def _tabs(spec: DashboardSpec) -> list[tuple[str, tuple[str, ...]]]:
    """The spec's tabs; a spec without any (a test's) gets one tab holding every row."""
    if spec.tabs:
        return [(title, keys) for title, keys in spec.tabs]
    return [(spec.title, tuple(group.key for group in spec.groups))]


def layout(spec: DashboardSpec, placed: list[Placement]) -> dict[str, Any]:
    rows = {placement[0].key: placement for placement in placed}
    tabs = [
        {
            "kind": "TabsLayoutTab",
            "spec": {
                "title": title,
                "layout": {"kind": "RowsLayout", "spec": {"rows": [_row(rows[key]) for key in keys]}},
            },
        }
        for title, keys in _tabs(spec)
    ]
    return {"kind": "TabsLayout", "spec": {"tabs": tabs}}


def _time_settings(spec: DashboardSpec) -> dict[str, Any]:
    return {
        "timezone": TIMEZONE,
        "from": spec.time_from,
        "to": TIME_TO,
        "autoRefresh": spec.refresh,
        "autoRefreshIntervals": list(REFRESH_INTERVALS),
        "hideTimepicker": False,
        "fiscalYearStartMonth": 0,
    }


_RENDERED: JsonMemo = Memo("rendered v2 resources", 32)


def render_v2(spec: DashboardSpec, api_version: str) -> dict[str, Any]:
    """The v2 resource of a dashboard spec. Raises ``UnsupportedVariable`` for a variable type without a v2 form.
    Rendered once per spec object and API version in the process (``render.memo``); each call gets its own dict."""
    return json_answer(_RENDERED, spec, (api_version,), lambda: _render_v2(spec, api_version))


def _render_v2(spec: DashboardSpec, api_version: str) -> dict[str, Any]:
    placed = placements(spec)
    elements = {
        panel.key: panel_element(render_panel(panel, pos), api_version) for _, _, row in placed for panel, pos in row
    }
    body: dict[str, Any] = {
        "title": spec.title,
        "description": spec.description,
        "tags": list(spec.tags),
        "editable": EDITABLE,
        "cursorSync": CURSOR_SYNC[GRAPH_TOOLTIP],
        "preload": False,
        "liveNow": False,
        "timeSettings": _time_settings(spec),
        "links": [dashboard_link(link) for link in render_links(spec)],
        "annotations": [annotation_kind(BUILTIN_ANNOTATION)],
        "variables": [variable_kind(v) for v in render_variables(spec)],
        "elements": elements,
        "layout": layout(spec, placed),
    }
    return {
        "apiVersion": f"{API_GROUP}/{api_version}",
        "kind": "Dashboard",
        "metadata": {"name": spec.uid, "annotations": {PROFILE_ANNOTATION: spec.profile}},
        "spec": tree_copy(body),
    }
