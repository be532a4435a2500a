"""The preview grid's vertical compaction (``layout.compact``) against its definition: each item, in (y, x) order,
floats up one cell at a time while nothing already placed is in the way, then moves below whatever it still overlaps.
The definition is kept here, cell by cell, and both are run on random grids, hostile sizes (zero, negative, past the
24 columns) included."""

from __future__ import annotations

import random
from dataclasses import replace

from dashgen.preview.layout import Placed, compact, layout


def _overlap(a: Placed, b: Placed) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def compact_by_definition(items: list[Placed]) -> list[Placed]:
    done: list[Placed] = []
    for item in sorted(items, key=lambda i: (i.y, i.x)):
        y = item.y
        while y > 0 and not any(_overlap(replace(item, y=y - 1), other) for other in done):
            y -= 1
        moved = replace(item, y=y)
        while (hit := next((o for o in done if _overlap(moved, o)), None)) is not None:
            moved = replace(moved, y=hit.y + hit.h)
        done.append(moved)
    return done


def _grid(rng: random.Random, hostile: bool) -> list[Placed]:
    items = []
    for number in range(rng.randint(0, 16)):
        low = -3 if hostile else 1
        x = rng.randint(-2 if hostile else 0, 26 if hostile else 23)
        w, h = rng.randint(low, 26), rng.randint(low, 12)
        items.append(Placed({"id": number}, x, rng.randint(-2 if hostile else 0, 40), w, h, ""))
    return items


def test_compaction_places_every_item_where_the_cell_by_cell_definition_does() -> None:
    rng = random.Random(42)
    moved = 0
    for round_ in range(400):
        items = _grid(rng, hostile=round_ % 3 == 0)
        got, want = compact(items), compact_by_definition(items)
        assert [(i.raw["id"], i.y) for i in got] == [(i.raw["id"], i.y) for i in want], items
        before = {i.raw["id"]: i.y for i in items}
        moved += sum(i.y != before[i.raw["id"]] for i in got)
    assert moved > 1000  # the grids do move items


def test_an_expanded_dashboard_compacts_as_by_definition() -> None:
    """A real, long dashboard body: every row expanded, the stored y values far apart."""
    rows = []
    for number in range(40):
        panels = [
            {
                "type": "timeseries",
                "id": 100 * number + k,
                "gridPos": {"x": 8 * (k % 3), "y": 200 * number + 9 * k, "w": 8, "h": 8},
            }
            for k in range(6)
        ]
        rows.append(
            {
                "type": "row",
                "title": f"r{number}",
                "collapsed": True,
                "panels": panels,
                "gridPos": {"x": 0, "y": 200 * number, "w": 24, "h": 1},
            }
        )
    placed = layout({"panels": rows}, expand_rows=True)
    uncompacted = [replace(p, y=p.y) for p in placed]
    assert [(p.raw.get("id"), p.y) for p in compact(uncompacted)] == [
        (p.raw.get("id"), p.y) for p in compact_by_definition(uncompacted)
    ]
    assert max(p.y for p in placed) < 40 * 30  # floated up: no gaps of 200 cells left
