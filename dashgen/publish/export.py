"""Reading what Grafana stores: the connection's capabilities and the live state of each target.

On Grafana ≥ 12 every dashboard is read through ``/apis`` (``v1beta1``, ``v1`` on 13) to learn what it
is stored as, then re-read in the stored version when Grafana converted it, so the plan diffs against
what is really stored, never a conversion. A dashboard stored as ``v2…`` (a person's save in a
Grafana 13 UI) is kept as its v2 object for the backup and marked ``stored_v2``. Where ``/apis`` is not
served (Grafana 11, a proxy) the legacy ``GET /api/dashboards/uid/:uid`` is read; its 406 for a v2
dashboard on 12.x is a ``stored_v2`` state too, never an error that stops the release.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import ApiNotServed, StoredAsV2
from dashgen.grafana.resources import WRITE_VERSION, DashboardResource, ResourceApi
from dashgen.grafana.server import ServerInfo
from dashgen.grafana.v2 import v2_losses
from dashgen.publish.ledger import Instance
from dashgen.publish.plan import LiveState

T = TypeVar("T")
R = TypeVar("R")


class Connection:
    """One Grafana organisation as a release sees it: the client, the server's version, the org, ``/apis``."""

    def __init__(self, client: GrafanaClient, info: ServerInfo, org_id: int, jobs: int = 1) -> None:
        self.client = client
        self.info = info
        self.org_id = org_id
        self.jobs = max(1, jobs)
        self.instance = Instance(client.url, org_id)
        self._apis: ResourceApi | None = client.resources(org_id) if info.reads_apis else None
        self._lock = threading.Lock()
        # whether the /apis form of library panels is tried: learnt from its first answer (ApiNotServed: no)
        self._library_resources = self._apis is not None

    @property
    def library_resources(self) -> bool:
        with self._lock:
            return self._library_resources and self._apis is not None

    def library_resources_not_served(self) -> None:
        with self._lock:
            self._library_resources = False

    @property
    def apis(self) -> ResourceApi | None:
        with self._lock:
            return self._apis

    @property
    def writes_apis(self) -> bool:
        return self.info.writes_apis and self.apis is not None

    def _not_served(self) -> None:
        with self._lock:
            self._apis = None

    def describe(self) -> str:
        return f"{self.info.label}, org {self.org_id}"


def connect(client: GrafanaClient, org_id: int | None, jobs: int = 1) -> Connection:
    """Ask the server its version (``/api/health``) and, without ``org_id``, the credentials' org (``/api/org``)."""
    info = client.server_info()
    org = org_id if org_id is not None else (client.current_org_id() or 1)
    return Connection(client, info, org, jobs)


