"""Grid layout: rows in reading order, panels flowing left to right in a 24-column grid.

Pure: takes groups of (width, height) and returns gridPos dicts. A panel wider than what is left
on a line starts a new line; a line is as tall as its tallest panel. Collapsed rows keep their
panels' positions as if expanded (Grafana's own convention) and take one grid unit; the panels of several
collapsed rows are placed one row's below the other's, so no two panels overlap (Grafana moves a row's
panels under it when the row is expanded, and compacts the grid).
"""

from __future__ import annotations

from dataclasses import dataclass

GRID_WIDTH = 24
ROW_HEIGHT = 1


@dataclass(frozen=True)
class GridPos:
    x: int
    y: int
    w: int
    h: int


def layout_groups(
    groups: list[tuple[bool, list[tuple[int, int]]]],
) -> list[tuple[GridPos, list[GridPos]]]:
    """Place each group (collapsed flag, panel sizes) under a row header; returns row and panel positions."""
    placed = []
    y = 0
    reserved = 0  # the bottom of the panels of collapsed rows placed so far: no later panel may overlap them
    for collapsed, sizes in groups:
        row = GridPos(0, y, GRID_WIDTH, ROW_HEIGHT)
        y += ROW_HEIGHT
        positions, bottom = _flow(sizes, max(y, reserved))
        placed.append((row, positions))
        if collapsed:
            reserved = max(reserved, bottom)
        else:
            y = bottom
    return placed


def _flow(sizes: list[tuple[int, int]], top: int) -> tuple[list[GridPos], int]:
    positions = []
    x, y, line_height = 0, top, 0
    for width, height in sizes:
        if x + width > GRID_WIDTH:
            x, y, line_height = 0, y + line_height, 0
        positions.append(GridPos(x, y, width, height))
        x += width
        line_height = max(line_height, height)
    return positions, y + line_height
