"""Compute the semantic difference of two dashboards as a :class:`DashboardDiff` value.

Panels are compared field by field on their canonical form (``noise.py``), leaf by leaf with
DeepDiff and its ignore rules (``compare.py``); each changed leaf is a :class:`FieldChange`
``(path, old, new, category)``. Layout moves (``gridPos``, row) are reported apart from content
changes, variable definition changes apart from changes of the current selection, and
dashboard-level fields (title, tags, time, refresh, links) apart from panels. ``noise`` counts raw
differences that canonicalisation and the ignore rules made disappear.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dashgen.diff.compare import count_leaf_differences, leaf_changes
from dashgen.diff.model import DashboardModel, PanelEntry, load_model, match_panels

_AXIS_KEYS = frozenset(
    {
        "min",
        "max",
        "axisSoftMin",
        "axisSoftMax",
        "scaleDistribution",
        "log",
        "type",
        "axisPlacement",
        "axisCenteredZero",
        "logBase",
        "yaxes",
    }
)


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any
    category: str


@dataclass(frozen=True)
class PanelChange:
    title: str
    id: int | None
    changes: tuple[FieldChange, ...]

    @property
    def categories(self) -> list[str]:
        return sorted({c.category for c in self.changes})


@dataclass(frozen=True)
class PanelRef:
    title: str
    id: int | None
    type: str
    # what a reviewer needs to judge an added panel (not part of its identity)
    queries: tuple[str, ...] = field(default=(), compare=False)
    unit: str = field(default="", compare=False)
    description: str = field(default="", compare=False)


@dataclass(frozen=True)
class LayoutMove:
    title: str
    id: int | None
    old_grid: Mapping[str, Any] | None
    new_grid: Mapping[str, Any] | None
    old_row: str | None
    new_row: str | None


@dataclass(frozen=True)
class VariableChange:
    name: str
    definition: tuple[FieldChange, ...]
    selection: tuple[FieldChange, ...]


@dataclass(frozen=True)
class DashboardDiff:
    title: str
    uid: str | None
    dashboard_changes: tuple[FieldChange, ...] = ()
    added_panels: tuple[PanelRef, ...] = ()
    removed_panels: tuple[PanelRef, ...] = ()
    changed_panels: tuple[PanelChange, ...] = ()
    layout_moves: tuple[LayoutMove, ...] = ()
    added_variables: tuple[str, ...] = ()
    removed_variables: tuple[str, ...] = ()
    changed_variables: tuple[VariableChange, ...] = ()
    noise: int = 0

    @property
    def has_semantic_changes(self) -> bool:
        return any(
            (
                self.dashboard_changes,
                self.added_panels,
                self.removed_panels,
                self.changed_panels,
                self.layout_moves,
                self.added_variables,
                self.removed_variables,
                self.changed_variables,
            )
        )

    @property
    def change_count(self) -> int:
        return (
            len(self.dashboard_changes)
            + len(self.added_panels)
            + len(self.removed_panels)
            + len(self.changed_panels)
            + len(self.layout_moves)
            + len(self.added_variables)
            + len(self.removed_variables)
            + len(self.changed_variables)
        )


_SEGMENT = re.compile(r"[.\[\]]+")


def categorise(path: str) -> str:
    """The kind of a panel change, from its path."""
    parts = [p for p in _SEGMENT.split(path) if p and not p.isdigit()]
    if not parts:
        return "other"
    if parts[0] == "targets":
        return "query"
    if parts[0] == "transformations":
        return "transformation"
    if parts[0] in {"title", "description"} and len(parts) == 1:
        return parts[0]
    if "mappings" in parts or parts[-1] == "noValue":
        return "mapping"
    if "thresholds" in parts:
        return "thresholds"
    if parts[-1] in {"unit", "decimals"} or (parts[0] == "yaxes" and parts[-1] == "format"):
        return "unit"
    if parts[0] == "yaxes" or parts[-1] in _AXIS_KEYS or "scaleDistribution" in parts:
        return "axis"
    return "other"


def dashboard_category(path: str) -> str:
    head = _SEGMENT.split(path)[0]
    return head if head in {"title", "tags", "time", "refresh", "links", "timezone", "description"} else "other"


def _noise(raw_old: Any, raw_new: Any, semantic: int) -> int:
    # no normalise_numbers copy first: leaves compare by ==, so 1.0 and 1 are already one value
    return max(0, count_leaf_differences(raw_old, raw_new) - semantic)


def _panel_changes(old: PanelEntry, new: PanelEntry) -> tuple[FieldChange, ...]:
    return tuple(FieldChange(p, a, b, categorise(p)) for p, a, b in leaf_changes(old.body, new.body))


def _place(entry: PanelEntry) -> str | None:
    return f"{entry.tab} › {entry.row}" if entry.tab is not None else entry.row


def _layout(old: PanelEntry, new: PanelEntry, by_row: bool) -> LayoutMove | None:
    """A move of a panel. ``by_row`` (either side v2): its place in its row (``row_grid``), its row, and its tab
    when both sides have tabs; rows regrouped into tabs or reordered are the dashboard's ``layout`` change."""
    if not by_row:
        if old.grid == new.grid and old.row == new.row:
            return None
        return LayoutMove(new.title, new.id, old.grid, new.grid, old.row, new.row)
    tabs_differ = old.tab is not None and new.tab is not None and old.tab != new.tab
    if old.row_grid == new.row_grid and old.row == new.row and not tabs_differ:
        return None
    return LayoutMove(new.title, new.id, old.row_grid, new.row_grid, _place(old), _place(new))


