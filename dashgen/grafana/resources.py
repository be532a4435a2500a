"""Dashboards as resources of Grafana's ``/apis/dashboard.grafana.app`` API (grafana-api.md §9, §13).

``ResourceApi`` reads a dashboard in a given API version and tells what it is really stored as
(``status.conversion.storedVersion``), and writes one with ``metadata.resourceVersion`` as the
optimistic lock: a stale one is Grafana's 409 Conflict, which is the ``VersionConflict`` of the legacy
API. ``dry_run=True`` sends ``?dryRun=All``: Grafana answers what it would store and stores nothing.
Writes go through ``v0alpha1``, which stores the v1 JSON as sent (``v1beta1`` / ``v1`` would migrate
it to the latest schemaVersion, and the read-back would never match the build). A 404 that is not
Kubernetes' NotFound of the named dashboard means the API is not served (``ApiNotServed``).
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from urllib.parse import quote

from dashgen.document.v2view import is_v2_version
from dashgen.grafana.answers import answer_error, bad_shape, body_dict, grafana_message, http_fields, parse_json
from dashgen.grafana.errors import ApiNotServed, FolderNotFound, GrafanaError, WriteOutcomeUnknown
from dashgen.net.http import EncodedJSON, HttpResponse, HttpTransport, json_object

GROUP = "dashboard.grafana.app"
WRITE_VERSION = "v0alpha1"
IDENTITY_KEYS = ("id", "uid", "version")
_VERSION_RE = re.compile(r"^v[0-9]+((alpha|beta)[0-9]+)?$")


@dataclass(frozen=True)
class DashboardResource:
    """One dashboard object of the ``/apis`` API, as read in ``api_version``."""

    uid: str
    api_version: str
    stored_version: str
    resource_version: str
    generation: int
    internal_id: int
    folder_uid: str | None
    spec: dict[str, Any]
    annotations: dict[str, str] = field(default_factory=dict)
    conversion_failed: bool = False
    conversion_error: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    body: bytes = field(default=b"", repr=False)  # the answer as Grafana sent it

    @property
    def size(self) -> int:
        return len(self.body)

    @property
    def stored_v2(self) -> bool:
        return is_v2_version(self.stored_version)

    @property
    def converted(self) -> bool:
        return self.stored_version != self.api_version

    @property
    def provisioned(self) -> bool:
        """Managed by file provisioning or Git Sync without allowing edits."""
        managed = self.annotations.get("grafana.app/managedBy")
        return bool(managed) and str(self.annotations.get("grafana.app/managerAllowsEdits", "")).lower() != "true"

    def dashboard(self) -> dict[str, Any]:
        """The v1 dashboard JSON as the legacy API shows it: the spec with uid, id and version put back."""
        return {**self.spec, "uid": self.uid, "id": self.internal_id, "version": self.generation}

    def v2_resource(self) -> dict[str, Any]:
        """A v2-read dashboard as dashgen builds it (``dashboard.grafana.app/v2…``, name, spec), so its SHA is
        that of the stored spec and the plan diffs it with the build; ``{}`` when not read as v2."""
        if not is_v2_version(self.api_version):
            return {}
        return {
            "apiVersion": f"{GROUP}/{self.api_version}",
            "kind": "Dashboard",
            "metadata": {"name": self.uid},
            "spec": self.spec,
        }


def _object(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def resource_from(obj: dict[str, Any], requested_uid: str) -> DashboardResource:
    """A resource from a shape-checked object; raises KeyError, TypeError or ValueError when it is not one."""
    metadata = obj["metadata"]
    spec = obj["spec"]
    if not isinstance(metadata, dict) or not isinstance(spec, dict):
        raise TypeError("metadata and spec must be objects")
    api_version = str(obj.get("apiVersion", "")).rsplit("/", 1)[-1]
    conversion = _object(_object(obj.get("status")).get("conversion"))
    annotations = _object(metadata.get("annotations"))
    labels = _object(metadata.get("labels"))
    internal = str(labels.get("grafana.app/deprecatedInternalID") or "0")
    return DashboardResource(
        uid=str(metadata.get("name") or requested_uid),
        api_version=api_version,
        stored_version=str(conversion.get("storedVersion") or api_version),
        resource_version=str(metadata.get("resourceVersion") or ""),
        generation=int(metadata.get("generation") or 0),
        internal_id=int(internal) if internal.isdigit() else 0,
        folder_uid=str(annotations.get("grafana.app/folder") or "") or None,
        spec={k: v for k, v in spec.items() if k not in IDENTITY_KEYS},
        annotations={str(k): str(v) for k, v in annotations.items()},
        conversion_failed=bool(conversion.get("failed")),
        conversion_error=str(conversion.get("error") or ""),
        raw=obj,
    )


class _Sender(Protocol):
    """What ``ResourceApi`` needs of ``GrafanaClient`` (which creates it): its request method and transport."""

    _http: HttpTransport

    def _send(
        self, method: str, path: str, *, params: Any = None, json_body: Any = None, final: Any = None
    ) -> HttpResponse: ...


class ResourceApi:
    """The dashboards of one namespace of the ``/apis`` API, through a ``GrafanaClient``'s transport."""

    def __init__(self, client: _Sender, namespace: str) -> None:
        self._client = client
        self.namespace = namespace

    def _path(self, version: str, uid: str | None = None) -> str:
        base = f"/apis/{GROUP}/{quote(version, safe='')}/namespaces/{quote(self.namespace, safe='')}/dashboards"
        return f"{base}/{quote(uid, safe='')}" if uid is not None else base

    def query_strings_survive(self, version: str) -> bool:
        """Whether the path to Grafana keeps query strings, proven by a read: a list of dashboards with a label no
        dashboard has (``labelSelector``) must come back empty. A proxy forwarding the path alone (nginx
        ``proxy_pass ...$uri;``) would also drop ``?dryRun=All`` and turn a dry run into a save. Any doubt —
        items listed, an error, an odd answer — is False."""
        probe = f"dashgen.dev/probe={secrets.token_hex(8)}"
        try:
            resp = self._client._send("GET", self._path(version), params={"labelSelector": probe, "limit": "1"})
            items = resp.json().get("items") if resp.status == 200 else None
        except (GrafanaError, ValueError, AttributeError):
            return False
        return isinstance(items, list) and not items

    def get(self, uid: str, version: str) -> DashboardResource | None:
        """The dashboard read through ``version``, or None when Grafana says it does not exist."""
        return self._answered(self._client._send("GET", self._path(version, uid)), uid)

    def _answered(self, resp: HttpResponse, uid: str) -> DashboardResource | None:
        if resp.status == 404:
            body = body_dict(resp)
            if body.get("reason") == "NotFound" and (body.get("details") or {}).get("name") == uid:
                return None
            raise ApiNotServed(
                f"Grafana does not serve {resp.url} (404 {grafana_message(resp)})",
                **http_fields(resp, self._client._http),
            )
        if resp.status != 200:
            raise answer_error(resp, f"dashboard {uid!r}", self._client._http)
        return self._resource(resp, uid)

    def read_stored(self, uid: str, first_version: str) -> DashboardResource | None:
        """The dashboard as it is really stored: read through ``first_version``, and again through the stored
        version when Grafana says it converted (a conversion may migrate or lose what is stored).

        Where the first answer ends with its ``status`` (as Kubernetes objects do) and that says a v0/v1
        conversion, only the status is decoded: the converted spec would be thrown away anyway.
        """
        resp = self._client._send("GET", self._path(first_version, uid))
        stored = _trailing_stored_version(resp.body) if resp.status == 200 else None
        if stored and stored != first_version and not is_v2_version(stored) and _VERSION_RE.match(stored):
            again = self.get(uid, stored)
            if again is not None:
                return again
        resource = self._answered(resp, uid)
        if resource is None or not resource.converted or not resource.stored_version:
            return resource
        return self.get(uid, resource.stored_version) or resource

    def write(
        self,
        uid: str,
        spec: dict[str, Any],
        folder_uid: str | None,
        message: str,
        resource_version: str | None,
        *,
        create: bool,
        dry_run: bool = False,
        generation: int | None = None,
        encoded: bytes | None = None,
        version: str = WRITE_VERSION,
    ) -> DashboardResource:
        """``POST`` (create) or ``PUT`` (update, conditional on ``resource_version``) through ``version``:
        ``v0alpha1`` for dashgen's v1 JSON (stored as sent), ``v2`` / ``v2beta1`` for a v2 spec.

        ``encoded`` may hold the JSON of ``spec`` (its ``uid`` is then sent too; Grafana drops it from the spec).
        """
        body_spec = {k: v for k, v in spec.items() if k not in IDENTITY_KEYS}
        annotations = {"grafana.app/message": message}
        if folder_uid:
            annotations["grafana.app/folder"] = folder_uid
        metadata: dict[str, Any] = {"name": uid, "namespace": self.namespace, "annotations": annotations}
        if resource_version and not create:
            metadata["resourceVersion"] = resource_version
        obj: Any = {
            "apiVersion": f"{GROUP}/{version}",
            "kind": "Dashboard",
            "metadata": metadata,
            "spec": body_spec,
        }
        if encoded is not None:
            obj = EncodedJSON(
                json_object({k: v for k, v in obj.items() if k != "spec"}, b"{}")[:-1]
                + b',"spec":'
                + encoded.strip()
                + b"}"
            )
        method, path = ("POST", self._path(version)) if create else ("PUT", self._path(version, uid))
        params = {"dryRun": "All"} if dry_run else None
        try:
            resp = self._client._send(method, path, params=params, json_body=obj)
        except WriteOutcomeUnknown as exc:
            raise WriteOutcomeUnknown(
                self._client._http.redact(
                    f"Writing dashboard {uid!r} to {exc.url} may or may not have landed: "
                    f"{exc.reason}; read it back before writing again"
                ),
                method=method,
                url=exc.url,
                uid=uid,
                dashboard=copy.deepcopy(body_spec),
                folder_uid=folder_uid,
                reason=exc.reason,
                api_version=version,
            ) from None
        if resp.status in (200, 201):
            try:
                return resource_from(resp.json(), uid)
            except (KeyError, TypeError, ValueError, AttributeError):
                if dry_run:
                    raise bad_shape(resp, "a dashboard object") from None
                raise WriteOutcomeUnknown(
                    f"Grafana answered {method} {resp.url} with {resp.status} and an unreadable body",
                    method=method,
                    url=resp.url,
                    uid=uid,
                    dashboard=copy.deepcopy(body_spec),
                    folder_uid=folder_uid,
                    reason="unreadable answer",
                    api_version=version,
                ) from None
        if resp.status == 400 and "folder not found" in grafana_message(resp).lower():
            raise FolderNotFound(
                f"Grafana has no folder {folder_uid!r} to save dashboard {uid!r} into "
                f"(400 folder not found) at {resp.url}",
                **http_fields(resp, self._client._http),
            )
        raise answer_error(resp, f"dashboard {uid!r}", self._client._http, sent_version=generation)

    def resolve_write(self, exc: WriteOutcomeUnknown) -> DashboardResource | None:
        """After an uncertain write: the stored resource when it holds exactly what was sent, else None."""
        if not exc.uid or exc.dashboard is None:
            return None
        stored = self.get(exc.uid, exc.api_version or WRITE_VERSION)
        if stored is None or (stored.folder_uid or None) != (exc.folder_uid or None):
            return None
        return stored if _comparable(stored.spec) == _comparable(exc.dashboard) else None

    def _resource(self, resp: Any, uid: str) -> DashboardResource:
        body = parse_json(resp)
        if not isinstance(body, dict):
            raise bad_shape(resp, "a dashboard object")
        try:
            return replace(resource_from(body, uid), body=resp.body)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise bad_shape(resp, "a dashboard object with metadata and spec") from None


def _trailing_stored_version(body: bytes) -> str | None:
    """``status.conversion.storedVersion`` when the object's last key is a small ``status``; else None (then the
    caller decodes the whole answer). Never guesses: the decoded status must close the top-level object."""
    start = body.rfind(b'"status":')
    if start < 0 or len(body) - start > 4096:
        return None
    try:
        tail = body[start + 9 :].decode("utf-8")
        status, end = json.JSONDecoder().raw_decode(tail)
    except (ValueError, UnicodeDecodeError):
        return None
    if tail[end:].strip() != "}" or not isinstance(status, dict):
        return None
    conversion = status.get("conversion")
    stored = conversion.get("storedVersion") if isinstance(conversion, dict) else None
    return stored if isinstance(stored, str) else None


def _comparable(spec: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in spec.items() if k not in IDENTITY_KEYS}
    if isinstance(out.get("title"), str):
        out["title"] = out["title"].strip()
    return out
