"""Which table columns fall past a panel's edge on a 1920-pixel screen: a fact computed, not a look in a picture.

Pure: a table panel (its grid width, its field config, its transformations) and the columns it shows ->
the columns whose right edge lies past the table's visible width. Grafana's table sizes every column it is not
told the width of to ``max(minWidth, (available - fixed) / auto columns)`` (``computeColWidths`` in
grafana-ui's TableNG, and the older table alike), with ``minWidth`` the field's ``custom.minWidth`` or 150 px
(``COLUMN.DEFAULT_WIDTH``); ``custom.width`` fixes a column. When the sum passes the available width the table
scrolls sideways, and what lies past the edge is not seen on open: a verdict there is no verdict.

The geometry (one definition): a browser 1920 CSS px wide, the dashboard page's padding of 16 px each side, the
grid's 24 columns with 8 px between panels, the panel's 8 px content padding and 1 px border each side, and the
table's vertical scrollbar (8 px and its 2 px margin) reserved, since a long table shows one.

``visible_columns`` reads the columns a table can show from its JSON alone (the kit's organize step, the
matrix's declared headers); the preview passes the columns the data really brought. ``verdict_columns`` names
the columns that must never be clipped, whatever the row (S37: the verdict is visible at a glance).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SCREEN_WIDTH = 1920  # CSS pixels: the on-call's full-HD screen
PAGE_PADDING = 16  # the dashboard page's side padding (theme.spacing(2)), each side
GRID_COLUMNS = 24
GRID_GAP = 8  # react-grid-layout's margin between panels
PANEL_PADDING = 8  # the panel's content padding (theme.components.panel.padding x 8 px), each side
PANEL_BORDER = 1  # each side
SCROLLBAR = 8 + 2  # TableNG's TABLE.SCROLL_BAR_WIDTH and SCROLL_BAR_MARGIN
DEFAULT_MIN_WIDTH = 150  # TableNG's COLUMN.DEFAULT_WIDTH: the floor of an auto-sized column
COLOUR_CELLS = frozenset({"color-text", "color-background"})
# A column named as a state (or a fault code, the GPU's last Xid) says whether its entity is well, coloured or not.
STATE_NAME = re.compile(r"\b(state|status|health|verdict|xid)\b", re.IGNORECASE)


def panel_pixels(grid_width: int, screen_width: int = SCREEN_WIDTH) -> float:
    """The outer width in CSS pixels of a panel ``grid_width`` grid units wide."""
    grid = screen_width - 2 * PAGE_PADDING
    column = (grid - GRID_GAP * (GRID_COLUMNS - 1)) / GRID_COLUMNS
    return grid_width * column + (grid_width - 1) * GRID_GAP


def table_pixels(grid_width: int, screen_width: int = SCREEN_WIDTH) -> float:
    """The width a table's columns share inside a panel ``grid_width`` grid units wide."""
    return panel_pixels(grid_width, screen_width) - 2 * (PANEL_PADDING + PANEL_BORDER) - SCROLLBAR


@dataclass(frozen=True)
class Sizing:
    """How Grafana sizes a table's columns: the floor of an auto column and the fixed widths by column."""

    min_width: float = DEFAULT_MIN_WIDTH
    fixed: Mapping[str, float] | None = None


def column_widths(columns: Sequence[str], available: float, sizing: Sizing = Sizing()) -> list[float]:
    """Each column's width as Grafana's ``computeColWidths`` gives it."""
    fixed = sizing.fixed or {}
    defined = sum(fixed[c] for c in columns if c in fixed)
    auto = sum(1 for c in columns if c not in fixed)
    share = (available - defined) / auto if auto else 0.0
    return [fixed[c] if c in fixed else max(sizing.min_width, share) for c in columns]


def clipped(columns: Sequence[str], available: float, sizing: Sizing = Sizing()) -> list[str]:
    """The columns whose right edge lies past ``available`` pixels (wholly or partly off the panel's edge)."""
    edge, out = 0.0, []
    for column, width in zip(columns, column_widths(columns, available, sizing), strict=True):
        edge += width
        if edge > available + 0.5:  # half a pixel: rounding, not a hidden column
            out.append(column)
    return out


