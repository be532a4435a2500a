"""The stand-in's ``/apis/dashboard.grafana.app`` resource API (grafana-api.md §9, §13).

Objects are ``{apiVersion, kind, metadata, spec, status}`` with ``metadata.name`` the uid,
``metadata.resourceVersion`` an opaque counter string, ``metadata.generation`` the legacy version.
Reading in another API version than the stored one converts and says so in
``status.conversion.storedVersion``: v0alpha1 → v1 migrates the schemaVersion, v2 → v1 is the lossy
down-conversion of ``v2.py``. ``PUT`` with a stale ``metadata.resourceVersion`` is a 409 Conflict
``Status``, without one it is unconditional (and creates); ``POST`` on an existing name is 409
AlreadyExists; ``?dryRun=All`` answers what would be stored and stores nothing.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from .store import ApiError, OrgStore, StoredDashboard, now_rfc3339, strip_identity
from .v2 import to_v1, to_v2

GROUP = "dashboard.grafana.app"
VERSIONS = {
    "grafana12": ("v0alpha1", "v1beta1", "v2alpha1", "v2beta1"),
    "grafana13": ("v0alpha1", "v1beta1", "v1", "v2alpha1", "v2beta1", "v2"),
}


def status_error(code: int, reason: str, message: str, name: str | None = None) -> ApiError:
    """A Kubernetes ``Status`` failure object."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if name is not None:
        body["details"] = {"name": name, "group": GROUP, "kind": "dashboards"}
    return ApiError(code, body)


def org_of(namespace: str) -> int | None:
    if namespace == "default":
        return 1
    if namespace.startswith("org-") and namespace[4:].isdigit():
        return int(namespace[4:])
    return None


def check_version(mode: str, version: str) -> None:
    if version not in VERSIONS[mode]:
        raise status_error(404, "NotFound", "the server could not find the requested resource")


def _v2(version: str) -> bool:
    return version.startswith("v2")


def resource_body(store: OrgStore, dash: StoredDashboard, version: str) -> dict[str, Any]:
    """The object as read through ``version``."""
    if _v2(version):
        spec = copy.deepcopy(dash.v2_spec) if dash.v2_spec is not None else to_v2(strip_identity(dash.data))
    elif dash.v2_spec is not None:
        spec = strip_identity(to_v1(dash.v2_spec))
        spec["schemaVersion"] = store.settings.latest_schema_version
    else:
        spec = strip_identity(dash.data)  # a new top-level dict; stored data is never changed in place
        if version != "v0alpha1" and dash.stored_version == "v0alpha1":  # v0 -> v1 runs the schema migration
            spec["schemaVersion"] = max(int(spec.get("schemaVersion") or 0), store.settings.latest_schema_version)
    namespace = "default" if store.org_id == 1 else f"org-{store.org_id}"
    annotations = {
        "grafana.app/updatedBy": dash.updated_by,
        "grafana.app/createdBy": dash.created_by,
        "grafana.app/updatedTimestamp": dash.updated,
    }
    if dash.folder_uid:
        annotations["grafana.app/folder"] = dash.folder_uid
    if dash.provisioned:  # grafana-api.md §13: the manager annotations of a file-provisioned dashboard
        annotations["grafana.app/managedBy"] = "classic-file-provisioning"
        annotations["grafana.app/managerId"] = "dashgen-provider"
        annotations["grafana.app/sourcePath"] = dash.provisioned_from
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Dashboard",
        "metadata": {
            "name": dash.uid,
            "namespace": namespace,
            "uid": dash.k8s_uid,
            "resourceVersion": str(dash.resource_version),
            "generation": dash.version,
            "creationTimestamp": dash.created,
            "annotations": annotations,
            "labels": {"grafana.app/deprecatedInternalID": str(dash.id)},
        },
        "spec": spec,
        "status": {},
    }
    if dash.stored_version != version:
        body["status"] = {"conversion": {"failed": False, "storedVersion": dash.stored_version}}
    return body


def get_resource(store: OrgStore, version: str, name: str) -> dict[str, Any]:
    with store.lock:
        dash = store.dashboards.get(name)
        if dash is None:
            raise status_error(404, "NotFound", f'dashboards.{GROUP} "{name}" not found', name)
        return resource_body(store, dash, version)


