"""A panel as the deployment's exporters can fill it (S35): the names its stated versions and scrape paths write,
and, for series they never write, a text panel saying what to switch on instead of a chart that can only be
empty. Applied once, at composition, to every panel of every profile; pure (a panel and the stated sources in,
a panel out). Without stated versions or features a panel is unchanged but for a note naming the non-default
flags its series need, when its description does not name them yet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from dashgen.deployment.model import Source
from dashgen.exporters.availability import Adapted, Missing, Stated, adapt, flag_text
from dashgen.exporters.table import TABLES
from dashgen.render.spec import PanelSpec

TEXT_HEIGHT = 5  # rows of a "not exported" text panel: a title, one line per missing series, the advice


def stated_sources(sources: Mapping[str, Source]) -> dict[str, Stated]:
    """Source name -> what the profile states about it, for the exported sources (``Profile.sources``)."""
    return {name: source.stated for name, source in sources.items() if source.exported}


def for_deployment(panel: PanelSpec, stated: Mapping[str, Stated]) -> PanelSpec:
    """``panel`` with the names the deployment writes; a text panel naming the switch when a series it needs is
    never written; only the targets that can match when others cannot (a chart without transformations)."""
    if not panel.targets:
        return panel
    adapted = [adapt(target.expr, stated) for target in panel.targets]
    missing = [found for found in adapted if found.missing]
    if not missing:
        return _with_flag_note(_renamed(panel, adapted), adapted)
    if len(missing) == len(adapted) or panel.kind == "table" or panel.transformations:
        return not_exported_panel(panel, _unique(m for found in adapted for m in found.missing))
    kept = [(target, found) for target, found in zip(panel.targets, adapted, strict=True) if not found.missing]
    dropped = _unique(m for found in missing for m in found.missing)
    note = "Not shown here: " + "; ".join(f"{m.name} ({m.why})" for m in dropped)
    shown = replace(panel, targets=tuple(replace(target, expr=found.expr) for target, found in kept))
    return _with_note(_with_flag_note(shown, [found for _, found in kept]), note)


def not_exported_panel(panel: PanelSpec, missing: list[Missing]) -> PanelSpec:
    """The text shown instead of a chart whose series the deployment never writes: which series, and the switch."""
    lines = [f"**{panel.title}**: this deployment does not write the series this panel reads.", ""]
    lines += [f"- `{m.name}`: {m.why}." for m in missing]
    lines += ["", "Empty here is a deployment fact, not a zero: switch it on, state it in the profile, and rebuild."]
    return PanelSpec(
        key=panel.key,
        title=panel.title,
        kind="text",
        evidence=None,
        content="\n".join(lines),
        width=panel.width,
        height=max(TEXT_HEIGHT, min(panel.height, 3 + len(missing) + 2)),
    )


def _renamed(panel: PanelSpec, adapted: list[Adapted]) -> PanelSpec:
    if all(found.expr == target.expr for target, found in zip(panel.targets, adapted, strict=True)):
        return panel
    targets = tuple(replace(target, expr=found.expr) for target, found in zip(panel.targets, adapted, strict=True))
    return replace(panel, targets=targets)


def _with_flag_note(panel: PanelSpec, adapted: list[Adapted]) -> PanelSpec:
    """The panel's description names each non-default flag its series need (S35), unless it already does."""
    needs = {flag: source for found in adapted for source, flag in found.flags}
    said = panel.description
    notes = [flag_text(TABLES[source], flag) for flag, source in needs.items() if flag not in said]
    if not notes:
        return panel
    return _with_note(panel, "Its series " + "; ".join(notes))


def _with_note(panel: PanelSpec, note: str) -> PanelSpec:
    if panel.evidence is None:
        return panel
    return replace(panel, evidence=replace(panel.evidence, limit=f"{panel.evidence.limit}. {note}"))


def _unique(found: Iterable[Missing]) -> list[Missing]:
    seen: dict[str, Missing] = {}
    for missing in found:
        seen.setdefault(missing.name, missing)
    return list(seen.values())
