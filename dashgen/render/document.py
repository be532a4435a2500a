"""Render a DashboardSpec to the canonical Grafana dashboard dict: layout, ids, grafanalib
objects, grafanalib's own JSON encoder, then the single normalisation step. Pure."""

from __future__ import annotations

import json
from typing import Any

import grafanalib.core as G
from grafanalib._gen import DashboardEncoder

from dashgen.render.grafanalib_bridge import build_panel, build_row
from dashgen.render.ids import panel_id
from dashgen.render.layout import layout_groups
from dashgen.render.normalise import normalise_dashboard
from dashgen.render.spec import DashboardSpec


def to_grafanalib(spec: DashboardSpec) -> G.Dashboard:
    """The grafanalib Dashboard for a spec, with computed gridPos and key-derived ids."""
    placed = layout_groups([(group.collapsed, [(p.width, p.height) for p in group.panels]) for group in spec.groups])
    top_level: list[G.Panel] = []
    for group, (row_pos, positions) in zip(spec.groups, placed, strict=True):
        panels = [build_panel(p, panel_id(p.key), pos) for p, pos in zip(group.panels, positions, strict=True)]
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
        time=G.Time(spec.time_from, "now"),
        refresh=spec.refresh,
        schemaVersion=spec.schema_version,
        graphTooltip=1,
        timezone="browser",
        links=list(spec.links),
    )


def render_dashboard(spec: DashboardSpec) -> dict[str, Any]:
    """The normalised dashboard dict, ready for canonical encoding and validation."""
    raw = json.loads(json.dumps(to_grafanalib(spec).to_json_data(), cls=DashboardEncoder))
    return normalise_dashboard(raw, spec.schema_version)
