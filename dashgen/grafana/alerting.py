"""Grafana-managed alert rule groups through the alerting provisioning API (grafana-api.md §15), Grafana 12 and 13.

``PUT /api/v1/provisioning/folder/:folderUid/rule-groups/:group`` replaces the whole group (rules it does not list
are deleted) and is the only write dashgen makes; ``GET`` of the same path reads it back.

Provenance, chosen deliberately: every write carries ``X-Disable-Provenance``, so the rules are stored with
provenance *none* and stay editable in Grafana's UI, as dashgen's dashboards do. A person's edit is not prevented
but caught: the release compares the stored group with the SHA its ledger recorded and refuses to overwrite it
without ``--overwrite-live``. (Without the header Grafana would store provenance ``api``, lock the rules in the UI,
and refuse every later write with the header: a group once written without it could only be written without it.)
A group whose rules carry another provenance (``api``, ``file``, ``converted_prometheus``) was written by another
tool; Grafana refuses to change its provenance (403 ``alerting.notifications.invalidProvenance``), so the plan
refuses it first. The API has no version or precondition for rules: a write is not conditional, and the release's
guard is the ledger's SHA.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from dashgen.grafana.answers import answer_error, bad_shape, parse_json
from dashgen.grafana.client import GrafanaClient

BASE = "/api/v1/provisioning"
DISABLE_PROVENANCE = {"X-Disable-Provenance": "true"}


def _path(folder_uid: str, title: str) -> str:
    return f"{BASE}/folder/{quote(folder_uid, safe='')}/rule-groups/{quote(title, safe='')}"


def provenance_of(group: dict[str, Any]) -> str:
    """The provenance Grafana stores for the group's rules ("" for none; the first other one found)."""
    found = {str(r.get("provenance") or "") for r in group.get("rules") or [] if isinstance(r, dict)}
    return next((p for p in sorted(found) if p), "")


class RuleGroups:
    """The Grafana-managed rule groups of the client's organisation."""

    def __init__(self, client: GrafanaClient) -> None:
        self._client = client

    def _send(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        return self._client._send(method, path, json_body=body, headers=headers)  # noqa: SLF001 - same package

    def get(self, folder_uid: str, title: str) -> dict[str, Any] | None:
        resp = self._send("GET", _path(folder_uid, title))
        if resp.status == 404:
            return None
        if resp.status != 200:
            raise answer_error(resp, f"rule group {title!r} of folder {folder_uid!r}", self._client._http)  # noqa: SLF001
        body = parse_json(resp)
        if not isinstance(body, dict) or not isinstance(body.get("rules"), list):
            raise bad_shape(resp, "a rule group")
        return body

    def put(self, group: dict[str, Any]) -> None:
        """Replace the group (its ``folderUid`` and ``title``), with provenance none."""
        resp = self._send("PUT", _path(group["folderUid"], group["title"]), group, DISABLE_PROVENANCE)
        if resp.status != 200:
            raise answer_error(resp, f"rule group {group['title']!r}", self._client._http)  # noqa: SLF001

    def delete(self, folder_uid: str, title: str) -> None:
        resp = self._send("DELETE", _path(folder_uid, title), None, DISABLE_PROVENANCE)
        if resp.status not in (200, 204, 404):
            raise answer_error(resp, f"rule group {title!r}", self._client._http)  # noqa: SLF001
