"""One release, in order, with every decision before the first write:

1. take the release lock of the instance (a real release only; a dry run takes none and writes nothing)
2. read the ledger; a torn last line is reported (dry run) or quarantined (release)
3. check that the ledger and the backups can be written (preflight), before anything else is done
4. export every target (``jobs`` at a time) while the build runs, diff each export against its build as it
   arrives, then look up the target folder
5. plan (pure), then validate the new and changed queries against the data source (pure result)
6. dry run: ask Grafana 13 what it would store (``?dryRun=All``) and stop — no file, no write
7. a blocked plan (anything refused) pushes nothing and records why; otherwise: check the space for
   the record, back up each live copy about to be replaced (identical backups are reused), create the
   approved folders, push, read back, verify, record (``execute``)

Python's cyclic garbage collector is paused for the release (:func:`collector_paused`): the release parses two
copies of every dashboard (export, read-back) while the build's documents are alive, and each full collection
walks all of them again, although JSON values hold no reference cycles (refcounting frees them). Measured on
``make bench``'s 50 changed dashboards: 0.3 s of the client's 1.2 s CPU, serialised under the GIL.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dashgen.diff import DashboardDiff
from dashgen.errors import DeadlineExceeded
from dashgen.grafana.errors import GrafanaError, VersionConflict
from dashgen.grafana.resources import WRITE_VERSION
from dashgen.publish import ledger as ledger_file
from dashgen.publish import preflight
from dashgen.publish.actions import NOT_ATTEMPTED_OUTCOMES, STORED_OUTCOMES, Action, OutcomeKind
from dashgen.publish.alert_rules import plan_release_rules, run_rules
from dashgen.publish.approvals import LIBRARY_PREFIX, Approvals
from dashgen.publish.approved_plan import ApprovedPlan
from dashgen.publish.backups import load_backup, save_backup
from dashgen.publish.execute import (
    Outcome,
    ReleaseContext,
    execute_plan,
    now_stamp,
    v2_version,
    what_grafana_changed,
)
from dashgen.publish.export import Connection, export_and_prepare, parallel, read_back
from dashgen.publish.guard import Refusal
from dashgen.publish.ledger import LedgerRecord
from dashgen.publish.library import plan_release_library, run_library
from dashgen.publish.lock import DEFAULT_STALE_AFTER, ReleaseLock, in_progress, lock_path
from dashgen.publish.permissions import plan_release_permissions, run_permissions
from dashgen.publish.permissions_plan import FolderAccess
from dashgen.publish.plan import (
    DashboardPlan,
    LiveState,
    Plan,
    PublishTarget,
    needs_diff,
    plan_release,
    target_diff,
    unmatched_approvals,
    with_preview,
    with_query_problems,
)
from dashgen.publish.resource_outcome import ResourceOutcome, ResourceRelease
from dashgen.publish.rules_plan import RuleGroupTarget
from dashgen.render.canonical import content_sha
from dashgen.render.collector import collector_paused
from dashgen.render.library import LibraryElement

Validator = Callable[[DashboardPlan], list[str]]


@dataclass(frozen=True)
class ReleaseOptions:
    ledger_path: Path
    backup_dir: Path
    git_commit: str
    approvals: Approvals = field(default_factory=Approvals)
    folder_uid: str | None = None
    folder_title: str = ""
    partial: bool = False
    dry_run: bool = False
    command: str = "dashgen publish"
    lock_stale_after: float = DEFAULT_STALE_AFTER
    deadline: float | None = None  # time.monotonic() after which no new save starts (--deadline)
    release_id: str | None = None  # of the staged release this context's release is part of
    approved_plan: ApprovedPlan | None = None  # merge-to-apply: only what this reviewed plan holds is written
    # Library panels besides those the targets reference (a rollback of one); ``library_cleanup``: plan the
    # deletion of elements dashgen published for the release's profiles that the build no longer has.
    library: tuple[LibraryElement, ...] = ()
    library_cleanup: bool = False
    # Grafana-managed rule groups (``dashgen.publish.rules_plan``); ``library_cleanup`` plans their clean-up too
    rule_groups: tuple[RuleGroupTarget, ...] = ()
    permissions: tuple[FolderAccess, ...] = ()  # the context's folder permissions (``dashgen.toml``)


@dataclass
class ReleaseReport:
    plan: Plan
    outcomes: list[Outcome] | None
    notes: list[str]
    dry_run: bool
    library: list[ResourceOutcome] = field(default_factory=list)
    rules: list[ResourceOutcome] = field(default_factory=list)
    permissions: list[ResourceOutcome] = field(default_factory=list)

    @property
    def library_failed(self) -> list[ResourceOutcome]:
        """What of the library panels, rule groups and folder permissions was not published."""
        return [o for o in (*self.library, *self.rules, *self.permissions) if not o.ok]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes or [] if not o.ok]

    @property
    def unrecorded(self) -> list[Outcome]:
        return [o for o in self.outcomes or [] if not o.recorded]


class RecordedCopies(Mapping[str, dict[str, Any]]):
    """uid -> the read-back copy of its last release on an instance, read from the backup only when the plan asks
    (it does for a live copy that differs from the last release: was it a person's edit or only a UI save?)."""

    def __init__(self, records: list[LedgerRecord], instance: ledger_file.Instance | None) -> None:
        self._records = records
        self._instance = instance
        self._cache: dict[str, dict[str, Any] | None] = {}

    def _load(self, uid: str) -> dict[str, Any] | None:
        if uid not in self._cache:
            last = ledger_file.last_written(self._records, uid, self._instance)
            path = Path(last.published_file) if last and last.published_file else None
            backup = load_backup(path) if path is not None and path.exists() else {}
            self._cache[uid] = backup.get("dashboard")
        return self._cache[uid]

    def __getitem__(self, uid: str) -> dict[str, Any]:
        copy = self._load(uid)
        if copy is None:
            raise KeyError(uid)
        return copy

    def __iter__(self) -> Iterator[str]:
        return iter(uid for uid in {str(r.uid) for r in self._records} if self._load(uid) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def recorded_copies(
    records: list[LedgerRecord], uids: list[str], instance: ledger_file.Instance | None
) -> dict[str, dict[str, Any]]:
    """The read-back copy of each uid's last release on ``instance``, where the ledger points to one that exists."""
    copies = RecordedCopies(records, instance)
    return {uid: copies[uid] for uid in uids if uid in copies}


def run_release(
    connection: Connection,
    uids: list[str],
    build: Callable[[], list[PublishTarget]],
    options: ReleaseOptions,
    *,
    validator: Validator | None = None,
    progress: Callable[[DashboardPlan], None] = lambda item: None,
) -> ReleaseReport:
    """Plan the release and, unless it is a dry run or blocked, execute it; see the module's steps."""
    with collector_paused():
        return _run_release(connection, uids, build, options, validator, progress)


def _run_release(
    connection: Connection,
    uids: list[str],
    build: Callable[[], list[PublishTarget]],
    options: ReleaseOptions,
    validator: Validator | None,
    progress: Callable[[DashboardPlan], None],
) -> ReleaseReport:
    instance = connection.instance
    notes: list[str] = []
    lock = None
    connection.client.retry_until(options.deadline)
    if options.dry_run:
        connection.client.refuse_writes()  # a dry run cannot write, whatever a proxy does to ?dryRun=All
        busy = in_progress(options.ledger_path, instance, options.lock_stale_after)
        notes += [busy] if busy else []
    else:
        preflight.check(options.ledger_path, options.backup_dir, 0)
        lock = ReleaseLock(
            lock_path(options.ledger_path, instance), instance, options.command, options.lock_stale_after
        ).acquire()
        notes += [lock.note] if lock.note else []
    try:
        state = ledger_file.load(options.ledger_path)
        if not options.dry_run:
            side = ledger_file.quarantine(state, now_stamp())
            if side is not None:
                notes.append(f"{state.torn_note}; moved to {side}")
        elif state.torn:
            notes.append(state.torn_note + " (a release moves it to a side file)")
        plan = _plan(connection, uids, build, options, state.records, validator)
        plan = _with_library(connection, plan, options, state.records)
        notes += unmatched_approvals(plan, options.approvals)
        if options.dry_run:
            if connection.info.server_dry_run and plan.writes:
                apis = connection.apis
                if apis is not None and apis.query_strings_survive(WRITE_VERSION):
                    connection.client.allow_server_dry_runs()
                    plan = with_preview(plan, server_preview(connection, plan))
                else:
                    notes.append(
                        "Grafana was not asked what it would store: the path to it drops query strings "
                        "(a list filtered by ?labelSelector came back unfiltered), so ?dryRun=All could "
                        "arrive as a save; the plan is computed here, nothing was sent but reads"
                    )
            return ReleaseReport(plan, None, notes, True)
        backups: dict[str, str] = {}
        if not plan.blocked:
            preflight.check(options.ledger_path, options.backup_dir, _record_size(plan))
            backups = write_backups(plan, options.backup_dir, connection.jobs)
            for folder in plan.folders_to_create:
                connection.client.create_folder(folder.title or folder.uid, uid=folder.uid)
                notes.append(f"created folder {folder.uid!r}")
        if options.deadline is not None and time.monotonic() > options.deadline:
            raise DeadlineExceeded("publish --deadline passed while planning: nothing was written")
        context = ReleaseContext(
            connection,
            options.ledger_path,
            options.backup_dir,
            options.git_commit,
            backups,
            deadline=options.deadline,
            release_id=options.release_id,
        )
        resources = ResourceRelease(
            connection, options.ledger_path, options.backup_dir, options.git_commit, now_stamp(), options.release_id
        )
        held, into = plan.blocked, options.folder_uid
        # a dashboard's library-panel reference must find its element: elements are written first
        library = run_library(plan.library, resources, phase="write", held=held, folder_uid=into)
        rules = run_rules(plan.rules, resources, phase="write", held=held)
        permissions = run_permissions(plan.permissions, resources, held=held)
        outcomes = execute_plan(_without_missing_elements(plan, library), context, progress)
        # deleted once the dashboards that used them no longer connect them
        library += run_library(plan.library, resources, phase="delete", held=held, folder_uid=into)
        rules += run_rules(plan.rules, resources, phase="delete", held=held)
        return ReleaseReport(plan, unmixed(connection, outcomes, notes), notes, False, library, rules, permissions)
    finally:
        if lock is not None and (problem := lock.release()):
            notes.append(problem)  # never raised over the release's own outcome or error


def _plan(
    connection: Connection,
    uids: list[str],
    build: Callable[[], list[PublishTarget]],
    options: ReleaseOptions,
    records: list[LedgerRecord],
    validator: Validator | None,
) -> Plan:
    def diff_ahead(state: LiveState | None, target: PublishTarget) -> DashboardDiff | None:
        return target_diff(state.document, target) if state is not None and needs_diff(state, target) else None

    live, targets, diffs = export_and_prepare(connection, uids, build, diff_ahead)
    folders: dict[str, bool] = {}
    if options.folder_uid:
        folders[options.folder_uid] = connection.client.get_folder(options.folder_uid) is not None
    mine = ledger_file.of_instance(records, connection.instance)
    approved = options.approved_plan
    plan = plan_release(
        targets,
        live,
        mine,
        approved.approvals(targets, live, options.approvals) if approved is not None else options.approvals,
        options.folder_uid,
        RecordedCopies(mine, None),
        folders=folders,
        folder_title=options.folder_title,
        instance=connection.instance,
        partial=options.partial,
        diffs=diffs,
    )
    if approved is not None:
        plan = approved.enforce(plan)
    if validator is not None:
        checked = [d for d in plan.dashboards if d.writes and d.new_queries]
        problems = parallel(connection.jobs, validator, checked)
        plan = with_query_problems(plan, {d.target.uid: p for d, p in zip(checked, problems, strict=True) if p})
    return plan


def _with_library(connection: Connection, plan: Plan, options: ReleaseOptions, records: list[LedgerRecord]) -> Plan:
    """The plan with what a release keeps in Grafana besides dashboards: library panels (those the targets reference
    and ``options.library``), Grafana-managed rule groups and folder permissions."""
    elements = [e for d in plan.dashboards for e in d.target.library] + list(options.library)
    mine = ledger_file.of_instance(records, connection.instance)
    profiles = tuple(sorted({d.target.profile for d in plan.dashboards})) if options.library_cleanup else ()
    managed = {d.target.uid for d in plan.dashboards} | {
        str(r.uid) for r in mine if not r.kind and r.outcome in STORED_OUTCOMES
    }
    items = plan_release_library(
        connection, elements, mine, options.approvals, cleanup_profiles=profiles, managed=tuple(sorted(managed))
    )
    if options.library_cleanup:
        profiles = tuple(sorted({*profiles, *(g.profile for g in options.rule_groups)}))
    groups = plan_release_rules(
        connection, list(options.rule_groups), mine, options.approvals, cleanup_profiles=profiles
    )
    creating = frozenset(f.uid for f in plan.folders if f.action == "create")
    access = plan_release_permissions(connection, options.permissions, mine, options.approvals, creating)[0]
    return replace(plan, library=items, rules=groups, permissions=access) if items or groups or access else plan


def _without_missing_elements(plan: Plan, library: list[ResourceOutcome]) -> Plan:
    """The plan to execute once the library panels are written: a dashboard whose library panel could not be written
    is not pushed (Grafana would show "library panel not found" in it); it is refused with the reason, the others
    go on (``partial``: the operator asked for this release, only the element failed)."""
    failed = {o.uid: o for o in library if not o.ok and o.outcome not in NOT_ATTEMPTED_OUTCOMES}
    if not failed or plan.blocked:
        return plan

    def held(item: DashboardPlan) -> DashboardPlan:
        missing = [e.uid for e in item.target.library if e.uid in failed]
        if not missing or not item.writes:
            return item
        refusals = tuple(
            Refusal(
                f"{LIBRARY_PREFIX}{uid}",
                f"its library panel {uid} was not written ({failed[uid].outcome}: {failed[uid].detail[:200]})",
            )
            for uid in missing
        )
        return replace(item, action=Action.REFUSED, refusals=refusals)

    return replace(plan, dashboards=tuple(held(d) for d in plan.dashboards), partial=True)


def unmixed(connection: Connection, outcomes: list[Outcome], notes: list[str]) -> list[Outcome]:
    """The release's end check: every dashboard it saved still holds what it verified. Another writer in between
    (a second checkout with its own ledger and lock, a person) leaves a mixed release: those dashboards become
    ``overwritten`` (a failure, exit 1) and a note names them; their ledger lines stay (they were saved)."""
    saved = [o for o in outcomes if o.outcome == OutcomeKind.PUBLISHED]

    def now(outcome: Outcome) -> str | None:
        try:
            state = read_back(connection, outcome.uid)
        except GrafanaError:
            return outcome.stored_sha  # unreadable now: no evidence of another writer
        return state.sha if state is not None else None

    changed = {
        o.uid for o, sha in zip(saved, parallel(connection.jobs, now, saved), strict=True) if sha != o.stored_sha
    }
    if not changed:
        return outcomes
    notes.append(
        f"mixed release: {', '.join(sorted(changed))} changed in Grafana after this release saved and "
        "verified them (another release or a person wrote in between); rerun publish, or see dashgen drift"
    )
    return [
        replace(
            o,
            outcome=OutcomeKind.OVERWRITTEN,
            detail=f"{o.detail}; then changed by another writer before the release ended",
        )
        if o.uid in changed
        else o
        for o in outcomes
    ]


def server_preview(connection: Connection, plan: Plan) -> dict[str, list[str]]:
    """What Grafana 13 says it would store for each write of the plan (``?dryRun=All``; nothing is stored)."""
    apis = connection.apis
    if apis is None:
        return {}

    def preview(item: DashboardPlan) -> list[str]:
        live = item.live
        v2 = v2_version(item.target.document)
        try:
            resource = apis.write(
                item.target.uid,
                item.target.document["spec"] if v2 else item.target.document,
                item.folder_to,
                "dashgen dry run",
                live.resource_version if live else None,
                create=live is None,
                dry_run=True,
                generation=live.version if live else None,
                version=v2 or WRITE_VERSION,
            )
        except VersionConflict:
            return ["a conflict: someone saved it since the export (the release would stop there)"]
        except GrafanaError as exc:
            return [f"Grafana refused the server-side dry run: {exc}"]
        stored = resource.v2_resource() if v2 else resource.dashboard()
        if content_sha(stored) in item.target.accepted_shas:
            return ["exactly the build (server-side dry run, SHA matches)"]
        return ["something else than the build: " + what_grafana_changed(item.target.document, stored)]

    writes = [d for d in plan.dashboards if d.writes]
    return dict(zip([d.target.uid for d in writes], parallel(connection.jobs, preview, writes), strict=True))


def write_backups(plan: Plan, backup_dir: Path, jobs: int = 1) -> dict[str, str]:
    """Back up the live copy of every dashboard about to be written (``jobs`` at a time: each is fsynced), all
    before the first write; an identical existing backup is reused."""
    stamp = now_stamp()
    lives = [item.live for item in plan.writes if item.live is not None and item.live.export]
    paths = parallel(
        jobs,
        lambda live: save_backup(backup_dir, live.uid, live.version, stamp, live.export, reuse_identical=True),
        lives,
    )
    return {live.uid: str(path) for live, path in zip(lives, paths, strict=True)}


def _record_size(plan: Plan) -> int:
    """About what the release writes besides Grafana (a backup and a read-back copy per write, ledger lines),
    generously: twice the size of what Grafana sent, 1 MiB where nothing was live."""
    total = sum(2 * (item.live.size if item.live and item.live.size else 1 << 20) for item in plan.writes)
    return total + 8192 * len(plan.dashboards)
