"""The library panels of a release, at the I/O edge: read what Grafana stores (``export_library``), then write
(``write_library``: before the dashboards) and clean up (``delete_library``: after them), each element read back,
proven by its SHA and given a ledger line (``kind: library-panel``) like a dashboard.

Every element about to be changed or deleted is backed up first (``<backups>/<uid>/…-v<version>.json``, the
answer Grafana gave); each save's read-back is kept (``…-published.json``): that copy is what ``dashgen
rollback <element uid>`` republishes, as Grafana keeps no history of library panels. The write carries the
version read at the export, so a person's save in between is a conflict (412), never overwritten.

Where Grafana serves the ``librarypanels`` resource of ``/apis`` (learnt as dashboards' ``/apis`` is: tried on a
Grafana that reads ``/apis``, dropped at its first ``ApiNotServed``), elements are read, created and updated
through it, a ``PUT`` carrying the ``resourceVersion`` read (409 on a save since); else ``/api/library-elements``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from dashgen.grafana.errors import ApiNotServed, GrafanaError, VersionConflict
from dashgen.grafana.library import LibraryElements, LiveElement, model_difference
from dashgen.grafana.library_resources import LibraryPanelResources
from dashgen.grafana.server import namespace
from dashgen.publish.actions import OutcomeKind
from dashgen.publish.approvals import Approvals
from dashgen.publish.export import Connection, parallel
from dashgen.publish.ledger import LedgerRecord
from dashgen.publish.library_plan import KIND, LibraryItem, plan_library, stale_uids
from dashgen.publish.resource_outcome import Phase, ResourceOutcome, ResourceRelease, run_phase
from dashgen.render.library import LibraryElement, merge_elements


def library_api(connection: Connection) -> LibraryElements | LibraryPanelResources:
    """The ``/apis`` form where it is (still) thought served, else the legacy routes."""
    if connection.library_resources:
        return LibraryPanelResources(connection.client, namespace(connection.org_id))
    return LibraryElements(connection.client)


def read_element(connection: Connection, uid: str) -> LiveElement | None:
    """The element as Grafana stores it, through ``/apis`` where served (the first ``ApiNotServed`` falls back to
    the legacy route for the rest of the release)."""
    api = library_api(connection)
    if isinstance(api, LibraryPanelResources):
        try:
            return api.get(uid)
        except ApiNotServed:
            connection.library_resources_not_served()
    return LibraryElements(connection.client).get(uid)


def plan_release_library(
    connection: Connection,
    elements: list[LibraryElement],
    ledger: list[LedgerRecord],
    approvals: Approvals,
    *,
    cleanup_profiles: tuple[str, ...] = (),
    managed: tuple[str, ...] = (),
) -> tuple[LibraryItem, ...]:
    """Read each element (and each stale one of ``cleanup_profiles`` with its connections), then plan (pure)."""
    elements = merge_elements(elements)[0]
    stale = stale_uids(ledger, cleanup_profiles, [e.uid for e in elements]) if cleanup_profiles else {}
    uids = [e.uid for e in elements] + sorted(stale)
    if not uids:
        return ()
    read_element(connection, uids[0])  # learns whether /apis serves library panels before reading in parallel
    live = dict(zip(uids, parallel(connection.jobs, lambda uid: read_element(connection, uid), uids), strict=True))
    api = LibraryElements(connection.client)
    connected = {uid: tuple(api.connections(uid)) for uid in stale if live.get(uid) is not None}
    return plan_library(elements, live, ledger, approvals, stale, connected, managed)


def _backup(release: ResourceRelease, live: LiveElement | None, kind: str = "") -> str | None:
    if live is None or not live.raw:
        return None
    return release.backup(live.uid, {"result": live.raw}, kind, live.version)


def _write_one(item: LibraryItem, release: ResourceRelease, folder_uid: str | None) -> ResourceOutcome:
    element = item.element
    assert element is not None  # a write always has its element
    api = library_api(release.connection)
    base = ResourceOutcome(item.uid, item.profile, OutcomeKind.FAILED, version=item.live_version)
    try:
        backup = _backup(release, item.live)
        if item.live is None:
            api.create(element, folder_uid)
        else:
            # read again first: a Grafana keeping library panels in its librarypanels resource does not compare the
            # version a PATCH carries (dashgen.grafana.library), so a save since the export is caught here
            now = api.get(element.uid)
            if now is None or now.version != item.live.version:
                seen = f"v{now.version}" if now is not None else "deleted"
                detail = (
                    f"changed in Grafana after the export (v{item.live.version} read, {seen} now); nothing was written"
                )
                return replace(base, outcome=OutcomeKind.CONFLICT, detail=detail)
            api.update(element, item.live.folder_uid if folder_uid is None else folder_uid, item.live)
        stored = api.get(element.uid)
    except VersionConflict as exc:
        return replace(
            base,
            outcome=OutcomeKind.CONFLICT,
            detail=f"someone saved it after the export; nothing was overwritten ({exc})",
        )
    except GrafanaError as exc:
        return replace(base, detail=str(exc))
    if stored is None:
        return replace(base, outcome=OutcomeKind.VERIFY_FAILED, detail="saved, but Grafana returns 404 on read-back")
    published = _backup(release, stored, "published")
    if stored.sha != element.sha:
        detail = (
            f"Grafana stores another element than the build (SHA {stored.sha[:12]} != {element.sha[:12]}): "
            + model_difference(element.model, stored.model)
        )
        return ResourceOutcome(
            item.uid, item.profile, OutcomeKind.VERIFY_FAILED, stored.sha, detail, stored.version, published, backup
        )
    users = ", ".join(element.dashboards) or "-"
    detail = f"stored v{stored.version}, SHA {stored.sha[:12]} verified; used by {users}"
    return ResourceOutcome(
        item.uid, item.profile, OutcomeKind.PUBLISHED, stored.sha, detail, stored.version, published, backup
    )


def _delete_one(item: LibraryItem, release: ResourceRelease) -> ResourceOutcome:
    api = library_api(release.connection)
    base = ResourceOutcome(item.uid, item.profile, OutcomeKind.FAILED, version=item.live_version)
    try:
        backup = _backup(release, item.live)
        now = api.get(item.uid)
        if now is not None and item.live is not None and now.version != item.live.version:
            return replace(
                base, outcome=OutcomeKind.CONFLICT, detail="changed in Grafana after the export; not deleted"
            )
        if now is not None:
            api.delete(item.uid)
    except GrafanaError as exc:
        return replace(base, detail=str(exc))
    return replace(
        base, outcome=OutcomeKind.DELETED, detail="deleted (the backup keeps its last content)", backup_file=backup
    )


def run_library(
    items: tuple[LibraryItem, ...],
    release: ResourceRelease,
    *,
    phase: Phase,
    held: bool,
    folder_uid: str | None,
) -> list[ResourceOutcome]:
    """One phase of a release's library panels: ``write`` (creates, updates and every non-write line) before the
    dashboards, ``delete`` after them. ``held``: the release is blocked, nothing is written. Ledger lines are
    appended in one write per phase."""

    def write(item: LibraryItem, release: ResourceRelease) -> ResourceOutcome:
        return _write_one(item, release, folder_uid)

    return run_phase(KIND, items, phase, held, release, write=write, delete=_delete_one)


def recorded_element(record: LedgerRecord, load: Any) -> LibraryElement | None:
    """The element a ledger line's read-back copy holds (``load`` reads the backup file), for a rollback."""
    path = record.published_file
    if not path or not Path(str(path)).exists():
        return None
    result = (load(Path(str(path))) or {}).get("result") or {}
    if not isinstance(result.get("model"), dict):
        return None
    return LibraryElement(str(result.get("uid")), str(result.get("name")), "", str(record.profile), result["model"])
