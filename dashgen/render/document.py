"""Render a DashboardSpec to the canonical Grafana dashboard dict: layout, ids, grafanalib
objects, grafanalib's own JSON encoder, then the single normalisation step. Pure.

``placements`` (where each row and panel goes), ``render_panel`` (one panel's canonical JSON) and the
dashboard-wide settings below are what the v2 resource (``dashgen.render.v2``) is rendered from too, so both
schemas are made from the same spec by the same code and v2 never reads the v1 document back."""

from __future__ import annotations

import json
from typing import Any

import grafanalib.core as G
from grafanalib._gen import DashboardEncoder

from dashgen.render.grafanalib_bridge import build_panel, build_row
from dashgen.render.ids import panel_id
from dashgen.render.layout import GridPos, layout_groups
from dashgen.render.memo import JsonMemo, Memo, json_answer
from dashgen.render.normalise import normalise_dashboard, normalised, normalised_panel, normalised_variable
from dashgen.render.spec import DashboardSpec, GroupSpec, PanelSpec

# What every dashgen dashboard sets beyond its spec, named once for both schemas.
TIMEZONE = "browser"
GRAPH_TOOLTIP = 1  # a crosshair shared by every panel: v1 graphTooltip 1, v2 cursorSync "Crosshair"
EDITABLE = True
TIME_TO = "now"
REFRESH_INTERVALS: tuple[str, ...] = tuple(G.DEFAULT_TIME_PICKER.refreshIntervals)

Placement = tuple[GroupSpec, GridPos, list[tuple[PanelSpec, GridPos]]]


def placements(spec: DashboardSpec) -> list[Placement]:
    """Each row of the spec with its header's position and its panels' positions (``dashgen.render.layout``)."""
    placed = layout_groups([(group.collapsed, [(p.width, p.height) for p in group.panels]) for group in spec.groups])
    return [
        (group, row_pos, list(zip(group.panels, positions, strict=True)))
        for group, (row_pos, positions) in zip(spec.groups, placed, strict=True)
    ]


def to_grafanalib(spec: DashboardSpec) -> G.Dashboard:
    """The grafanalib Dashboard for a spec, with computed gridPos and key-derived ids."""
    top_level: list[G.Panel] = []
    for group, row_pos, placed in placements(spec):
        panels = [build_panel(p, panel_id(p.key), pos) for p, pos in placed]
        top_level.append(build_row(group.title, panel_id(f"row:{group.key}"), row_pos, group.collapsed, panels))
        if not group.collapsed:
            top_level.extend(panels)
    return G.Dashboard(
        title=spec.title,
        uid=spec.uid,
        description=spec.description,
        tags=list(spec.tags),
        panels=top_level,
        templating=G.Templating(list=list(spec.variables)),
        time=G.Time(spec.time_from, TIME_TO),
        timePicker=G.TimePicker(
            refreshIntervals=list(REFRESH_INTERVALS), timeOptions=G.DEFAULT_TIME_PICKER.timeOptions
        ),
        refresh=spec.refresh,
        schemaVersion=spec.schema_version,
        graphTooltip=GRAPH_TOOLTIP,
        editable=EDITABLE,
        timezone=TIMEZONE,
        links=list(spec.links),
    )


def _json(value: Any) -> Any:
    """``value`` as grafanalib's encoder writes it, read back as plain JSON values."""
    return json.loads(json.dumps(value, cls=DashboardEncoder))


_RENDERED: JsonMemo = Memo("rendered dashboards", 32)


def render_dashboard(spec: DashboardSpec) -> dict[str, Any]:
    """The normalised dashboard dict, ready for canonical encoding and validation (rendered once per spec object in
    the process, ``render.memo``; each call gets its own dict)."""
    return json_answer(
        _RENDERED,
        spec,
        (),
        lambda: normalise_dashboard(_json(to_grafanalib(spec).to_json_data()), spec.schema_version),
    )


def render_panel(panel: PanelSpec, pos: GridPos) -> dict[str, Any]:
    """One panel's canonical JSON, as it stands in ``render_dashboard``'s document."""
    return normalised_panel(_json(build_panel(panel, panel_id(panel.key), pos).to_json_data()))


def render_links(spec: DashboardSpec) -> list[dict[str, Any]]:
    """The spec's dashboard links' canonical JSON, as they stand in ``render_dashboard``'s document."""
    return [normalised(_json(link)) for link in spec.links]


def render_variables(spec: DashboardSpec) -> list[dict[str, Any]]:
    """The spec's variables' canonical JSON, as they stand in ``render_dashboard``'s document."""
    return [normalised_variable(_json(variable)) for variable in spec.variables]
