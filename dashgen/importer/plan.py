"""A migrated dashboard -> the import plan: groups (rows) of extracted panels with stable keys, the layout,
variables and dashboard fields, and every migration note and escape hatch. Pure.

Rows become groups in reading order; the panels above the first row form a group without a row (key
``top``). A collapsed row holds its panels; an expanded row owns the top-level panels that follow it, as
Grafana reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dashgen.diff.noise import canonicalise_panel
from dashgen.importer.extract import Extracted, Hatch, extract_panel
from dashgen.importer.keys import KeyRing, slug
from dashgen.importer.render import render_row
from dashgen.importer.residual import patch_between
from dashgen.importer.vocab import ImportedDashboard, Place
from dashgen.render.ids import panel_id
from dashgen.render.spec import GroupSpec

TOP_GROUP = "top"
NOT_FIELDS = frozenset({"panels", "rows", "templating", "id", "version", "iteration", "title", "uid", "schemaVersion"})
REFRESHED_OPTIONS = frozenset({"query", "datasource"})  # Grafana lists their options itself on load


@dataclass(frozen=True)
class GroupPlan:
    key: str
    title: str
    collapsed: bool
    row: Place | None
    row_patch: dict[str, Any]
    panels: tuple[Extracted, ...]

    def spec(self) -> GroupSpec:
        return GroupSpec(
            key=self.key, title=self.title, panels=tuple(p.spec for p in self.panels), collapsed=self.collapsed
        )


@dataclass(frozen=True)
class ImportPlan:
    title: str | None
    uid: str | None
    schema_version: int
    groups: tuple[GroupPlan, ...]
    variables: tuple[dict[str, Any], ...]
    fields: dict[str, Any]
    notes: tuple[str, ...] = ()
    row_hatches: tuple[Hatch, ...] = ()

    @property
    def hatches(self) -> tuple[Hatch, ...]:
        return self.row_hatches + tuple(h for g in self.groups for p in g.panels for h in p.hatches)

    @property
    def unequal(self) -> tuple[str, ...]:
        return tuple(p.spec.title for g in self.groups for p in g.panels if not p.equal)

    def dashboard(self) -> ImportedDashboard:
        layout: dict[str, Place] = {}
        for group in self.groups:
            if group.row is not None:
                layout[f"row:{group.key}"] = group.row
            for panel in group.panels:
                layout[panel.spec.key] = panel.place
        return ImportedDashboard(
            title=self.title,
            uid=self.uid,
            schema_version=self.schema_version,
            groups=tuple(g.spec() for g in self.groups),
            variables=self.variables,
            layout=layout,
            rows={g.key: g.row_patch for g in self.groups if g.row_patch},
            fields=self.fields,
        )


def _variables(body: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    templating = body.get("templating")
    found = templating.get("list") if isinstance(templating, Mapping) else None
    out = []
    for var in found if isinstance(found, list) else []:
        if isinstance(var, Mapping):
            out.append(
                {
                    k: v
                    for k, v in var.items()
                    if v is not None and not (k == "options" and var.get("type") in REFRESHED_OPTIONS)
                }
            )
    return tuple(out)


class _Grouping:
    def __init__(self, only: str | None) -> None:
        self.only = only
        self.found = False
        self.groups: list[dict[str, Any]] = []
        self.group_keys = KeyRing()
        self.panel_keys = KeyRing()
        self.row_hatches: list[Hatch] = []

    def start(self, row: Mapping[str, Any] | None) -> dict[str, Any]:
        row_title = row.get("title") if row is not None else None
        title = row_title if isinstance(row_title, str) else ""
        key = self.group_keys.take(slug(title, "row") if row is not None else TOP_GROUP)
        group: dict[str, Any] = {
            "key": key,
            "title": title,
            "collapsed": bool(row and row.get("collapsed")),
            "row": row,
            "panels": [],
        }
        self.groups.append(group)
        return group

    def add(self, group: dict[str, Any], raw: Mapping[str, Any]) -> None:
        raw_title = raw.get("title")
        title = raw_title if isinstance(raw_title, str) else ""
        key = self.panel_keys.take(f"{group['key']}.{slug(title, str(raw.get('type') or 'panel'))}")
        if self.only is not None:
            source_id = raw.get("id")
            if source_id is not None and source_id == panel_id(self.only):
                key = self.only  # a dashgen panel: its own key (and so its id)
            elif self.only not in (key, str(source_id)):
                return
            self.found = True
        group["panels"].append(extract_panel(raw, key))

    def plan_row(self, group: dict[str, Any]) -> tuple[Place | None, dict[str, Any]]:
        raw = group["row"]
        if raw is None:
            return None, {}
        pos = raw.get("gridPos") if isinstance(raw.get("gridPos"), Mapping) else {}
        source_id = raw.get("id") if isinstance(raw.get("id"), int) else None
        for extracted in group["panels"]:  # a dashgen row: its group key is its panels' key prefix
            candidate = extracted.spec.key.split(".", 1)[0]
            if "." in extracted.spec.key and source_id == panel_id(f"row:{candidate}"):
                group["key"] = candidate
        derived = panel_id(f"row:{group['key']}")
        place = Place(
            pos.get("x", 0) if isinstance(pos.get("x"), int) else 0,
            pos.get("y", 0) if isinstance(pos.get("y"), int) else 0,
            None if source_id in (None, derived) else source_id,
        )
        spec = GroupSpec(key=group["key"], title=group["title"], panels=(), collapsed=group["collapsed"])
        rendered = canonicalise_panel(render_row(spec, place, {}, []))
        patch = patch_between(rendered, canonicalise_panel(raw))
        for path in sorted(patch):
            self.row_hatches.append(
                Hatch(group["title"], f"row:{group['key']}", path, "a row field the group spec does not state")
            )
        return place, patch


class NoSuchPanel(LookupError):
    """``--panel KEY`` names no panel of the dashboard."""


def plan_import(body: Mapping[str, Any], notes: tuple[str, ...] = (), only: str | None = None) -> ImportPlan:
    """The plan of a migrated dashboard body; ``only`` keeps one panel: the one whose id a dashgen key derives,
    whose imported key it is, or whose id it is (its group keeps its row)."""
    grouping = _Grouping(only)
    current: dict[str, Any] | None = None
    for raw in body.get("panels") or []:
        if not isinstance(raw, Mapping):
            continue
        if raw.get("type") == "row":
            current = grouping.start(raw)
            for nested in raw.get("panels") or []:
                if isinstance(nested, Mapping):
                    grouping.add(current, nested)
            continue
        if current is None:
            current = grouping.start(None)
        grouping.add(current, raw)
    if only is not None and not grouping.found:
        raise NoSuchPanel(only)
    groups = []
    for group in grouping.groups:
        if only is not None and not group["panels"]:
            continue
        place, patch = grouping.plan_row(group)
        groups.append(GroupPlan(group["key"], group["title"], group["collapsed"], place, patch, tuple(group["panels"])))
    version = body.get("schemaVersion")
    uid = body.get("uid")
    return ImportPlan(
        title=body["title"] if isinstance(body.get("title"), str) else None,
        uid=uid if isinstance(uid, str) else None,
        schema_version=version if isinstance(version, int) else 0,
        groups=tuple(groups),
        variables=_variables(body),
        fields={k: v for k, v in body.items() if k not in NOT_FIELDS and v is not None},
        notes=notes,
        row_hatches=tuple(grouping.row_hatches),
    )