def list_resources(store: OrgStore, version: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """``GET .../dashboards``: the namespace's dashboards, narrowed by an equality ``labelSelector`` (``k=v,...``)
    and cut to ``limit`` (``metadata.continue`` says more exist), as a Kubernetes list answers."""
    wanted = {}
    for term in filter(None, (query.get("labelSelector") or [""])[0].split(",")):
        key, _, value = term.partition("=")
        wanted[key.strip()] = value.strip()
    with store.lock:
        items = [resource_body(store, dash, version) for dash in sorted(store.dashboards.values(), key=lambda d: d.uid)]
    items = [item for item in items if all(item["metadata"]["labels"].get(k) == v for k, v in wanted.items())]
    limit = int((query.get("limit") or ["0"])[0] or 0)
    more = bool(limit) and len(items) > limit
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "DashboardList",
        "metadata": {"resourceVersion": "1", **({"continue": "next"} if more else {})},
        "items": items[:limit] if limit else items,
    }


def write_resource(
    store: OrgStore, version: str, name: str | None, body: Any, actor: str, *, create: bool, dry_run: bool
) -> tuple[int, dict[str, Any]]:
    """POST (``create``) or PUT of a full object; returns (status, object)."""
    with store.lock:
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("metadata"), dict)
            or not isinstance(body.get("spec"), dict)
        ):
            raise status_error(400, "BadRequest", "the body must be an object with metadata and spec")
        metadata = body["metadata"]
        uid = str(metadata.get("name") or "")
        if not uid or (name is not None and uid != name):
            raise status_error(400, "BadRequest", "metadata.name must be the dashboard uid of the path")
        existing = store.dashboards.get(uid)
        if create and existing is not None:
            raise status_error(409, "AlreadyExists", f'dashboards.{GROUP} "{uid}" already exists', uid)
        sent_rv = metadata.get("resourceVersion")
        if existing is not None and sent_rv not in (None, "") and str(sent_rv) != str(existing.resource_version):
            raise status_error(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on dashboards.{GROUP} "{uid}": '
                "the object has been modified; please apply your changes to the "
                "latest version and try again (requested RV does not match current RV)",
                uid,
            )
        if existing is not None and existing.provisioned:  # as the legacy API (grafana-api.md §3.4)
            raise status_error(400, "BadRequest", "Cannot save provisioned dashboard", uid)
        annotations = metadata.get("annotations") if isinstance(metadata.get("annotations"), dict) else {}
        folder_uid = str(annotations.get("grafana.app/folder") or "")
        if folder_uid and folder_uid not in store.folders:
            raise status_error(400, "BadRequest", "folder not found", uid)
        spec = body["spec"]  # a fresh parse of the request
        v2_spec = spec if _v2(version) else None
        data = strip_identity(to_v1(spec) if v2_spec is not None else spec)
        title = str(data.get("title") or "").strip()
        if not title:
            raise status_error(400, "BadRequest", "Dashboard spec is missing required title property", uid)
        data["title"] = title
        store._raise_refresh(data)
        if version in ("v1beta1", "v1"):
            data["schemaVersion"] = max(int(data.get("schemaVersion") or 0), store.settings.latest_schema_version)
        message = str(annotations.get("grafana.app/message") or "")
        if dry_run:
            return (201 if existing is None else 200), _preview(
                store, existing, uid, data, v2_spec, folder_uid, version, actor
            )
        if existing is None:
            store._create(data, uid, folder_uid, message, actor)
            dash = store.dashboards[uid]
            dash.stored_version, dash.v2_spec = version, v2_spec
            return 201, resource_body(store, dash, version)
        same = (
            folder_uid == existing.folder_uid
            and strip_identity(data) == strip_identity(existing.data)
            and v2_spec == existing.v2_spec
        )
        if not same:  # generation and resourceVersion change only when something stored changes (§13)
            parent = existing.version
            store.store_new_version(existing, data, folder_uid, actor, stored_version=version, v2_spec=v2_spec)
            store._append_history(existing, parent_version=parent, message=message, actor=actor)
        return 200, resource_body(store, existing, version)


def _preview(
    store: OrgStore,
    existing: StoredDashboard | None,
    uid: str,
    data: dict[str, Any],
    v2_spec: dict[str, Any] | None,
    folder_uid: str,
    version: str,
    actor: str,
) -> dict[str, Any]:
    """What a write would store, built on a throw-away copy."""
    stamp = now_rfc3339()
    base = (
        dataclasses.replace(existing)
        if existing is not None
        else StoredDashboard(
            id=0,
            uid=uid,
            data={},
            version=0,
            folder_uid="",
            created=stamp,
            updated=stamp,
            created_by=actor,
            updated_by=actor,
        )
    )
    changed = existing is None or folder_uid != base.folder_uid or strip_identity(data) != strip_identity(base.data)
    base.data = dict(data, uid=uid, id=base.id, version=base.version + (1 if changed else 0))
    base.version = base.data["version"]
    base.folder_uid, base.stored_version, base.v2_spec = folder_uid, version, v2_spec
    return resource_body(store, base, version)
