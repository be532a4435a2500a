"""The Grafana client of the publish pipeline: dashboards, versions, search, folders, health.

It owns the translation of Grafana's HTTP answers (contract: grafana-api.md) into dataclasses
and into the errors of ``dashgen.grafana.errors``, exactly once; callers never see a status
code. It works against Grafana 12 and 13 alike: 412 ``version-mismatch`` and 409 are both
``VersionConflict``, both shapes of the versions list are read, and the folder is always sent
as ``folderUid`` (omitting it would move an updated dashboard to the root).

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from dashgen.grafana.errors import (
    BadResponse,
    FolderNotFound,
    Forbidden,
    GrafanaError,
    NotFound,
    PayloadTooLarge,
    RequestRejected,
    ServerError,
    Unauthorized,
    VersionConflict,
    WriteOutcomeUnknown,
)
from dashgen.grafana.transport import HttpResponse, HttpTransport, RetryPolicy

log = logging.getLogger("dashgen.grafana")

_PERMISSION_RE = re.compile(r"Permissions needed:\s*(.+?)\s*$")
_NOT_FOUND_RE = re.compile(r"not found", re.IGNORECASE)


@dataclass(frozen=True)
class Health:
    """``GET /api/health``. ``version``/``commit`` are None when Grafana hides them."""

    database: str
    version: str | None
    commit: str | None

    @property
    def ok(self) -> bool:
        return self.database == "ok"

    @property
    def major(self) -> int | None:
        match = re.match(r"v?(\d+)\.", self.version or "")
        return int(match.group(1)) if match else None


@dataclass(frozen=True)
class LiveDashboard:
    """A dashboard as Grafana stores it now. ``dashboard`` is the JSON model (with id, uid, version)."""

    uid: str
    version: int
    id: int
    dashboard: dict[str, Any]
    folder_uid: str | None
    folder_title: str
    url: str
    slug: str
    created: str
    updated: str
    created_by: str
    updated_by: str
    provisioned: bool
    meta: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class SaveResult:
    uid: str
    version: int
    id: int
    url: str
    slug: str = ""
    folder_uid: str | None = None


@dataclass(frozen=True)
class DashboardVersion:
    """One history entry. ``data`` is None where Grafana leaves it out of the list (legacy storage)."""

    version: int
    parent_version: int
    restored_from: int
    created: str
    created_by: str
    message: str
    data: dict[str, Any] | None = field(repr=False)
    id: int = 0


@dataclass(frozen=True)
class SearchHit:
    uid: str
    title: str
    type: str
    url: str
    id: int
    tags: tuple[str, ...] = ()
    folder_uid: str | None = None
    folder_title: str | None = None


@dataclass(frozen=True)
class Folder:
    uid: str
    title: str
    id: int
    url: str = ""
    parent_uid: str | None = None
    version: int | None = None


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
    ) -> None:
        self._http = HttpTransport(
            url, token=token, basic_auth=basic_auth, org_id=org_id, connect_timeout=connect_timeout,
            read_timeout=read_timeout, retry=retry, ca_bundle=ca_bundle, insecure=insecure, trust_env=trust_env,
        )
        self._health: Health | None = None

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

    # ------------------------------------------------------------------ health and identity

    def health(self) -> Health:
        """``GET /api/health`` (no auth). A failing database is returned as ``database="failing"``, not raised."""
        resp = self._http.request("GET", "/api/health", final=_is_health_body)
        if resp.status in (200, 503) and not _is_health_body(resp):
            self._json(resp)  # raises BadResponse when the body is not JSON at all
            raise self._bad_shape(resp, "Grafana's health object (is this URL a Grafana?)")
        if resp.status not in (200, 503):
            raise self._error(resp, "the health endpoint")
        body = resp.json()
        self._health = Health(str(body.get("database", "")), body.get("version"), body.get("commit"))
        return self._health

    @property
    def grafana_major(self) -> int | None:
        """Grafana's major version from ``/api/health`` (asked once); None when the instance hides it."""
        if self._health is None:
            self.health()
        return self._health.major if self._health else None

    def check_auth(self) -> None:
        """Raise ``Unauthorized`` unless the credentials are accepted (one cheap authenticated GET)."""
        resp = self._http.request("GET", "/api/search", params={"limit": 1})
        if resp.status != 200:
            raise self._error(resp, "the search endpoint")

    # ------------------------------------------------------------------ dashboards

    def get_dashboard(self, uid: str) -> LiveDashboard | None:
        """The stored dashboard, or None when Grafana says it does not exist."""
        resp = self._http.request("GET", f"/api/dashboards/uid/{_q(uid)}")
        if resp.status == 404 and _grafana_message(resp).lower() == "dashboard not found":
            return None
        if resp.status != 200:
            raise self._error(resp, f"dashboard {uid!r}")
        body = self._json(resp)
        dash = body.get("dashboard") if isinstance(body, dict) else None
        meta = body.get("meta") if isinstance(body, dict) else None
        if not isinstance(dash, dict) or not isinstance(meta, dict):
            raise self._bad_shape(resp, "an object with 'dashboard' and 'meta'")
        version = meta.get("version", dash.get("version"))
        return LiveDashboard(
            uid=str(dash.get("uid", uid)),
            version=int(version or 0),
            id=int(dash.get("id") or 0),
            dashboard=dash,
            folder_uid=meta.get("folderUid") or None,
            folder_title=str(meta.get("folderTitle", "")),
            url=str(meta.get("url", "")),
            slug=str(meta.get("slug", "")),
            created=str(meta.get("created", "")),
            updated=str(meta.get("updated", "")),
            created_by=str(meta.get("createdBy", "")),
            updated_by=str(meta.get("updatedBy", "")),
            provisioned=bool(meta.get("provisioned", False)),
            meta=meta,
        )

    def save_dashboard(
        self, dashboard: dict[str, Any], folder_uid: str | None, message: str, overwrite: bool = False
    ) -> SaveResult:
        """``POST /api/dashboards/db``, sent exactly once.

        To update without ``overwrite``, ``dashboard["version"]`` must be the version read from Grafana;
        otherwise ``VersionConflict``. ``folder_uid=None`` means the root folder (always sent explicitly).
        """
        uid = dashboard.get("uid") if isinstance(dashboard.get("uid"), str) else None
        label = f"dashboard {uid!r}" if uid else "a dashboard without uid"
        body = {"dashboard": dashboard, "folderUid": folder_uid or "", "message": message, "overwrite": overwrite}

        def unknown(reason: str, url: str) -> WriteOutcomeUnknown:
            return WriteOutcomeUnknown(
                self._http.redact(f"Saving {label} to {url} may or may not have landed: {reason}; "
                                  "read it back with resolve_save() before saving again"),
                method="POST", url=url, uid=uid, dashboard=copy.deepcopy(dashboard), folder_uid=folder_uid,
                reason=reason,
            )

        try:
            resp = self._http.request("POST", "/api/dashboards/db", json_body=body)
        except WriteOutcomeUnknown as exc:
            raise unknown(exc.reason, exc.url) from None
        if resp.status == 202:
            raise unknown("Grafana answered 202 (change broadcast, not yet applied)", resp.url)
        if 200 <= resp.status < 300:
            try:
                result = resp.json()
                saved = SaveResult(
                    uid=str(result["uid"]), version=int(result["version"]), id=int(result.get("id") or 0),
                    url=str(result.get("url", "")), slug=str(result.get("slug", "")),
                    folder_uid=result.get("folderUid") or None,
                )
            except (ValueError, KeyError, TypeError, AttributeError):
                raise unknown(f"Grafana answered {resp.status} with an unreadable body", resp.url) from None
            log.info("saved %s in %s as version %d", label, self.url, saved.version)
            return saved
        if resp.status == 400 and _grafana_message(resp).lower() == "folder not found":
            raise FolderNotFound(
                self._http.redact(f"Grafana has no folder {folder_uid!r} to save {label} into "
                                  f"(400 folder not found) at {resp.url}"),
                **self._fields(resp),
            )
        raise self._error(resp, label, sent_version=dashboard.get("version"))

    def resolve_save(self, exc: WriteOutcomeUnknown) -> SaveResult | None:
        """After an uncertain save: a ``SaveResult`` if Grafana now stores what was sent, else None.

        Content is compared without ``id`` and ``version`` (which Grafana assigns) and with title and
        uid trimmed as Grafana trims them. Raises ``GrafanaError`` when Grafana cannot be read either.
        """
        if not exc.uid or exc.dashboard is None:
            raise GrafanaError(
                f"Cannot tell whether the write to {exc.url} landed: it carried no dashboard uid to read back",
                method=exc.method, url=exc.url,
            )
        live = self.get_dashboard(exc.uid.strip())
        if live is None:
            return None
        same_folder = (live.folder_uid or None) == (exc.folder_uid or None)
        if not (same_folder and _comparable(live.dashboard) == _comparable(exc.dashboard)):
            return None
        slug = live.slug or ""
        return SaveResult(live.uid, live.version, live.id, live.url, slug, live.folder_uid)

    def delete_dashboard(self, uid: str) -> None:
        """``DELETE /api/dashboards/uid/:uid`` (never called automatically by the publisher)."""
        try:
            resp = self._http.request("DELETE", f"/api/dashboards/uid/{_q(uid)}")
        except WriteOutcomeUnknown as exc:
            raise WriteOutcomeUnknown(
                f"Deleting dashboard {uid!r} at {exc.url} may or may not have happened: {exc.reason}",
                method="DELETE", url=exc.url, uid=uid, reason=exc.reason,
            ) from None
        if resp.status != 200:
            raise self._error(resp, f"dashboard {uid!r}")

    # ------------------------------------------------------------------ versions

    def list_versions(self, uid: str, limit: int | None = None, start: int | None = None) -> list[DashboardVersion]:
        """Newest first. Grafana keeps a bounded history (20 versions by default)."""
        params = {k: v for k, v in (("limit", limit), ("start", start)) if v is not None}
        resp = self._http.request("GET", f"/api/dashboards/uid/{_q(uid)}/versions", params=params)
        if resp.status != 200:
            raise self._error(resp, f"dashboard {uid!r}")
        body = self._json(resp)
        rows = body.get("versions") if isinstance(body, dict) else body  # ≥ 11.5 object, ≤ 11.4 bare list
        if not isinstance(rows, list):
            raise self._bad_shape(resp, "a list of versions")
        return [_version(row) for row in rows if isinstance(row, dict)]

    def get_version(self, uid: str, version: int) -> DashboardVersion:
        """One history entry with its full ``data``; ``NotFound`` when Grafana no longer has it."""
        resp = self._http.request(
            "GET", f"/api/dashboards/uid/{_q(uid)}/versions/{int(version)}",
            # Grafana answers a missing version with 500 "... not found ..."; retrying cannot help.
            final=lambda r: bool(_NOT_FOUND_RE.search(_grafana_message(r))),
        )
        if resp.status == 500 and _NOT_FOUND_RE.search(_grafana_message(resp)):
            raise NotFound(
                self._http.redact(f"Grafana has no version {version} of dashboard {uid!r} "
                                  f"({resp.status} {_grafana_message(resp)}) at {resp.url}"),
                **self._fields(resp),
            )
        if resp.status != 200:
            raise self._error(resp, f"version {version} of dashboard {uid!r}")
        row = self._json(resp)
        if not isinstance(row, dict):
            raise self._bad_shape(resp, "a version object")
        return _version(row)

    def restore_version(self, uid: str, version: int) -> SaveResult:
        """``POST .../restore``: a new version whose content is ``version``'s. Sent exactly once."""
        resp = self._http.request("POST", f"/api/dashboards/uid/{_q(uid)}/restore", json_body={"version": version})
        if resp.status != 200:
            raise self._error(resp, f"version {version} of dashboard {uid!r}")
        body = self._json(resp)
        try:
            return SaveResult(str(body["uid"]), int(body["version"]), int(body.get("id") or 0),
                              str(body.get("url", "")), str(body.get("slug", "")), body.get("folderUid") or None)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise self._bad_shape(resp, "a save result") from None

    # ------------------------------------------------------------------ search and folders

    def search(
        self,
        query: str | None = None,
        *,
        tags: Iterable[str] = (),
        type: str | None = None,  # noqa: A002 - Grafana's parameter name
        folder_uids: Iterable[str] = (),
        dashboard_uids: Iterable[str] = (),
        limit: int | None = None,
        page: int | None = None,
    ) -> list[SearchHit]:
        """``GET /api/search``. Under unified storage (13.x) a just-saved dashboard may not show yet."""
        params: dict[str, Any] = {"query": query, "tag": list(tags), "type": type,
                                  "folderUIDs": list(folder_uids), "dashboardUIDs": list(dashboard_uids),
                                  "limit": limit, "page": page}
        params = {k: v for k, v in params.items() if v not in (None, [])}
        resp = self._http.request("GET", "/api/search", params=params)
        if resp.status != 200:
            raise self._error(resp, "the search")
        rows = self._json(resp)
        if not isinstance(rows, list):
            raise self._bad_shape(resp, "a list of hits")
        return [
            SearchHit(uid=str(r.get("uid", "")), title=str(r.get("title", "")), type=str(r.get("type", "")),
                      url=str(r.get("url", "")), id=int(r.get("id") or 0),
                      tags=tuple(str(t) for t in r.get("tags") or ()), folder_uid=r.get("folderUid") or None,
                      folder_title=r.get("folderTitle") or None)
            for r in rows if isinstance(r, dict)
        ]

    def get_folder(self, uid: str) -> Folder | None:
        """The folder, or None when Grafana says it does not exist."""
        resp = self._http.request("GET", f"/api/folders/{_q(uid)}")
        if resp.status == 404 and _grafana_message(resp).lower() == "folder not found":
            return None
        if resp.status != 200:
            raise self._error(resp, f"folder {uid!r}")
        return self._folder(resp, self._json(resp))

    def list_folders(self, parent_uid: str | None = None) -> list[Folder]:
        """Immediate children of ``parent_uid`` (root when None)."""
        params = {"parentUid": parent_uid} if parent_uid else None
        resp = self._http.request("GET", "/api/folders", params=params)
        if resp.status != 200:
            raise self._error(resp, "the folder list")
        rows = self._json(resp)
        if not isinstance(rows, list):
            raise self._bad_shape(resp, "a list of folders")
        return [self._folder(resp, r) for r in rows]

    def create_folder(self, title: str, uid: str | None = None, parent_uid: str | None = None) -> Folder:
        """``POST /api/folders``. A taken uid is ``RequestRejected`` (Grafana answers 409 or 412)."""
        body = {k: v for k, v in (("title", title), ("uid", uid), ("parentUid", parent_uid)) if v}
        resp = self._http.request("POST", "/api/folders", json_body=body)
        if resp.status in (409, 412):
            raise RequestRejected(
                self._http.redact(f"Grafana refused to create folder {uid or title!r}: uid or title already "
                                  f"taken ({resp.status} {_grafana_message(resp)}) at {resp.url}"),
                **self._fields(resp),
            )
        if resp.status != 200:
            raise self._error(resp, f"folder {uid or title!r}")
        return self._folder(resp, self._json(resp))

    # ------------------------------------------------------------------ answer → domain

    def _json(self, resp: HttpResponse) -> Any:
        try:
            return resp.json()
        except ValueError:
            raise BadResponse(
                f"Grafana answered {resp.method} {resp.url} with {resp.status} but the body is not valid JSON "
                f"({len(resp.body)} bytes, {resp.content_type or 'no content type'}): truncated, or not Grafana?",
                method=resp.method, url=resp.url,
            ) from None

    def _bad_shape(self, resp: HttpResponse, expected: str) -> BadResponse:
        return BadResponse(f"Grafana answered {resp.method} {resp.url} with {resp.status} but not {expected}",
                           method=resp.method, url=resp.url)

    def _folder(self, resp: HttpResponse, row: Any) -> Folder:
        if not isinstance(row, dict) or "uid" not in row:
            raise self._bad_shape(resp, "a folder object")
        version = row.get("version")
        return Folder(uid=str(row["uid"]), title=str(row.get("title", "")), id=int(row.get("id") or 0),
                      url=str(row.get("url", "")), parent_uid=row.get("parentUid") or None,
                      version=int(version) if isinstance(version, int) else None)

    def _fields(self, resp: HttpResponse) -> dict[str, Any]:
        """The attributes every ``GrafanaHTTPError`` carries; server text is redacted too."""
        body = _body_dict(resp)
        return {"method": resp.method, "url": resp.url, "status": resp.status,
                "grafana_message": self._http.redact(_grafana_message(resp)),
                "grafana_status": str(body.get("status") or ""), "message_id": str(body.get("messageId") or "")}

    def _who(self) -> str:
        if self._http.auth_kind == "token":
            return "the token"
        if self._http.auth_kind == "basic":
            return f"user {self._http.user!r} and its password"
        return "the request without credentials"

    def _error(self, resp: HttpResponse, what: str, *, sent_version: Any = None) -> GrafanaError:
        """The one place where a status code becomes a domain error."""
        status, url, msg = resp.status, resp.url, _grafana_message(resp)
        body = _body_dict(resp)
        grafana_status = str(body.get("status") or "")
        detail = f"{status} {grafana_status + ': ' if grafana_status else ''}{msg}".strip()
        fields = self._fields(resp)
        redact = self._http.redact
        if 300 <= status < 400:
            location = resp.headers.get("Location", "?")
            return BadResponse(redact(f"Grafana answered {resp.method} {url} with a redirect ({status}) to "
                                      f"{location}; configure the final URL"), method=resp.method, url=url)
        if status == 401:
            return Unauthorized(redact(f"Grafana refused {self._who()} ({detail}) at {url}"), **fields)
        if status == 403:
            match = _PERMISSION_RE.search(msg)
            permission = match.group(1) if match else None
            reason = f"missing permission {permission}" if permission else msg
            return Forbidden(redact(f"Grafana denied {resp.method} {url} (403): {reason}"),
                             permission=permission, **fields)
        if status == 404:
            return NotFound(redact(f"Grafana has no {what} ({detail}) at {url}"), **fields)
        if status == 409 or (status == 412 and grafana_status in ("", "version-mismatch")):
            since = (f" since version {sent_version} was read" if isinstance(sent_version, int)
                     else " (no version was sent: read it first, or save with overwrite)")
            return VersionConflict(
                redact(f"Grafana refused the change to {what}: it was changed by someone else{since} "
                       f"({detail}) at {url}"),
                **fields,
            )
        if status == 413:
            size = f"a {resp.sent_bytes / 1_048_576:.1f} MiB request" if resp.sent_bytes else "the request"
            return PayloadTooLarge(
                redact(f"Grafana or a proxy in front of it refused {size} as too large ({detail}) at {url}"),
                **fields,
            )
        if status >= 500:
            tries = f" after {resp.attempts} attempts" if resp.attempts > 1 else ""
            return ServerError(redact(f"Grafana failed on {resp.method} {url} ({detail}){tries}"), **fields)
        return RequestRejected(redact(f"Grafana rejected the request for {what} ({detail}) at {url}"), **fields)