def _schema_changes(old: DashboardModel, new: DashboardModel) -> tuple[FieldChange, ...]:
    """The model written (v1 classic JSON, v2 resource) and, with v2 on either side, the tab/row outline."""
    if old.schema == new.schema == "v1":
        return ()
    out = []
    if (old.schema, old.api_version) != (new.schema, new.api_version):
        out.append(FieldChange("schema", old.api_version or old.schema, new.api_version or new.schema, "layout"))
    if old.outline != new.outline:
        out.append(FieldChange("layout", old.outline, new.outline, "layout"))
    return tuple(out)


def _ref(p: PanelEntry) -> PanelRef:
    raw = p.raw if isinstance(p.raw, Mapping) else {}
    targets = raw.get("targets")
    queries = tuple(
        str(t.get("expr"))
        for t in (targets if isinstance(targets, list) else [])
        if isinstance(t, Mapping) and t.get("expr")
    )
    defaults = (raw.get("fieldConfig") or {}).get("defaults") if isinstance(raw.get("fieldConfig"), Mapping) else None
    unit = defaults.get("unit", "") if isinstance(defaults, Mapping) else ""
    description = raw.get("description", "")
    return PanelRef(
        p.title,
        p.id,
        p.type,
        queries,
        unit if isinstance(unit, str) else "",
        description if isinstance(description, str) else "",
    )


def diff_models(old: DashboardModel, new: DashboardModel) -> DashboardDiff:
    """Semantic diff of two canonical models."""
    noise = 0
    dash = tuple(FieldChange(p, a, b, dashboard_category(p)) for p, a, b in leaf_changes(old.fields, new.fields))
    dash += _schema_changes(old, new)
    by_row = "v2" in (old.schema, new.schema)
    noise += _noise(old.raw_fields, new.raw_fields, len(dash))

    pairs, added, removed = match_panels(old.panels, new.panels)
    changed: list[PanelChange] = []
    moves: list[LayoutMove] = []
    for o, n in pairs:
        changes = _panel_changes(o, n)
        if changes:
            changed.append(PanelChange(n.title, n.id, changes))
        move = _layout(o, n, by_row)
        if move is not None:
            moves.append(move)
        skip = {"gridPos", "panels"}
        raw_o = {k: v for k, v in o.raw.items() if k not in skip}
        raw_n = {k: v for k, v in n.raw.items() if k not in skip}
        noise += _noise(raw_o, raw_n, len(changes))

    var_changes: list[VariableChange] = []
    for name in old.variables.keys() & new.variables.keys():
        vo, vn = old.variables[name], new.variables[name]
        definition = tuple(FieldChange(p, a, b, "definition") for p, a, b in leaf_changes(vo.definition, vn.definition))
        selection = tuple(FieldChange(p, a, b, "selection") for p, a, b in leaf_changes(vo.selection, vn.selection))
        if definition or selection:
            var_changes.append(VariableChange(name, definition, selection))
        noise += _noise(vo.raw, vn.raw, len(definition) + len(selection))
    var_order = list(new.variables) + [v for v in old.variables if v not in new.variables]
    var_changes.sort(key=lambda c: var_order.index(c.name))

    return DashboardDiff(
        title=new.title or old.title,
        uid=new.uid or old.uid,
        dashboard_changes=dash,
        added_panels=tuple(_ref(p) for p in added),
        removed_panels=tuple(_ref(p) for p in removed),
        changed_panels=tuple(changed),
        layout_moves=tuple(moves),
        added_variables=tuple(v for v in new.variables if v not in old.variables),
        removed_variables=tuple(v for v in old.variables if v not in new.variables),
        changed_variables=tuple(var_changes),
        noise=noise,
    )


def diff_dashboards(old: Any, new: Any) -> DashboardDiff:
    """Semantic diff of two dashboard documents (any supported JSON shape)."""
    return diff_models(load_model(old), load_model(new))
