"""The release plan: a pure, printable value computed from the build, the live exports, the target
folders, the ledger and (in a second pure step) the query validation.

For every target dashboard it decides one action — ``create``, ``update``, ``move`` (same content, other
folder), ``unchanged`` (no write, so Grafana's history is not flooded), ``refused`` (needs an approval),
``invalid`` (a query the data source rejects) or ``diverged`` (Grafana rewrites this very build, so
pushing it again cannot converge) — and lists every refusal with the key that would approve it
(``dashgen.publish.approvals``). The plan is complete before the first write: a release writes nothing
while any dashboard is refused, invalid or diverged, unless ``partial`` says to push the others.
Nothing here performs I/O; ``--dry-run`` prints exactly this value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from dashgen.diff import DashboardDiff, approval_keys, diff_dashboards, query_changes
from dashgen.diff.values import describe_change
from dashgen.document import is_v2, iter_panels, unwrap
from dashgen.publish.approvals import Approvals
from dashgen.publish.ledger import Instance, last_written
from dashgen.render.canonical import content_sha_of_json

WRITING = ("create", "update", "move")
BLOCKING = ("refused", "invalid", "diverged")
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
class Refusal:
    key: str
    reason: str


@dataclass(frozen=True)
class NewQuery:
    panel: str
    ref_id: str
    expr: str
    instant: bool


@dataclass(frozen=True)
class FolderState:
    """A target folder: ``exists``, or to be created (approved), or missing (refused)."""

    uid: str
    action: str  # exists | create | missing
    title: str = ""


@dataclass(frozen=True)
class DashboardPlan:
    target: PublishTarget
    live: LiveState | None
    action: str  # create | update | move | unchanged | refused | invalid | diverged
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
    def folder_action(self) -> str:
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

    @property
    def refused(self) -> bool:
        return any(d.action in BLOCKING for d in self.dashboards)

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
    ledger: list[dict[str, Any]],
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
    folders = folders or {}
    states: dict[str, FolderState] = {}
    for uid, exists in sorted(folders.items()):
        key = f"create-folder:{uid}"
        action = "exists" if exists else ("create" if approvals.grants(key, "") else "missing")
        states[uid] = FolderState(uid, action, folder_title or uid)
    items = tuple(
        _plan_one(
            t, live.get(t.uid), ledger, approvals, folder_uid, recorded, states, instance, (diffs or {}).get(t.uid)
        )
        for t in targets
    )
    return Plan(items, folder_uid, tuple(states.values()), instance, partial)


def with_query_problems(plan: Plan, problems: dict[str, list[str]]) -> Plan:
    """The plan with each dashboard whose new or changed queries the data source rejects made ``invalid``."""
    items = tuple(
        replace(d, action="invalid" if d.writes else d.action, problems=tuple(problems[d.target.uid]))
        if problems.get(d.target.uid)
        else d
        for d in plan.dashboards
    )
    return replace(plan, dashboards=items)


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


def _folder_refusals(
    target: PublishTarget,
    live: LiveState | None,
    folder_to: str | None,
    states: dict[str, FolderState],
    approvals: Approvals,
) -> tuple[list[Refusal], list[str], list[str]]:
    refusals: list[Refusal] = []
    used: list[str] = []
    summary: list[str] = []
    state = states.get(folder_to) if folder_to else None
    if state is not None and state.action == "missing":
        refusals.append(Refusal(f"create-folder:{folder_to}", f"target folder {folder_to!r} does not exist"))
    elif state is not None and state.action == "create":
        used.append(f"create-folder:{folder_to}")
        summary.append(f"folder {folder_to!r} will be created (title {state.title!r})")
    if live is not None and (live.folder_uid or None) != folder_to:
        key = f"move:{folder_to or 'root'}"
        what = f"move from folder {_folder_name(live.folder_uid)} to {_folder_name(folder_to)}"
        if approvals.grants(key, target.uid):
            used.append(key)
            summary.append(what)
        else:
            refusals.append(Refusal(key, what))
    return refusals, used, summary


class _Folders(TypedDict):
    """A dashboard plan's folder_from and folder_to."""

    folder_from: str | None
    folder_to: str | None


def _folder_name(uid: str | None) -> str:
    return repr(uid) if uid else "(root)"


