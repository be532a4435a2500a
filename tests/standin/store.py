"""State and save semantics of one Grafana organisation inside the stand-in.

Owns dashboards, their version history and folders, and the rules of
/work/shared/grafana-api.md §2-§5 and §7.1 (what an API save validates and changes).
HTTP, auth and fault injection live in ``server.py``; every Grafana error is raised here
as ``ApiError`` carrying the exact status and body the contract gives.
"""

from __future__ import annotations

import copy
import itertools
import random
import re
import string
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

GRAFANA12 = "grafana12"
GRAFANA13 = "grafana13"

_UID_RE = re.compile(r"^[a-zA-Z0-9\-_]*$")
_DURATION_RE = re.compile(r"^(\d+)(ms|s|m|h|d|w|y)$")
_DURATION_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
# Snowflake epoch used for the 52-bit "deprecated internal id" of unified storage (§2).
_SNOWFLAKE_EPOCH_MS = 1288834974657


class ApiError(Exception):
    """An error answer: HTTP status plus the JSON body Grafana sends for it."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status} {body}")
        self.status = status
        self.body = body


def response_error(status: int, message: str) -> ApiError:
    """``response.Error(status, message, err)`` with ``err != nil``: the body gains ``traceID`` (§1)."""
    return ApiError(status, {"message": message, "traceID": ""})


def plain_error(status: int, message: str, status_field: str | None = None) -> ApiError:
    """``response.Error`` without err, or ``response.JSON`` with a ``status`` key: no ``traceID`` (§1)."""
    body: dict[str, Any] = {"message": message}
    if status_field is not None:
        body["status"] = status_field
    return ApiError(status, body)


def errutil_error(status: int, message_id: str, message: str) -> ApiError:
    """``response.Err(errutil.Error)`` shape used by authn and a few others (§1)."""
    return ApiError(
        status,
        {"extra": None, "message": message, "messageId": message_id, "statusCode": status, "traceID": ""},
    )


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug or "-"


def generate_uid() -> str:
    """Current legacy short-uid form: ``<a-f><12 base36 chars><a-f>`` (§3.2, §11)."""
    middle = "".join(random.choices(string.ascii_lowercase + string.digits, k=12))
    return random.choice("abcdef") + middle + random.choice("abcdef")


def strip_identity(data: dict[str, Any]) -> dict[str, Any]:
    """The spec without the keys Grafana lifts out of it on save (id, uid, version)."""
    return {k: v for k, v in data.items() if k not in ("id", "uid", "version")}


@dataclass
class Settings:
    """Knobs that differ between Grafana versions or instances; shared by every org store."""

    mode: str = GRAFANA12
    grafana_version: str = "12.3.0"
    versions_to_keep: int = 20
    min_refresh_interval: str = "5s"
    folder_conflict_status: int = 412
    latest_schema_version: int = 41
    dynamic_dashboards: bool = False  # a UI save converts the dashboard to the v2 schema (§13)


@dataclass
class StoredDashboard:
    id: int
    uid: str
    data: dict[str, Any]
    version: int
    folder_uid: str
    created: str
    updated: str
    created_by: str
    updated_by: str
    provisioned: bool = False  # file-provisioned (or Git Sync) without allowUiUpdates: no API save
    provisioned_from: str = ""  # the provisioning file it was read from (meta.provisionedExternalId)
    plugin_id: str = ""
    saved_at: float = field(default_factory=time.monotonic)
    history: list[dict[str, Any]] = field(default_factory=list)
    stored_version: str = "v0alpha1"  # the API version the object is stored in (§13)
    v2_spec: dict[str, Any] | None = None  # the real stored spec when stored_version is v2*
    resource_version: int = 0  # opaque storage counter of the /apis API
    k8s_uid: str = field(default_factory=lambda: f"{random.getrandbits(64):016x}")

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))


@dataclass
class StoredFolder:
    id: int
    uid: str
    title: str
    parent_uid: str
    version: int
    created: str
    updated: str
    created_by: str
    updated_by: str
    description: str = ""


class OrgStore:
    """Everything one organisation holds. All public methods are thread-safe."""

    def __init__(self, org_id: int, settings: Settings) -> None:
        self.org_id = org_id
        self.settings = settings
        self.dashboards: dict[str, StoredDashboard] = {}
        self.folders: dict[str, StoredFolder] = {}
        self.lock = threading.RLock()
        self._ids = itertools.count(1)
        self._version_row_ids = itertools.count(1)
        self._snowflake_seq = itertools.count(1)
        self._resource_versions = itertools.count(int(time.time() * 1000) * 1000)

    @property
    def unified(self) -> bool:
        return self.settings.mode == GRAFANA13

    def bump_resource_version(self, dash: StoredDashboard) -> None:
        dash.resource_version = next(self._resource_versions)

    # ------------------------------------------------------------------ ids and helpers

    def _new_id(self) -> int:
        if self.unified:
            millis = int(time.time() * 1000) - _SNOWFLAKE_EPOCH_MS
            return ((millis << 22) | (next(self._snowflake_seq) & 0xFFF)) & ((1 << 52) - 1)
        return next(self._ids)

    def _raise_refresh(self, data: dict[str, Any]) -> None:
        """Raise ``refresh`` to ``min_refresh_interval`` (a logged warning in Grafana, not an error)."""
        refresh = data.get("refresh")
        minimum = _seconds(self.settings.min_refresh_interval)
        if isinstance(refresh, str) and minimum is not None:
            seconds = _seconds(refresh)
            if seconds is not None and seconds < minimum:
                data["refresh"] = self.settings.min_refresh_interval

    def dashboard_by_id(self, dash_id: int) -> StoredDashboard | None:
        return next((d for d in self.dashboards.values() if d.id == dash_id), None)

    def folder_by_id(self, folder_id: int) -> StoredFolder | None:
        return next((f for f in self.folders.values() if f.id == folder_id), None)

    def require_dashboard(self, uid: str) -> StoredDashboard:
        dash = self.dashboards.get(uid)
        if dash is None:
            raise response_error(404, "Dashboard not found")
        return dash

    def dashboard_url(self, dash: StoredDashboard) -> str:
        return f"/d/{dash.uid}/{slugify(dash.title)}"

    def folder_url(self, folder: StoredFolder) -> str:
        return f"/dashboards/f/{folder.uid}/{slugify(folder.title)}"

    def success_body(self, dash: StoredDashboard) -> dict[str, Any]:
        return {
            "folderUid": dash.folder_uid,
            "id": dash.id,
            "slug": slugify(dash.title),
            "status": "success",
            "uid": dash.uid,
            "url": self.dashboard_url(dash),
            "version": dash.version,
        }

    # ------------------------------------------------------------------ POST /api/dashboards/db

    def save_via_api(self, body: Any, actor: str, permissions: set[str]) -> dict[str, Any]:
        """§3: validate, resolve, check versions and store; returns the §3.5 success body."""
        with self.lock:
            if not isinstance(body, dict) or not isinstance(body.get("dashboard"), dict):
                raise response_error(400, "bad request data")
            if body.get("isFolder"):
                raise plain_error(400, "Use folders endpoint for saving folders.")
            dash_in: dict[str, Any] = body["dashboard"]
            message = body.get("message") or ""
            if not isinstance(message, str):
                raise response_error(400, "bad request data")
            title, uid = self._validate_title_uid(dash_in, message)
            sent_version = self._sent_version(dash_in)
            overwrite = bool(body.get("overwrite"))
            folder_uid = self._resolve_folder(body)
            existing, uid = self._resolve_existing(dash_in, uid)

            moving = existing is not None and existing.folder_uid != folder_uid
            if (existing is None or moving) and "dashboards:create" not in permissions:
                raise plain_error(403, "Access denied to save dashboard")
            if existing is not None and "dashboards:write" not in permissions:
                raise plain_error(403, "Access denied to save dashboard")

            if existing is not None:
                self._check_update_allowed(existing, sent_version, overwrite)

            data = dict(dash_in)  # a fresh parse (HTTP) or a copy (seed_dashboard); only top-level keys change
            data["title"] = title
            self._raise_refresh(data)
            if existing is None:
                return self._create(data, uid or generate_uid(), folder_uid, message, actor)
            return self._update(existing, data, folder_uid, message, actor)

    def _validate_title_uid(self, dash_in: dict[str, Any], message: str) -> tuple[str, str]:
        title = dash_in.get("title")
        title = title.strip() if isinstance(title, str) else ""
        if not title:
            if self.unified:
                raise plain_error(400, "Dashboard spec is missing required title property")
            raise plain_error(400, "Dashboard title cannot be empty", "empty-name")
        if len(title) > 5000:
            raise plain_error(400, "Dashboard title cannot contain more than 5 000 characters", "title-too-long")
        if len(message) > 500:
            raise plain_error(400, "message too long, max 500 characters")
        uid = dash_in.get("uid") or ""
        if not isinstance(uid, str):
            raise response_error(400, "bad request data")
        uid = uid.strip()
        if not _UID_RE.match(uid):
            raise plain_error(400, "uid contains illegal characters")
        if len(uid) > 40:
            raise plain_error(400, "uid too long, max 40 characters")
        return title, uid

    def _sent_version(self, dash_in: dict[str, Any]) -> int | None:
        """The version the caller sent; ``None`` when absent. [12] non-numbers count as 0."""
        raw = dash_in.get("version")
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            if self.unified:
                raise plain_error(400, f"spec.version has unsupported type {_json_type(raw)}")
            return 0
        return int(raw)

    def _resolve_folder(self, body: dict[str, Any]) -> str:
        """Target folder uid ("" = root). Omitting both selectors means root, even on update (§3.1)."""
        folder_uid = body.get("folderUid") or ""
        if not isinstance(folder_uid, str):
            raise response_error(400, "bad request data")
        folder_id = body.get("folderId")
        if not folder_uid and not self.unified and isinstance(folder_id, int) and folder_id > 0:
            folder = self.folder_by_id(folder_id)
            if folder is None:
                raise plain_error(400, "folder not found")
            folder_uid = folder.uid
        if folder_uid and folder_uid not in self.folders:
            raise plain_error(400, "folder not found")
        return folder_uid

    def _resolve_existing(self, dash_in: dict[str, Any], uid: str) -> tuple[StoredDashboard | None, str]:
        raw_id = dash_in.get("id")
        dash_id = int(raw_id) if isinstance(raw_id, int | float) and not isinstance(raw_id, bool) else 0
        by_id = self.dashboard_by_id(dash_id) if dash_id > 0 else None
        if dash_id > 0 and by_id is None:
            if self.unified:
                if not uid:
                    raise plain_error(404, "Dashboard not found")
            else:
                raise plain_error(404, "Dashboard not found", "not-found")
        if by_id is not None and not uid:
            uid = by_id.uid
        by_uid = self.dashboards.get(uid) if uid else None
        if by_id is not None and by_uid is not None and by_id is not by_uid:
            raise plain_error(400, "A dashboard with the same uid already exists")
        return (by_uid or by_id), uid

    def _check_update_allowed(self, existing: StoredDashboard, sent: int | None, overwrite: bool) -> None:
        if existing.provisioned:
            raise plain_error(400, "Cannot save provisioned dashboard")
        if self.unified:
            if not overwrite and (sent is None or sent != existing.version):
                raise plain_error(409, "Dashboard already exists. Use overwrite flag to update.")
            return
        if (sent or 0) != existing.version and not overwrite:
            raise plain_error(412, "The dashboard has been changed by someone else", "version-mismatch")
        if existing.plugin_id and not overwrite:
            raise plain_error(412, f"The dashboard belongs to plugin {existing.plugin_id}.", "plugin-dashboard")

    def _create(self, data: dict[str, Any], uid: str, folder_uid: str, message: str, actor: str) -> dict[str, Any]:
        stamp = now_rfc3339()
        dash = StoredDashboard(
            id=self._new_id(),
            uid=uid,
            data=data,
            version=1,
            folder_uid=folder_uid,
            created=stamp,
            updated=stamp,
            created_by=actor,
            updated_by=actor,
        )
        self._stamp_identity(dash)
        self.bump_resource_version(dash)
        self.dashboards[uid] = dash
        self._append_history(dash, parent_version=0, message=message, actor=actor)
        return self.success_body(dash)

    def _update(
        self, dash: StoredDashboard, data: dict[str, Any], folder_uid: str, message: str, actor: str
    ) -> dict[str, Any]:
        # [13] unified storage bumps the generation only when the spec or the folder changed (§3.6).
        if self.unified and folder_uid == dash.folder_uid and strip_identity(data) == strip_identity(dash.data):
            return self.success_body(dash)
        parent = dash.version
        self.store_new_version(dash, data, folder_uid, actor)
        self._append_history(dash, parent_version=parent, message=message, actor=actor)
        return self.success_body(dash)

    def store_new_version(
        self,
        dash: StoredDashboard,
        data: dict[str, Any],
        folder_uid: str,
        actor: str,
        *,
        stored_version: str = "v0alpha1",
        v2_spec: dict[str, Any] | None = None,
    ) -> None:
        dash.data = data
        dash.stored_version = stored_version
        dash.v2_spec = v2_spec
        self.bump_resource_version(dash)
        dash.version += 1
        dash.folder_uid = folder_uid
        dash.updated = now_rfc3339()
        dash.updated_by = actor
        dash.saved_at = time.monotonic()
        self._stamp_identity(dash)

    def _stamp_identity(self, dash: StoredDashboard) -> None:
        dash.data["id"] = dash.id
        dash.data["uid"] = dash.uid
        dash.data["version"] = dash.version

    def _append_history(
        self, dash: StoredDashboard, *, parent_version: int, message: str, actor: str, restored_from: int = 0
    ) -> None:
        row_id = dash.version if self.unified else next(self._version_row_ids)
        dash.history.append(
            {
                "id": row_id,
                "dashboardId": dash.id,
                "uid": dash.uid,
                "parentVersion": dash.version - 1 if self.unified else parent_version,
                "restoredFrom": restored_from,
                "version": dash.version,
                "created": now_rfc3339(),
                "message": message,
                "data": dash.data,  # stored data is replaced on every save, never changed in place
                "createdBy": actor,
            }
        )
        del dash.history[: max(0, len(dash.history) - max(1, self.settings.versions_to_keep))]

    def record_ui_save(
        self,
        dash: StoredDashboard,
        data: dict[str, Any],
        actor: str,
        message: str,
        v2_spec: dict[str, Any] | None = None,
    ) -> None:
        """Store a new version as the frontend would: the person had the latest version loaded.

        With ``v2_spec`` the save is a v2 one (dynamic dashboards): ``data`` is then its v1 view."""
        with self.lock:
            parent = dash.version
            stored = ("v2" if self.unified else "v2beta1") if v2_spec is not None else "v1beta1"
            self.store_new_version(dash, data, dash.folder_uid, actor, stored_version=stored, v2_spec=v2_spec)
            self._append_history(dash, parent_version=parent, message=message, actor=actor)

    # ------------------------------------------------------------------ GET / DELETE dashboard

    def get_dashboard(self, uid: str, permissions: set[str]) -> dict[str, Any]:
        with self.lock:
            dash = self.require_dashboard(uid)
            if dash.v2_spec is not None and not self.unified:
                ns = "default" if self.org_id == 1 else f"org-{self.org_id}"
                raise response_error(
                    406,
                    "dashboard api version not supported, use /apis/dashboard.grafana.app/"
                    f"{dash.stored_version}/namespaces/{ns}/dashboards/{uid} instead",
                )
            folder = self.folders.get(dash.folder_uid)
            can_write = "dashboards:write" in permissions
            meta = {
                "type": "db",
                "canSave": can_write,
                "canEdit": can_write,
                "canAdmin": can_write,
                "canStar": True,
                "canDelete": "dashboards:delete" in permissions,
                "slug": slugify(dash.title),
                "url": self.dashboard_url(dash),
                "expires": "0001-01-01T00:00:00Z",
                "created": dash.created,
                "updated": dash.updated,
                "updatedBy": dash.updated_by,
                "createdBy": dash.created_by,
                "version": dash.version,
                "hasAcl": False,
                "isFolder": False,
                "apiVersion": dash.stored_version,
                "folderId": folder.id if folder else 0,
                "folderUid": dash.folder_uid,
                "folderTitle": folder.title if folder else "General",
                "folderUrl": self.folder_url(folder) if folder else "",
                "provisioned": dash.provisioned,
                "provisionedExternalId": dash.provisioned_from if dash.provisioned else "",
                "annotationsPermissions": {
                    "dashboard": {"canAdd": True, "canEdit": True, "canDelete": True},
                    "organization": {"canAdd": True, "canEdit": True, "canDelete": True},
                },
                "publicDashboardEnabled": False,
            }
            data = dict(dash.data)
            data.update(id=dash.id, uid=dash.uid, version=dash.version)
            return {"dashboard": data, "meta": meta}

    def delete_dashboard(self, uid: str) -> dict[str, Any]:
        with self.lock:
            dash = self.require_dashboard(uid)
            if dash.provisioned:
                raise plain_error(400, "provisioned dashboard cannot be deleted")
            del self.dashboards[uid]
            return {"message": f"Dashboard {dash.title} deleted", "title": dash.title, "uid": uid}

    # ------------------------------------------------------------------ versions (§4)

    def list_versions(self, uid: str, limit: int, start: int) -> dict[str, Any]:
        with self.lock:
            dash = self.dashboards.get(uid)
            if dash is None:
                raise plain_error(404, "Dashboard not found")
            rows = list(reversed(dash.history))
            if not self.unified:  # legacy: start is an SQL offset; k8s ignores it
                rows = rows[start:]
            rows = rows[: limit or 1000]
            versions = []
            for row in rows:
                item = dict(row)
                item["message"] = _list_message(row)
                if not self.unified:
                    item["data"] = None
                versions.append(item)
            return {"continueToken": "", "versions": versions}

    def get_version(self, uid: str, version_text: str) -> dict[str, Any]:
        with self.lock:
            dash = self.dashboards.get(uid)
            if dash is None:
                raise plain_error(404, "Dashboard not found")
            if not version_text.isdigit():
                raise errutil_error(500, "dashboard-version.invalid", "Internal Server Error")
            number = int(version_text)
            row = next((r for r in dash.history if r["version"] == number), None)
            if row is None:
                raise plain_error(500, f"Dashboard version {number} not found for dashboardId {dash.id}")
            return dict(row)

    def restore(self, uid: str, body: Any, actor: str) -> dict[str, Any]:
        with self.lock:
            dash = self.require_dashboard(uid)
            number = body.get("version") if isinstance(body, dict) else None
            if isinstance(number, bool) or not isinstance(number, int):
                raise response_error(400, "bad request data")
            row = next((r for r in dash.history if r["version"] == number), None)
            if row is None:
                raise plain_error(404, "Dashboard version not found")
            if strip_identity(row["data"]) == strip_identity(dash.data):
                raise plain_error(400, "Current dashboard is identical to the specified version")
            parent = dash.version
            self.store_new_version(dash, copy.deepcopy(row["data"]), dash.folder_uid, actor)
            self._append_history(
                dash,
                parent_version=parent,
                message=f"Restored from version {number}",
                actor=actor,
                restored_from=number,
            )
            return self.success_body(dash)

    # ------------------------------------------------------------------ folders (§5.2)

    def folder_body(self, folder: StoredFolder) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": folder.id,
            "uid": folder.uid,
            "orgId": self.org_id,
            "title": folder.title,
            "url": self.folder_url(folder),
            "hasAcl": False,
            "canSave": True,
            "canEdit": True,
            "canAdmin": True,
            "canDelete": True,
            "createdBy": folder.created_by,
            "created": folder.created,
            "updatedBy": folder.updated_by,
            "updated": folder.updated,
            "version": folder.version,
        }
        if folder.parent_uid:
            body["parentUid"] = folder.parent_uid
            body["parents"] = [self.folder_body(p) for p in self._ancestors(folder)]
        return body

    def _ancestors(self, folder: StoredFolder) -> list[StoredFolder]:
        chain: list[StoredFolder] = []
        parent = self.folders.get(folder.parent_uid)
        while parent is not None and len(chain) < 64:
            chain.insert(0, parent)
            parent = self.folders.get(parent.parent_uid)
        return chain

    def require_folder(self, uid: str) -> StoredFolder:
        folder = self.folders.get(uid)
        if folder is None:
            raise plain_error(404, "folder not found", "not-found")
        return folder

    def list_folders(self, parent_uid: str, limit: int, page: int) -> list[dict[str, Any]]:
        with self.lock:
            children = sorted(
                (f for f in self.folders.values() if f.parent_uid == parent_uid), key=lambda f: f.title.lower()
            )
            limit = limit or 1000
            page_rows = children[(max(page, 1) - 1) * limit :][:limit]
            out = []
            for f in page_rows:
                item: dict[str, Any] = {"id": f.id, "uid": f.uid, "title": f.title}
                if f.parent_uid:
                    item["parentUid"] = f.parent_uid
                out.append(item)
            return out

    def get_folder(self, uid: str) -> dict[str, Any]:
        with self.lock:
            return self.folder_body(self.require_folder(uid))

    def create_folder(self, body: Any, actor: str) -> dict[str, Any]:
        with self.lock:
            if not isinstance(body, dict):
                raise response_error(400, "bad request data")
            title = str(body.get("title") or "").strip()
            if not title:
                raise plain_error(400, "folder title cannot be empty")
            uid = str(body.get("uid") or "").strip()
            if not _UID_RE.match(uid) or len(uid) > 40:
                raise plain_error(400, "uid contains illegal characters")
            parent_uid = str(body.get("parentUid") or "")
            if parent_uid and parent_uid not in self.folders:
                raise plain_error(400, "folder not found")
            if uid and (uid in self.folders or uid in self.dashboards):
                if self.settings.folder_conflict_status == 409:
                    raise plain_error(409, "a folder/dashboard with the same uid already exists")
                raise plain_error(412, "the folder has been changed by someone else", "version-mismatch")
            if any(f.title == title and f.parent_uid == parent_uid for f in self.folders.values()):
                raise plain_error(409, "a folder with the same name already exists in the current location")
            return self.folder_body(
                self.add_folder(uid or generate_uid(), title, parent_uid, actor, str(body.get("description") or ""))
            )

    def add_folder(self, uid: str, title: str, parent_uid: str, actor: str, description: str = "") -> StoredFolder:
        with self.lock:
            stamp = now_rfc3339()
            folder = StoredFolder(
                id=self._new_id(),
                uid=uid,
                title=title,
                parent_uid=parent_uid,
                version=1,
                created=stamp,
                updated=stamp,
                created_by=actor,
                updated_by=actor,
                description=description,
            )
            self.folders[uid] = folder
            return folder

    def update_folder(self, uid: str, body: Any, actor: str) -> dict[str, Any]:
        with self.lock:
            folder = self.require_folder(uid)
            if not isinstance(body, dict):
                raise response_error(400, "bad request data")
            version = body.get("version")
            if not body.get("overwrite") and version != folder.version:
                raise plain_error(412, "the folder has been changed by someone else", "version-mismatch")
            title = str(body.get("title") or "").strip()
            if not title:
                raise plain_error(400, "folder title cannot be empty")
            folder.title = title
            folder.version += 1
            folder.updated = now_rfc3339()
            folder.updated_by = actor
            return self.folder_body(folder)

    def delete_folder(self, uid: str) -> dict[str, Any]:
        with self.lock:
            folder = self.require_folder(uid)
            doomed = {uid}
            changed = True
            while changed:  # nested folders go with their parent
                before = len(doomed)
                doomed |= {f.uid for f in self.folders.values() if f.parent_uid in doomed}
                changed = len(doomed) != before
            for f_uid in doomed:
                del self.folders[f_uid]
            for d_uid in [d.uid for d in self.dashboards.values() if d.folder_uid in doomed]:
                del self.dashboards[d_uid]
            return {"id": folder.id, "message": "Folder deleted", "title": folder.title}


def _list_message(row: dict[str, Any]) -> str:
    """The message rewriting of the versions list (§4.1)."""
    if row["parentVersion"] == 0:
        return "Initial save"
    if row["restoredFrom"] == row["version"]:
        return "Initial save (created by migration)"
    if row["restoredFrom"] > 0:
        return f"Restored from version {row['restoredFrom']}"
    return str(row["message"])


def _seconds(duration: str) -> float | None:
    match = _DURATION_RE.match(duration.strip())
    if not match:
        return None
    return int(match.group(1)) * _DURATION_SECONDS[match.group(2)]


def _json_type(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
