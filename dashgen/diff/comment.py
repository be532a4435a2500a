"""The diff as markdown for a pull-request comment: bounded, grouped, most important first.

GitHub rejects a comment over 65,536 characters; :func:`render_comment` with ``limit`` (60,000 by
default) never writes more, whatever the change. Its shape:

1. per section (``Changes against origin/main``, ``Stale …``): a summary table with one row per
   profile and dashboard (always whole, so every changed dashboard is named);
2. the changes as items, one per removed / added / changed panel, variable, the dashboard's own
   fields and its layout moves, each a collapsible ``<details>`` block. An item that is the same in
   several profiles (values compared with the profile's name taken out: ``cluster="h20-16"`` and
   ``cluster="pd-128"`` are the same change) is shown once: "the same change in 4 profiles: …";
3. items in order of importance (removed dashboards and panels, queries, variable definitions,
   units, axes, thresholds, mappings, … layout, variable selection last); when the next item does
   not fit, it and the rest are listed as one line each while they fit, and the last line says how
   many changes were left out and where the full report is.

``limit=None`` renders the full report: every item with all its details (``--report FILE``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashgen.diff.engine import FieldChange
from dashgen.diff.render import FileDiff, grid_text, panel_label, total_noise
from dashgen.diff.values import describe_change, json_text
from dashgen.escape import markdown_code, markdown_html, markdown_text

COMMENT_LIMIT = 60_000
ITEM_LIMIT = 8_000  # one item's details in a bounded comment; the full report has them whole
_FOOTER_RESERVE = 700

RANKS: dict[str, int] = {
    "dashboard removed": 0,
    "panel removed": 1,
    "query": 2,
    "variable definition": 2,
    "variable removed": 4,
    "unit": 5,
    "axis": 6,
    "thresholds": 7,
    "mapping": 8,
    "transformation": 9,
    "panel added": 10,
    "variable added": 11,
    "dashboard added": 12,
    "dashboard": 13,
    "title": 14,
    "description": 15,
    "other": 16,
    "layout": 17,
    "variable selection": 18,
}


@dataclass(frozen=True)
class Section:
    """One titled list of compared files (``Changes against origin/main``)."""

    heading: str
    files: Sequence[FileDiff]


@dataclass
class Item:
    """One change, in one or (grouped) several dashboards."""

    kind: str
    subject: str  # plain text, escaped where it is shown
    signature: tuple[Any, ...]
    changes: tuple[FieldChange, ...] = ()
    notes: tuple[str, ...] = ()
    members: list[tuple[str, int]] = field(default_factory=list)  # (file name, changes it counts for)
    code: bool = False  # the subject shown as code (a file name)

    @property
    def rank(self) -> int:
        return min(RANKS.get(k, RANKS["other"]) for k in self.kind.split(", "))

    @property
    def count(self) -> int:
        return sum(n for _, n in self.members)


def profile_of(name: str) -> str:
    """``h20-16/dg-h20-16-cluster.json`` → ``h20-16``; a bare file name → its stem."""
    head, _, rest = name.partition("/")
    return head if rest else name.rsplit(".", 1)[0]


def _norm(value: Any, profile: str) -> str:
    text = json_text(value)
    return text.replace(profile, "{profile}") if len(profile) >= 3 else text


def _sig(changes: Sequence[FieldChange], profile: str) -> tuple[Any, ...]:
    return tuple((c.path, _norm(c.old, profile), _norm(c.new, profile)) for c in changes)


ADDED_QUERIES_SHOWN = 8  # queries listed per added panel (the full report's diff has them all)
ADDED_TEXT_CHARS = 400  # of each query and of the description


def _added_notes(p: Any) -> tuple[str, ...]:
    """What a reviewer judges an added panel by: its type, unit, description and queries (bounded)."""

    def cut(text: str) -> str:
        return text if len(text) <= ADDED_TEXT_CHARS else text[:ADDED_TEXT_CHARS] + "…"

    notes = [f"type {markdown_code(p.type)}" + (f", unit {markdown_code(p.unit)}" if p.unit else "")]
    if p.description:
        notes.append(f"description: {markdown_code(cut(' '.join(p.description.split())))}")
    notes += [f"- query {markdown_code(cut(' '.join(q.split())))}" for q in p.queries[:ADDED_QUERIES_SHOWN]]
    if len(p.queries) > ADDED_QUERIES_SHOWN:
        notes.append(f"- … {len(p.queries) - ADDED_QUERIES_SHOWN} more queries")
    return tuple(notes)


def _items_of(f: FileDiff) -> list[Item]:
    profile = profile_of(f.name)
    norm_name = f.name.replace(profile, "{profile}")
    if f.status != "compared":
        whole = Item(f"dashboard {f.status}", f.name, ("file", f.status, norm_name), code=True)
        whole.members.append((f.name, 1))
        return [whole]
    d = f.diff
    if d is None:
        return []
    items = [
        Item(
            "panel removed",
            panel_label(p.title, p.id, str),
            ("removed", p.title, p.id, p.type),
            notes=(f"type {markdown_code(p.type)}",),
        )
        for p in d.removed_panels
    ]
    items += [
        Item("panel added", panel_label(p.title, p.id, str), ("added", p.title, p.id, p.type), notes=_added_notes(p))
        for p in d.added_panels
    ]
    items += [
        Item(
            ", ".join(pc.categories),
            panel_label(pc.title, pc.id, str),
            ("panel", pc.title, pc.id, _sig(pc.changes, profile)),
            pc.changes,
        )
        for pc in d.changed_panels
    ]
    for vc in d.changed_variables:
        kind = ", ".join(
            k for k, cs in (("variable definition", vc.definition), ("variable selection", vc.selection)) if cs
        )
        changes = (*vc.definition, *vc.selection)
        items.append(Item(kind, f"variable ${vc.name}", ("var", vc.name, _sig(changes, profile)), changes))
    items += [Item("variable removed", f"variable ${v}", ("var-", v)) for v in d.removed_variables]
    items += [Item("variable added", f"variable ${v}", ("var+", v)) for v in d.added_variables]
    if d.dashboard_changes:
        items.append(
            Item("dashboard", "dashboard fields", ("dash", _sig(d.dashboard_changes, profile)), d.dashboard_changes)
        )
    if d.layout_moves:
        notes = tuple(
            f"- {markdown_text(panel_label(m.title, m.id, str))}: {markdown_text(grid_text(m, True, str))} → "
            f"{markdown_text(grid_text(m, False, str))}"
            for m in d.layout_moves
        )
        items.append(
            Item(
                "layout",
                f"{len(d.layout_moves)} panel(s) moved",
                ("layout", tuple(n.replace(profile, "{profile}") for n in notes)),
                notes=notes,
            )
        )
    counts = {"layout": len(d.layout_moves), "dashboard": len(d.dashboard_changes)}
    for item in items:
        item.members.append((f.name, counts.get(item.kind, 1)))
    return items


def group_items(files: Sequence[FileDiff]) -> list[Item]:
    """Every change of every file as items, identical ones across profiles merged, most important first."""
    merged: dict[tuple[Any, ...], Item] = {}
    for f in files:
        for item in _items_of(f):
            key = (item.kind, item.signature)
            if key in merged:
                merged[key].members += item.members
            else:
                merged[key] = item
    return sorted(
        merged.values(),
        key=lambda i: (i.rank, -len(i.members), not i.subject.startswith("variable "), i.members[0][0], i.subject),
    )


def _where(item: Item, escape: Callable[[object], str]) -> str:
    profiles = [profile_of(name) if "/" in name else name for name, _ in item.members]
    if len(profiles) == 1:
        return f"in {escape(profiles[0])}"
    return (
        f"the same change in {len(profiles)} profiles: {escape(', '.join(profiles))} (shown for {escape(profiles[0])})"
    )


def _summary(item: Item, escape: Callable[[object], str] = markdown_html) -> str:
    """The item's one line: inside ``<summary>`` (raw HTML, ``markdown_html``) or a list item (markdown)."""
    fields = f" · {len(item.changes)} field change(s)" if item.changes else ""
    subject = f"<code>{escape(item.subject)}</code>" if item.code else escape(item.subject)
    return f"<b>{escape(item.kind)}</b> · {subject}{fields} · {_where(item, escape)}"