def parallel(jobs: int, function: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[function(item) for item in items]`` with at most ``jobs`` at a time; results in input order.

    The first exception (in input order) is raised after every started call has finished.
    """
    items = list(items)
    if jobs <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix="dashgen") as pool:
        futures = [pool.submit(function, item) for item in items]
        return [future.result() for future in futures]


def export_one(connection: Connection, uid: str, *, first_version: str | None = None) -> LiveState | None:
    """The live state of ``uid``, or None when Grafana does not have it."""
    apis = connection.apis
    if apis is not None:
        try:
            return _from_apis(apis, uid, first_version or connection.info.detect_version)
        except ApiNotServed:
            connection._not_served()
    try:
        exported = connection.client.get_dashboard(uid)
    except StoredAsV2 as exc:
        return LiveState(
            uid,
            0,
            None,
            {},
            stored_version="v2",
            stored_v2=True,
            v2_losses=(
                "what a person saved (Grafana answers 406 for it on the legacy API, and "
                f"its /apis API is not reachable here: {exc.grafana_message})",
            ),
        )
    if exported is None:
        return None
    return LiveState(
        uid,
        exported.version,
        exported.folder_uid,
        exported.dashboard,
        exported.provisioned,
        str(exported.meta.get("apiVersion") or ""),
        export={"dashboard": exported.dashboard, "meta": exported.meta},
    )


def export_all(connection: Connection, uids: list[str]) -> dict[str, LiveState | None]:
    """Every target's live state, read ``connection.jobs`` at a time; the result is in ``uids`` order."""
    states = parallel(connection.jobs, lambda uid: export_one(connection, uid), uids)
    return dict(zip(uids, states, strict=True))


def export_and_prepare(
    connection: Connection,
    uids: list[str],
    build: Callable[[], list[Any]],
    prepare: Callable[[LiveState | None, Any], R | None],
) -> tuple[dict[str, LiveState | None], list[Any], dict[str, R]]:
    """Export every uid (``connection.jobs`` at a time) while ``build()`` runs in this thread, then
    ``prepare(state, target)`` each export against its target (by ``uid``) as soon as both exist, in the same
    pool: one dashboard's CPU work overlaps the other exports' network waits. Returns the live states (in
    ``uids`` order), the targets, and the non-None prepared values by uid. The first export error (in ``uids``
    order) is raised after every started call has finished, as in :func:`export_all`.
    """
    if connection.jobs <= 1 or len(uids) <= 1:
        live = export_all(connection, uids)
        targets = build()
        by_uid = {t.uid: t for t in targets}
        prepared = {uid: prepare(live[uid], by_uid[uid]) for uid in uids if uid in by_uid}
        return live, targets, {uid: value for uid, value in prepared.items() if value is not None}
    with ThreadPoolExecutor(max_workers=min(connection.jobs, len(uids)), thread_name_prefix="dashgen") as pool:
        exports = [pool.submit(export_one, connection, uid) for uid in uids]
        try:
            targets = build()
        except BaseException:
            for future in exports:
                future.cancel()
            raise
        by_uid = {t.uid: t for t in targets}
        # Submitted after every export, so a worker waiting here waits on an export already running.
        later = {
            uid: pool.submit(lambda future, target: prepare(future.result(), target), future, by_uid[uid])
            for uid, future in zip(uids, exports, strict=True)
            if uid in by_uid
        }
        states = [future.result() for future in exports]
        prepared = {uid: future.result() for uid, future in later.items()}
    return (
        dict(zip(uids, states, strict=True)),
        targets,
        {uid: value for uid, value in prepared.items() if value is not None},
    )


def read_back(connection: Connection, uid: str, version: str = WRITE_VERSION) -> LiveState | None:
    """What Grafana stores right after dashgen wrote it through ``version`` (v1 JSON: ``v0alpha1``; a v2 build:
    its ``v2`` / ``v2beta1``)."""
    return export_one(connection, uid, first_version=version if connection.apis is not None else None)


def _from_apis(apis: ResourceApi, uid: str, first_version: str) -> LiveState | None:
    stored = apis.read_stored(uid, first_version)
    if stored is None:
        return None
    if stored.stored_v2:  # its v1 view is a lossy down-conversion: only its v2 form is kept (and diffed by a v2 build)
        return LiveState(
            uid,
            stored.generation,
            stored.folder_uid,
            stored.v2_resource(),
            stored.provisioned,
            stored.stored_version,
            stored.resource_version,
            stored_v2=True,
            v2_losses=v2_losses(stored.spec),
            export=_export(stored),
            size=stored.size,
        )
    return LiveState(
        uid,
        stored.generation,
        stored.folder_uid,
        stored.dashboard(),
        stored.provisioned,
        stored.stored_version,
        stored.resource_version,
        export=_export(stored),
        size=stored.size,
    )


def _export(resource: DashboardResource) -> bytes:
    """The backup of a resource: ``{"resource": <the object exactly as Grafana answered>}``, not re-encoded
    (``dashgen.publish.backups.load_backup`` derives the v1 dashboard from it)."""
    return b'{"resource":' + (resource.body.strip() or json.dumps(resource.raw).encode()) + b"}"
