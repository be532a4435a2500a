"""The import plan -> the text of a Python module in the panel kit's vocabulary.

One function per group returning its ``GroupSpec``, one kit call per panel (``timeseries(key, title,
evidence, targets, unit=..., ...)``, only the fields that differ from the spec's defaults; what the kit takes
only raw in one ``raw_options=RawOptions(reason, ...)``), the variables,
the layout table and ``DASHBOARD``. Each escape hatch is preceded by a ``# TODO(import)`` comment saying what
is raw and why. A data-source reference used by several panels is named once. The header says where the
dashboard came from, what was migrated and what is raw. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from dashgen.importer.extract import Extracted, Hatch
from dashgen.importer.plan import GroupPlan, ImportPlan
from dashgen.importer.pyfmt import Comment, Item, Raw, Seq, call, literal, quote, render, visible
from dashgen.importer.vocab import ImportedEvidence, Place
from dashgen.render import kit
from dashgen.render.spec import PanelSpec, Target

KIT_FUNCTION = {
    "timeseries": "timeseries",
    "table": "table",
    "stat": "stat",
    "text": "text",
    "bargauge": "bargauge",
    "state-timeline": "state_timeline",
}
SKIPPED = {"key", "title", "kind", "evidence", "targets", "content"}
# PanelSpec fields the kit takes only through its escape hatch, ``raw_options=RawOptions(reason, ...)``
RAW_FIELDS = ("options", "custom", "transformations", "field_defaults", "overrides", "extra")
RAW_REASON = "imported panel: Grafana JSON the kit does not model"
TARGET_DEFAULTS = {"legend": "", "instant": False, "table": False, "ref_id": "", "interval": ""}
DATASOURCE_NAME = "DATASOURCE"


_PANEL_FIELDS = {f.name: f for f in fields(PanelSpec)}  # read for every field of every panel


def _field_default(name: str) -> Any:
    f = _PANEL_FIELDS[name]
    return f.default_factory() if callable(f.default_factory) else f.default


def _todo(hatches: list[Hatch]) -> list[Comment]:
    by_reason: dict[str, list[str]] = {}
    for hatch in hatches:
        by_reason.setdefault(hatch.reason, []).append(hatch.path)
    return [Comment(f"TODO(import): raw JSON, {reason}: {', '.join(paths)}") for reason, paths in by_reason.items()]


def _evidence(spec: PanelSpec) -> Any:
    evidence = spec.evidence
    if isinstance(evidence, ImportedEvidence):
        return call("imported", Raw("None") if evidence.text is None else evidence.text)
    if evidence is None:
        return Raw("None")
    return call(
        "Evidence",
        source=evidence.source,
        quantity=evidence.quantity,
        limit=evidence.limit,
        layer=evidence.layer or None,
    )


def _target(target: Target) -> Seq:
    kwargs = {
        name: getattr(target, name) for name, default in TARGET_DEFAULTS.items() if getattr(target, name) != default
    }
    return call("Target", target.expr, **kwargs, extra=target.extra or None)


def _targets(spec: PanelSpec, hatches: list[Hatch]) -> Seq:
    items: list[Item | Comment] = []
    for index, target in enumerate(spec.targets):
        items += _todo([h for h in hatches if h.path.startswith(f"targets[{index}].")])
        items.append(Item(_target(target)))
    return Seq("(", ")", tuple(items), tuple_like=True)


def _value(name: str, value: Any, shared: Mapping[str, Any]) -> Any:
    if name == "datasource" and shared.get(DATASOURCE_NAME) == value:
        return Raw(DATASOURCE_NAME)
    if name == "thresholds":
        return literal(tuple(tuple(step) for step in value))
    return literal(value)


def panel_call(extracted: Extracted, shared: Mapping[str, Any]) -> Seq:
    """The kit call of one panel, with its TODO comments."""
    spec = extracted.spec
    hatches = list(extracted.hatches)
    function = KIT_FUNCTION[spec.kind]
    items: list[Item | Comment] = [Item(literal(spec.key)), Item(literal(spec.title))]
    if spec.kind == "text":
        items.append(Item(literal(spec.content)))
        if spec.evidence is not None:
            items.append(Item(_evidence(spec), "evidence="))
    else:
        # a table's fourth positional parameter is its row labels: its queries go by name
        items += [Item(_evidence(spec)), Item(_targets(spec, hatches), "targets=" if spec.kind == "table" else "")]
    accepted = kit.parameter_names(function)
    raw: dict[str, Any] = {}
    for f in fields(PanelSpec):
        if f.name in SKIPPED:
            continue
        value = getattr(spec, f.name)
        if value == _field_default(f.name):
            continue
        if f.name in RAW_FIELDS:
            raw[f.name] = value
        elif f.name in accepted:
            items.append(Item(_value(f.name, value, shared), f"{f.name}="))
        elif spec.kind != "text":  # a text panel renders none of the value fields (unit, axis, mappings...)
            raise ValueError(f"panel {spec.key!r}: the kit's {function}() takes no {f.name}")
    if raw:
        if "transformations" in raw:
            items += _todo([h for h in hatches if h.path.startswith("transformations[")])
        if "extra" in raw:
            items += _todo([h for h in hatches if not h.path.startswith(("targets[", "transformations["))])
        hatch = call("RawOptions", RAW_REASON, **{name: _value(name, value, shared) for name, value in raw.items()})
        items.append(Item(hatch, "raw_options="))
    return Seq(f"{function}(", ")", tuple(items))


def group_function(group: GroupPlan, shared: Mapping[str, Any]) -> list[str]:
    """``def group_<key>() -> GroupSpec``."""
    panels = Seq("(", ")", tuple(Item(panel_call(p, shared)) for p in group.panels), tuple_like=True)
    body = call(
        "GroupSpec", key=group.key, title=group.title, collapsed=True if group.collapsed else None, panels=panels
    )
    where = f"Row {group.title!r}" if group.row is not None else "The panels above the first row"
    state = " (collapsed)" if group.collapsed else ""
    lines = [f"def {function_name(group)}() -> GroupSpec:", f'    """{_doc_line(where + state)}."""']
    return lines + render(body, 4, "return ")


def function_name(group: GroupPlan) -> str:
    return f"group_{group.key}"


def _doc_line(text: str) -> str:
    # visible escapes first, then every backslash doubled: the docstring is read as well as shown (help(), pydoc),
    # and read it holds the escapes as text, not the characters they name
    return visible(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _place(place: Place) -> Seq:
    return call("Place", place.x, place.y, id=place.id)


def _layout(plan: ImportPlan) -> Seq:
    items = []
    for group in plan.groups:
        if group.row is not None:
            items.append(Item(_place(group.row), quote(f"row:{group.key}") + ": "))
        for panel in group.panels:
            items.append(Item(_place(panel.place), quote(panel.spec.key) + ": "))
    return Seq("{", "}", tuple(items))


def shared_values(plan: ImportPlan) -> dict[str, Any]:
    """Values worth a name: the data-source reference of two or more panels."""
    counts = Counter(repr(p.spec.datasource) for g in plan.groups for p in g.panels if p.spec.datasource)
    if not counts:
        return {}
    text, count = counts.most_common(1)[0]
    if count < 2:
        return {}
    value = next(p.spec.datasource for g in plan.groups for p in g.panels if repr(p.spec.datasource) == text)
    return {DATASOURCE_NAME: value}


def _header(plan: ImportPlan, origin: str) -> list[str]:
    named = repr(plan.title) if plan.title else "a dashboard with no title"  # Grafana requires one; a file may not
    lines = [
        f"Imported from Grafana by ``dashgen import``: {named}" + (f" (uid {plan.uid})." if plan.uid else "."),
        "",
        f"Source: {origin}.",
    ]
    lines += [
        "",
        "Render it: ``dashgen render-module THIS_FILE --out dashboard.json``; ``dashgen diff`` against the",
        "source finds no semantic change. Panels without dashgen's source / quantity / limit carry their",
        "description as ``imported(...)``: state what each proves before it joins dashgen's panels.",
    ]
    if plan.notes:
        lines += ["", "Migrations applied on import (Grafana's own, so the code is current):"]
        lines += [f"- {note}" for note in plan.notes]
    hatches = plan.hatches
    if hatches:
        lines += ["", f"Escape hatches: {len(hatches)} place(s) carried as raw JSON, each marked TODO(import) below:"]
        lines += [f"- {h.key}: {h.path}: {h.reason}" for h in hatches]
    wrapped: list[str] = []
    for line in lines:
        wrapped += _wrap(_doc_line(line))
    return ['"""' + wrapped[0], *wrapped[1:], '"""']


def _wrap(line: str, width: int = 116) -> list[str]:
    if len(line) <= width:
        return [line.rstrip()]
    out, current = [], ""
    indent = "  " if line.startswith("- ") else ""
    for word in line.split(" "):
        if current and len(current) + 1 + len(word) > width:
            out.append(current.rstrip())
            current = indent + word
        else:
            current = f"{current} {word}" if current else word
    out.append(current.rstrip())
    return out


def _imports(plan: ImportPlan) -> list[str]:
    specs = [p.spec for g in plan.groups for p in g.panels]
    evidence = [s.evidence for s in specs if s.evidence is not None]
    vocab = ["ImportedDashboard", "Place"] + (
        ["imported"] if any(isinstance(e, ImportedEvidence) for e in evidence) else []
    )
    helpers = sorted({KIT_FUNCTION[s.kind] for s in specs})
    if any(getattr(s, name) != _field_default(name) for s in specs for name in RAW_FIELDS):
        helpers = sorted([*helpers, "RawOptions"], key=lambda name: (not name[0].isupper(), name))
    spec = [
        name
        for name, used in (
            ("Evidence", any(not isinstance(e, ImportedEvidence) for e in evidence)),
            ("GroupSpec", bool(plan.groups)),
            ("Target", any(s.targets for s in specs)),
        )
        if used
    ]
    lines = []
    for module, names in (
        ("dashgen.importer.vocab", vocab),
        ("dashgen.render.kit", helpers),
        ("dashgen.render.spec", spec),
    ):
        if names:
            lines.append(f"from {module} import {', '.join(names)}")
    return lines


def with_header(plan: ImportPlan, origin: str, code: str) -> str:
    """The module's source text: its docstring (naming ``origin``), then ``code`` (:func:`module_code`)."""
    return "\n".join([*_header(plan, origin), "", code])