def _short(c: FieldChange) -> bool:
    return len(describe_change(c.path, c.old, c.new)) == 1


def _details(item: Item, cap: int | None) -> list[str]:
    body: list[str] = [*item.notes]
    short = [c for c in item.changes if _short(c)]
    if short:
        body += ["| kind | field | old | new |", "|---|---|---|---|"]
        body += [
            f"| {markdown_text(c.category)} | {markdown_code(c.path)} | {markdown_code(json_text(c.old))} | "
            f"{markdown_code(json_text(c.new))} |"
            for c in short
        ]
    size = sum(len(line) + 1 for line in body)
    long_changes = [c for c in item.changes if not _short(c)]
    for index, c in enumerate(long_changes):
        block = ["", *describe_change(c.path, c.old, c.new, markdown=True, label=f"**{c.category}**")]
        block_size = sum(len(line) + 1 for line in block)
        if cap is not None and size + block_size > cap:
            if index == 0:  # the first diff is shown in part rather than not at all
                part = _cut_block(block, cap - size)
                body += part
                size += _length(part)
                index += 1
            if index < len(long_changes):
                body += ["", f"_… {len(long_changes) - index} more field change(s) of this item: see the full report._"]
            break
        body += block
        size += block_size
    return ["<details>", f"<summary>{_summary(item)}</summary>", "", *body, "", "</details>", ""]


def _cut_block(block: list[str], room: int) -> list[str]:
    """A fenced diff block cut to about ``room`` characters, still closed, saying how much was cut."""
    kept: list[str] = []
    for line in block:
        if _length(kept) + len(line) + 1 > max(room - 120, 0):
            break
        kept.append(line)
    if "```diff" not in kept:
        return []
    return [*kept, f"  … {len(block) - len(kept) - 1} more diff line(s): see the full report", "```"]


