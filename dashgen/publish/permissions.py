"""Folder permissions of a release, at the I/O edge: resolve the principals, read each folder's managed entries
(``plan_release_permissions``), apply the difference one assignment at a time, read it back and prove it by its
SHA, and record it (``kind: folder-permissions``; ``grants``: what Grafana stores after the release, which is what
the next release may remove without approval). What Grafana stored before is backed up for ``dashgen rollback``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dashgen.grafana.errors import GrafanaError
from dashgen.grafana.permissions import FolderPermissions
from dashgen.publish.approvals import Approvals
from dashgen.publish.backups import save_backup
from dashgen.publish.export import Connection
from dashgen.publish.guard import Refusal
from dashgen.publish.ledger import LedgerRecord, append, last_written
from dashgen.publish.permissions_plan import KIND, FolderAccess, PermissionItem, grants_sha, plan_folder
from dashgen.publish.resource_outcome import ResourceOutcome, ledger_line

PermissionOutcome = ResourceOutcome  # what became of a folder's permissions


def plan_release_permissions(
    connection: Connection,
    accesses: tuple[FolderAccess, ...],
    ledger: list[LedgerRecord],
    approvals: Approvals,
    creating: frozenset[str] = frozenset(),
) -> tuple[tuple[PermissionItem, ...], FolderPermissions]:
    """Resolve every principal named now or granted by the last release, read each folder, plan (pure). A folder
    the release creates (``creating``) has no entry yet."""
    api = FolderPermissions(connection.client)
    items = []
    for access in accesses:
        last = last_written(ledger, access.uid)
        granted = [p for p, _ in (last.grants if last else None) or ()]
        unknown = [p for p, _ in access.grants if api.resolve(p) is None]
        for principal in granted:
            api.resolve(principal)
        live = api.get(access.folder_uid)
        if live is None and access.folder_uid not in creating:
            items.append(_missing_folder(access, approvals))
            continue
        items.append(plan_folder(access, live or {}, ledger, approvals, unknown))
    return tuple(items), api


def _missing_folder(access: FolderAccess, approvals: Approvals) -> PermissionItem:
    item = plan_folder(access, {}, [], approvals)
    refusal = Refusal(
        f"create-folder:{access.folder_uid}",
        f"folder {access.folder_uid!r} does not exist (dashgen creates a folder only for its dashboards)",
    )
    return replace(item, action="refused", refusals=(refusal,))


def _record(
    item: PermissionItem, outcome: ResourceOutcome, connection: Connection, commit: str, stamp: str
) -> LedgerRecord:
    return ledger_line(
        KIND,
        outcome,
        connection,
        commit,
        stamp,
        build_sha=item.access.sha,
        approvals_used=item.approvals_used,
        refusals=item.refusals,
        folder_uid=item.folder_uid,
    )


def _apply(item: PermissionItem, api: FolderPermissions, backup_dir: Path, stamp: str) -> PermissionOutcome:
    base = PermissionOutcome(item.uid, "", "failed", None)
    backup = str(save_backup(backup_dir, item.uid, 0, stamp, {"grants": dict(item.live)}, reuse_identical=True))
    try:
        for principal, _ in item.access.grants:  # the read-back names each entry it knows by its id
            api.resolve(principal)
        for principal, level in item.changes:
            api.set(item.folder_uid, principal, level)
        stored = api.get(item.folder_uid) or {}
    except (GrafanaError, ValueError) as exc:
        return replace(base, detail=str(exc), backup_file=backup)
    pairs = tuple(sorted(stored.items()))
    published = str(save_backup(backup_dir, item.uid, 0, stamp, {"grants": stored}, "published", reuse_identical=True))
    sha = grants_sha(stored)
    if sha != item.access.sha:
        detail = f"Grafana stores other permissions than dashgen.toml gives: {dict(pairs)}"
        return PermissionOutcome(item.uid, "", "verify-failed", sha, detail, None, published, backup, pairs)
    detail = f"{len(item.changes)} assignment(s) applied; {', '.join(f'{p} {lv}' for p, lv in pairs) or 'no entry'}"
    return PermissionOutcome(item.uid, "", "published", sha, detail, None, published, backup, pairs)


def run_permissions(
    items: tuple[PermissionItem, ...],
    connection: Connection,
    api: FolderPermissions | None,
    *,
    held: bool,
    ledger_path: Path,
    backup_dir: Path,
    git_commit: str,
    stamp: str,
) -> list[PermissionOutcome]:
    """Apply every folder's difference (nothing when ``held``); one ledger append."""
    api = api or FolderPermissions(connection.client)
    outcomes = []
    for item in items:
        if item.writes and not held:
            outcomes.append(_apply(item, api, backup_dir, stamp))
        elif item.action == "unchanged":
            live = dict(item.live)
            outcomes.append(
                PermissionOutcome(item.uid, "", "unchanged", grants_sha(live), "no write", grants=item.live)
            )
        elif item.action == "refused":
            reasons = "; ".join(f"{r.reason} (approve: {r.key})" for r in item.refusals)
            outcomes.append(PermissionOutcome(item.uid, "", "refused", None, reasons))
        else:
            outcomes.append(PermissionOutcome(item.uid, "", "held", None, "not written: the release is refused"))
    append(ledger_path, [_record(i, o, connection, git_commit, stamp) for i, o in zip(items, outcomes, strict=True)])
    return outcomes


def recorded_access(record: LedgerRecord) -> FolderAccess | None:
    """The permissions a ledger line says Grafana stored, as the state a rollback asks for."""
    grants = record.grants
    if grants is None or not record.folder_uid:
        return None
    return FolderAccess(str(record.folder_uid), tuple(sorted((str(p), str(lv)) for p, lv in grants)))