def _plan_one(
    target: PublishTarget,
    live: LiveState | None,
    ledger: list[dict[str, Any]],
    approvals: Approvals,
    folder_uid: str | None,
    recorded_copies: Mapping[str, dict[str, Any]],
    states: dict[str, FolderState],
    instance: Instance | None,
    diff_of: DashboardDiff | None = None,
) -> DashboardPlan:
    folder_to = _target_folder(folder_uid, live)
    folder_from = live.folder_uid if live is not None else None
    refusals, used, folder_summary = _folder_refusals(target, live, folder_to, states, approvals)
    where: _Folders = {"folder_from": folder_from or None, "folder_to": folder_to}
    if live is None:
        queries = tuple(_queries(target.document, None))
        summary = [f"new dashboard with {len(queries)} queries in folder {_folder_name(folder_to)}", *folder_summary]
        action = "refused" if refusals else "create"
        return DashboardPlan(
            target, None, action, tuple(summary), tuple(refusals), tuple(used), new_queries=queries, **where
        )
    target_v2 = is_v2(target.document)
    if live.stored_v2 and not target_v2:
        return _plan_v2(target, live, approvals, refusals, used, folder_summary, where)
    if target_v2 and not live.stored_v2:
        _schema_change(target, live, approvals, refusals, used)
    if live.sha in target.accepted_shas:
        moving = (live.folder_uid or None) != folder_to
        summary = ["Grafana already stores this build (same SHA)", *folder_summary]
        action = "refused" if refusals else ("move" if moving else "unchanged")
        return DashboardPlan(target, live, action, tuple(summary), tuple(refusals), tuple(used), **where)

    last = last_written(ledger, target.uid, instance)
    if (
        last is not None
        and last.get("outcome") == "verify-failed"
        and last.get("stored_sha") == live.sha
        and last.get("build_sha") == target.build_sha
    ):
        reason = (
            f"Grafana stores this very build rewritten (verify failed in the release of {last.get('time')}: "
            f"{str(last.get('message') or '')[:300]}); pushing it again cannot converge: change the "
            "build so that Grafana keeps it as sent"
        )
        return DashboardPlan(target, live, "diverged", (reason,), **where)
    live_edited = last is None or last.get("stored_sha") != live.sha
    summary = []
    recorded = recorded_copies.get(target.uid) if live_edited and last is not None else None
    if recorded is not None and not diff_dashboards(recorded, live.document).has_semantic_changes:
        live_edited = False
        summary.append(
            f"live v{live.version} differs from the last release only by what a Grafana UI save adds (no semantic edit)"
        )
    if live_edited:
        why = (
            "Grafana holds this dashboard but the ledger has no release of it on this instance: it was not "
            "published by dashgen here; publishing overwrites it (a backup is kept)"
            if last is None
            else f"edited in Grafana since the last release (live v{live.version} SHA {live.sha[:12]} != recorded "
            f"{str(last.get('stored_sha'))[:12]} of v{last.get('grafana_version')}); publishing overwrites "
            "the edit (a backup is kept)"
        )
        key = f"overwrite-live:{target.uid}"
        if approvals.grants(key, target.uid):
            used.append(key)
        else:
            refusals.append(Refusal(key, why))

    diff = diff_of if diff_of is not None else dashboard_diff(live.document, target.document)
    changes, cleanup = _summarise(diff)
    summary += changes + folder_summary
    for key, reason in _guarded(target, diff):
        if approvals.grants(key, target.uid):
            used.append(key)
        else:
            refusals.append(Refusal(key, reason))
    changed_ids = {c.id for c in diff.changed_panels if query_changes(c)}
    added_ids = {p.id for p in diff.added_panels}
    queries = tuple(_queries(target.document, changed_ids | added_ids))
    if not diff.has_semantic_changes:
        summary = summary or ["no semantic change; only Grafana-side noise differs"]
    action = "refused" if refusals else "update"
    return DashboardPlan(
        target,
        live,
        action,
        tuple(summary),
        tuple(refusals),
        tuple(used),
        tuple(cleanup),
        queries,
        live_edited,
        **where,
    )


def _schema_change(
    target: PublishTarget, live: LiveState, approvals: Approvals, refusals: list[Refusal], used: list[str]
) -> None:
    """A v1-stored dashboard a v2 build would turn into v2 (issue 30): a change the plan names, approved by
    ``schema-v2:<uid>``."""
    key = f"schema-v2:{target.uid}"
    if approvals.grants(key, target.uid):
        used.append(key)
        return
    stored = live.stored_version or "v1 (legacy API)"
    refusals.append(
        Refusal(
            key,
            f"Grafana stores this dashboard as v1 ({stored}); this build writes it as {target.document['apiVersion']} "
            "(tabs, rows and grids instead of v1 rows): the stored copy is backed up, and a v1 build over it later "
            "needs --overwrite-v2",
        )
    )


def _plan_v2(
    target: PublishTarget,
    live: LiveState,
    approvals: Approvals,
    refusals: list[Refusal],
    used: list[str],
    folder_summary: list[str],
    where: _Folders,
) -> DashboardPlan:
    """A dashboard stored as v2 by a person's save: never diffed, overwritten only with ``--overwrite-v2``."""
    key = f"overwrite-v2:{target.uid}"
    lost = "; ".join(live.v2_losses) or "its v2 layout"
    reason = (
        f"Grafana stores this dashboard in the v2 schema ({live.stored_version}): a person saved it in a "
        f"Grafana 13 UI. Publishing replaces it by dashgen's v1 JSON and loses: {lost} (the v2 JSON is "
        "kept as the backup)"
    )
    if approvals.grants(key, target.uid):
        used.append(key)
    else:
        refusals.append(Refusal(key, reason))
    summary = (
        f"stored as {live.stored_version}; not diffed (Grafana's v1 view of it is a lossy down-conversion)",
        *folder_summary,
    )
    queries = tuple(_queries(target.document, None))
    action = "refused" if refusals else "update"
    return DashboardPlan(
        target, live, action, summary, tuple(refusals), tuple(used), new_queries=queries, live_edited=True, **where
    )


# Parts of a dashboard whose exact equality on both sides means they add nothing to the diff.
SKIPPED_WHEN_EQUAL = ("templating",)


def dashboard_diff(live: dict[str, Any], target: dict[str, Any]) -> DashboardDiff:
    """The semantic diff of the live dashboard and the build, with what is exactly equal on both sides left out
    of it (issue 19: canonicalising every panel of 50 dashboards for a one-query change took seconds):

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


def _guarded(target: PublishTarget, diff: DashboardDiff) -> list[tuple[str, str]]:
    return approval_keys(diff, target.panel_keys)


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
    found = []
    for site in iter_panels(unwrap(document)):
        candidate = site.raw
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
