"""Render :class:`DashboardDiff` values as text or JSON (markdown, the bounded PR comment: ``comment.py``).

Each changed value is shown by :func:`dashgen.diff.values.describe_change`: short values whole, a
query formatted as PromQL with a line and word diff, other long strings by their changed region.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dashgen.diff.compare import ABSENT
from dashgen.diff.engine import DashboardDiff, FieldChange, LayoutMove
from dashgen.diff.values import describe_change
from dashgen.escape import inline_text

_MAX_VALUE = 160
Pairing = Literal["compared", "added", "removed"]


@dataclass(frozen=True)
class FileDiff:
    """One compared pair (or an unpaired side): a name plus either a diff or an added/removed marker."""

    name: str
    diff: DashboardDiff | None = None
    status: Pairing = "compared"


def has_changes(files: Sequence[FileDiff]) -> bool:
    return any(f.status != "compared" or (f.diff is not None and f.diff.has_semantic_changes) for f in files)


def total_noise(files: Sequence[FileDiff]) -> int:
    return sum(f.diff.noise for f in files if f.diff is not None)


def change_lines(c: FieldChange, *, color: bool = False, markdown: bool = False) -> list[str]:
    """One field change: ``[category] path: old -> new``, or its header and the diff of the changed part."""
    return describe_change(c.path, c.old, c.new, label=f"[{c.category}]", color=color, markdown=markdown)


def grid_text(move: LayoutMove, old: bool, shown: Callable[[object], str] = inline_text) -> str:
    """Where a moved panel was (``old``) or is; ``shown`` puts the row's title into the line (one line by
    default: the markdown comment escapes the whole line itself)."""
    grid, row = (move.old_grid, move.old_row) if old else (move.new_grid, move.new_row)
    pos = "?" if not grid else f"x={grid.get('x')} y={grid.get('y')} w={grid.get('w')} h={grid.get('h')}"
    return pos + (f' in row "{shown(row)}"' if row else "")


def panel_label(title: str, pid: int | None, shown: Callable[[object], str] = inline_text) -> str:
    """``panel "title" (id N)``; ``shown`` puts the foreign title and id into the line (as :func:`grid_text`)."""
    return f'panel "{shown(title)}"' + (f" (id {shown(pid)})" if pid is not None else "")


def no_change_line(files: Sequence[FileDiff]) -> str:
    return f"no semantic changes ({total_noise(files)} noise differences ignored)"


def _indented(lines: list[str], indent: str) -> list[str]:
    return [indent + line for line in lines]


def dashboard_text(d: DashboardDiff, *, color: bool = False, indent: str = "  ") -> list[str]:
    """The changes of one dashboard, one or more lines each, without a heading."""
    lines: list[str] = []
    deeper = indent + "    "
    for c in d.dashboard_changes:
        lines += _indented(
            describe_change(c.path, c.old, c.new, label=f"dashboard [{c.category}]", color=color), indent
        )
    lines += [f"{indent}+ {panel_label(p.title, p.id)} added ({inline_text(p.type)})" for p in d.added_panels]
    lines += [f"{indent}- {panel_label(p.title, p.id)} removed ({inline_text(p.type)})" for p in d.removed_panels]
    for pc in d.changed_panels:
        lines.append(f"{indent}~ {panel_label(pc.title, pc.id)}: {', '.join(pc.categories)}")
        for c in pc.changes:
            lines += _indented(change_lines(c, color=color), deeper)
    for m in d.layout_moves:
        lines.append(f"{indent}> {panel_label(m.title, m.id)} moved: {grid_text(m, True)} -> {grid_text(m, False)}")
    lines += [f'{indent}+ variable "{inline_text(v)}" added' for v in d.added_variables]
    lines += [f'{indent}- variable "{inline_text(v)}" removed' for v in d.removed_variables]
    for vc in d.changed_variables:
        kinds = [k for k, cs in (("definition", vc.definition), ("selection", vc.selection)) if cs]
        lines.append(f'{indent}~ variable "{inline_text(vc.name)}": {" and ".join(kinds)} changed')
        for c in (*vc.definition, *vc.selection):
            lines += _indented(change_lines(c, color=color), deeper)
    return lines


def render_text(files: Sequence[FileDiff], *, color: bool = False) -> str:
    """The whole diff as text; ``color`` adds ANSI colours (for a terminal)."""
    if not has_changes(files):
        return no_change_line(files) + "\n"
    lines: list[str] = []
    for f in files:
        if f.status != "compared":
            lines.append(f"{inline_text(f.name)}: dashboard {f.status}")
            continue
        d = f.diff
        if d is None or not d.has_semantic_changes:
            continue
        lines.append(f'{inline_text(f.name)}: dashboard "{inline_text(d.title)}": {d.change_count} semantic change(s)')
        lines += dashboard_text(d, color=color)
    lines.append(f"({total_noise(files)} noise differences ignored)")
    return "\n".join(lines) + "\n"


def _change_json(c: FieldChange) -> dict[str, Any]:
    return {
        "path": c.path,
        "old": None if c.old is ABSENT else c.old,
        "new": None if c.new is ABSENT else c.new,
        "old_absent": c.old is ABSENT,
        "new_absent": c.new is ABSENT,
        "category": c.category,
    }


def diff_to_json(d: DashboardDiff) -> dict[str, Any]:
    return {
        "title": d.title,
        "uid": d.uid,
        "semantic_changes": d.has_semantic_changes,
        "noise": d.noise,
        "dashboard": [_change_json(c) for c in d.dashboard_changes],
        "panels": {
            "added": [{"title": p.title, "id": p.id, "type": p.type} for p in d.added_panels],
            "removed": [{"title": p.title, "id": p.id, "type": p.type} for p in d.removed_panels],
            "changed": [
                {
                    "title": pc.title,
                    "id": pc.id,
                    "categories": pc.categories,
                    "changes": [_change_json(c) for c in pc.changes],
                }
                for pc in d.changed_panels
            ],
        },
        "layout": [
            {
                "title": m.title,
                "id": m.id,
                "old": m.old_grid,
                "new": m.new_grid,
                "old_row": m.old_row,
                "new_row": m.new_row,
            }
            for m in d.layout_moves
        ],
        "variables": {
            "added": list(d.added_variables),
            "removed": list(d.removed_variables),
            "changed": [
                {
                    "name": vc.name,
                    "definition": [_change_json(c) for c in vc.definition],
                    "selection": [_change_json(c) for c in vc.selection],
                }
                for vc in d.changed_variables
            ],
        },
    }


def render_json(files: Sequence[FileDiff]) -> str:
    data = {
        "semantic_changes": has_changes(files),
        "noise": total_noise(files),
        "files": [
            {"name": f.name, "status": f.status, **({"diff": diff_to_json(f.diff)} if f.diff is not None else {})}
            for f in files
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
