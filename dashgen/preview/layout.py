"""Where each panel sits: a dashboard body laid out by its grid the way Grafana shows it on open.

Pure: dashboard body -> :class:`Placed` items in reading order. Grafana's grid has 24 columns and rows of
30 px with 8 px gaps. A collapsed row is one folded header line and its panels are not shown (nor
queried) unless ``expand_rows``; then they are laid out under the header, and everything below moves
down by their height, as clicking the row in Grafana does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

COLUMNS = 24
CELL_HEIGHT = 30
GAP = 8


@dataclass(frozen=True)
class Placed:
    """A panel or row header at grid position (x, y, w, h) after expansion; ``row`` is its row's title."""

    raw: Mapping[str, Any]
    x: int
    y: int
    w: int
    h: int
    row: str
    in_collapsed_row: bool = False

    @property
    def is_row(self) -> bool:
        return self.raw.get("type") == "row"

    @property
    def folded(self) -> bool:
        """A row header shown folded (its panels hidden)."""
        return self.is_row and bool(self.raw.get("collapsed"))


def mapping_at(value: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``value[key]`` when it is a JSON object, else an empty one: a dashboard read as Grafana reads it."""
    found = value.get(key)
    return found if isinstance(found, Mapping) else {}


def _grid(raw: Mapping[str, Any]) -> tuple[int, int, int, int]:
    pos = mapping_at(raw, "gridPos")
    return int(pos.get("x") or 0), int(pos.get("y") or 0), int(pos.get("w") or 12), int(pos.get("h") or 8)


def layout(body: Mapping[str, Any], expand_rows: bool = False) -> list[Placed]:
    """Every shown item of the dashboard, y-ordered, with collapsed rows folded (or expanded)."""
    top = [p for p in body.get("panels") or [] if isinstance(p, Mapping)]
    top.sort(key=lambda p: (_grid(p)[1], _grid(p)[0]))
    placed: list[Placed] = []
    shift = 0
    row = ""
    for raw in top:
        x, y, w, h = _grid(raw)
        if raw.get("type") == "row":
            row = str(raw.get("title") or "")
            shown = expand_rows and raw.get("collapsed")
            placed.append(
                Placed({**raw, "collapsed": bool(raw.get("collapsed")) and not shown}, x, y + shift, w, 1, row)
            )
            if shown:
                inner = [p for p in raw.get("panels") or [] if isinstance(p, Mapping)]
                if inner:
                    first = min(_grid(p)[1] for p in inner)
                    bottom = max(_grid(p)[1] + _grid(p)[3] for p in inner)
                    for panel in sorted(inner, key=lambda p: (_grid(p)[1], _grid(p)[0])):
                        px, py, pw, ph = _grid(panel)
                        placed.append(Placed(panel, px, y + shift + 1 + py - first, pw, ph, row, True))
                    shift += bottom - first
            continue
        placed.append(Placed(raw, x, y + shift, w, h, row))
    return compact(placed)


def compact(items: list[Placed]) -> list[Placed]:
    """Grafana's vertical compaction (react-grid-layout's): in (y, x) order each item floats up until it
    would touch an item above it, so a gap in the stored ``y`` values is not a gap on the screen.

    Each item's stop is found in one pass over the items already placed in its columns, not one cell at a time (an
    expanded dashboard's panels float up to hundreds of cells, past hundreds of items)."""
    done: list[Placed] = []
    for item in sorted(items, key=lambda i: (i.y, i.x)):
        beside = [o for o in done if item.x < o.x + o.w and o.x < item.x + item.w]  # sharing a column
        y = item.y
        if y > 0:
            # At y - 1 the item would touch ``o`` when o.y - item.h < y - 1 < o.y + o.h: it stops at the highest such
            # y - 1 at or below its own, or at the top.
            stops = [min(item.y - 1, o.y + o.h - 1) for o in beside]
            touching = [s for s, o in zip(stops, beside, strict=True) if s >= max(o.y - item.h + 1, 0)]
            y = max(touching) + 1 if touching else 0
        while (hit := next((o for o in beside if o.y < y + item.h and y < o.y + o.h), None)) is not None:
            y = hit.y + hit.h
        done.append(replace(item, y=y))
    return done


def pixels(item: Placed, width: int) -> tuple[float, float, float, float]:
    """(left, top, width, height) in CSS pixels on a page ``width`` pixels wide."""
    column = (width + GAP) / COLUMNS
    return (
        item.x * column,
        item.y * (CELL_HEIGHT + GAP),
        item.w * column - GAP,
        item.h * (CELL_HEIGHT + GAP) - GAP,
    )


def single(panel: Mapping[str, Any]) -> dict[str, Any]:
    """A one-panel dashboard body: ``panel`` across the whole (panel-wide) page, its own height (the
    changed-panel pictures)."""
    _x, _y, _w, h = _grid(panel)
    return {"panels": [{**panel, "gridPos": {"x": 0, "y": 0, "w": COLUMNS, "h": h}}]}
