"""Render :class:`DashboardDiff` values as text, markdown (a PR comment) or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dashgen.diff.compare import ABSENT
from dashgen.diff.engine import DashboardDiff, FieldChange, LayoutMove

_MAX_VALUE = 160


@dataclass(frozen=True)
class FileDiff:
    """One compared pair (or an unpaired side): a name plus either a diff or an added/removed marker."""

    name: str
    diff: DashboardDiff | None = None
    status: str = "compared"  # compared | added | removed


def has_changes(files: Sequence[FileDiff]) -> bool:
    return any(f.status != "compared" or (f.diff is not None and f.diff.has_semantic_changes) for f in files)


def total_noise(files: Sequence[FileDiff]) -> int:
    return sum(f.diff.noise for f in files if f.diff is not None)


def value_text(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _change_line(c: FieldChange) -> str:
    return f"[{c.category}] {c.path}: {value_text(c.old)} -> {value_text(c.new)}"


def _grid_text(move: LayoutMove, old: bool) -> str:
    grid, row = (move.old_grid, move.old_row) if old else (move.new_grid, move.new_row)
    pos = "?" if not grid else f"x={grid.get('x')} y={grid.get('y')} w={grid.get('w')} h={grid.get('h')}"
    return pos + (f' in row "{row}"' if row else "")


def _label(title: str, pid: int | None) -> str:
    return f'panel "{title}"' + (f" (id {pid})" if pid is not None else "")


def no_change_line(files: Sequence[FileDiff]) -> str:
    return f"no semantic changes ({total_noise(files)} noise differences ignored)"


def render_text(files: Sequence[FileDiff]) -> str:
    if not has_changes(files):
        return no_change_line(files) + "\n"
    lines: list[str] = []
    for f in files:
        if f.status != "compared":
            lines.append(f"{f.name}: dashboard {f.status}")
            continue
        d = f.diff
        if d is None or not d.has_semantic_changes:
            continue
        lines.append(f'{f.name}: dashboard "{d.title}": {d.change_count} semantic change(s)')
        lines += [f"  dashboard {_change_line(c)}" for c in d.dashboard_changes]
        lines += [f"  + {_label(p.title, p.id)} added ({p.type})" for p in d.added_panels]
        lines += [f"  - {_label(p.title, p.id)} removed ({p.type})" for p in d.removed_panels]
        for pc in d.changed_panels:
            lines.append(f"  ~ {_label(pc.title, pc.id)}: {', '.join(pc.categories)}")
            lines += [f"      {_change_line(c)}" for c in pc.changes]
        for m in d.layout_moves:
            lines.append(f"  > {_label(m.title, m.id)} moved: {_grid_text(m, True)} -> {_grid_text(m, False)}")
        lines += [f'  + variable "{v}" added' for v in d.added_variables]
        lines += [f'  - variable "{v}" removed' for v in d.removed_variables]
        for vc in d.changed_variables:
            kinds = [k for k, cs in (("definition", vc.definition), ("selection", vc.selection)) if cs]
            lines.append(f'  ~ variable "{vc.name}": {" and ".join(kinds)} changed')
            lines += [f"      [definition] {c.path}: {value_text(c.old)} -> {value_text(c.new)}" for c in vc.definition]
            lines += [f"      [selection] {c.path}: {value_text(c.old)} -> {value_text(c.new)}" for c in vc.selection]
    lines.append(f"({total_noise(files)} noise differences ignored)")
    return "\n".join(lines) + "\n"


def _md(value: Any) -> str:
    return "`" + value_text(value).replace("`", "'").replace("|", "\\|") + "`"


def _md_table(changes: Sequence[FieldChange]) -> list[str]:
    rows = ["| kind | field | old | new |", "|---|---|---|---|"]
    rows += [f"| {c.category} | `{c.path}` | {_md(c.old)} | {_md(c.new)} |" for c in changes]
    return rows


def render_markdown(files: Sequence[FileDiff]) -> str:
    if not has_changes(files):
        return f"**dashgen diff**: {no_change_line(files)}\n"
    out = ["## dashgen diff", ""]
    for f in files:
        if f.status != "compared":
            out += [f"### `{f.name}`: dashboard {f.status}", ""]
            continue
        d = f.diff
        if d is None or not d.has_semantic_changes:
            continue
        out += [f"### `{f.name}` — {d.title}", ""]
        out += [
            "| what | count |",
            "|---|---|",
            f"| panels added | {len(d.added_panels)} |",
            f"| panels removed | {len(d.removed_panels)} |",
            f"| panels changed | {len(d.changed_panels)} |",
            f"| layout moves | {len(d.layout_moves)} |",
            f"| variables added / removed / changed | {len(d.added_variables)} / {len(d.removed_variables)} / "
            f"{len(d.changed_variables)} |",
            f"| dashboard fields changed | {len(d.dashboard_changes)} |",
            "",
        ]
        if d.dashboard_changes:
            out += ["**Dashboard**", "", *_md_table(d.dashboard_changes), ""]
        for p in d.added_panels:
            out.append(f"- ➕ added {_label(p.title, p.id)} ({p.type})")
        for p in d.removed_panels:
            out.append(f"- ➖ removed {_label(p.title, p.id)} ({p.type})")
        if d.added_panels or d.removed_panels:
            out.append("")
        for pc in d.changed_panels:
            out += [
                "<details>",
                f"<summary>{_label(pc.title, pc.id)}: {len(pc.changes)} change(s) ({', '.join(pc.categories)})"
                "</summary>",
                "",
                *_md_table(pc.changes),
                "",
                "</details>",
                "",
            ]
        if d.layout_moves:
            out += ["<details>", f"<summary>layout: {len(d.layout_moves)} panel(s) moved</summary>", ""]
            out += [
                f"- {_label(m.title, m.id)}: {_grid_text(m, True)} → {_grid_text(m, False)}" for m in d.layout_moves
            ]
            out += ["", "</details>", ""]
        for v in d.added_variables:
            out.append(f"- ➕ added variable `{v}`")
        for v in d.removed_variables:
            out.append(f"- ➖ removed variable `{v}`")
        for vc in d.changed_variables:
            changes = [*vc.definition, *vc.selection]
            out += [
                "<details>",
                f"<summary>variable <code>{vc.name}</code>: "
                + " and ".join(k for k, cs in (("definition", vc.definition), ("selection", vc.selection)) if cs)
                + " changed</summary>",
                "",
                *_md_table(changes),
                "",
                "</details>",
                "",
            ]
    out.append(f"_{total_noise(files)} noise differences ignored._")
    return "\n".join(out) + "\n"


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
