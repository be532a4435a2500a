"""Execute a release plan against Grafana: push, read back, verify the SHA, record the ledger.

The only module of the pipeline that writes dashboards to Grafana, and it runs only once the whole
plan is decided: a blocked plan (something refused) pushes nothing and records each dashboard as
refused or held. Each dashboard is pushed with the version read at the export (legacy API:
``overwrite: false`` and ``dashboard.version``; Grafana 13's ``/apis``: ``metadata.resourceVersion``), so
a save made by someone between the export and the push is a conflict (412 / 409), never an overwrite.
A write whose outcome is unknown is never retried blindly: it is read back.

Independent dashboards are pushed ``jobs`` at a time; ledger lines are appended in plan order as soon
as every earlier dashboard is done, so the ledger and the report are the same whatever the timing. When
a ledger line cannot be written, no further dashboard is started, and the outcomes say what was saved
but not recorded (the caller prints those lines for a hand append): the ledger is never the reason a
save goes unrecorded silently.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dashgen.diff.values import first_difference
from dashgen.document import is_v2
from dashgen.errors import InputError, ReleaseInterrupted
from dashgen.grafana.errors import GrafanaError, VersionConflict, WriteOutcomeUnknown
from dashgen.grafana.normalise import normalisation_notes
from dashgen.grafana.resources import WRITE_VERSION
from dashgen.publish.actions import NO_WRITE_OUTCOME, SAVED_OUTCOMES, STORED_OUTCOMES, Action, OutcomeKind
from dashgen.publish.backups import save_backup
from dashgen.publish.export import Connection, read_back
from dashgen.publish.ledger import LedgerRecord, append, of_instance, read
from dashgen.publish.plan import DashboardPlan, LiveState, Plan
from dashgen.render.canonical import content_view


@dataclass(frozen=True)
class Outcome:
    uid: str
    profile: str
    outcome: OutcomeKind
    version: int | None
    stored_sha: str | None
    detail: str = ""
    recorded: bool = True  # False when its ledger line could not be written
    ledger_line: str = field(default="", repr=False)
    copy_kept: bool = True  # False when the read-back copy of a save could not be written (a full disk)
    resource_version: str | None = None  # of the stored object read back (``/apis``)

    @property
    def ok(self) -> bool:
        return self.outcome in STORED_OUTCOMES and self.recorded and self.copy_kept

    @property
    def saved(self) -> bool:
        return self.outcome in SAVED_OUTCOMES


def now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def release_message(build_sha: str, git_commit: str) -> str:
    return f"dashgen {build_sha[:12]} {git_commit[:12]}"


def what_grafana_changed(sent: dict[str, Any], stored: dict[str, Any]) -> str:
    """One line: the first path where what Grafana stored differs from what was sent, both values shown around
    the difference (``dashgen.diff.values.first_difference``), and how many more leaves differ."""
    first = first_difference(sent, stored, old_label="sent", new_label="stored")
    more = len(grafana_changes(sent, stored, limit=50)) - 1
    return first + (f" (and {more}{'+' if more >= 49 else ''} more differences)" if more > 0 else "")


def grafana_changes(sent: dict[str, Any], stored: dict[str, Any], limit: int = 20) -> list[str]:
    """Leaf paths where what Grafana stored differs from what was sent (server-owned fields aside)."""
    changes: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if len(changes) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{index}]")
        elif a != b:
            changes.append(f"{path}: sent {a!r:.80} stored {b!r:.80}")

    walk(content_view(sent), content_view(stored), "$")
    return changes


@dataclass(frozen=True)
class ReleaseContext:
    """What every push of one release shares."""

    connection: Connection
    ledger_path: Path
    backup_dir: Path
    git_commit: str
    backups: dict[str, str] = field(default_factory=dict)  # uid -> backup file of the live copy
    deadline: float | None = None  # time.monotonic() after which no new save starts
    release_id: str | None = None  # the staged release this one is part of (every ledger line carries it)


def execute_plan(
    plan: Plan, context: ReleaseContext, progress: Callable[[DashboardPlan], None] = lambda item: None
) -> list[Outcome]:
    """Run the plan; one Outcome per dashboard, in plan order, each with its ledger line appended."""
    items = list(plan.dashboards)
    known = newest_stored(context)
    stop = threading.Event()
    done: list[Outcome] = []
    ledger_failure: list[str] = []
    writing = {id(item) for item in plan.writes}
    writes = {index for index, item in enumerate(items) if id(item) in writing}
    queue = deque(sorted(writes))
    jobs = max(1, context.connection.jobs)
    inflight: dict[int, Future[tuple[Outcome, str | None]]] = {}
    held_why = ["the release stopped because the ledger could not be written"]
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="dashgen") as pool:

        def fill() -> None:  # at most ``jobs`` pushes in flight, started in plan order, none once stopped
            if context.deadline is not None and time.monotonic() > context.deadline and not stop.is_set():
                stop.set()  # past --deadline: what is sent finishes and is recorded, nothing new starts
                held_why[0] = "publish --deadline passed before this dashboard was sent"
            while queue and len(inflight) < jobs and not stop.is_set():
                index = queue.popleft()
                inflight[index] = pool.submit(push_one, items[index], context)

        def ready(index: int) -> bool:  # its outcome is known without waiting
            if index in inflight:
                return inflight[index].done()
            return index not in writes or stop.is_set()

        def take(index: int) -> tuple[Outcome, str | None]:
            if index in inflight:
                result = inflight[index].result()  # popped once it has a result: a signal here must not lose it
                del inflight[index]
                progress(items[index])
                return result
            if index in writes:
                return _held(items[index], held_why[0]), None
            return _no_write(items[index]), None

        fill()
        try:
            while len(done) < len(items):
                batch = [take(len(done))]  # in plan order; every later one already finished joins the same append
                while len(done) + len(batch) < len(items) and ready(len(done) + len(batch)):
                    batch.append(take(len(done) + len(batch)))
                recorded = _record(batch, items[len(done) : len(done) + len(batch)], context, ledger_failure, known)
                if not all(o.recorded for o in recorded):
                    stop.set()
                done += recorded
                fill()
        except (KeyboardInterrupt, ReleaseInterrupted) as exc:
            # a signal: start nothing more, wait for the saves already sent, record every outcome, then stop
            stop.set()
            queue.clear()
            signal_name, code = ("SIGTERM", 143) if isinstance(exc, ReleaseInterrupted) else ("SIGINT", 130)
            held_why[0] = f"the release was interrupted ({signal_name}) before this dashboard was sent"
            rest = [take(index) for index in range(len(done), len(items))]
            done += _record(rest, items[len(done) :], context, ledger_failure, known)
            saved = sum(1 for o in done if o.saved)
            raise ReleaseInterrupted(
                f"release interrupted by {signal_name}: {saved} dashboard(s) saved and recorded "
                f"in {context.ledger_path}; {sum(1 for o in done if o.outcome == OutcomeKind.HELD)} not "
                "sent (held)",
                code,
            ) from None
    return done


def _record(
    batch: list[tuple[Outcome, str | None]],
    items: list[DashboardPlan],
    context: ReleaseContext,
    ledger_failure: list[str],
    known: dict[str, tuple[Any, str]],
) -> list[Outcome]:
    """Append the ledger lines of ``batch`` in one fsynced write; on failure, mark them (and all later) unrecorded."""
    batch = _no_second_version(batch, items, known)
    records = [
        _ledger_record(item, outcome, context, published)
        for (outcome, published), item in zip(batch, items, strict=True)
    ]
    lines = [record.to_json() for record in records]
    if not ledger_failure:
        try:
            append(context.ledger_path, records)
        except OSError as exc:
            ledger_failure.append(f"{context.ledger_path}: {exc.strerror or exc}")
    if ledger_failure:
        why = f"NOT RECORDED: the ledger could not be written ({ledger_failure[0]})"
        return [
            replace(outcome, recorded=False, ledger_line=line, detail=f"{outcome.detail}; {why}")
            for (outcome, _), line in zip(batch, lines, strict=True)
        ]
    return [replace(outcome, ledger_line=line) for (outcome, _), line in zip(batch, lines, strict=True)]


def newest_stored(context: ReleaseContext) -> dict[str, tuple[Any, str]]:
    """uid -> (version, stored SHA) of the ledger's newest stored record of each dashboard on this Grafana, read
    once when the release starts (a release writes each dashboard at most once)."""
    try:
        records = read(context.ledger_path)
    except InputError:
        return {}  # an unreadable ledger is reported where it is appended to
    newest: dict[str, tuple[Any, str]] = {}
    for record in of_instance(records, context.connection.instance):
        if record.outcome in STORED_OUTCOMES and record.stored_sha:
            newest[str(record.uid)] = (record.grafana_version, str(record.stored_sha))
    return newest


def _no_second_version(
    batch: list[tuple[Outcome, str | None]], items: list[DashboardPlan], known: dict[str, tuple[Any, str]]
) -> list[tuple[Outcome, str | None]]:
    """An update whose read-back says ``published`` at the version the ledger's newest stored record of that
    dashboard (on this Grafana, ``known``) holds with another SHA cannot be true — the write moved the version, the
    read did not see it: it is recorded as verify-failed, never as a second release of that version. (A create is
    exempt: a dashboard deleted in Grafana and created again starts over at version 1.)"""
    checked = []
    for (outcome, published_file), item in zip(batch, items, strict=True):
        version, earlier = known.get(outcome.uid, (None, ""))
        if (
            outcome.outcome == OutcomeKind.PUBLISHED
            and item.live is not None
            and version == outcome.version
            and earlier != outcome.stored_sha
        ):
            outcome = replace(
                outcome,
                outcome=OutcomeKind.VERIFY_FAILED,
                detail=(
                    f"Grafana answered version {outcome.version} with {str(outcome.stored_sha)[:12]}, but the "
                    f"ledger records version {outcome.version} as {earlier[:12]}: a stale or inconsistent "
                    "read-back, not recorded as published"
                ),
            )
        checked.append((outcome, published_file))
    return checked


def _no_write(item: DashboardPlan) -> Outcome:
    """The outcome of a dashboard the release does not push: what its action says, or held (a blocked plan)."""
    target, live = item.target, item.live
    kind = NO_WRITE_OUTCOME.get(item.action)
    if kind is None:
        return _held(item, "the release is refused (see the plan); nothing was written")
    details = {
        Action.UNCHANGED: "no write: Grafana already stores this build",
        Action.REFUSED: "; ".join(f"{r.reason} (approve: {r.key})" for r in item.refusals),
        Action.INVALID: "; ".join(item.problems),
        Action.DIVERGED: "; ".join(item.summary),
    }
    stored_sha = live.sha if live is not None and kind == OutcomeKind.UNCHANGED else None
    return Outcome(target.uid, target.profile, kind, live.version if live else None, stored_sha, details[item.action])


def _held(item: DashboardPlan, why: str) -> Outcome:
    live = item.live
    return Outcome(
        item.target.uid,
        item.target.profile,
        OutcomeKind.HELD,
        live.version if live else None,
        None,
        f"not pushed: {why}",
    )


def push_one(item: DashboardPlan, context: ReleaseContext) -> tuple[Outcome, str | None]:
    """Push one dashboard, read it back and verify it; returns its outcome and the read-back backup file."""
    target, live, connection = item.target, item.live, context.connection
    base = Outcome(target.uid, target.profile, OutcomeKind.FAILED, live.version if live else None, None)
    message = release_message(target.build_sha, context.git_commit)
    try:
        saved_version = _write(connection, target.document, live, item.folder_to, message, target.encoded or None)
        if saved_version is None:
            return replace(
                base,
                outcome=OutcomeKind.FAILED,
                detail="the write got no answer; read back: Grafana does not store this build",
            ), None
        stored = _read_back_moved(connection, target.uid, v2_version(target.document) or WRITE_VERSION, saved_version)
    except VersionConflict as exc:
        return replace(
            base,
            outcome=OutcomeKind.CONFLICT,
            detail=f"someone saved {target.uid} after the export; nothing was overwritten ({exc})",
        ), None
    except GrafanaError as exc:
        return replace(base, outcome=OutcomeKind.FAILED, detail=str(exc)), None
    if stored is None:
        return replace(
            base,
            outcome=OutcomeKind.VERIFY_FAILED,
            version=saved_version,
            detail="saved, but Grafana returns 404 on read-back",
        ), None
    if stored.version < saved_version:  # a stale read (a cache, a lagging replica): it proves nothing of this write
        return replace(
            base,
            outcome=OutcomeKind.VERIFY_FAILED,
            version=saved_version,
            detail=(
                f"saved as version {saved_version}, but {READ_BACK_TRIES} read-backs answered version "
                f"{stored.version} (a stale read: a cache or a lagging replica); not verified, run publish again"
            ),
        ), None
    verified = _verify(base, item, stored)
    try:
        published = save_backup(
            context.backup_dir,
            target.uid,
            stored.version,
            now_stamp(),
            stored.export,
            kind="published",
            reuse_identical=True,
        )
    except OSError as exc:  # the save landed: its ledger line and the report must still be written
        return replace(
            verified,
            copy_kept=False,
            detail=(
                f"{verified.detail}; its read-back copy could not be written ({exc.strerror or exc}): the ledger "
                "records the stored SHA, but drift and rollback have no copy of this release"
            ),
        ), None
    return verified, str(published)


READ_BACK_TRIES = 4  # reads of a write's result before a stale one is a verify failure
READ_BACK_PAUSE = 0.25  # seconds before the second read, doubled for each further one


def _read_back_moved(connection: Connection, uid: str, version: str, saved_version: int) -> LiveState | None:
    """The read-back of a write that stored ``saved_version``: read again (bounded, with a short backoff) while
    the answer's generation / version is older than the write's; the last answer when it never moved."""
    stored = read_back(connection, uid, version)
    pause = READ_BACK_PAUSE
    for _ in range(READ_BACK_TRIES - 1):
        if stored is None or stored.version >= saved_version:
            break
        time.sleep(pause)
        pause *= 2
        stored = read_back(connection, uid, version)
    return stored


def v2_version(document: dict[str, Any]) -> str | None:
    """The ``/apis`` version a v2 build is written through (``v2`` / ``v2beta1``); None for v1 JSON."""
    return str(document["apiVersion"]).rsplit("/", 1)[-1] if is_v2(document) else None


def _write(
    connection: Connection,
    document: dict[str, Any],
    live: LiveState | None,
    folder: str | None,
    message: str,
    encoded: bytes | None = None,
) -> int | None:
    """Send the write once; the version Grafana stored, or None when an uncertain write did not land. A v2 build
    is written through ``/apis`` in its own version, whatever the Grafana version."""
    v2 = v2_version(document)
    if v2 is not None and connection.apis is None:
        raise GrafanaError(
            f"dashboard {document['metadata']['name']!r} is a v2 dashboard ({document['apiVersion']}), written only "
            f"through /apis/dashboard.grafana.app/{v2}, which this Grafana does not serve: build it as v1"
        )
    if (v2 is not None or connection.writes_apis) and connection.apis is not None:
        apis = connection.apis
        try:
            resource = apis.write(
                document["metadata"]["name"] if v2 else document["uid"],
                document["spec"] if v2 else document,
                folder,
                message,
                live.resource_version if live else None,
                create=live is None,
                generation=live.version if live else None,
                encoded=encoded,
                version=v2 or WRITE_VERSION,
            )
        except WriteOutcomeUnknown as unknown:
            resolved = apis.resolve_write(unknown)
            return resolved.generation if resolved is not None else None
        return resource.generation
    payload = dict(document)  # only top-level keys are set below
    if live is not None:
        payload["version"] = live.version
        payload["id"] = live.document.get("id")
    # overwrite only where Grafana would not even say the version (its 406 for a v2 dashboard, approved)
    blind = live is not None and live.stored_v2 and live.version == 0
    try:
        return connection.client.save_dashboard(payload, folder, message, overwrite=blind, encoded=encoded).version
    except WriteOutcomeUnknown as unknown:
        saved = connection.client.resolve_save(unknown)
        return saved.version if saved is not None else None


def _verify(base: Outcome, item: DashboardPlan, stored: LiveState) -> Outcome:
    target = item.target
    where = (
        ""
        if (stored.folder_uid or None) == item.folder_to
        else (f"; but it is in folder {stored.folder_uid!r}, not {item.folder_to!r}")
    )
    if stored.sha in target.accepted_shas and not where:
        note = ""
        if stored.sha != target.build_sha:
            notes = normalisation_notes(target.document, stored.document)
            note = f" (as Grafana normalises it: {'; '.join(notes)})"
        return replace(
            base,
            outcome=OutcomeKind.PUBLISHED,
            version=stored.version,
            stored_sha=stored.sha,
            detail=f"v{stored.version} verified {stored.sha[:12]}{note}",
            resource_version=stored.resource_version,
        )
    changed = what_grafana_changed(target.document, stored.document) or "(the same leaves)"
    return replace(
        base,
        outcome=OutcomeKind.VERIFY_FAILED,
        version=stored.version,
        stored_sha=stored.sha,
        detail=f"Grafana stored something else than the build: {changed}{where}",
    )


def _ledger_record(
    item: DashboardPlan, outcome: Outcome, context: ReleaseContext, published_file: str | None
) -> LedgerRecord:
    connection = context.connection
    return LedgerRecord(
        time=now_stamp(),
        git_commit=context.git_commit,
        profile=item.target.profile,
        uid=item.target.uid,
        outcome=outcome.outcome,
        grafana_version=outcome.version,
        build_sha=item.target.build_sha,
        stored_sha=outcome.stored_sha,
        approvals_used=item.approvals_used if outcome.saved else (),
        cleanup=item.cleanup if outcome.outcome == OutcomeKind.PUBLISHED else (),
        backup_file=context.backups.get(item.target.uid),
        published_file=published_file,
        grafana_url=connection.instance.url,
        message=outcome.detail,
        refusals=tuple(r.key for r in item.refusals),
        org_id=connection.org_id,
        folder_uid=item.folder_to,
        api_version=item.target.document["apiVersion"] if v2_version(item.target.document) else None,
        resource_version=outcome.resource_version if v2_version(item.target.document) else None,
        release_id=context.release_id,
    )
