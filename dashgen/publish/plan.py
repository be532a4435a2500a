"""The release plan: a pure, printable value computed from the build, the live exports, the target
folders, the ledger and (in a second pure step) the query validation.

For every target dashboard it decides one action — ``create``, ``update``, ``move`` (same content, other
folder), ``unchanged`` (no write, so Grafana's history is not flooded), ``refused`` (needs an approval),
``invalid`` (a query the data source rejects) or ``diverged`` (Grafana rewrites this very build, so
pushing it again cannot converge) — and lists every refusal with the key that would approve it
(``dashgen.publish.approvals``). Every refusal is decided by ``dashgen.publish.guard``; this module only
composes the guards' verdicts into one :class:`~dashgen.publish.actions.Action` per dashboard.
The plan is complete before the first write: a release writes nothing
while any dashboard is refused, invalid or diverged, unless ``partial`` says to push the others.
Nothing here performs I/O; ``--dry-run`` prints exactly this value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dashgen.diff import DashboardDiff, diff_dashboards, query_changes
from dashgen.diff.values import describe_change
from dashgen.document import is_v2, iter_panel_objects, unwrap
from dashgen.publish import guard
from dashgen.publish.actions import BLOCKING, WRITING, Action, FolderMove
from dashgen.publish.approvals import Approvals
from dashgen.publish.guard import FolderState, Refusal
from dashgen.publish.ledger import Instance, LedgerRecord, last_written
from dashgen.publish.library_plan import LibraryItem
from dashgen.publish.permissions_plan import PermissionItem
from dashgen.publish.rules_plan import RuleGroupItem
from dashgen.render.canonical import content_sha_of_json
from dashgen.render.library import LibraryElement, with_models

__all__ = ["BLOCKING", "WRITING", "Action", "FolderState", "Refusal"]  # re-exported: the plan's vocabulary
SUMMARY_LINES = 400  # a plan shows at most this many change lines per dashboard


@dataclass(frozen=True)
class PublishTarget:
    """A dashboard dashgen wants Grafana to store. ``expected_sha``: the content after the normalisation
    Grafana is known to apply on save (equal to ``build_sha`` for a build that passed validation)."""

    profile: str
    uid: str
    document: dict[str, Any]
    build_sha: str
    panel_keys: dict[int, str] = field(default_factory=dict)  # panel id -> stable key
    expected_sha: str = ""
    encoded: bytes = field(default=b"", repr=False, compare=False)  # the compact JSON the SHA is taken of
    library: tuple[LibraryElement, ...] = ()  # the library panels it references, written before it

    @property
    def accepted_shas(self) -> frozenset[str]:
        return frozenset({self.build_sha, self.expected_sha or self.build_sha})


@dataclass(frozen=True)
class LiveState:
    """What Grafana stores now, as exported at the start of the release.

    ``stored_version`` is the API version Grafana stores the dashboard in (``v0alpha1``, ``v1beta1``,
    ``v2beta1`` ...; empty where only the legacy API was read). A ``stored_v2`` dashboard was converted
    by a person's save in a Grafana 13 UI: ``document`` is then Grafana's lossy v1 down-conversion (or
    empty) and is never diffed; ``v2_losses`` says what overwriting it would lose. ``export`` is the raw
    answer a real release backs up before its first write.
    """

    uid: str
    version: int
    folder_uid: str | None
    document: dict[str, Any]
    provisioned: bool = False
    stored_version: str = ""
    resource_version: str | None = None
    stored_v2: bool = False
    v2_losses: tuple[str, ...] = ()
    export: dict[str, Any] | bytes = field(default_factory=dict, repr=False, compare=False)
    size: int = 0  # bytes of Grafana's answer (0: not known)
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", content_sha_of_json(self.document))


@dataclass(frozen=True)
class NewQuery:
    panel: str
    ref_id: str
    expr: str
    instant: bool


@dataclass(frozen=True)
class DashboardPlan:
    target: PublishTarget
    live: LiveState | None
    action: Action
    summary: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    approvals_used: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()
    new_queries: tuple[NewQuery, ...] = ()
    live_edited: bool = False
    folder_from: str | None = None
    folder_to: str | None = None
    problems: tuple[str, ...] = ()  # query validation
    preview: tuple[str, ...] = ()  # what a server-side dry run says Grafana would store

    @property
    def writes(self) -> bool:
        return self.action in WRITING

    @property
    def folder_action(self) -> FolderMove:
        if self.live is None:
            return "new"
        return "move" if self.folder_from != self.folder_to else "unchanged"


@dataclass(frozen=True)
class Plan:
    dashboards: tuple[DashboardPlan, ...]
    folder_uid: str | None
    folders: tuple[FolderState, ...] = ()
    instance: Instance | None = None
    partial: bool = False
    library: tuple[LibraryItem, ...] = ()  # the library panels (``dashgen.publish.library_plan``)
    rules: tuple[RuleGroupItem, ...] = ()  # Grafana-managed rule groups (``dashgen.publish.rules_plan``)
    permissions: tuple[PermissionItem, ...] = ()  # folder permissions (``dashgen.publish.permissions_plan``)

    @property
    def refused(self) -> bool:
        others = [i.action for i in self.library] + [i.action for i in self.rules]
        others += [i.action for i in self.permissions]
        return any(d.action in BLOCKING for d in self.dashboards) or "refused" in others

    @property
    def blocked(self) -> bool:
        """Nothing may be written: something is refused and ``partial`` was not asked for."""
        return self.refused and not self.partial

    @property
    def writes(self) -> tuple[DashboardPlan, ...]:
        return () if self.blocked else tuple(d for d in self.dashboards if d.writes)

    @property
    def folders_to_create(self) -> tuple[FolderState, ...]:
        wanted = {d.folder_to for d in self.writes}
        return tuple(f for f in self.folders if f.action == "create" and f.uid in wanted)


def plan_release(
    targets: list[PublishTarget],
    live: dict[str, LiveState | None],
    ledger: list[LedgerRecord],
    approvals: Approvals | None = None,
    folder_uid: str | None = None,
    recorded: Mapping[str, dict[str, Any]] | None = None,
    *,
    folders: dict[str, bool] | None = None,
    folder_title: str = "",
    instance: Instance | None = None,
    partial: bool = False,
    diffs: Mapping[str, DashboardDiff] | None = None,
) -> Plan:
    """Decide, for each target, what the release does and what it refuses. Pure.

    ``folders`` says for each non-root target folder whether it exists. ``recorded`` holds, per uid, the
    dashboard as Grafana stored it at the last release on ``instance`` (the ledger's read-back copy), so a
    live copy that differs from it only by what a UI save adds is not taken for a person's edit. ``diffs`` may
    hold, per uid, :func:`dashboard_diff` of that live document and that target, computed ahead (a release
    computes them while other exports are still in flight); a missing one is computed here.
    """
    approvals = approvals or Approvals()
    recorded = {} if recorded is None else recorded  # not "or": asking its length would load every copy
    states = guard.folder_states(folders or {}, approvals, folder_title)
    items = tuple(
        _plan_one(
            t, live.get(t.uid), ledger, approvals, folder_uid, recorded, states, instance, (diffs or {}).get(t.uid)
        )
        for t in targets
    )
    return Plan(
        tuple(_unless_provisioned(item) for item in items), folder_uid, tuple(states.values()), instance, partial
    )


def with_query_problems(plan: Plan, problems: dict[str, list[str]]) -> Plan:
    """The plan with each dashboard whose new or changed queries the data source rejects made ``invalid``."""
    items = tuple(
        replace(
            d,
            action=guard.action_with_problems(d.action, problems[d.target.uid]),
            problems=tuple(problems[d.target.uid]),
        )
        if problems.get(d.target.uid)
        else d
        for d in plan.dashboards
    )
    return replace(plan, dashboards=items)


def _uid(item: DashboardPlan | LibraryItem | RuleGroupItem | PermissionItem) -> str:
    return item.target.uid if isinstance(item, DashboardPlan) else item.uid


def unmatched_approvals(plan: Plan, approvals: Approvals) -> list[str]:
    """A note for each ``--approve`` pattern that matches no key of the plan (a typo approves nothing: say so)."""
    items: list[DashboardPlan | LibraryItem | RuleGroupItem | PermissionItem] = [
        *plan.dashboards,
        *plan.library,
        *plan.rules,
        *plan.permissions,
    ]
    keys = [(_uid(i), key) for i in items for key in (*i.approvals_used, *(r.key for r in i.refusals))]
    return [f"--approve {pattern} matched nothing in this plan" for pattern in approvals.unmatched(keys)]


def with_preview(plan: Plan, previews: dict[str, list[str]]) -> Plan:
    """The plan annotated with what a server-side dry run says Grafana would store, per uid."""
    items = tuple(
        replace(d, preview=tuple(previews[d.target.uid])) if d.target.uid in previews else d for d in plan.dashboards
    )
    return replace(plan, dashboards=items)


def _target_folder(folder_uid: str | None, live: LiveState | None) -> str | None:
    if folder_uid is not None:
        return folder_uid or None  # "" is the root, said explicitly
    return live.folder_uid if live is not None else None


def _unless_provisioned(item: DashboardPlan) -> DashboardPlan:
    """A dashboard the plan would write (or refuses for another reason) that Grafana provisions is refused first:
    no approval makes Grafana accept the save."""
    live = item.live
    if live is None or not live.provisioned or not (item.writes or item.action == Action.REFUSED):
        return item
    verdict = guard.provisioned_verdict(item.target.uid, live.provisioned)
    return replace(item, action=Action.REFUSED, refusals=(*verdict.refusals, *item.refusals))


def _plan_one(
    target: PublishTarget,
    live: LiveState | None,
    ledger: list[LedgerRecord],
    approvals: Approvals,
    folder_uid: str | None,
    recorded_copies: Mapping[str, dict[str, Any]],
    states: dict[str, FolderState],
    instance: Instance | None,
    diff_of: DashboardDiff | None = None,
) -> DashboardPlan:
    folder_to = _target_folder(folder_uid, live)
    folder_from = live.folder_uid if live is not None else None
    folder = guard.folder_verdict(target.uid, folder_from, live is not None, folder_to, states, approvals)
    where: dict[str, Any] = {"folder_from": folder_from or None, "folder_to": folder_to}
    if live is None:
        queries = tuple(_queries(target.document, None))
        new = (f"new dashboard with {len(queries)} queries in folder {guard.folder_name(folder_to)}", *folder.notes)
        action = guard.action_of(folder, Action.CREATE)
        return DashboardPlan(target, None, action, new, folder.refusals, folder.used, new_queries=queries, **where)
    target_v2 = is_v2(target.document)
    if live.stored_v2 and not target_v2:
        return _plan_v2(target, live, approvals, folder, where)
    if target_v2 and not live.stored_v2:
        folder += guard.schema_change_verdict(
            target.uid, live.stored_version or "v1 (legacy API)", str(target.document["apiVersion"]), approvals
        )
    if live.sha in target.accepted_shas:
        moving = (live.folder_uid or None) != folder_to
        same = ("Grafana already stores this build (same SHA)", *folder.notes)
        action = guard.action_of(folder, Action.MOVE if moving else Action.UNCHANGED)
        return DashboardPlan(target, live, action, same, folder.refusals, folder.used, **where)

    last = last_written(ledger, target.uid, instance)
    diverged = guard.diverged_reason(last, live.sha, target.build_sha)
    if diverged is not None:
        return DashboardPlan(target, live, Action.DIVERGED, (diverged,), **where)
    differs = last is not None and last.stored_sha != live.sha
    recorded = recorded_copies.get(target.uid) if differs else None  # read only when it can decide
    live_edited, note = guard.live_edit(live.document, live.sha, live.version, last, recorded)
    summary: list[str] = [note] if note else []
    verdict = folder
    if live_edited:
        verdict += guard.overwrite_live_verdict(target.uid, live.sha, live.version, last, approvals)

    diff = diff_of if diff_of is not None else target_diff(live.document, target)
    changes, cleanup = _summarise(diff)
    summary += changes + list(folder.notes)
    verdict += guard.content_verdict(target.uid, diff, target.panel_keys, approvals)
    changed_ids = {c.id for c in diff.changed_panels if query_changes(c)}
    added_ids = {p.id for p in diff.added_panels}
    queries = tuple(_queries(target.document, changed_ids | added_ids))
    if not diff.has_semantic_changes:
        summary = summary or ["no semantic change; only Grafana-side noise differs"]
    return DashboardPlan(
        target,
        live,
        guard.action_of(verdict, Action.UPDATE),
        tuple(summary),
        verdict.refusals,
        verdict.used,
        tuple(cleanup),
        queries,
        live_edited,
        **where,
    )


def _plan_v2(
    target: PublishTarget, live: LiveState, approvals: Approvals, folder: guard.Verdict, where: dict[str, Any]
) -> DashboardPlan:
    """A dashboard stored as v2 by a person's save: never diffed, overwritten only with ``--overwrite-v2``."""
    verdict = folder + guard.v2_verdict(target.uid, live.stored_version, live.v2_losses, approvals)
    summary = (
        f"stored as {live.stored_version}; not diffed (Grafana's v1 view of it is a lossy down-conversion)",
        *folder.notes,
    )
    queries = tuple(_queries(target.document, None))
    action = guard.action_of(verdict, Action.UPDATE)
    return DashboardPlan(
        target, live, action, summary, verdict.refusals, verdict.used, new_queries=queries, live_edited=True, **where
    )


# Parts of a dashboard whose exact equality on both sides means they add nothing to the diff.
SKIPPED_WHEN_EQUAL = ("templating",)


def target_diff(live: dict[str, Any], target: PublishTarget) -> DashboardDiff:
    """:func:`dashboard_diff` of the live dashboard and the target, library references of v1 documents replaced by
    the build's models (``dashgen.render.library.with_models``)."""
    if is_v2(target.document) or "panels" not in live:
        return dashboard_diff(live, target.document)
    return dashboard_diff(*with_models(live, target.document, target.library))


def dashboard_diff(live: dict[str, Any], target: dict[str, Any]) -> DashboardDiff:
    """The semantic diff of the live dashboard and the build, with what is exactly equal on both sides left out
    of it (canonicalising every panel of 50 dashboards for a one-query change took seconds):

    * each top-level panel equal at the same position on both sides: it has the same id, grid position and
      content, so it would pair with itself and contribute no change; the other panels pair and diff as before;
    * the variables, when the whole list is equal.

    Nothing is copied: the shortened views share the objects.
    """
    if "rows" in live or "rows" in target:
        return diff_dashboards(live, target)
    old, new = live.get("panels"), target.get("panels")
    live_view, target_view = dict(live), dict(target)
    for key in SKIPPED_WHEN_EQUAL:
        if key in live and key in target and live[key] == target[key]:
            del live_view[key], target_view[key]
    if isinstance(old, list) and isinstance(new, list):
        same = {i for i in range(min(len(old), len(new))) if old[i] == new[i]}
        if same:
            live_view["panels"] = [p for i, p in enumerate(old) if i not in same]
            target_view["panels"] = [p for i, p in enumerate(new) if i not in same]
    return diff_dashboards(live_view, target_view)


def needs_diff(live: LiveState | None, target: PublishTarget) -> bool:
    """Whether planning ``target`` over ``live`` diffs the two: an existing dashboard that is not the build, stored
    as v1 or, for a v2 build, as v2."""
    comparable = not live.stored_v2 or is_v2(target.document) if live is not None else False
    return live is not None and comparable and live.sha not in target.accepted_shas


def _values(changes: Any, indent: str = "    ") -> list[str]:
    """Old -> new lines of changed values (a changed query shows the part that changed, as PromQL)."""
    return [indent + line for c in changes for line in describe_change(c.path, c.old, c.new, label=f"[{c.category}]")]


def _summarise(diff: DashboardDiff) -> tuple[list[str], list[str]]:
    summary = [f'added panel "{p.title}"' for p in diff.added_panels]
    for c in diff.changed_panels:
        summary += [f'changed panel "{c.title}": {", ".join(c.categories)}', *_values(c.changes)]
    summary += [f"added variable ${name}" for name in diff.added_variables]
    for v in diff.changed_variables:
        summary += [f"changed variable ${v.name}", *_values(v.definition), *_values(v.selection)]
    if diff.layout_moves:
        summary.append(f"{len(diff.layout_moves)} panels moved")
    summary += [f"dashboard {line}" for line in _values(diff.dashboard_changes, indent="")]
    if len(summary) > SUMMARY_LINES:
        summary = [
            *summary[:SUMMARY_LINES],
            f"... {len(summary) - SUMMARY_LINES} more lines (dashgen diff --live UID shows every change)",
        ]
    cleanup = [f'panel "{p.title}" (id {p.id})' for p in diff.removed_panels]
    cleanup += [f"variable ${name}" for name in diff.removed_variables]
    return summary, cleanup


def _queries(document: dict[str, Any], panel_ids: set[Any] | None) -> list[NewQuery]:
    if panel_ids is not None and not panel_ids:  # no query changed: the panels need no walk
        return []
    found = []
    for candidate in iter_panel_objects(unwrap(document)):
        if panel_ids is not None and candidate.get("id") not in panel_ids:
            continue
        for target in candidate.get("targets", []) or []:
            if target.get("expr"):
                found.append(
                    NewQuery(
                        candidate.get("title", ""), target.get("refId", ""), target["expr"], bool(target.get("instant"))
                    )
                )
    return found
