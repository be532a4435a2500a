"""Folder permissions through Grafana's RBAC resource-permissions API (grafana-api.md §16.2), Grafana 12 and 13.

``GET /api/access-control/folders/:uid`` lists every entry; only managed, not inherited ones are the folder's own
(the synthetic Admin entry and a parent folder's entries are not). ``POST /api/access-control/folders/:uid/
{teams|users|builtInRoles}/:id`` sets one assignment (``""`` removes it) — dashgen never uses the legacy
``/api/folders/:uid/permissions`` POST, which replaces *all* managed entries at once. Teams, users and service
accounts are addressed by numeric id: names are resolved first (``/api/teams/search``, ``/api/users/lookup``,
``/api/serviceaccounts/search``). Principals are named as in ``dashgen.toml``: ``team:<name>``,
``serviceaccount:<name>``, ``user:<login>``, ``role:<Viewer|Editor>``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from dashgen.grafana.answers import answer_error, parse_json
from dashgen.grafana.client import GrafanaClient

ACL = "/api/access-control/folders"
KIND_PATH = {"team": "teams", "user": "users", "serviceaccount": "users", "role": "builtInRoles"}


class FolderPermissions:
    def __init__(self, client: GrafanaClient) -> None:
        self._client = client
        self._ids: dict[str, str | None] = {}  # principal -> id (or role), None when Grafana has none

    def _get(self, path: str, what: str) -> Any:
        resp = self._client._send("GET", path)  # noqa: SLF001 - same package
        if resp.status == 404:
            return None
        if resp.status != 200:
            raise answer_error(resp, what, self._client._http)  # noqa: SLF001
        return parse_json(resp)

    def resolve(self, principal: str) -> str | None:
        """The id Grafana addresses ``principal`` by (the role name for a role); None when it has none."""
        if principal in self._ids:
            return self._ids[principal]
        kind, _, name = principal.partition(":")
        found: str | None = None
        if kind == "role":
            found = name
        elif kind == "team":
            body = self._get(f"/api/teams/search?name={quote(name)}", f"team {name!r}") or {}
            found = next((str(t["id"]) for t in body.get("teams") or [] if t.get("name") == name), None)
        elif kind == "serviceaccount":
            body = self._get(f"/api/serviceaccounts/search?query={quote(name)}", f"service account {name!r}") or {}
            found = next((str(a["id"]) for a in body.get("serviceAccounts") or [] if a.get("name") == name), None)
        elif kind == "user":
            body = self._get(f"/api/users/lookup?loginOrEmail={quote(name)}", f"user {name!r}")
            found = str(body["id"]) if isinstance(body, dict) and "id" in body else None
        self._ids[principal] = found
        return found

    def get(self, folder_uid: str) -> dict[str, str] | None:
        """principal -> level of the folder's own managed entries; None when the folder does not exist."""
        rows = self._get(f"{ACL}/{quote(folder_uid, safe='')}", f"permissions of folder {folder_uid!r}")
        if rows is None:
            return None
        teams = {ident: p for p, ident in self._ids.items() if ident is not None and p.startswith("team:")}
        users = {
            ident: p
            for p, ident in self._ids.items()
            if ident is not None and p.startswith(("user:", "serviceaccount:"))
        }
        found: dict[str, str] = {}
        for row in rows if isinstance(rows, list) else []:
            if not row.get("isManaged") or row.get("isInherited"):
                continue
            if row.get("builtInRole"):
                principal = f"role:{row['builtInRole']}"
            elif row.get("teamId"):
                principal = teams.get(str(row["teamId"])) or f"team:{row.get('team')}"
            else:
                fallback = f"{'serviceaccount' if row.get('isServiceAccount') else 'user'}:{row.get('userLogin')}"
                principal = users.get(str(row.get("userId"))) or fallback
            found[principal] = str(row.get("permission"))
        return found

    def set(self, folder_uid: str, principal: str, level: str) -> None:
        """Give ``principal`` ``level`` on the folder (``""`` removes its entry)."""
        ident = self.resolve(principal)
        if ident is None:
            raise ValueError(f"{principal}: unknown to Grafana")
        kind = KIND_PATH[principal.partition(":")[0]]
        path = f"{ACL}/{quote(folder_uid, safe='')}/{kind}/{quote(ident, safe='')}"
        resp = self._client._send("POST", path, json_body={"permission": level})  # noqa: SLF001
        if resp.status != 200:
            raise answer_error(resp, f"permission of {principal} on folder {folder_uid!r}", self._client._http)  # noqa: SLF001
