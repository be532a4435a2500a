"""A release plan's changes as lines: every change with its old → new values and its approval hint.

The publish plan diffs what Grafana stores (old) with the build (new). Which content changes a release refuses
unless approved is decided by ``dashgen.publish.guard.content_keys`` (the one definition; a test holds these
hints to it), with the key that approves each:

* ``<panel key>`` (or ``panel:<id>`` without one): an existing panel whose queries change (what it asks
  the data source: a legend rename is not a query change);
* ``var:<name>``: an existing variable whose definition changes;
* ``remove:panel:<id>`` / ``remove:var:<name>``: live but not in the build (the clean-up list).

:func:`plan_lines` renders every change of every class — those that need no approval say so — and
shows changed values with :func:`dashgen.diff.values.describe_change`, so a changed query shows
the part that changed. Whether a key is approved is the caller's predicate (``Approvals.grants`` of
``dashgen.publish.approvals``: uid prefixes, globs, the overwrite flags); a plain collection of keys is
accepted as written or scoped to one dashboard (``<uid>/<key>``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from dashgen.diff.engine import DashboardDiff, FieldChange, PanelChange
from dashgen.diff.render import grid_text, panel_label
from dashgen.diff.values import describe_change
from dashgen.escape import inline_text

NO_APPROVAL = "[no approval needed]"
# Target fields that change how a panel looks, not what it asks the data source.
QUERY_NEUTRAL_KEYS = frozenset({"legendFormat"})
Grants = Callable[[str, str], bool]  # (key, uid) -> approved


def query_changes(change: PanelChange) -> list[FieldChange]:
    """The changes of a changed panel that alter what it asks the data source (a legend rename does not)."""
    return [c for c in change.changes if c.category == "query" and c.path.rsplit(".", 1)[-1] not in QUERY_NEUTRAL_KEYS]


def panel_key(panel_id: int | None, panel_keys: Mapping[int, str]) -> str:
    """The approval key of a panel: its stable key, or ``panel:<id>`` when the build does not know it."""
    return panel_keys.get(panel_id if panel_id is not None else -1, f"panel:{panel_id}")


def _grants(approvals: Collection[str] | Grants) -> Grants:
    if callable(approvals):
        return approvals
    keys = frozenset(approvals)
    return lambda key, uid: key in keys or f"{uid}/{key}" in keys


def hint(key: str | None, uid: str, approvals: Collection[str] | Grants) -> str:
    """``[needs --approve KEY]``, ``[approved: --approve KEY]`` or ``[no approval needed]``."""
    if key is None:
        return NO_APPROVAL
    if _grants(approvals)(key, uid):
        return f"[approved: --approve {inline_text(key)}]"
    return f"[needs --approve {inline_text(key)}]"


def _values(changes: tuple[FieldChange, ...], indent: str, markdown: bool, color: bool) -> list[str]:
    lines: list[str] = []
    for c in changes:
        lines += [
            indent + line
            for line in describe_change(c.path, c.old, c.new, label=f"[{c.category}]", markdown=markdown, color=color)
        ]
    return lines


def plan_lines(
    diff: DashboardDiff,
    *,
    uid: str,
    panel_keys: Mapping[int, str],
    approvals: Collection[str] | Grants = (),
    markdown: bool = False,
    color: bool = False,
    indent: str = "",
) -> list[str]:
    """Every change of ``diff`` (live → build), one heading line each with its approval hint, then its values."""
    deeper = indent + "    "
    approvals = _grants(approvals)  # once, not per change
    out: list[str] = []
    for c in diff.dashboard_changes:
        out += [f"{indent}~ dashboard {inline_text(c.path)} {NO_APPROVAL}", *_values((c,), deeper, markdown, color)]
    for p in diff.added_panels:
        out.append(f"{indent}+ {panel_label(p.title, p.id)} added ({inline_text(p.type)}) {NO_APPROVAL}")
    for p in diff.removed_panels:
        out.append(
            f"{indent}- {panel_label(p.title, p.id)} is live but not in the build "
            f"{hint(f'remove:panel:{p.id}', uid, approvals)}"
        )
    for pc in diff.changed_panels:
        key = panel_key(pc.id, panel_keys) if query_changes(pc) else None
        out.append(f"{indent}~ {panel_label(pc.title, pc.id)}: {', '.join(pc.categories)} {hint(key, uid, approvals)}")
        out += _values(pc.changes, deeper, markdown, color)
    for m in diff.layout_moves:
        out.append(
            f"{indent}> {panel_label(m.title, m.id)} moved: {grid_text(m, True)} -> {grid_text(m, False)} {NO_APPROVAL}"
        )
    for name in diff.added_variables:
        out.append(f"{indent}+ variable ${inline_text(name)} added {NO_APPROVAL}")
    for name in diff.removed_variables:
        out.append(
            f"{indent}- variable ${inline_text(name)} is live but not in the build "
            f"{hint(f'remove:var:{name}', uid, approvals)}"
        )
    for vc in diff.changed_variables:
        if vc.definition:
            out.append(
                f"{indent}~ variable ${inline_text(vc.name)}: definition {hint(f'var:{vc.name}', uid, approvals)}"
            )
            out += _values(vc.definition, deeper, markdown, color)
        if vc.selection:
            out.append(f"{indent}~ variable ${inline_text(vc.name)}: current selection {NO_APPROVAL}")
            out += _values(vc.selection, deeper, markdown, color)
    return out
