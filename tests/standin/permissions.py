"""The stand-in's folder permissions: the RBAC resource-permissions API for folders as grafana-api.md §16.2
describes Grafana's ``pkg/services/accesscontrol/resourcepermissions/api.go``, and the name lookups a publisher
needs (teams, users, service accounts).

What it follows: ``GET /api/access-control/folders/:uid`` answers every entry — managed ones, those inherited from
the parent folder (``isInherited``) and the synthetic ``builtInRole: "Admin"`` entry of an instance without the
enterprise licence (``isManaged: false``); ``POST …/folders/:uid/{teams|users|builtInRoles}/:id`` with
``{"permission": "View|Edit|Admin"}`` sets one assignment (200 "Permission updated"), ``""`` removes it
("Permission removed"); a non-numeric id is 400; an unknown folder is 404 "folder not found"; without
``folders.permissions:write`` 403. Service accounts are users (``isServiceAccount``) in the user id space.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from .store import OrgStore, errutil_error, plain_error, response_error

LEVELS = ("View", "Edit", "Admin")


@dataclass
class Directory:
    """Who exists in the organisation: teams, users and service accounts by name, each with an id."""

    teams: dict[str, int] = field(default_factory=dict)
    users: dict[str, int] = field(default_factory=dict)
    service_accounts: dict[str, int] = field(default_factory=dict)
    _ids: Any = field(default_factory=lambda: itertools.count(100))


class PermissionStore:
    def __init__(self, org: OrgStore) -> None:
        self.org = org
        self.directory = Directory()
        self.entries: dict[str, dict[tuple[str, str], str]] = {}  # folder -> (kind, id or role) -> level

    # ------------------------------------------------------------------ the directory

    def add_team(self, name: str) -> int:
        return self.directory.teams.setdefault(name, next(self.directory._ids))

    def add_user(self, login: str) -> int:
        return self.directory.users.setdefault(login, next(self.directory._ids))

    def add_service_account(self, name: str) -> int:
        return self.directory.service_accounts.setdefault(name, next(self.directory._ids))

    def search_teams(self, name: str) -> dict[str, Any]:
        found = [{"id": i, "name": n, "orgId": self.org.org_id} for n, i in self.directory.teams.items() if n == name]
        return {"totalCount": len(found), "teams": found, "page": 1, "perPage": 1000}

    def search_service_accounts(self, query: str) -> dict[str, Any]:
        found = [
            {"id": i, "name": n, "login": f"sa-{self.org.org_id}-{n}", "orgId": self.org.org_id}
            for n, i in self.directory.service_accounts.items()
            if query.lower() in n.lower()
        ]
        return {"totalCount": len(found), "serviceAccounts": found, "page": 1, "perPage": 1000}

    def lookup_user(self, login: str) -> dict[str, Any]:
        if login not in self.directory.users:
            raise response_error(404, "user not found")
        return {"id": self.directory.users[login], "login": login, "email": f"{login}@example.org"}

    # ------------------------------------------------------------------ permissions

    def _folder(self, uid: str) -> Any:
        folder = self.org.folders.get(uid)
        if folder is None:
            raise response_error(404, "folder not found")
        return folder

    def _dto(self, kind: str, key: str, level: str, managed: bool, inherited: bool) -> dict[str, Any]:
        dto: dict[str, Any] = {
            "id": abs(hash((kind, key))) % 100000,
            "roleName": f"managed:{kind}:{key}:permissions",
            "isManaged": managed,
            "isInherited": inherited,
            "isServiceAccount": False,
            "actions": [f"folders:{a}" for a in ("read", "write", "admin")[: LEVELS.index(level) + 1]],
            "permission": level,
        }
        if kind == "teams":
            name = next((n for n, i in self.directory.teams.items() if str(i) == key), key)
            dto.update({"team": name, "teamId": int(key), "teamUid": f"t{key}"})
        elif kind == "users":
            sa = next((n for n, i in self.directory.service_accounts.items() if str(i) == key), None)
            user = next((n for n, i in self.directory.users.items() if str(i) == key), key)
            dto.update(
                {
                    "userId": int(key),
                    "userUid": f"u{key}",
                    "userLogin": f"sa-{self.org.org_id}-{sa}" if sa else user,
                    "isServiceAccount": sa is not None,
                }
            )
        else:
            dto["builtInRole"] = key
        return dto

    def get(self, uid: str) -> list[dict[str, Any]]:
        with self.org.lock:
            folder = self._folder(uid)
            rows = [self._dto("builtInRoles", "Admin", "Admin", False, False)]
            if folder.parent_uid:
                for (kind, key), level in sorted(self.entries.get(folder.parent_uid, {}).items()):
                    rows.append(self._dto(kind, key, level, True, True))
            for (kind, key), level in sorted(self.entries.get(uid, {}).items()):
                rows.append(self._dto(kind, key, level, True, False))
            return rows

    def set(self, uid: str, kind: str, key: str, body: Any) -> dict[str, Any]:
        if kind in ("teams", "users") and not key.isdigit():
            raise errutil_error(400, "accesscontrol.invalidParam", f"invalid {kind[:-1]} id {key!r}")
        if kind == "builtInRoles" and key not in ("Viewer", "Editor"):
            raise plain_error(400, f"invalid built-in role {key!r}")
        if not isinstance(body, dict) or body.get("permission") not in ("", *LEVELS):
            raise plain_error(400, "bad request data")
        with self.org.lock:
            self._folder(uid)
            entries = self.entries.setdefault(uid, {})
            if body["permission"]:
                entries[(kind, key)] = body["permission"]
                return {"message": "Permission updated"}
            entries.pop((kind, key), None)
            return {"message": "Permission removed"}


def permissions_of(org: OrgStore) -> PermissionStore:
    with org.lock:
        store = getattr(org, "permissions", None)
        if store is None:
            store = PermissionStore(org)
            org.permissions = store  # type: ignore[attr-defined]
        return store