def module_code(plan: ImportPlan) -> str:
    """What follows the module's docstring: its imports and code, the same whatever the source's origin."""
    shared = shared_values(plan)
    body: list[str] = []
    for name, value in shared.items():
        body += render(literal(value), 0, f"{name} = ")
        body += ["", ""]
    for group in plan.groups:
        body += group_function(group, shared)
        body += ["", ""]
    body += render(literal(plan.variables), 0, "VARIABLES = ")
    body += [""]
    body += render(_layout(plan), 0, "LAYOUT = ")
    body += [""]
    dashboard = call(
        "ImportedDashboard",
        title=plan.title if plan.title is not None else Raw("None"),
        uid=plan.uid if plan.uid is not None else Raw("None"),
        schema_version=plan.schema_version,
        groups=Seq("(", ")", tuple(Item(Raw(f"{function_name(g)}()")) for g in plan.groups), tuple_like=True),
        variables=Raw("VARIABLES"),
        layout=Raw("LAYOUT"),
        rows={g.key: g.row_patch for g in plan.groups if g.row_patch} or None,
        fields=plan.fields or None,
    )
    if plan.row_hatches:
        items = list(dashboard.items)
        at = next(i for i, item in enumerate(items) if isinstance(item, Item) and item.prefix == "rows=")
        dashboard = Seq(dashboard.open, dashboard.close, (*items[:at], *_todo(list(plan.row_hatches)), *items[at:]))
    body += render(dashboard, 0, "DASHBOARD = ")
    text = "\n".join(body)
    gap = ["", ""] if text.startswith("def ") else [""]  # isort: two blank lines before a def, else one
    return "\n".join([*_imports(plan), *gap, text, ""])