def _one_line(item: Item) -> str:
    return f"- {_summary(item, markdown_text)} (details in the full report)"


def summary_table(files: Sequence[FileDiff]) -> list[str]:
    """One row per changed profile and dashboard."""
    rows = [
        "| profile | dashboard | changes | panels + / − / ~ | queries | units | axes | thresholds | "
        "variables + / − / ~ | layout | other |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in files:
        name = markdown_code(f.name.rsplit("/", 1)[-1].rsplit(".", 1)[0])
        profile = markdown_text(profile_of(f.name))
        if f.status != "compared":
            rows.append(f"| {profile} | {name} | dashboard {f.status} |  |  |  |  |  |  |  |  |")
            continue
        d = f.diff
        if d is None or not d.has_semantic_changes:
            continue
        cats = [pc.categories for pc in d.changed_panels]

        def n(cat: str, categories: list[list[str]] = cats) -> int:
            return sum(cat in c for c in categories)

        layout = sum(c.category == "layout" for c in d.dashboard_changes)  # v1 <-> v2: the schema and the tabs
        other = sum(not {"query", "unit", "axis", "thresholds"} & set(c) for c in cats) + len(d.dashboard_changes)
        other -= layout
        rows.append(
            f"| {profile} | {name} | {d.change_count} | {len(d.added_panels)} / "
            f"{len(d.removed_panels)} / {len(d.changed_panels)} | {n('query')} | {n('unit')} | {n('axis')} | "
            f"{n('thresholds')} | {len(d.added_variables)} / {len(d.removed_variables)} / "
            f"{len(d.changed_variables)} | {len(d.layout_moves) + layout} | {other} |"
        )
    return rows


def change_total(files: Sequence[FileDiff]) -> int:
    return sum(1 if f.status != "compared" else (f.diff.change_count if f.diff else 0) for f in files)


def _changed(files: Sequence[FileDiff]) -> list[FileDiff]:
    return [f for f in files if f.status != "compared" or (f.diff is not None and f.diff.has_semantic_changes)]


def _fixed(section: Section) -> list[str]:
    changed = _changed(section.files)
    head = [f"### {section.heading}", ""]
    if not changed:
        return [*head, f"No semantic changes ({total_noise(section.files)} noise differences ignored).", ""]
    return [
        *head,
        f"**{change_total(changed)} change(s) in {len(changed)} dashboard(s)**; "
        f"{total_noise(section.files)} noise differences ignored.",
        "",
        *summary_table(changed),
        "",
    ]


def _length(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def render_comment(
    sections: Sequence[Section],
    *,
    limit: int | None = COMMENT_LIMIT,
    title: str = "dashgen diff",
    preface: Sequence[str] = (),
    full_report: str = "the full report (`--report FILE`)",
) -> str:
    """The markdown of ``sections``: at most ``limit`` characters, or everything with ``limit=None``."""
    out = [f"## {title}", "", *preface]
    if preface:
        out.append("")
    fixed = [_fixed(s) for s in sections]
    items = [group_items(_changed(s.files)) for s in sections]
    budget = None if limit is None else limit - _length(out) - sum(map(_length, fixed)) - _FOOTER_RESERVE
    left_changes = left_items = brief = 0
    total = sum(change_total(_changed(s.files)) for s in sections)
    for index, (head, section_items) in enumerate(zip(fixed, items, strict=True)):
        out += head
        if budget is None:
            for item in section_items:
                out += _details(item, None)
            continue
        share = max(0, budget // (len(sections) - index))
        used, squeezed = 0, False
        for item in section_items:
            lines = [] if squeezed else _details(item, min(ITEM_LIMIT, share))
            if not squeezed and used + _length(lines) <= share:
                out += lines
                used += _length(lines)
                continue
            squeezed = True
            line = _one_line(item)
            if used + len(line) + 1 <= share:
                out.append(line)
                used += len(line) + 1
                brief += 1
            else:
                left_changes += item.count
                left_items += 1
        if squeezed:
            out.append("")
        budget -= used
    if left_items or brief:
        out.append(
            f"**{left_changes} of {total} changes left out** ({left_items} item(s); {brief} more shown "
            f"without details) to keep this comment under {limit:,} characters; {full_report} has every "
            "change."
        )
    text = "\n".join(out).rstrip("\n") + "\n"
    if limit is not None and len(text) > limit:  # a preface or table far beyond any real diff: cut, never exceed
        cut = f"\n\n_… cut at {limit:,} characters; {full_report} has every change._\n"
        text = text[: limit - len(cut)] + cut
    return text


def render_markdown(
    files: Sequence[FileDiff],
    *,
    limit: int | None = COMMENT_LIMIT,
    full_report: str = "the full report (`dashgen diff … --report FILE`)",
) -> str:
    """``dashgen diff --format markdown``: one section, bounded like the pull-request comment."""
    return render_comment([Section("Changes", files)], limit=limit, full_report=full_report)
