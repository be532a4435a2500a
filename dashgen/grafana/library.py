"""Grafana's library panels through ``/api/library-elements`` (grafana-api.md §14), on Grafana 12 and 13 alike.

The legacy route is served by both (13 forwards it to its ``librarypanels`` resource when a feature flag is on);
its answers are wrapped in ``{"result": ...}``. The element's integer ``version`` is the optimistic-concurrency
token: a PATCH carries the version read, and Grafana answers 412 when someone saved it since
(``VersionConflict``). Deleting an element a dashboard still uses is refused with 403 "the library element has
connections" (``ElementConnected``). There is no history endpoint: rollback uses dashgen's own copies.

With the flag ``libraryelementsKubernetesLibraryPanels`` on (12.2+/13), Grafana's legacy handlers store the element
as a ``dashboard.grafana.app/v0alpha1`` ``LibraryPanel`` (``libraryElementsK8sHandler``): its spec keeps only the
model keys of ``K8S_SPEC_KEYS`` (``transparent`` only when true) and the model read back is rebuilt from it, and its
PATCH does not compare the version. ``model_difference`` names what such a Grafana lost, so a read-back that does
not prove the build says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashgen.grafana.answers import answer_error, bad_shape, grafana_message, http_fields, parse_json
from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import Forbidden
from dashgen.render.library import LibraryElement, canonical_view, element_sha, element_sha_before_empties

PATH = "/api/library-elements"
PANEL_KIND = 1
# The model keys Grafana's librarypanels resource keeps (LibraryPanelSpec, legacyModelToLibraryPanelSpec)
K8S_SPEC_KEYS = frozenset(
    {"title", "description", "type", "options", "fieldConfig", "pluginVersion", "datasource", "gridPos"}
    | {"transparent", "links", "targets"}
)


def model_difference(built: dict[str, Any], stored: dict[str, Any]) -> str:
    """What Grafana stores differently from the build's model: keys dropped, added and changed (as the SHA compares
    them: ``dashgen.render.library.canonical_view``), and, when keys were dropped or added, the likely cause."""
    want, have = canonical_view(built), canonical_view(stored)
    dropped = sorted(set(want) - set(have))
    added = sorted(set(have) - set(want))
    changed = sorted(k for k in set(want) & set(have) if want[k] != have[k])
    parts = [
        f"{what} {', '.join(keys)}"
        for what, keys in (("dropped", dropped), ("added", added), ("changed", changed))
        if keys
    ]
    text = "; ".join(parts) or "the name differs"
    if dropped or added:
        lost = [k for k in dropped if k not in K8S_SPEC_KEYS]
        text += (
            " (a Grafana whose libraryelementsKubernetesLibraryPanels flag is on keeps library panels in its "
            "librarypanels resource, which holds only "
            + ", ".join(sorted(K8S_SPEC_KEYS))
            + (f" and loses {', '.join(lost)}" if lost else "")
            + ", drops transparent when false and returns empty fields as empty)"
        )
    return text


class ElementConnected(Forbidden):
    """403 on delete: a dashboard still holds a reference to the element."""


@dataclass(frozen=True)
class LiveElement:
    """A library element as Grafana stores it."""

    uid: str
    name: str
    folder_uid: str
    model: dict[str, Any]
    version: int
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    resource_version: str = ""  # metadata.resourceVersion where read through /apis (dashgen.grafana.library_resources)

    @property
    def sha(self) -> str:
        return element_sha(self.name, self.model)

    @property
    def shas(self) -> tuple[str, str]:
        """Its SHA, and the one a ledger line written before empty values counted as absent holds for it."""
        return self.sha, element_sha_before_empties(self.name, self.model)

    @property
    def updated_by(self) -> str:
        meta = self.raw.get("meta") or {}
        return str((meta.get("updatedBy") or {}).get("name") or "")


def _live(body: Any, what: str, resp: Any) -> LiveElement:
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("model"), dict):
        raise bad_shape(resp, f"{{'result': <library element>}} for {what}")
    version = result.get("version")
    return LiveElement(
        str(result.get("uid", "")),
        str(result.get("name", "")),
        str(result.get("folderUid") or (result.get("meta") or {}).get("folderUid") or ""),
        result["model"],
        version if isinstance(version, int) else 0,
        result,
    )


class LibraryElements:
    """The library panels of the client's organisation."""

    def __init__(self, client: GrafanaClient) -> None:
        self._client = client

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        return self._client._send(method, PATH + path, json_body=body)  # noqa: SLF001 - same package

    def get(self, uid: str) -> LiveElement | None:
        resp = self._request("GET", f"/{uid}")
        if resp.status == 404:
            return None
        if resp.status != 200:
            raise answer_error(resp, f"library panel {uid!r}", self._client._http)  # noqa: SLF001
        return _live(parse_json(resp), f"library panel {uid!r}", resp)

    def connections(self, uid: str) -> list[str]:
        """The uids of the dashboards that hold a reference to the element."""
        resp = self._request("GET", f"/{uid}/connections/")
        if resp.status == 404:
            return []
        if resp.status != 200:
            raise answer_error(resp, f"connections of library panel {uid!r}", self._client._http)  # noqa: SLF001
        body = parse_json(resp)
        rows = body.get("result") if isinstance(body, dict) else None
        if not isinstance(rows, list):
            raise bad_shape(resp, "{'result': [connections]}")
        return sorted({str(r.get("connectionUid")) for r in rows if isinstance(r, dict) and r.get("connectionUid")})

    def create(self, element: LibraryElement, folder_uid: str | None) -> LiveElement:
        body = {"uid": element.uid, "name": element.name, "kind": PANEL_KIND, "model": element.model}
        body["folderUid"] = folder_uid or ""
        resp = self._request("POST", "", body)
        if resp.status != 200:
            raise answer_error(resp, f"library panel {element.uid!r}", self._client._http)  # noqa: SLF001
        return _live(parse_json(resp), f"library panel {element.uid!r}", resp)

    def update(self, element: LibraryElement, folder_uid: str | None, live: LiveElement) -> LiveElement:
        """PATCH with the version of ``live``: ``VersionConflict`` when someone saved it since."""
        version = live.version
        body = {
            "uid": element.uid,
            "name": element.name,
            "kind": PANEL_KIND,
            "model": element.model,
            "folderUid": folder_uid or "",
            "version": version,
        }
        resp = self._request("PATCH", f"/{element.uid}", body)
        if resp.status != 200:
            raise answer_error(resp, f"library panel {element.uid!r}", self._client._http, sent_version=version)  # noqa: SLF001
        return _live(parse_json(resp), f"library panel {element.uid!r}", resp)

    def delete(self, uid: str) -> None:
        resp = self._request("DELETE", f"/{uid}")
        if resp.status == 200:
            return
        http = self._client._http  # noqa: SLF001
        if resp.status == 403 and "has connections" in grafana_message(resp):
            raise ElementConnected(
                http.redact(f"Grafana refused to delete library panel {uid!r}: a dashboard still uses it (403)"),
                **http_fields(resp, http),
            )
        raise answer_error(resp, f"library panel {uid!r}", http)
