"""Folder permissions of a release, at the I/O edge: resolve the principals, read each folder's managed entries
(``plan_release_permissions``), apply the difference one assignment at a time, read it back and prove it by its
SHA, and record it (``kind: folder-permissions``; ``grants``: what Grafana stores after the release, which is what
the next release may remove without approval). What Grafana stored before is backed up for ``dashgen rollback``.
"""

from __future__ import annotations

from dataclasses import replace

from dashgen.grafana.errors import GrafanaError
from dashgen.grafana.permissions import FolderPermissions
from dashgen.publish.actions import OutcomeKind
from dashgen.publish.approvals import Approvals
from dashgen.publish.export import Connection
from dashgen.publish.guard import Refusal
from dashgen.publish.ledger import LedgerRecord, last_written
from dashgen.publish.permissions_plan import KIND, FolderAccess, PermissionItem, grants_sha, plan_folder
from dashgen.publish.resource_outcome import ResourceOutcome, ResourceRelease, run_phase


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


def _apply(item: PermissionItem, release: ResourceRelease) -> ResourceOutcome:
    api = FolderPermissions(release.connection.client)
    base = ResourceOutcome(item.uid, "", OutcomeKind.FAILED, None)
    backup = release.backup(item.uid, {"grants": dict(item.live)})
    try:
        for principal, _ in item.access.grants:  # the read-back names each entry it knows by its id
            api.resolve(principal)
        for principal, level in item.changes:
            api.set(item.folder_uid, principal, level)
        stored = api.get(item.folder_uid) or {}
    except (GrafanaError, ValueError) as exc:
        return replace(base, detail=str(exc), backup_file=backup)
    pairs = tuple(sorted(stored.items()))
    published = release.backup(item.uid, {"grants": stored}, "published")
    sha = grants_sha(stored)
    if sha != item.access.sha:
        detail = f"Grafana stores other permissions than dashgen.toml gives: {dict(pairs)}"
        return ResourceOutcome(item.uid, "", OutcomeKind.VERIFY_FAILED, sha, detail, None, published, backup, pairs)
    detail = f"{len(item.changes)} assignment(s) applied; {', '.join(f'{p} {lv}' for p, lv in pairs) or 'no entry'}"
    return ResourceOutcome(item.uid, "", OutcomeKind.PUBLISHED, sha, detail, None, published, backup, pairs)


def run_permissions(
    items: tuple[PermissionItem, ...], release: ResourceRelease, *, held: bool
) -> list[ResourceOutcome]:
    """Apply every folder's difference (nothing when ``held``); one ledger append."""
    return run_phase(KIND, items, "write", held, release, write=_apply)


def recorded_access(record: LedgerRecord) -> FolderAccess | None:
    """The permissions a ledger line says Grafana stored, as the state a rollback asks for."""
    grants = record.grants
    if grants is None or not record.folder_uid:
        return None
    return FolderAccess(str(record.folder_uid), tuple(sorted((str(p), str(lv)) for p, lv in grants)))
