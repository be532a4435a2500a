"""The Grafana client of the publish pipeline: dashboards, their versions, and folders.

It owns the use of Grafana's HTTP API (contract: grafana-api.md); ``dashgen.grafana.answers``
turns every answer it does not expect into an error of ``dashgen.grafana.errors``, so callers
never see a status code. It works against Grafana 12 and 13 alike: 412 ``version-mismatch`` and
409 are both ``VersionConflict``, both shapes of the versions list are read, and the folder is
always sent as ``folderUid`` (omitting it would move an updated dashboard to the root). HTTP
itself (session, TLS, credentials, timeouts, GET-only retries) is ``dashgen.net.http``.

Uncertain writes. A save that was sent but got no usable answer (read timeout, connection
dropped, truncated or unreadable 2xx body, 202 "pending") raises ``WriteOutcomeUnknown`` and is
never retried. The caller then calls ``resolve_save(exc)``: it reads the dashboard back and
returns a ``SaveResult`` when Grafana now stores exactly the content and folder that were sent
(whoever wrote it), or ``None`` when it does not (nothing landed, or someone else's content is
there; a new save with the read-back version will then meet the usual conflict rules). The
read-back is left to the caller, not done inside ``save_dashboard``, so the pipeline records
that the outcome was uncertain and a still-unreachable Grafana is reported as such.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from dashgen.errors import InputError
from dashgen.grafana.answers import answer_error, bad_shape, grafana_message, http_fields, no_answer_error, parse_json
from dashgen.grafana.errors import (
    FolderNotFound,
    GrafanaError,
    NotFound,
    RequestRejected,
    StoredAsV2,
    WriteOutcomeUnknown,
)
from dashgen.grafana.models import (
    DashboardVersion,
    Folder,
    LiveDashboard,
    SaveResult,
    folder_from,
    live_dashboard_from,
    save_result_from,
    version_from,
)
from dashgen.grafana.resources import ResourceApi
from dashgen.grafana.server import ServerInfo, namespace
from dashgen.net.http import EncodedJSON, HttpResponse, HttpTransport, NoAnswer, RetryPolicy, json_object
from dashgen.net.urls import url_problem

log = logging.getLogger("dashgen.grafana")

_NOT_FOUND_RE = re.compile(r"not found", re.IGNORECASE)


class GrafanaClient:
    """Talks to one Grafana organisation as one identity. Use as a context manager or call ``close()``.

    Timeouts are per connect and per socket read, in seconds. ``retry`` applies to GETs only.
    ``insecure=True`` switches TLS verification off and warns loudly (``InsecureTLSWarning``).
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        org_id: int | None = None,
        connect_timeout: float = 3.05,
        read_timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        ca_bundle: str | None = None,
        insecure: bool = False,
        trust_env: bool = True,
        pool_size: int = 10,
    ) -> None:
        base_url = _check_base_url(url)
        self.org_id = org_id
        headers = {"Accept": "application/json"}
        if org_id is not None:
            headers["X-Grafana-Org-Id"] = str(int(org_id))
        self._http = HttpTransport(
            "Grafana",
            base_url,
            token=token,
            basic_auth=basic_auth,
            headers=headers,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retry=retry,
            ca_bundle=ca_bundle,
            insecure=insecure,
            trust_env=trust_env,
            follow_redirects=False,
            logger=log,
            pool_size=pool_size,
        )

    @property
    def url(self) -> str:
        return self._http.base_url

    def __repr__(self) -> str:
        return f"GrafanaClient({self.url!r}, auth={self._http.auth_kind})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GrafanaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def retry_until(self, deadline: float | None) -> None:
        """No retry of this client waits past ``deadline`` (``time.monotonic()``; None: no bound)."""
        self._http.deadline = deadline

    def refuse_writes(self) -> None:
        """From now on every request but GET / HEAD is refused before it is sent (a dry run)."""
        self._http.read_only = True

    def allow_server_dry_runs(self) -> None:
        """Let ``?dryRun=All`` writes through a read-only client: only once the path is proven to keep queries."""
        self._http.server_dry_run_proven = True

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        final: Callable[[HttpResponse], bool] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> HttpResponse:
        """One request to ``path`` under the base URL; no answer at all becomes a Grafana error."""
        try:
            return self._http.request(
                method, self.url + path, params=params, json_body=json_body, final=final, headers=headers
            )
        except NoAnswer as exc:
            raise no_answer_error(exc, self._http) from None

    # ------------------------------------------------------------------ server

    def server_info(self) -> ServerInfo:
        """``GET /api/health``: the version (empty when hidden) and the database state."""
        resp = self._send("GET", "/api/health", final=lambda r: r.status == 503)
        if resp.status not in (200, 503):
            raise answer_error(resp, "health endpoint", self._http)
        body = parse_json(resp)
        if not isinstance(body, dict):
            raise bad_shape(resp, "a health object")
        return ServerInfo(str(body.get("version") or ""), str(body.get("database") or ""))

    def current_org_id(self) -> int | None:
        """``GET /api/org``: the organisation the credentials act in, or None when Grafana does not say."""
        resp = self._send("GET", "/api/org")
        if resp.status != 200:
            return None
        try:
            body = resp.json()
            return int(body["id"])
        except (ValueError, KeyError, TypeError):
            return None

    def resources(self, org_id: int) -> ResourceApi:
        """The ``/apis`` dashboards of organisation ``org_id``."""
        return ResourceApi(self, namespace(org_id))

    # ------------------------------------------------------------------ dashboards

    def get_dashboard(self, uid: str) -> LiveDashboard | None:
        """The stored dashboard, or None when Grafana says it does not exist.

        ``StoredAsV2`` when Grafana 12 answers 406: the dashboard is stored in the v2 schema.
        """
        resp = self._send("GET", f"/api/dashboards/uid/{_q(uid)}")
        if resp.status == 404 and grafana_message(resp).lower() == "dashboard not found":
            return None
        if resp.status == 406:
            raise StoredAsV2(
                self._http.redact(
                    f"Grafana stores dashboard {uid!r} in the v2 schema and will not show "
                    f"it through the legacy API (406 {grafana_message(resp)})"
                ),
                **http_fields(resp, self._http),
            )
        if resp.status != 200:
            raise answer_error(resp, f"dashboard {uid!r}", self._http)
        body = parse_json(resp)
        dash = body.get("dashboard") if isinstance(body, dict) else None
        meta = body.get("meta") if isinstance(body, dict) else None
        if not isinstance(dash, dict) or not isinstance(meta, dict):
            raise bad_shape(resp, "an object with 'dashboard' and 'meta'")
        return live_dashboard_from(uid, dash, meta)

    def save_dashboard(
        self,
        dashboard: dict[str, Any],
        folder_uid: str | None,
        message: str,
        overwrite: bool = False,
        *,
        encoded: bytes | None = None,
    ) -> SaveResult:
        """``POST /api/dashboards/db``, sent exactly once.

        To update without ``overwrite``, ``dashboard["version"]`` must be the version read from Grafana;
        otherwise ``VersionConflict``. ``folder_uid=None`` means the root folder (always sent explicitly).
        ``encoded`` may hold the JSON of ``dashboard`` without ``id`` and ``version`` (as the build's SHA
        encodes it), which is then sent without encoding the dashboard again.
        """
        uid = dashboard.get("uid") if isinstance(dashboard.get("uid"), str) else None
        label = f"dashboard {uid!r}" if uid else "a dashboard without uid"
        rest = {"folderUid": folder_uid or "", "message": message, "overwrite": overwrite}
        body: Any = {"dashboard": dashboard, **rest}
        if encoded is not None:
            identity: dict[str, Any] = {k: dashboard[k] for k in ("id", "version") if k in dashboard}
            body = EncodedJSON(
                b'{"dashboard":' + json_object(identity, encoded) + b"," + json_object({}, b"{}", rest)[1:]
            )

        def unknown(reason: str, url: str) -> WriteOutcomeUnknown:
            return WriteOutcomeUnknown(
                self._http.redact(
                    f"Saving {label} to {url} may or may not have landed: {reason}; "
                    "read it back with resolve_save() before saving again"
                ),
                method="POST",
                url=url,
                uid=uid,
                dashboard=copy.deepcopy(dashboard),
                folder_uid=folder_uid,
                reason=reason,
            )

        try:
            resp = self._send("POST", "/api/dashboards/db", json_body=body)
        except WriteOutcomeUnknown as exc:
            raise unknown(exc.reason, exc.url) from None
        if resp.status == 202:
            raise unknown("Grafana answered 202 (change broadcast, not yet applied)", resp.url)
        if 200 <= resp.status < 300:
            try:
                saved = save_result_from(resp.json())
            except (ValueError, KeyError, TypeError, AttributeError):
                raise unknown(f"Grafana answered {resp.status} with an unreadable body", resp.url) from None
            log.info("saved %s in %s as version %d", label, self.url, saved.version)
            return saved
        if resp.status == 400 and grafana_message(resp).lower() == "folder not found":
            raise FolderNotFound(
                self._http.redact(
                    f"Grafana has no folder {folder_uid!r} to save {label} into (400 folder not found) at {resp.url}"
                ),
                **http_fields(resp, self._http),
            )
        raise answer_error(resp, label, self._http, sent_version=dashboard.get("version"))

    def resolve_save(self, exc: WriteOutcomeUnknown) -> SaveResult | None:
        """After an uncertain save: a ``SaveResult`` if Grafana now stores what was sent, else None.

        Content is compared without ``id`` and ``version`` (which Grafana assigns) and with title and
        uid trimmed as Grafana trims them. Raises ``GrafanaError`` when Grafana cannot be read either.
        """
        if not exc.uid or exc.dashboard is None:
            raise GrafanaError(
                f"Cannot tell whether the write to {exc.url} landed: it carried no dashboard uid to read back",
                method=exc.method,
                url=exc.url,
            )
        live = self.get_dashboard(exc.uid.strip())
        if live is None:
            return None
        same_folder = (live.folder_uid or None) == (exc.folder_uid or None)
        if not (same_folder and _comparable(live.dashboard) == _comparable(exc.dashboard)):
            return None
        return SaveResult(live.uid, live.version, live.id, live.url, live.slug or "", live.folder_uid)

    def delete_dashboard(self, uid: str) -> None:
        """``DELETE /api/dashboards/uid/:uid`` (never called by the publisher; the live tests clean up with it)."""
        try:
            resp = self._send("DELETE", f"/api/dashboards/uid/{_q(uid)}")
        except WriteOutcomeUnknown as exc:
            raise WriteOutcomeUnknown(
                f"Deleting dashboard {uid!r} at {exc.url} may or may not have happened: {exc.reason}",
                method="DELETE",
                url=exc.url,
                uid=uid,
                reason=exc.reason,
            ) from None
        if resp.status != 200:
            raise answer_error(resp, f"dashboard {uid!r}", self._http)

    # ------------------------------------------------------------------ versions

    def list_versions(self, uid: str, limit: int | None = None, start: int | None = None) -> list[DashboardVersion]:
        """Newest first. Grafana keeps a bounded history (20 versions by default)."""
        params = {k: v for k, v in (("limit", limit), ("start", start)) if v is not None}
        resp = self._send("GET", f"/api/dashboards/uid/{_q(uid)}/versions", params=params)
        if resp.status != 200:
            raise answer_error(resp, f"dashboard {uid!r}", self._http)
        body = parse_json(resp)
        rows = body.get("versions") if isinstance(body, dict) else body  # ≥ 11.5 object, ≤ 11.4 bare list
        if not isinstance(rows, list):
            raise bad_shape(resp, "a list of versions")
        return [version_from(row) for row in rows if isinstance(row, dict)]

    def get_version(self, uid: str, version: int) -> DashboardVersion:
        """One history entry with its full ``data``; ``NotFound`` when Grafana no longer has it."""
        resp = self._send(
            "GET",
            f"/api/dashboards/uid/{_q(uid)}/versions/{int(version)}",
            # Grafana answers a missing version with 500 "... not found ..."; retrying cannot help.
            final=lambda r: bool(_NOT_FOUND_RE.search(grafana_message(r))),
        )
        if resp.status == 500 and _NOT_FOUND_RE.search(grafana_message(resp)):
            raise NotFound(
                self._http.redact(
                    f"Grafana has no version {version} of dashboard {uid!r} "
                    f"({resp.status} {grafana_message(resp)}) at {resp.url}"
                ),
                **http_fields(resp, self._http),
            )
        if resp.status != 200:
            raise answer_error(resp, f"version {version} of dashboard {uid!r}", self._http)
        row = parse_json(resp)
        if not isinstance(row, dict):
            raise bad_shape(resp, "a version object")
        return version_from(row)

    # ------------------------------------------------------------------ folders

    def get_folder(self, uid: str) -> Folder | None:
        """``GET /api/folders/:uid``; None when Grafana says the folder does not exist."""
        resp = self._send("GET", f"/api/folders/{_q(uid)}")
        if resp.status == 404:
            return None
        if resp.status != 200:
            raise answer_error(resp, f"folder {uid!r}", self._http)
        row = parse_json(resp)
        if not isinstance(row, dict) or "uid" not in row:
            raise bad_shape(resp, "a folder object")
        return folder_from(row)

    def create_folder(self, title: str, uid: str | None = None, parent_uid: str | None = None) -> Folder:
        """``POST /api/folders`` (the live tests' throw-away folder). A taken uid is ``RequestRejected``."""
        body = {k: v for k, v in (("title", title), ("uid", uid), ("parentUid", parent_uid)) if v}
        resp = self._send("POST", "/api/folders", json_body=body)
        if resp.status in (409, 412):
            raise RequestRejected(
                self._http.redact(
                    f"Grafana refused to create folder {uid or title!r}: uid or title already "
                    f"taken ({resp.status} {grafana_message(resp)}) at {resp.url}"
                ),
                **http_fields(resp, self._http),
            )
        if resp.status != 200:
            raise answer_error(resp, f"folder {uid or title!r}", self._http)
        row = parse_json(resp)
        if not isinstance(row, dict) or "uid" not in row:
            raise bad_shape(resp, "a folder object")
        return folder_from(row)


def _q(value: str) -> str:
    return quote(str(value), safe="")


def _comparable(dashboard: dict[str, Any]) -> dict[str, Any]:
    """The part of a dashboard a save controls: without server-assigned id/version, trimmed like Grafana."""
    out = {k: v for k, v in dashboard.items() if k not in ("id", "version")}
    for key in ("uid", "title"):
        if isinstance(out.get(key), str):
            out[key] = out[key].strip()
    return out


def _check_base_url(base_url: str) -> str:
    if (problem := url_problem(base_url)) is not None:
        raise InputError(f"Grafana URL {base_url!r} {problem}")
    parts = urlsplit(base_url.strip())
    if "@" in parts.netloc:
        # Credentials in the URL would leak into every message that names the URL.
        raise InputError("Grafana URL must not contain credentials; pass token= or basic_auth=")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"Grafana URL must look like https://grafana.example.com[/sub-path], not {base_url!r}")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
