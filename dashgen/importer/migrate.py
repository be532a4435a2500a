"""Grafana's own migrations of an old dashboard, applied on import so the written code is current.

Dashboard schema steps (``DashboardMigrator`` / the backend's ``schemaversion`` package) that change what
a dashboard means, applied to a dashboard below schema 36 (which then states 42), each when the source's
``schemaVersion`` is below it: 14 (``sharedCrosshair`` ->
``graphTooltip``), 16 (pre-5.0 ``rows[]`` -> grid panels and row panels), 17 (``minSpan``), 24 (the Angular
table -> ``table-old``), 28 (variable tag options removed), 29 (query variable refresh), 30 (old value
mappings), 33 (string data sources -> ``{uid}`` references: Grafana would look a name up, an import
cannot, so a name becomes its own uid), 37 (legend ``showLegend``), 38 (table ``displayMode`` ->
``cellOptions``), 40 (``refresh`` a string), 41 (``timepicker.time_options``), 42 (``hideFrom.tooltip``).
Then the retired plugins (``graph``, ``singlestat``, ``table-old``) become their successors
(``dashgen.importer.legacy``) whatever the version, as Grafana 11+ does on load. Step 36 (a null data
source becomes the instance's default) needs the instance and is not applied: a null stays null.

Every change is a note; the round trip compares against the migrated dashboard. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dashgen.document.copying import tree_copy
from dashgen.importer.legacy import PLUGIN_MIGRATIONS, upgrade_mappings

CURRENT_SCHEMA = 42
MIGRATED_BELOW = 36  # a dashboard at 36 or later is current enough: Grafana's later steps are its own on load
GRID_CELL = 30 + 8  # px: GRID_CELL_HEIGHT + GRID_CELL_VMARGIN
DEFAULT_ROW_HEIGHT = 250
MIN_PANEL_HEIGHT = 90


@dataclass
class Migrated:
    body: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    source_schema: int | None = None


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _height(value: Any, fallback: int) -> int:
    if isinstance(value, str):
        digits = "".join(ch for ch in value if ch.isdigit())
        value = int(digits) if digits else None
    if not isinstance(value, int | float):
        return fallback
    return math.ceil(max(value, MIN_PANEL_HEIGHT) / GRID_CELL)


def _rows_to_panels(body: dict[str, Any], notes: list[str]) -> None:
    """Schema 16: ``rows[]`` with 12-column ``span`` -> grid panels; row panels when any row shows itself."""
    rows = [r for r in _l(body.pop("rows", None)) if isinstance(r, Mapping)]
    if not rows:
        return
    ids = [p.get("id") for r in rows for p in _l(r.get("panels")) if isinstance(p, Mapping)]
    next_id = max([i for i in ids if isinstance(i, int)] or [0]) + 1
    show_rows = any(r.get("collapse") or r.get("showTitle") or r.get("repeat") for r in rows)
    panels: list[dict[str, Any]] = _l(body.get("panels"))
    y = 0
    for row in rows:
        if row.get("repeatIteration"):
            continue
        row_height = _height(row.get("height"), _height(DEFAULT_ROW_HEIGHT, 7))
        row_panel: dict[str, Any] | None = None
        if show_rows:
            row_panel = {
                "type": "row",
                "id": next_id,
                "title": row.get("title") or "",
                "collapsed": bool(row.get("collapse")),
                "panels": [],
                "gridPos": {"x": 0, "y": y, "w": 24, "h": 1},
            }
            if row.get("repeat"):
                row_panel["repeat"] = row["repeat"]
            panels.append(row_panel)
            next_id += 1
            y += 1
        x, line = 0, 0
        for raw in _l(row.get("panels")):
            if not isinstance(raw, Mapping):
                continue
            panel = dict(raw)
            width = min(24, max(1, math.floor(float(panel.pop("span", None) or 4)) * 2))
            height = _height(panel.pop("height", None), row_height)
            if x + width > 24:
                x, y, line = 0, y + line, 0
            panel["gridPos"] = {"x": x, "y": y, "w": width, "h": height}
            x, line = x + width, max(line, height)
            if row_panel is not None and row_panel["collapsed"]:
                row_panel["panels"].append(panel)
            else:
                panels.append(panel)
        if not (row_panel is not None and row_panel["collapsed"]):
            y += max(line, row_height if row.get("panels") else 0)
    body["panels"] = panels
    notes.append(
        f"schema 16: {len(rows)} legacy rows[] laid out as grid panels" + (" under row panels" if show_rows else "")
    )


def _datasource_ref(value: Any) -> Any:
    """Schema 33: a data-source name or ``$var`` -> ``{uid}`` (a name cannot be looked up on import)."""
    if isinstance(value, str):
        return None if value in ("", "default") else {"uid": value}
    return value


def _walk(panels: Any) -> list[dict[str, Any]]:
    out = []
    for panel in panels if isinstance(panels, list) else []:
        if isinstance(panel, dict):
            out.append(panel)
            out += _walk(panel.get("panels"))
    return out


def _label(panel: Mapping[str, Any]) -> str:
    return f"panel {panel.get('title') or '(untitled)'!r}" + (f" (id {panel['id']})" if "id" in panel else "")


def _migrate_plugin(panel: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    plugin = panel.get("type")
    if plugin == "table" and isinstance(panel.get("styles"), list):
        plugin = "table-old"  # schema 24: the Angular table
    convert = PLUGIN_MIGRATIONS.get(str(plugin))
    if convert is None:
        return panel
    migrated, lost = convert(panel)
    notes.append(f"{_label(panel)}: {plugin} -> {migrated['type']}" + (f" ({'; '.join(lost)})" if lost else ""))
    return migrated


GRID_DEFAULT = {"x": 0, "y": 0, "w": 6, "h": 3}  # PanelModel's gridPos when a panel has none


def _migrate_panels(panels: Any, notes: list[str]) -> list[Any]:
    out = []
    for panel in panels if isinstance(panels, list) else []:
        if isinstance(panel, dict):
            grid = _d(panel.get("gridPos"))
            if set(GRID_DEFAULT) - set(grid):
                panel["gridPos"] = {**GRID_DEFAULT, **grid}
                notes.append(f"{_label(panel)}: no complete gridPos; placed as Grafana places it ({panel['gridPos']})")
            panel = _migrate_plugin(panel, notes)
            if isinstance(panel.get("panels"), list):
                panel["panels"] = _migrate_panels(panel["panels"], notes)
        out.append(panel)
    return out


def _schema_steps(body: dict[str, Any], version: int, notes: list[str]) -> None:
    def step(number: int, what: str, count: int) -> None:
        if count:
            notes.append(f"schema {number}: {what} ({count})")

    if version < 14 and "sharedCrosshair" in body:
        body["graphTooltip"] = 1 if body.pop("sharedCrosshair") else 0
        step(14, "sharedCrosshair -> graphTooltip", 1)
    panels = _walk(body.get("panels"))
    variables = [v for v in _l(_d(body.get("templating")).get("list")) if isinstance(v, dict)]
    if version < 17:
        step(17, "minSpan removed", sum(1 for p in panels if p.pop("minSpan", None) is not None))
    if version < 28:
        count = 0
        for var in variables:
            count += sum(1 for k in ("tags", "tagsQuery", "tagValuesQuery", "useTags") if var.pop(k, None) is not None)
        step(28, "variable tag options removed", count)
    if version < 29:
        count = 0
        for var in variables:
            if var.get("type") == "query":
                if var.get("refresh") not in (1, 2):
                    var["refresh"] = 1
                    count += 1
                if var.get("options"):
                    var["options"] = []
        step(29, "query variable refresh set to on load", count)
    if version < 30:
        count = 0
        for panel in panels:
            defaults = _d(panel.get("fieldConfig")).get("defaults")
            if isinstance(defaults, dict) and any(
                isinstance(m, Mapping) and "op" in m or isinstance(m, Mapping) and m.get("type") in (1, 2)
                for m in _l(defaults.get("mappings"))
            ):
                defaults["mappings"] = upgrade_mappings(defaults["mappings"])
                count += 1
        step(30, "old value mappings upgraded", count)
    if version < 33:
        count = 0
        for owner in [*panels, *variables, *_l(_d(body.get("annotations")).get("list"))]:
            if isinstance(owner, dict) and isinstance(owner.get("datasource"), str):
                owner["datasource"] = _datasource_ref(owner["datasource"])
                count += 1
            for target in _l(owner.get("targets")) if isinstance(owner, dict) else []:
                if isinstance(target, dict) and isinstance(target.get("datasource"), str):
                    target["datasource"] = _datasource_ref(target["datasource"])
                    count += 1
        step(33, "string data sources -> {uid} references", count)
    if version < 37:
        count = 0
        for panel in panels:
            legend = (panel.get("options") or {}).get("legend") if isinstance(panel.get("options"), dict) else None
            if isinstance(legend, dict) and "showLegend" not in legend:
                hidden = legend.get("displayMode") == "hidden"
                legend["showLegend"] = not hidden
                if hidden:
                    legend["displayMode"] = "list"
                count += 1
        step(37, "legend showLegend", count)
    if version < 38:
        count = 0
        for panel in panels:
            custom = _d(_d(_d(panel.get("fieldConfig")).get("defaults")).get("custom")) or None
            if panel.get("type") == "table" and isinstance(custom, dict) and "displayMode" in custom:
                custom["cellOptions"] = {"type": custom.pop("displayMode")}
                count += 1
        step(38, "table displayMode -> cellOptions", count)
    if version < 40 and not isinstance(body.get("refresh"), str):
        body["refresh"] = "" if not body.get("refresh") else str(body["refresh"])
        step(40, "refresh as a string", 1)
    timepicker = body.get("timepicker")
    if version < 41 and isinstance(timepicker, dict) and "time_options" in timepicker:
        del timepicker["time_options"]
        step(41, "timepicker.time_options removed", 1)
    if version < 42:
        count = 0
        for panel in panels:
            for override in _l(_d(panel.get("fieldConfig")).get("overrides")):
                for prop in _l(override.get("properties")) if isinstance(override, dict) else []:
                    if not isinstance(prop, dict) or prop.get("id") != "custom.hideFrom":
                        continue
                    value = prop.get("value")
                    if isinstance(value, dict) and value.get("viz") and not value.get("tooltip"):
                        value["tooltip"] = True
                        count += 1
        step(42, "hidden series hidden from the tooltip too", count)


def migrate(body: Mapping[str, Any]) -> Migrated:
    """The dashboard as Grafana would migrate it on load (a new dict), with a note per change."""
    out = tree_copy(dict(body))  # a decoded JSON tree: its deep copy at a third of copy.deepcopy's time
    notes: list[str] = []
    version = out.get("schemaVersion")
    version = version if isinstance(version, int) and not isinstance(version, bool) else 0
    if version < 16:
        _rows_to_panels(out, notes)
    if version < MIGRATED_BELOW:
        _schema_steps(out, version, notes)
    out["panels"] = _migrate_panels(out.get("panels"), notes)
    if version < MIGRATED_BELOW:
        out["schemaVersion"] = CURRENT_SCHEMA
        notes.append(f"schemaVersion {version or 'absent'} -> {CURRENT_SCHEMA}")
    return Migrated(out, notes, version or None)
