"""Library panels as Grafana's ``librarypanels`` resource of ``/apis/dashboard.grafana.app/v0alpha1`` (the form
12.2+/13 serve; docs/grafana-resources-api.md says what is relied on, from Grafana's ``libraryElementsK8sHandler``).

An object is ``{apiVersion, kind: LibraryPanel, metadata: {name: <uid>, annotations: {grafana.app/folder},
generation, resourceVersion}, spec}``; the spec holds the element's name as ``title`` and the panel's own title
as ``panelTitle`` beside the model keys the resource keeps (``K8S_SPEC_KEYS``). ``metadata.generation`` is the
legacy ``version``. A ``PUT`` carries the ``metadata.resourceVersion`` read: a save since is Kubernetes' 409
Conflict (``VersionConflict``), so nothing is overwritten. A 404 that is not NotFound of the named object means
the resource is not served (``ApiNotServed``): the caller falls back to ``/api/library-elements``. Connections
and delete stay on the legacy routes, which Grafana serves either way.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import quote

from dashgen.grafana.answers import answer_error, bad_shape, body_dict, grafana_message, http_fields, parse_json
from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import ApiNotServed
from dashgen.grafana.library import K8S_SPEC_KEYS, LibraryElements, LiveElement
from dashgen.render.library import LibraryElement

GROUP = "dashboard.grafana.app"
VERSION = "v0alpha1"
RESOURCE = "librarypanels"
FOLDER = "grafana.app/folder"


def model_to_spec(name: str, model: dict[str, Any]) -> dict[str, Any]:
    """The resource's spec of an element: its name as ``title``, the panel's title as ``panelTitle``."""
    spec = {k: copy.deepcopy(v) for k, v in model.items() if k in K8S_SPEC_KEYS and k != "title"}
    spec["title"] = name
    if isinstance(model.get("title"), str):
        spec["panelTitle"] = model["title"]
    return spec


def spec_to_model(spec: dict[str, Any]) -> dict[str, Any]:
    """The legacy model of a spec (as Grafana's ``LibraryPanelToLegacyModel`` rebuilds it)."""
    model = {k: copy.deepcopy(v) for k, v in spec.items() if k in K8S_SPEC_KEYS and k != "title"}
    model["title"] = str(spec.get("panelTitle") or "")
    return model


def live_from(obj: Any, what: str, resp: Any) -> LiveElement:
    """A ``LiveElement`` of a ``LibraryPanel`` object; its ``raw`` is shaped as the legacy answer's ``result`` (uid,
    name, folderUid, model, version, meta) so backups and rollbacks read either form alike."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    spec = obj.get("spec") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict) or not isinstance(spec, dict) or not metadata.get("name"):
        raise bad_shape(resp, f"a LibraryPanel object for {what}")
    found = metadata.get("annotations")
    annotations: dict[str, Any] = found if isinstance(found, dict) else {}
    generation = metadata.get("generation")
    version = generation if isinstance(generation, int) else 0
    folder = str(annotations.get(FOLDER) or "")
    model = spec_to_model(spec)
    raw = {
        "uid": str(metadata["name"]),
        "name": str(spec.get("title") or ""),
        "folderUid": folder,
        "model": model,
        "version": version,
        "meta": {"folderUid": folder, "updatedBy": {"name": str(annotations.get("grafana.app/updatedBy") or "")}},
        "resource": obj,
    }
    return LiveElement(
        raw["uid"],
        raw["name"],
        folder,
        model,
        version,
        raw,
        resource_version=str(metadata.get("resourceVersion") or ""),
    )


class LibraryPanelResources:
    """The library panels of one namespace through ``/apis`` (reads and writes), the legacy routes for the rest."""

    def __init__(self, client: GrafanaClient, namespace: str) -> None:
        self._client = client
        self.namespace = namespace
        self._legacy = LibraryElements(client)

    def _path(self, uid: str | None = None) -> str:
        base = f"/apis/{GROUP}/{VERSION}/namespaces/{quote(self.namespace, safe='')}/{RESOURCE}"
        return f"{base}/{quote(uid, safe='')}" if uid is not None else base

    def _answer(self, resp: Any, uid: str, *, sent: str | None = None) -> LiveElement | None:
        http = self._client._http  # noqa: SLF001 - same package
        if resp.status == 404:
            body = body_dict(resp)
            if body.get("reason") == "NotFound" and (body.get("details") or {}).get("name") == uid:
                return None
            raise ApiNotServed(
                f"Grafana does not serve {resp.url} (404 {grafana_message(resp)})", **http_fields(resp, http)
            )
        if resp.status not in (200, 201):
            raise answer_error(resp, f"library panel {uid!r}", http, sent_version=sent)
        return live_from(parse_json(resp), f"library panel {uid!r}", resp)

    def get(self, uid: str) -> LiveElement | None:
        return self._answer(self._client._send("GET", self._path(uid)), uid)  # noqa: SLF001

    def _object(self, element: LibraryElement, folder_uid: str | None, resource_version: str = "") -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": element.uid, "namespace": self.namespace}
        if folder_uid:
            metadata["annotations"] = {FOLDER: folder_uid}
        if resource_version:
            metadata["resourceVersion"] = resource_version
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LibraryPanel",
            "metadata": metadata,
            "spec": model_to_spec(element.name, element.model),
        }

    def _written(self, resp: Any, uid: str, sent: str | None = None) -> LiveElement:
        live = self._answer(resp, uid, sent=sent)
        if live is None:
            raise bad_shape(resp, f"the library panel {uid!r} just written")
        return live

    def create(self, element: LibraryElement, folder_uid: str | None) -> LiveElement:
        resp = self._client._send("POST", self._path(), json_body=self._object(element, folder_uid))  # noqa: SLF001
        return self._written(resp, element.uid)

    def update(self, element: LibraryElement, folder_uid: str | None, live: LiveElement) -> LiveElement:
        """``PUT`` with the ``resourceVersion`` of ``live``: ``VersionConflict`` when someone saved it since."""
        body = self._object(element, folder_uid, live.resource_version)
        resp = self._client._send("PUT", self._path(element.uid), json_body=body)  # noqa: SLF001
        return self._written(resp, element.uid, live.resource_version)

    def connections(self, uid: str) -> list[str]:
        return self._legacy.connections(uid)

    def delete(self, uid: str) -> None:
        self._legacy.delete(uid)