def _object(value: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    found = value.get(key)
    return found if isinstance(found, Mapping) else {}


def _config(panel: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """(fieldConfig, its defaults' custom), empty where absent."""
    config = _object(panel, "fieldConfig")
    return config, _object(_object(config, "defaults"), "custom")


def sizing(panel: Mapping[str, Any], columns: Sequence[str] = ()) -> Sizing:
    """The table's sizing from its field config: ``custom.minWidth``, ``custom.width`` (every column of
    ``columns`` fixed), and ``custom.width`` overrides by column name."""
    config, custom = _config(panel)
    floor = custom.get("minWidth")
    width = custom.get("width")
    fixed: dict[str, float] = {}
    if isinstance(width, int | float) and width > 0:
        fixed = dict.fromkeys(columns, float(width))
    for override in config.get("overrides") or []:
        matcher = override.get("matcher") or {}
        if matcher.get("id") != "byName":
            continue
        for prop in override.get("properties") or []:
            if prop.get("id") == "custom.width" and isinstance(prop.get("value"), int | float):
                fixed[str(matcher.get("options"))] = float(prop["value"])
    return Sizing(float(floor) if isinstance(floor, int | float) and floor > 0 else DEFAULT_MIN_WIDTH, fixed)


def clip_rule(panel: Mapping[str, Any], screen_width: int = SCREEN_WIDTH) -> dict[str, Any]:
    """What a page needs to apply :func:`clipped` to the columns it computes itself (the preview's script, whose
    columns come from Grafana's transformations): the width the columns share, the auto columns' floor, a width
    fixing every column (``custom.width``) and the widths fixed by column name."""
    grid = _object(panel, "gridPos")
    custom = _config(panel)[1]
    width = custom.get("width")
    every = sizing(panel)
    return {
        "available": table_pixels(int(grid.get("w") or 12), screen_width),
        "minWidth": every.min_width,
        "width": float(width) if isinstance(width, int | float) and width > 0 else None,
        "fixed": dict(every.fixed or {}),
        "screen": screen_width,
    }


def visible_columns(panel: Mapping[str, Any]) -> list[str] | None:
    """The columns a table shows, as its JSON declares them: a matrix's corner and headers, or a merged table's
    organized columns less the excluded ones; None when only the data can tell (a table shown as queried)."""
    steps = [s for s in panel.get("transformations") or [] if isinstance(s, Mapping)]
    organize = next((s.get("options") or {} for s in steps if s.get("id") == "organize"), None)
    if organize is None:
        return None
    rename = organize.get("renameByName") or {}
    exclude = {k for k, v in (organize.get("excludeByName") or {}).items() if v}
    order = organize.get("indexByName") or {}
    names = [n for n in sorted(order, key=lambda n: order[n]) if n not in exclude]
    names += [n for n in rename if n not in order and n not in exclude]
    shown: list[str] = []
    for name in names:
        title = rename.get(name) or name
        if title not in shown:  # a value and its alias ("Value" / "Value #A"): a query names it one way
            shown.append(title)
    return shown


def _colour_coded(panel: Mapping[str, Any]) -> bool:
    """Whether the table colours its value cells by what they mean: a colour cell type with more than one
    threshold step, or a value mapping that gives a colour."""
    config, custom = _config(panel)
    if _object(custom, "cellOptions").get("type") not in COLOUR_CELLS:
        return False
    defaults = _object(config, "defaults")
    steps = _object(defaults, "thresholds").get("steps")
    if isinstance(steps, list) and len(steps) > 1:
        return True
    return any(_gives_colour(m) for m in defaults.get("mappings") or [] if isinstance(m, Mapping))


def _gives_colour(mapping: Mapping[str, Any]) -> bool:
    options = _object(mapping, "options")
    results = [_object(options, "result"), *(v for v in options.values() if isinstance(v, Mapping))]
    return any(result.get("color") for result in results)


def _entity_columns(panel: Mapping[str, Any]) -> set[str]:
    """The titles of the columns that name a row's entity: a merged table's label columns (every field but the
    queries' values), renamed as organize shows them."""
    steps = [s for s in panel.get("transformations") or [] if isinstance(s, Mapping)]
    organize = next((s.get("options") or {} for s in steps if s.get("id") == "organize"), {})
    rename = organize.get("renameByName") or {}
    names = {*(organize.get("indexByName") or {}), *rename}
    return {rename.get(n) or n for n in names if not str(n).startswith("Value")}


def verdict_columns(panel: Mapping[str, Any], columns: Sequence[str]) -> list[str]:
    """The verdict columns among the table's ``columns``: those whose cells are colour-coded by thresholds or
    mappings (every value column of a colour-coded table) or that are named as a state."""
    coloured = _colour_coded(panel)
    entities = _entity_columns(panel)
    return [c for c in columns if STATE_NAME.search(c) or (coloured and c not in entities)]