def _q(value: str) -> str:
    return quote(str(value), safe="")


def _body_dict(resp: HttpResponse) -> dict[str, Any]:
    try:
        body = resp.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _grafana_message(resp: HttpResponse) -> str:
    body = _body_dict(resp)
    if "message" in body:
        return " ".join(str(body["message"]).split())
    if resp.body and resp.content_type != "application/json":
        return f"non-JSON {resp.content_type or 'untyped'} body, probably from a proxy"
    return ""




def _is_health_body(resp: HttpResponse) -> bool:
    return "database" in _body_dict(resp)


def _version(row: dict[str, Any]) -> DashboardVersion:
    data = row.get("data")
    return DashboardVersion(
        version=int(row.get("version") or 0), parent_version=int(row.get("parentVersion") or 0),
        restored_from=int(row.get("restoredFrom") or 0), created=str(row.get("created", "")),
        created_by=str(row.get("createdBy", "")), message=str(row.get("message") or ""),
        data=data if isinstance(data, dict) else None, id=int(row.get("id") or 0),
    )


def _comparable(dashboard: dict[str, Any]) -> dict[str, Any]:
    """The part of a dashboard a save controls: without server-assigned id/version, trimmed like Grafana."""
    out = {k: v for k, v in dashboard.items() if k not in ("id", "version")}
    for key in ("uid", "title"):
        if isinstance(out.get(key), str):
            out[key] = out[key].strip()
    return out
