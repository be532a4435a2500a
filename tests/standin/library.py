"""The stand-in's library panels: ``/api/library-elements`` as grafana-api.md §14 describes Grafana's handlers
(``pkg/services/libraryelements/api.go``, ``model/model.go``, ``database.go``).

What it follows: create answers 200 ``{"result": DTO}``; a duplicate uid, or a duplicate name in the same
folder, is 400; ``kind`` is required; PATCH requires ``kind`` and ``version`` and answers 412 "the library
element has been changed by someone else" when the version is not the stored one, else stores version + 1
(absent name / model / folderUid keep their values); connections are derived from the stored dashboards (v1
``libraryPanel.uid``, v2 ``LibraryPanel`` elements), never stored; DELETE of a connected element is 403 "the
library element has connections"; unknown uid is 404 "library element could not be found".

``kubernetes_library_panels`` (``simulate_kubernetes_library_panels()``) follows Grafana's feature flag
``libraryelementsKubernetesLibraryPanels`` (``pkg/services/libraryelements/api.go``, ``libraryElementsK8sHandler``):
the legacy routes then store the element as a ``dashboard.grafana.app/v0alpha1`` ``LibraryPanel`` whose spec holds
only title (the name), description, panelTitle, type, options, fieldConfig, pluginVersion, datasource, gridPos,
transparent (when true), links and targets (when not empty); the model read back is rebuilt from that spec (other
keys are lost, empty ones come back as ``""`` / null); its PATCH does not compare the version sent.

The ``librarypanels`` resource itself (``/apis/dashboard.grafana.app/v0alpha1/namespaces/<ns>/librarypanels``, served
by the Grafana 13 flavour; ``resource_*``): a ``LibraryPanel`` object whose ``metadata.name`` is the uid, the folder
the ``grafana.app/folder`` annotation, ``metadata.generation`` the legacy version and ``metadata.resourceVersion``
an opaque counter; its spec is the name as ``title``, the panel's title as ``panelTitle`` and the spec keys above
(``legacyLibraryPanelToUnstructured`` / ``LibraryPanelToLegacyModel``). ``PUT`` with a stale ``resourceVersion`` is
a 409 Conflict ``Status``, without one it is unconditional; ``POST`` of an existing name is 409 AlreadyExists; an
unknown name is 404 NotFound naming it.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from .store import ApiError, OrgStore, now_rfc3339, plain_error, response_error

NOT_FOUND = "library element could not be found"
_UID = re.compile(r"^[a-zA-Z0-9\-_]*\Z")


@dataclass
class StoredElement:
    id: int
    uid: str
    name: str
    kind: int
    folder_uid: str
    model: dict[str, Any]
    version: int
    created: str
    updated: str
    created_by: str
    updated_by: str
    history: list[dict[str, Any]] = field(default_factory=list)
    resource_version: int = 0


class LibraryStore:
    """The library elements of one organisation (guarded by the org store's lock)."""

    def __init__(self, org: OrgStore) -> None:
        self.org = org
        self.elements: dict[str, StoredElement] = {}
        self._ids = itertools.count(1)
        self._resource_versions = itertools.count(7001)
        self.kubernetes_library_panels = False  # Grafana's libraryelementsKubernetesLibraryPanels flag

    # ------------------------------------------------------------------ helpers

    def require(self, uid: str) -> StoredElement:
        element = self.elements.get(uid)
        if element is None:
            raise response_error(404, NOT_FOUND)
        return element

    def connected_dashboards(self, uid: str) -> list[str]:
        """Uids of stored dashboards that reference the element (v1 panels, rows' panels, v2 elements)."""
        found = []
        for dash in self.org.dashboards.values():
            if uid in _v1_refs(dash.data.get("panels") or []) or uid in _v2_refs(dash.v2_spec or {}):
                found.append(dash.uid)
        return sorted(found)

    def dto(self, element: StoredElement) -> dict[str, Any]:
        folder = self.org.folders.get(element.folder_uid)
        model = copy.deepcopy(element.model)
        return {
            "id": element.id,
            "orgId": self.org.org_id,
            "folderId": folder.id if folder else 0,
            "folderUid": element.folder_uid,
            "uid": element.uid,
            "name": element.name,
            "kind": element.kind,
            "type": str(model.get("type", "")),
            "description": str(model.get("description", "")),
            "model": model,
            "version": element.version,
            "meta": {
                "folderName": folder.title if folder else "General",
                "folderUid": element.folder_uid,
                "connectedDashboards": len(self.connected_dashboards(element.uid)),
                "created": element.created,
                "updated": element.updated,
                "createdBy": {"id": 1, "name": element.created_by, "avatarUrl": ""},
                "updatedBy": {"id": 1, "name": element.updated_by, "avatarUrl": ""},
            },
        }

    def _folder(self, uid: Any) -> str:
        folder_uid = str(uid or "")
        if folder_uid and folder_uid not in self.org.folders:
            raise response_error(400, "failed to get folder")
        return folder_uid

    def _check_unique(self, uid: str, name: str, folder_uid: str) -> None:
        for other in self.elements.values():
            if other.uid != uid and other.name == name and other.folder_uid == folder_uid:
                raise response_error(400, "library element with that name or UID already exists")

    def _stored_model(self, model: dict[str, Any]) -> dict[str, Any]:
        """The model as a read-back will answer it (the flag: rebuilt from the LibraryPanel spec)."""
        return k8s_round_trip(model) if self.kubernetes_library_panels else copy.deepcopy(model)

    # ------------------------------------------------------------------ endpoints

    def create(self, body: Any, actor: str) -> dict[str, Any]:
        if not isinstance(body, dict) or body.get("kind") not in (1, 2) or not isinstance(body.get("model"), dict):
            raise plain_error(400, "bad request data")
        uid = str(body.get("uid") or "") or f"lib{next(self._ids):010d}"
        if len(uid) > 40:
            raise response_error(400, "uid too long, max 40 characters")
        if not _UID.match(uid):
            raise response_error(400, "uid contains illegal characters")
        name = str(body.get("name") or "")
        folder_uid = self._folder(body.get("folderUid"))
        with self.org.lock:
            if uid in self.elements:
                raise response_error(400, "library element with that name or UID already exists")
            self._check_unique(uid, name, folder_uid)
            now = now_rfc3339()
            element = StoredElement(
                next(self._ids),
                uid,
                name,
                int(body["kind"]),
                folder_uid,
                self._stored_model(body["model"]),
                1,
                now,
                now,
                actor,
                actor,
            )
            element.resource_version = next(self._resource_versions)
            self.elements[uid] = element
            return {"result": self.dto(element)}

    def get(self, uid: str) -> dict[str, Any]:
        with self.org.lock:
            return {"result": self.dto(self.require(uid))}

    def by_name(self, name: str) -> dict[str, Any]:
        with self.org.lock:
            found = [self.dto(e) for e in self.elements.values() if e.name == name]
        if not found:
            raise response_error(404, NOT_FOUND)
        return {"result": found}

    def list(self, query: dict[str, list[str]]) -> dict[str, Any]:
        search = (query.get("searchString") or [""])[0].lower()
        per_page = int((query.get("perPage") or ["100"])[0] or 100)
        page = int((query.get("page") or ["1"])[0] or 1)
        with self.org.lock:
            rows = [
                self.dto(e) for e in sorted(self.elements.values(), key=lambda e: e.name) if search in e.name.lower()
            ]
        return {
            "result": {
                "totalCount": len(rows),
                "elements": rows[(page - 1) * per_page : page * per_page],
                "page": page,
                "perPage": per_page,
            }
        }

    def patch(self, uid: str, body: Any, actor: str) -> dict[str, Any]:
        if not isinstance(body, dict) or body.get("kind") not in (1, 2) or not isinstance(body.get("version"), int):
            raise plain_error(400, "bad request data")
        with self.org.lock:
            element = self.require(uid)
            if body["version"] != element.version and not self.kubernetes_library_panels:
                raise response_error(412, "the library element has been changed by someone else")
            name = str(body["name"]) if body.get("name") else element.name
            folder_uid = self._folder(body["folderUid"]) if "folderUid" in body else element.folder_uid
            self._check_unique(uid, name, folder_uid)
            self._store(element, name, folder_uid, body.get("model"), actor)
            return {"result": self.dto(element)}

    def _store(self, element: StoredElement, name: str, folder_uid: str, model: Any, actor: str) -> None:
        element.history.append({"version": element.version, "name": element.name, "model": element.model})
        element.name, element.folder_uid = name, folder_uid
        if isinstance(model, dict):
            element.model = self._stored_model(model)
        element.version += 1
        element.resource_version = next(self._resource_versions)
        element.updated, element.updated_by = now_rfc3339(), actor

    # ------------------------------------------------------------------ the librarypanels resource (/apis)

    def resource_object(self, element: StoredElement) -> dict[str, Any]:
        model = k8s_round_trip(element.model)
        spec = {k: v for k, v in model.items() if k != "title"}
        spec.update(title=element.name, panelTitle=model["title"])
        annotations = {"grafana.app/createdBy": element.created_by, "grafana.app/updatedBy": element.updated_by}
        if element.folder_uid:
            annotations["grafana.app/folder"] = element.folder_uid
        namespace = "default" if self.org.org_id == 1 else f"org-{self.org.org_id}"
        return {
            "apiVersion": f"{RESOURCE_GROUP}/v0alpha1",
            "kind": "LibraryPanel",
            "metadata": {
                "name": element.uid,
                "namespace": namespace,
                "generation": element.version,
                "resourceVersion": str(element.resource_version),
                "creationTimestamp": element.created,
                "annotations": annotations,
                "labels": {"grafana.app/deprecatedInternalID": str(element.id)},
            },
            "spec": spec,
        }

    def resource_get(self, uid: str) -> dict[str, Any]:
        with self.org.lock:
            element = self.elements.get(uid)
            if element is None:
                raise _status(404, "NotFound", f'librarypanels.{RESOURCE_GROUP} "{uid}" not found', uid)
            return self.resource_object(element)

    def resource_write(self, name: str | None, body: Any, actor: str) -> tuple[int, dict[str, Any]]:
        """``POST`` (``name`` None) or ``PUT`` of a ``LibraryPanel`` object."""
        metadata = body.get("metadata") if isinstance(body, dict) else None
        spec = body.get("spec") if isinstance(body, dict) else None
        if not isinstance(metadata, dict) or not isinstance(spec, dict) or body.get("kind") != "LibraryPanel":
            raise _status(400, "BadRequest", "the body is not a LibraryPanel object")
        uid = str(metadata.get("name") or "")
        if not uid or (name is not None and uid != name):
            raise _status(400, "BadRequest", "the name of the object does not match the name on the URL")
        model = {k: copy.deepcopy(v) for k, v in spec.items() if k not in ("title", "panelTitle")}
        model["title"] = str(spec.get("panelTitle") or "")
        model = k8s_round_trip(model)  # the resource holds only its spec keys
        annotations = metadata.get("annotations") if isinstance(metadata.get("annotations"), dict) else {}
        folder_uid = str(annotations.get("grafana.app/folder") or "")
        title = str(spec.get("title") or "")
        if name is None:
            with self.org.lock:
                if uid in self.elements:
                    raise _status(409, "AlreadyExists", f'librarypanels.{RESOURCE_GROUP} "{uid}" already exists', uid)
            self.create({"uid": uid, "name": title, "kind": 1, "model": model, "folderUid": folder_uid}, actor)
            return 201, self.resource_get(uid)
        with self.org.lock:
            element = self.elements.get(uid)
            if element is None:
                raise _status(404, "NotFound", f'librarypanels.{RESOURCE_GROUP} "{uid}" not found', uid)
            sent = str(metadata.get("resourceVersion") or "")
            if sent and sent != str(element.resource_version):
                raise _status(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on librarypanels.{RESOURCE_GROUP} "{uid}": the object has been '
                    "modified; please apply your changes to the latest version and try again",
                    uid,
                )
            folder = self._folder(folder_uid)
            self._check_unique(uid, title, folder)
            self._store(element, title, folder, model, actor)
            return 200, self.resource_object(element)

    def delete(self, uid: str) -> dict[str, Any]:
        with self.org.lock:
            element = self.require(uid)
            if self.connected_dashboards(uid):
                raise response_error(403, "the library element has connections")
            del self.elements[uid]
            return {"id": element.id, "message": "Library element deleted"}

    def connections(self, uid: str) -> dict[str, Any]:
        with self.org.lock:
            element = self.require(uid)
            rows = []
            for dash_uid in self.connected_dashboards(uid):
                dash = self.org.dashboards[dash_uid]
                digest = hashlib.sha256(f"{element.id}/{dash.id}".encode()).hexdigest()[:12]
                rows.append(
                    {
                        "id": int(digest, 16),
                        "kind": 1,
                        "elementId": element.id,
                        "connectionId": dash.id,
                        "connectionUid": dash.uid,
                        "created": dash.created,
                        "createdBy": {"id": 1, "name": dash.created_by, "avatarUrl": ""},
                    }
                )
            return {"result": rows}

    # ------------------------------------------------------------------ a person in the UI

    def person_edit(self, uid: str, mutate: Any, user: str = "admin") -> dict[str, Any]:
        """A person edits the element in the UI's library panel editor and saves it (the version goes up)."""
        with self.org.lock:
            element = self.require(uid)
            model = copy.deepcopy(element.model)
            replaced = mutate(model)
            self._store(
                element, element.name, element.folder_uid, replaced if isinstance(replaced, dict) else model, user
            )
            return self.dto(element)


RESOURCE_GROUP = "dashboard.grafana.app"


def _status(code: int, reason: str, message: str, name: str | None = None) -> ApiError:
    """A Kubernetes ``Status`` failure object of the librarypanels resource."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    body.update(message=message, reason=reason, code=code)
    if name is not None:
        body["details"] = {"name": name, "group": RESOURCE_GROUP, "kind": "librarypanels"}
    return ApiError(code, body)


def k8s_round_trip(model: dict[str, Any]) -> dict[str, Any]:
    """What Grafana's k8s handler keeps of a legacy model (``legacyModelToLibraryPanelSpec``) and gives back
    (``unstructuredToLegacyLibraryPanelDTO``); ``id`` and ``libraryPanel`` (which it adds) are placement keys here."""
    out: dict[str, Any] = {
        "datasource": copy.deepcopy(model.get("datasource")),
        "description": model["description"] if isinstance(model.get("description"), str) else "",
        "fieldConfig": copy.deepcopy(model["fieldConfig"]) if isinstance(model.get("fieldConfig"), dict) else None,
        "gridPos": copy.deepcopy(model.get("gridPos") or {"h": 0, "w": 0, "x": 0, "y": 0}),
        "options": copy.deepcopy(model["options"]) if isinstance(model.get("options"), dict) else None,
        "pluginVersion": model["pluginVersion"] if isinstance(model.get("pluginVersion"), str) else "",
        "type": model["type"] if isinstance(model.get("type"), str) else "",
        "title": model["title"] if isinstance(model.get("title"), str) else "",
    }
    for key in ("links", "targets"):
        if isinstance(model.get(key), list) and model[key]:
            out[key] = copy.deepcopy(model[key])
    if model.get("transparent") is True:
        out["transparent"] = True
    return out


def _v1_refs(panels: list[Any]) -> set[str]:
    found: set[str] = set()
    for panel in panels:
        if not isinstance(panel, dict):
            continue
        ref = panel.get("libraryPanel")
        if isinstance(ref, dict) and ref.get("uid"):
            found.add(str(ref["uid"]))
        found |= _v1_refs(panel.get("panels") or [])
    return found


def _v2_refs(spec: dict[str, Any]) -> set[str]:
    found = set()
    for element in (spec.get("elements") or {}).values():
        if isinstance(element, dict) and element.get("kind") == "LibraryPanel":
            ref = (element.get("spec") or {}).get("libraryPanel") or {}
            if ref.get("uid"):
                found.add(str(ref["uid"]))
    return found


def library_of(org: OrgStore) -> LibraryStore:
    """The library store of an organisation, created on first use."""
    with org.lock:
        store = getattr(org, "library", None)
        if store is None:
            store = LibraryStore(org)
            org.library = store  # type: ignore[attr-defined]
        return store


__all__ = ["ApiError", "LibraryStore", "StoredElement", "library_of"]
