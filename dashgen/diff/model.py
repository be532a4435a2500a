"""The diff view of a dashboard: canonical panels and variables keyed for matching.

Panels are matched old↔new in three passes: same ``id`` and same title; then same title
(when unique on both sides); then same ``id``. So a renumbered dashboard still matches by
title, and a retitled panel still matches by id. Variables are keyed by name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dashgen.deployment.model import Schema
from dashgen.diff.noise import (
    canonicalise_dashboard_fields,
    canonicalise_panel,
    canonicalise_variable,
)
from dashgen.document import is_v2, iter_panels, raw_variables, unwrap
from dashgen.document.v2view import layout_outline, tab_of_panels


@dataclass(frozen=True)
class PanelEntry:
    id: int | None
    title: str
    type: str
    row: str | None
    grid: Mapping[str, Any] | None
    body: Mapping[str, Any]
    raw: Mapping[str, Any] = field(repr=False)
    tab: str | None = None  # the v2 tab showing it (None in v1)
    row_grid: Mapping[str, Any] | None = None  # gridPos with y counted from the top of its row's panels

    @property
    def label(self) -> str:
        return f'panel "{self.title}"' + (f" (id {self.id})" if self.id is not None else "")


@dataclass(frozen=True)
class VariableEntry:
    name: str
    definition: Mapping[str, Any]
    selection: Any
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class DashboardModel:
    title: str
    uid: str | None
    fields: Mapping[str, Any]
    panels: tuple[PanelEntry, ...]
    variables: Mapping[str, VariableEntry]
    raw_fields: Mapping[str, Any] = field(repr=False)
    schema: Schema = "v1"  # v2: read through its classic view
    api_version: str | None = None
    outline: str = ""  # v2: its tabs and their row counts; v1: its row count


def _row_grids(sites: list[tuple[Mapping[str, Any], str | None]]) -> list[Mapping[str, Any] | None]:
    """Each panel's grid with ``y`` from the top of its row's panels: what a v2 GridLayout inside a row says,
    and what stays put when rows above it grow or rows are regrouped into tabs."""
    tops: dict[str | None, int] = {}
    for p, row in sites:
        grid = _grid(p)
        if p.get("type") != "row" and grid is not None and isinstance(grid.get("y"), int):
            tops[row] = min(tops.get(row, grid["y"]), grid["y"])
    out: list[Mapping[str, Any] | None] = []
    for p, row in sites:
        grid = _grid(p)
        if grid is None or p.get("type") == "row" or not isinstance(grid.get("y"), int):
            out.append(None if p.get("type") == "row" else grid)
            continue
        out.append({**grid, "y": grid["y"] - tops.get(row, 0)})
    return out


def _grid(panel: Mapping[str, Any]) -> Mapping[str, Any] | None:
    grid = panel.get("gridPos")
    if not isinstance(grid, Mapping):
        return None
    return {k: grid[k] for k in ("x", "y", "w", "h") if k in grid}


def load_model(doc: Any) -> DashboardModel:
    """Canonicalise a dashboard document into the keyed diff model."""
    body = unwrap(doc)
    v2 = is_v2(doc)
    tabs = tab_of_panels(doc) if v2 else {}
    sites = [(site.raw, site.section) for site in iter_panels(body)]
    panels = tuple(
        PanelEntry(
            id=p.get("id") if isinstance(p.get("id"), int) else None,
            title=str(p.get("title") or ""),
            type=str(p.get("type") or ""),
            row=row,
            grid=_grid(p),
            body=canonicalise_panel(p),
            raw=p,
            tab=tabs.get(p.get("id")) if p.get("type") != "row" else None,
            row_grid=row_grid,
        )
        for (p, row), row_grid in zip(sites, _row_grids(sites), strict=True)
    )
    variables: dict[str, VariableEntry] = {}
    for raw in raw_variables(body):
        if not raw.get("name"):
            continue
        canonical = canonicalise_variable(raw)
        selection = canonical.pop("current", None)
        variables[str(raw["name"])] = VariableEntry(str(raw["name"]), canonical, selection, raw)
    uid = body.get("uid")
    return DashboardModel(
        title=str(body.get("title") or ""),
        uid=uid if isinstance(uid, str) else None,
        fields=canonicalise_dashboard_fields(body),
        panels=panels,
        variables=variables,
        raw_fields={k: v for k, v in body.items() if k not in {"panels", "rows", "templating"}},
        schema="v2" if v2 else "v1",
        api_version=str(doc.get("apiVersion")) if v2 else None,
        outline=layout_outline(doc if v2 else body),
    )


def match_panels(
    old: tuple[PanelEntry, ...], new: tuple[PanelEntry, ...]
) -> tuple[list[tuple[PanelEntry, PanelEntry]], list[PanelEntry], list[PanelEntry]]:
    """``(matched pairs, added, removed)`` — by id+title, then unique title, then id."""
    free_old = list(old)
    pairs: list[tuple[PanelEntry, PanelEntry]] = []
    unmatched: list[PanelEntry] = []

    def take(pred: Any) -> PanelEntry | None:
        for candidate in free_old:
            if pred(candidate):
                free_old.remove(candidate)
                return candidate
        return None

    for n in new:
        hit = take(lambda o, n=n: o.id is not None and o.id == n.id and o.title == n.title)
        if hit is not None:
            pairs.append((hit, n))
        else:
            unmatched.append(n)
    old_titles = Counter(o.title for o in free_old)
    new_titles = Counter(n.title for n in unmatched)
    still: list[PanelEntry] = []
    for n in unmatched:
        unique = old_titles[n.title] == 1 and new_titles[n.title] == 1
        hit = take(lambda o, n=n: o.title == n.title) if unique else None
        if hit is not None:
            pairs.append((hit, n))
        else:
            still.append(n)
    added: list[PanelEntry] = []
    for n in still:
        hit = take(lambda o, n=n: o.id is not None and o.id == n.id)
        if hit is not None:
            pairs.append((hit, n))
        else:
            added.append(n)
    order = {id(n): i for i, n in enumerate(new)}
    pairs.sort(key=lambda p: order[id(p[1])])
    return pairs, added, free_old
