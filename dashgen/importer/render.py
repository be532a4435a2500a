"""Render an imported module (``ImportedDashboard``) to dashboard JSON: ``dashgen render-module``.

Each panel goes the way every dashgen panel goes (the grafanalib bridge, grafanalib's encoder, the one
normalisation step), placed where its ``Place`` says; then what the module states verbatim is laid over
it: each target's and panel's ``extra`` (a JSON merge patch, RFC 7386, so what normalisation rewrites —
a ``spanNulls: true``, an ``intervalFactor`` — comes back as Grafana stored it), the row patches, and the
dashboard's own fields and variables. A panel without a ``Place`` (added by hand later) flows below the
others. Pure.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import grafanalib.core as G
from grafanalib._gen import DashboardEncoder

from dashgen.importer.vocab import ImportedDashboard, ImportedEvidence, Place
from dashgen.render.grafanalib_bridge import PatchedPanel, build_panel, build_row, merge_patch
from dashgen.render.ids import panel_id
from dashgen.render.layout import GRID_WIDTH, GridPos
from dashgen.render.normalise import normalise_dashboard
from dashgen.render.spec import GroupSpec, PanelSpec


def _encode(obj: G.Panel | PatchedPanel) -> dict[str, Any]:
    return json.loads(json.dumps(obj.to_json_data(), cls=DashboardEncoder))


def finish_panel(spec: PanelSpec, rendered: dict[str, Any]) -> dict[str, Any]:
    """What the module states verbatim, laid over a normalised panel: the description as imported, each
    target's ``extra``, then the panel's ``extra``."""
    out = dict(rendered)
    evidence = spec.evidence
    keep_empty = isinstance(evidence, ImportedEvidence) and evidence.text == ""
    if out.get("description") == "" and not keep_empty:
        out.pop("description")
    if spec.targets and isinstance(out.get("targets"), list):
        targets = list(out["targets"])
        for index, target in enumerate(spec.targets):
            if target.extra and index < len(targets):
                targets[index] = merge_patch(targets[index], target.extra)
        out["targets"] = targets
    return merge_patch(out, spec.extra) if spec.extra else out


def render_panel(spec: PanelSpec, pos: GridPos, pid: int | None = None) -> dict[str, Any]:
    """One panel as render-module writes it, at ``pos`` with id ``pid`` (default: from its key)."""
    raw = _encode(build_panel(spec, panel_id(spec.key) if pid is None else pid, pos))
    return finish_panel(spec, normalise_dashboard({"panels": [raw]}, 0)["panels"][0])


def render_row(group: GroupSpec, place: Place, patch: dict[str, Any], nested: list[dict[str, Any]]) -> dict[str, Any]:
    """A row header; a collapsed row holds its rendered panels."""
    row_id = place.id if place.id is not None else panel_id(f"row:{group.key}")
    raw = _encode(build_row(group.title, row_id, GridPos(place.x, place.y, GRID_WIDTH, 1), group.collapsed, []))
    row = normalise_dashboard({"panels": [raw]}, 0)["panels"][0]
    row["panels"] = nested if group.collapsed else []
    return merge_patch(row, patch) if patch else row


class _Flow:
    """Positions for what has no Place: left to right below everything placed."""

    def __init__(self, top: int) -> None:
        self.x, self.y, self.line = 0, top, 0

    def place(self, width: int, height: int) -> GridPos:
        if self.x + width > GRID_WIDTH:
            self.x, self.y, self.line = 0, self.y + self.line, 0
        pos = GridPos(self.x, self.y, width, height)
        self.x += width
        self.line = max(self.line, height)
        return pos

    def new_line(self) -> None:
        self.x, self.y, self.line = 0, self.y + self.line, 0


def _bottom(dash: ImportedDashboard) -> int:
    bottom = 0
    for group in dash.groups:
        row = dash.layout.get(f"row:{group.key}")
        if row is not None:
            bottom = max(bottom, row.y + 1)
        for spec in group.panels:
            place = dash.layout.get(spec.key)
            if place is not None:
                bottom = max(bottom, place.y + spec.height)
    return bottom


def render_imported(dash: ImportedDashboard) -> dict[str, Any]:
    """The dashboard JSON of an imported module."""
    flow = _Flow(_bottom(dash))
    panels: list[dict[str, Any]] = []
    for group in dash.groups:
        row_place = dash.layout.get(f"row:{group.key}")
        rendered = []
        for spec in group.panels:
            place = dash.layout.get(spec.key)
            if place is None:
                pos, pid = flow.place(spec.width, spec.height), None
            else:
                pos, pid = GridPos(place.x, place.y, spec.width, spec.height), place.id
            rendered.append(render_panel(spec, pos, pid))
        if row_place is None and group.title:
            flow.new_line()
            row_place = Place(0, flow.place(GRID_WIDTH, 1).y)
            flow.new_line()
        if row_place is not None:
            panels.append(render_row(group, row_place, dash.rows.get(group.key, {}), rendered))
            if group.collapsed:
                continue
        panels.extend(rendered)
    body = copy.deepcopy(dash.fields)
    body.update(
        {
            "schemaVersion": dash.schema_version,
            "panels": panels,
            "templating": {"list": copy.deepcopy(list(dash.variables))},
        }
    )
    for key, value in (("title", dash.title), ("uid", dash.uid)):
        if value is not None:
            body[key] = value
    return body
