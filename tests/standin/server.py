"""The stand-in's HTTP side: a real server on 127.0.0.1, routing, auth, orgs and the request log.

``GrafanaStandin`` is what tests use. It answers the endpoints of grafana-api.md with the
statuses and bodies given there (profile ``grafana12`` by default, ``grafana13`` as a switch),
applies the faults armed through its ``inject_*`` methods, and records every request.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hmac
import json
import random
import re
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from . import apis
from .alerting import EmptyNotFound, alerting_of
from .faults import CLOSE, DELAY, STALE, STATUS, TRUNCATE, Fault, FaultBook, default_body
from .library import library_of
from .permissions import permissions_of
from .search import search
from .store import (
    GRAFANA12,
    GRAFANA13,
    ApiError,
    OrgStore,
    Settings,
    errutil_error,
    plain_error,
    response_error,
)
from .ui_save import ui_normalise
from .v2 import to_v1, to_v2

ALL_PERMISSIONS = frozenset(
    {
        "dashboards:read",
        "dashboards:create",
        "dashboards:write",
        "dashboards:delete",
        "folders:read",
        "folders:create",
        "folders:write",
        "folders:delete",
        "library.panels:create",
        "library.panels:read",
        "library.panels:write",
        "library.panels:delete",
        "alert.provisioning:read",
        "alert.provisioning:write",
        "folders.permissions:read",
        "folders.permissions:write",
    }
)
_DEFAULT_VERSIONS = {GRAFANA12: "12.3.0", GRAFANA13: "13.1.0"}
_DEFAULT_SCHEMA = {GRAFANA12: 41, GRAFANA13: 42}
_UID = r"([^/]+)"


@dataclass
class LoggedRequest:
    """One request as received. ``headers`` has credentials replaced by ``***``."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    query: dict[str, list[str]] = field(default_factory=dict)
    status: int | None = None  # None when the connection was dropped without an answer

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class _Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def _stale(answer: _Answer, fault: Fault) -> _Answer:
    """``answer`` with the metadata (and spec) of the object as it was when the stale-read fault was armed."""
    body = json.loads(answer.body)
    body.setdefault("metadata", {}).update(fault.stale_metadata)
    if fault.stale_spec is not None:
        body["spec"] = copy.deepcopy(fault.stale_spec)
    return replace(answer, body=json.dumps(body).encode())


@dataclass
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Callable[..., Any]
    needs: tuple[str, ...] = ()  # RBAC: any of these permissions
    authenticated: bool = True


class GrafanaStandin:
    """A Grafana HTTP API double. Use as a context manager or call ``start()``/``stop()``."""

    def __init__(
        self,
        mode: str = GRAFANA12,
        token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        *,
        latency: float = 0.0,
        grafana_version: str | None = None,
        hide_version: bool = False,
        token_org_id: int = 1,
        user_org_ids: tuple[int, ...] = (1,),
        service_account: str = "sa-1-dashgen",
        max_dashboard_bytes: int = 10 * 1024 * 1024,
        versions_to_keep: int = 20,
        folder_conflict_status: int = 412,
        search_lag: float = 0.0,
        datasources: dict[str, dict[str, str]] | None = None,
        default_datasource: dict[str, str] | None = None,
        dynamic_dashboards: bool = False,
    ) -> None:
        if mode not in (GRAFANA12, GRAFANA13):
            raise ValueError(f"mode must be {GRAFANA12!r} or {GRAFANA13!r}, not {mode!r}")
        self.mode = mode
        self.token = token
        self.basic_auth = basic_auth
        self.latency = latency
        self.hide_version = hide_version
        self.token_org_id = token_org_id
        self.user_org_ids = user_org_ids
        self.service_account = service_account
        self.max_dashboard_bytes = max_dashboard_bytes
        self.search_lag = search_lag
        self.database_failing = False
        self.permissions: set[str] = set(ALL_PERMISSIONS)
        self.datasources = datasources or {"prometheus": {"type": "prometheus", "uid": "prometheus"}}
        self.default_datasource = default_datasource or {"type": "prometheus", "uid": "prometheus"}
        self.settings = Settings(
            mode=mode,
            grafana_version=grafana_version or _DEFAULT_VERSIONS[mode],
            versions_to_keep=versions_to_keep,
            folder_conflict_status=folder_conflict_status,
            latest_schema_version=_DEFAULT_SCHEMA[mode],
            dynamic_dashboards=bool(dynamic_dashboards),
        )
        self.request_log: list[LoggedRequest] = []
        self._encoded: dict[tuple[Any, ...], bytes] = {}
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests handled at one time (the client's concurrency)
        self.faults = FaultBook()
        self.drop_query_strings = False  # behave as behind a proxy that forwards the path without the query
        self._orgs: dict[int, OrgStore] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._routes = self._build_routes()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> GrafanaStandin:
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), _Handler)
        server.standin = self  # type: ignore[attr-defined]
        self._server = server
        self._stopping.clear()
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.01}, name="grafana-standin", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()  # wakes handlers sleeping in an injected delay
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> GrafanaStandin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stand-in is not running; call start()")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __repr__(self) -> str:
        state = self.url if self._server else "stopped"
        return f"GrafanaStandin(mode={self.mode!r}, {state})"

    # ------------------------------------------------------------------ fault injection

    def inject(
        self,
        method: str,
        path_regex: str,
        status: int = 500,
        body: Any = None,
        *,
        times: int | None = 1,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        after_handling: bool = False,
    ) -> Fault:
        """Answer matching requests with ``status`` and ``body`` instead of handling them (no side effect; with
        ``after_handling=True`` the request takes effect first, and the answer still says ``status``).

        ``body``: None → ``{"message": <reason phrase>, "traceID": ""}``; dict/list → JSON; str/bytes → as is
        (e.g. an nginx HTML page with ``content_type="text/html"``).
        """
        if body is None or isinstance(body, dict | list):
            raw = default_body(status, None) if body is None else json.dumps(body).encode()
        else:
            raw = body.encode() if isinstance(body, str) else bytes(body)
        return self.faults.add(
            Fault(
                STATUS,
                method.upper(),
                path_regex,
                times,
                after_handling,
                status=status,
                body=raw,
                content_type=content_type,
                headers=dict(headers or {}),
            )
        )

    def inject_delay(
        self,
        seconds: float,
        method: str = "*",
        path_regex: str = ".*",
        *,
        times: int | None = 1,
        after_handling: bool = False,
    ) -> Fault:
        """Sleep before answering. ``after_handling=True`` applies the request first (a slow, landed write)."""
        return self.faults.add(Fault(DELAY, method.upper(), path_regex, times, after_handling, seconds=seconds))

    def inject_close_connection(
        self, method: str = "*", path_regex: str = ".*", *, times: int | None = 1, after_handling: bool = False
    ) -> Fault:
        """Drop the connection without answering; ``after_handling=True`` lets the request take effect first."""
        return self.faults.add(Fault(CLOSE, method.upper(), path_regex, times, after_handling))

    def inject_truncated_body(
        self,
        method: str = "*",
        path_regex: str = ".*",
        *,
        times: int | None = 1,
        keep_fraction: float = 0.5,
        honest_length: bool = True,
    ) -> Fault:
        """Handle the request, then send only part of the body.

        ``honest_length=True``: Content-Length matches the cut body (the client gets invalid JSON);
        False: Content-Length announces the full body and the connection closes early.
        """
        return self.faults.add(
            Fault(
                TRUNCATE,
                method.upper(),
                path_regex,
                times,
                True,
                keep_fraction=keep_fraction,
                honest_length=honest_length,
            )
        )

    def inject_stale_read(self, uid: str, *, times: int | None = 1, whole: bool = False, org_id: int = 1) -> Fault:
        """The next ``times`` reads of ``uid`` through ``/apis`` answer as a lagging replica (or a cache) would:
        ``metadata.generation`` and ``resourceVersion`` as they are now, whatever is written meanwhile; with
        ``whole`` the spec too (the v2 spec, or the v1 JSON). Arm it before the write it should hide."""
        store = self.org(org_id)
        with store.lock:
            dash = store.require_dashboard(uid)
            metadata = {"generation": dash.version, "resourceVersion": str(dash.resource_version)}
            spec = copy.deepcopy(dash.v2_spec if dash.v2_spec is not None else dash.data) if whole else None
        path = rf"/apis/dashboard\.grafana\.app/[^/]+/namespaces/[^/]+/dashboards/{re.escape(uid)}"
        return self.faults.add(Fault(STALE, "GET", path, times, True, stale_metadata=metadata, stale_spec=spec))

    def clear_faults(self) -> None:
        self.faults.clear()

    # ------------------------------------------------------------------ request log helpers

    def requests_to(self, method: str, path_regex: str = ".*") -> list[LoggedRequest]:
        pattern = re.compile(path_regex)
        with self._lock:
            return [r for r in self.request_log if method.upper() in ("*", r.method) and pattern.fullmatch(r.path)]

    def count(self, method: str, path_regex: str = ".*") -> int:
        return len(self.requests_to(method, path_regex))

    def writes(self, *, include_dry_runs: bool = False) -> list[LoggedRequest]:
        """Every request that could change state: anything but GET/HEAD, and (unless asked) but ``?dryRun=All``."""
        with self._lock:
            return [
                r
                for r in self.request_log
                if r.method not in ("GET", "HEAD") and (include_dry_runs or r.query.get("dryRun") != ["All"])
            ]

    def clear_log(self) -> None:
        with self._lock:
            self.request_log.clear()

    # ------------------------------------------------------------------ direct state access for tests

    def org(self, org_id: int = 1) -> OrgStore:
        with self._lock:
            if org_id not in self._orgs:
                self._orgs[org_id] = OrgStore(org_id, self.settings)
            return self._orgs[org_id]

    def add_folder(self, uid: str, title: str, parent_uid: str = "", *, org_id: int = 1) -> dict[str, Any]:
        store = self.org(org_id)
        return store.folder_body(store.add_folder(uid, title, parent_uid, "admin"))

    def seed_dashboard(
        self,
        dashboard: dict[str, Any],
        folder_uid: str = "",
        *,
        message: str = "",
        overwrite: bool = True,
        provisioned: bool = False,
        plugin_id: str = "",
        org_id: int = 1,
    ) -> dict[str, Any]:
        """Save through the same rules as ``POST /api/dashboards/db`` without HTTP; returns the §3.5 body."""
        store = self.org(org_id)
        result = store.save_via_api(
            {
                "dashboard": copy.deepcopy(dashboard),
                "folderUid": folder_uid,
                "message": message,
                "overwrite": overwrite,
            },
            "admin",
            set(ALL_PERMISSIONS),
        )
        with store.lock:
            stored = store.dashboards[result["uid"]]
            stored.provisioned = provisioned
            stored.plugin_id = plugin_id
            stored.saved_at = 0.0
        return result

    def provision(
        self, uid: str, source: str = "/etc/grafana/provisioning/dashboards/cluster.json", *, org_id: int = 1
    ):
        """Make a stored dashboard file-provisioned without UI updates (``allowUiUpdates: false``): ``meta.provisioned``
        on the legacy API, the manager annotations on ``/apis``, and every save of it refused with 400."""
        store = self.org(org_id)
        with store.lock:
            stored = store.dashboards[uid]
            stored.provisioned, stored.provisioned_from = True, source
            store.bump_resource_version(stored)  # the manager annotations changed: a new resourceVersion

    def stored(self, uid: str, *, org_id: int = 1) -> dict[str, Any] | None:
        """The stored dashboard JSON (a copy), or None."""
        store = self.org(org_id)
        with store.lock:
            dash = store.dashboards.get(uid)
            return json.loads(json.dumps(dash.data)) if dash else None

    def stored_version(self, uid: str, *, org_id: int = 1) -> int | None:
        store = self.org(org_id)
        with store.lock:
            dash = store.dashboards.get(uid)
            return dash.version if dash else None

    def simulate_ui_save(
        self,
        uid: str,
        mutate: Callable[[dict[str, Any]], Any] | None = None,
        *,
        user: str = "admin",
        message: str = "",
        org_id: int = 1,
        as_v2: bool | None = None,
        v2_edit: Callable[[dict[str, Any]], Any] | None = None,
    ) -> dict[str, Any]:
        """Store a new version as a person saving in the UI would (§7.2); returns the new stored JSON.

        The frontend's normalisation is applied first, then ``mutate`` (the person's edit; it may
        change the dict in place or return a replacement). With ``dynamic_dashboards=True`` (Grafana 13's
        default; off here so that a test opts in, ``as_v2`` overrides per save) the save converts the
        dashboard to the v2 schema (§13), then
        ``v2_edit`` may change the v2 spec (tabs, auto-grid); the stored v1 view is the lossy down-conversion.
        A dashboard stored as v2 already (a v2 publish, issue 30) is edited as its v2 spec: ``mutate`` and
        ``v2_edit`` both get the spec.
        """
        store = self.org(org_id)
        with store.lock:
            dash = store.require_dashboard(uid)
            if dash.v2_spec is not None and as_v2 is not False:  # a v2 dashboard is edited as v2 (its tabs kept)
                v2_spec = copy.deepcopy(dash.v2_spec)
                replaced = mutate(v2_spec) if mutate is not None else None
                v2_spec = replaced if isinstance(replaced, dict) else v2_spec
                v2_spec = (v2_edit(v2_spec) or v2_spec) if v2_edit is not None else v2_spec
                data = to_v1(v2_spec)
                data["schemaVersion"] = self.settings.latest_schema_version
                store.record_ui_save(dash, data, user, message, v2_spec=v2_spec)
                return json.loads(json.dumps(dash.data))
            data = ui_normalise(
                dash.data,
                grafana_version=self.settings.grafana_version,
                latest_schema_version=self.settings.latest_schema_version,
                datasources=self.datasources,
                default_datasource=self.default_datasource,
                drop_empty_tags=self.mode == GRAFANA13,
            )
            if mutate is not None:
                replaced = mutate(data)
                if isinstance(replaced, dict):
                    data = replaced
            v2_spec = None
            if self.settings.dynamic_dashboards if as_v2 is None else as_v2:
                v2_spec = to_v2(data)
                if v2_edit is not None:
                    v2_spec = v2_edit(v2_spec) or v2_spec
                data = to_v1(v2_spec)
                data["schemaVersion"] = self.settings.latest_schema_version
            store.record_ui_save(dash, data, user, message, v2_spec=v2_spec)
            return json.loads(json.dumps(dash.data))

    def stored_v2(self, uid: str, *, org_id: int = 1) -> dict[str, Any] | None:
        """The stored v2 spec of a dashboard a v2 UI save converted, else None."""
        store = self.org(org_id)
        with store.lock:
            dash = store.dashboards.get(uid)
            return json.loads(json.dumps(dash.v2_spec)) if dash and dash.v2_spec is not None else None

    def stored_api_version(self, uid: str, *, org_id: int = 1) -> str | None:
        store = self.org(org_id)
        with store.lock:
            dash = store.dashboards.get(uid)
            return dash.stored_version if dash else None

    # ------------------------------------------------------------------ request handling

    def _build_routes(self) -> list[_Route]:
        def route(
            method: str, path: str, handler: Callable[..., Any], *needs: str, authenticated: bool = True
        ) -> _Route:
            return _Route(method, re.compile(path), handler, needs, authenticated)

        return [
            route("GET", r"/api/health", self._health, authenticated=False),
            route("HEAD", r"/api/health", self._health, authenticated=False),
            route("GET", r"/healthz", self._healthz, authenticated=False),
            route("POST", r"/api/dashboards/db/?", self._save, "dashboards:create", "dashboards:write"),
            route("GET", rf"/api/dashboards/uid/{_UID}/versions", self._versions, "dashboards:write"),
            route("GET", rf"/api/dashboards/uid/{_UID}/versions/{_UID}", self._version, "dashboards:write"),
            route("POST", rf"/api/dashboards/uid/{_UID}/restore", self._restore, "dashboards:write"),
            route("GET", rf"/api/dashboards/uid/{_UID}", self._get, "dashboards:read"),
            route("DELETE", rf"/api/dashboards/uid/{_UID}", self._delete, "dashboards:delete"),
            route("GET", r"/api/search/?", self._search),
            route("GET", r"/api/folders/?", self._list_folders, "folders:read"),
            route("POST", r"/api/folders/?", self._create_folder, "folders:create"),
            route("GET", rf"/api/folders/{_UID}", self._get_folder, "folders:read"),
            route("PUT", rf"/api/folders/{_UID}", self._update_folder, "folders:write"),
            route("DELETE", rf"/api/folders/{_UID}", self._delete_folder, "folders:delete"),
            route("GET", r"/api/org/?", self._current_org),
            *self._library_routes(route),
            *self._alerting_routes(route),
            *self._permission_routes(route),
            route(
                "GET",
                rf"/apis/dashboard\.grafana\.app/{_UID}/namespaces/{_UID}/dashboards/{_UID}",
                self._apis_get,
                "dashboards:read",
            ),
            route(
                "GET",
                rf"/apis/dashboard\.grafana\.app/{_UID}/namespaces/{_UID}/dashboards/?",
                self._apis_list,
                "dashboards:read",
            ),
            route(
                "PUT",
                rf"/apis/dashboard\.grafana\.app/{_UID}/namespaces/{_UID}/dashboards/{_UID}",
                self._apis_put,
                "dashboards:create",
                "dashboards:write",
            ),
            route(
                "POST",
                rf"/apis/dashboard\.grafana\.app/{_UID}/namespaces/{_UID}/dashboards/?",
                self._apis_post,
                "dashboards:create",
            ),
        ]

    def _library_routes(self, route: Callable[..., _Route]) -> list[_Route]:
        """``/api/library-elements`` (§14), with its RBAC actions."""
        lib = r"/api/library-elements"
        panels = rf"/apis/dashboard\.grafana\.app/{_UID}/namespaces/{_UID}/librarypanels"
        read = ("library.panels:read",)

        def store(ctx: _Context) -> Any:
            return library_of(ctx.store)

        return [
            route("GET", rf"{lib}/name/{_UID}", lambda c: store(c).by_name(c.params[0]), "library.panels:read"),
            route(
                "GET",
                rf"{lib}/{_UID}/connections/?",
                lambda c: store(c).connections(c.params[0]),
                "library.panels:read",
            ),
            route("GET", rf"{lib}/{_UID}", lambda c: store(c).get(c.params[0]), "library.panels:read"),
            route("GET", rf"{lib}/?", lambda c: store(c).list(c.query), "library.panels:read"),
            route(
                "POST", rf"{lib}/?", lambda c: store(c).create(_parse_json(c.body), c.actor), "library.panels:create"
            ),
            route(
                "PATCH",
                rf"{lib}/{_UID}",
                lambda c: store(c).patch(c.params[0], _parse_json(c.body), c.actor),
                "library.panels:write",
            ),
            route("DELETE", rf"{lib}/{_UID}", lambda c: store(c).delete(c.params[0]), "library.panels:delete"),
            route("GET", rf"{panels}/{_UID}", lambda c: store(self._panels(c)).resource_get(c.params[2]), *read),
            route("POST", rf"{panels}/?", lambda c: self._panels_write(c, None), "library.panels:create"),
            route("PUT", rf"{panels}/{_UID}", lambda c: self._panels_write(c, c.params[2]), "library.panels:write"),
        ]

    def _panels(self, ctx: _Context) -> _Context:
        """The caller's context once the librarypanels resource is known served: Grafana 13's v0alpha1 only (12 and
        other versions answer a 404 that names no object, as an unserved resource does)."""
        if self.mode != GRAFANA13 or ctx.params[0] != "v0alpha1":
            raise apis.status_error(404, "NotFound", "the server could not find the requested resource")
        if apis.org_of(ctx.params[1]) != ctx.store.org_id:
            raise apis.status_error(
                403, "Forbidden", f"namespace {ctx.params[1]!r} is not the organisation of the caller"
            )
        return ctx

    def _panels_write(self, ctx: _Context, name: str | None) -> _Answer:
        status, body = library_of(self._panels(ctx).store).resource_write(name, _parse_json(ctx.body), ctx.actor)
        return _Answer(status, _encode(body))

    def _alerting_routes(self, route: Callable[..., _Route]) -> list[_Route]:
        """``/api/v1/provisioning`` rule groups and rules (§15)."""
        base = r"/api/v1/provisioning"
        group = rf"{base}/folder/{_UID}/rule-groups/{_UID}"

        def store(ctx: _Context) -> Any:
            return alerting_of(ctx.store)

        def empty_404(handler: Callable[[_Context], Any]) -> Callable[[_Context], Any]:
            def answer(ctx: _Context) -> Any:
                try:
                    return handler(ctx)
                except EmptyNotFound:
                    return _Answer(404, b"")

            return answer

        def delete(ctx: _Context) -> _Answer:
            store(ctx).delete_group(ctx.params[0], ctx.params[1], ctx.headers)
            return _Answer(204, b"")

        read, write = "alert.provisioning:read", "alert.provisioning:write"
        return [
            route("GET", rf"{group}/export", lambda c: store(c).export_group(c.params[0], c.params[1]), read),
            route("GET", group, lambda c: store(c).get_group(c.params[0], c.params[1]), read),
            route(
                "PUT",
                group,
                lambda c: store(c).put_group(c.params[0], c.params[1], _parse_json(c.body), c.headers),
                write,
            ),
            route("DELETE", group, delete, write),
            route("GET", rf"{base}/alert-rules/?", lambda c: store(c).list_rules(), read),
            route("GET", rf"{base}/alert-rules/{_UID}", empty_404(lambda c: store(c).get_rule(c.params[0])), read),
        ]

    def _permission_routes(self, route: Callable[..., _Route]) -> list[_Route]:
        """RBAC folder permissions (§16.2) and the name lookups."""
        acl = r"/api/access-control/folders"

        def store(ctx: _Context) -> Any:
            return permissions_of(ctx.store)

        def first(ctx: _Context, name: str) -> str:
            return (ctx.query.get(name) or [""])[0]

        return [
            route("GET", rf"{acl}/{_UID}", lambda c: store(c).get(c.params[0]), "folders.permissions:read"),
            route(
                "POST",
                rf"{acl}/{_UID}/(teams|users|builtInRoles)/{_UID}",
                lambda c: store(c).set(c.params[0], c.params[1], c.params[2], _parse_json(c.body)),
                "folders.permissions:write",
            ),
            route("GET", r"/api/teams/search/?", lambda c: store(c).search_teams(first(c, "name"))),
            route(
                "GET", r"/api/serviceaccounts/search/?", lambda c: store(c).search_service_accounts(first(c, "query"))
            ),
            route("GET", r"/api/users/lookup/?", lambda c: store(c).lookup_user(first(c, "loginOrEmail"))),
        ]

    def directory(self, *, org_id: int = 1) -> Any:
        """The organisation's teams, users and service accounts (``add_team`` / ``add_user`` / ...)."""
        return permissions_of(self.org(org_id))

    def simulate_permission_change(self, folder_uid: str, kind: str, key: str, level: str, *, org_id: int = 1) -> None:
        """A person sets (``level`` "" removes) one assignment of a folder in the UI: kind teams / users /
        builtInRoles, key the id (or role)."""
        permissions_of(self.org(org_id)).set(folder_uid, kind, key, {"permission": level})

    def folder_permissions(self, folder_uid: str, *, org_id: int = 1) -> list[dict[str, Any]]:
        return permissions_of(self.org(org_id)).get(folder_uid)

    def simulate_rule_edit(
        self, uid: str, mutate: Callable[[dict[str, Any]], Any], *, through_api: bool = False, org_id: int = 1
    ) -> dict[str, Any]:
        """A person edits Grafana-managed rule ``uid`` (in the UI, or through the API: provenance ``api``)."""
        return alerting_of(self.org(org_id)).person_edit(uid, mutate, through_api=through_api)

    def rule_group(self, folder_uid: str, title: str, *, org_id: int = 1) -> dict[str, Any] | None:
        """The stored rule group as the API answers it, or None."""
        try:
            return alerting_of(self.org(org_id)).get_group(folder_uid, title)
        except ApiError:
            return None

    def simulate_library_edit(
        self, uid: str, mutate: Callable[[dict[str, Any]], Any], *, user: str = "admin", org_id: int = 1
    ) -> dict[str, Any]:
        """A person edits library panel ``uid`` in the UI and saves it; returns the new DTO."""
        return library_of(self.org(org_id)).person_edit(uid, mutate, user)

    def simulate_kubernetes_library_panels(self, on: bool = True, *, org_id: int = 1) -> None:
        """Grafana's ``libraryelementsKubernetesLibraryPanels`` flag: the legacy library-element routes store
        through the ``librarypanels`` resource (``tests/standin/library.py`` says what that keeps)."""
        library_of(self.org(org_id)).kubernetes_library_panels = on

    def library_element(self, uid: str, *, org_id: int = 1) -> dict[str, Any] | None:
        """The stored element's DTO (a copy), or None."""
        store = library_of(self.org(org_id))
        with store.org.lock:
            element = store.elements.get(uid)
            return store.dto(element) if element is not None else None

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _log(self, entry: LoggedRequest) -> None:
        with self._lock:
            self.request_log.append(entry)

    def _answer(
        self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> _Answer:
        try:
            for candidate in self._routes:
                match = candidate.pattern.fullmatch(path)
                if match and candidate.method == method:
                    break
            else:
                raise plain_error(404, "Not found")
            ctx = _Context(query=query, body=body, params=[unquote(g) for g in match.groups()], headers=headers)
            if candidate.authenticated:
                ctx.actor, ctx.store = self._authenticate(headers)
                if candidate.needs and not any(p in self.permissions for p in candidate.needs):
                    raise _rbac_denied(candidate.needs)
            result = candidate.handler(ctx)
            if isinstance(result, _Answer):
                return result
            return _Answer(200, _encode(result))
        except ApiError as err:
            return _Answer(err.status, _encode(err.body))

    def _authenticate(self, headers: dict[str, str]) -> tuple[str, OrgStore]:
        """§6: Bearer service-account token or Basic login; the org header selects the user's org."""
        org_header = headers.get("x-grafana-org-id", "").strip()
        if self.token is None and self.basic_auth is None:
            return "Anonymous", self.org(int(org_header) if org_header.isdigit() else 1)
        auth = headers.get("authorization", "")
        scheme, _, credential = auth.partition(" ")
        if scheme.lower() == "bearer" and credential:
            if self.token is None or not hmac.compare_digest(credential.encode(), self.token.encode()):
                raise errutil_error(401, "api-key.invalid", "Invalid API key")
            if org_header and org_header != str(self.token_org_id):
                raise errutil_error(
                    401, "api-key.organization-mismatch", "API key does not belong to the requested organization"
                )
            return self.service_account, self.org(self.token_org_id)
        if scheme.lower() == "basic" and credential:
            try:
                login, _, password = base64.b64decode(credential).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                login, password = "", ""
            expected = self.basic_auth
            if expected is None or not (login == expected[0] and hmac.compare_digest(password, expected[1])):
                raise errutil_error(401, "password-auth.failed", "Invalid username or password")
            org_id = int(org_header) if org_header.isdigit() else self.user_org_ids[0]
            if org_id not in self.user_org_ids:
                raise errutil_error(401, "auth.unauthorized", "Unauthorized")
            return login, self.org(org_id)
        raise errutil_error(401, "auth.unauthorized", "Unauthorized")

    # ------------------------------------------------------------------ endpoint handlers

    def _health(self, ctx: _Context) -> _Answer:
        body: dict[str, Any] = {"database": "failing" if self.database_failing else "ok"}
        if not self.hide_version:
            body["version"] = self.settings.grafana_version
            body["commit"] = "0123456789"
        return _Answer(503 if self.database_failing else 200, json.dumps(body, indent=2).encode())

    def _healthz(self, ctx: _Context) -> _Answer:
        return _Answer(200, b"Ok", "text/plain; charset=utf-8")

    def _save(self, ctx: _Context) -> Any:
        if len(ctx.body) > self.max_dashboard_bytes:
            limit_mb = self.max_dashboard_bytes / (1024 * 1024)
            raise response_error(413, f"Dashboard is too large, max is {limit_mb:g} MB")
        return ctx.store.save_via_api(_parse_json(ctx.body), ctx.actor, self.permissions)

    def _get(self, ctx: _Context) -> Any:
        return ctx.store.get_dashboard(ctx.params[0], self.permissions)

    def _delete(self, ctx: _Context) -> Any:
        return ctx.store.delete_dashboard(ctx.params[0])

    def _versions(self, ctx: _Context) -> Any:
        limit = _int(ctx.query, "limit")
        start = _int(ctx.query, "start")
        return ctx.store.list_versions(ctx.params[0], limit, start)

    def _version(self, ctx: _Context) -> Any:
        return ctx.store.get_version(ctx.params[0], ctx.params[1])

    def _restore(self, ctx: _Context) -> Any:
        return ctx.store.restore(ctx.params[0], _parse_json(ctx.body), ctx.actor)

    def _search(self, ctx: _Context) -> Any:
        lag = self.search_lag if self.mode == GRAFANA13 else 0.0
        return search(ctx.store, ctx.query, self.permissions, lag)

    def _list_folders(self, ctx: _Context) -> Any:
        parent = (ctx.query.get("parentUid") or [""])[0]
        return ctx.store.list_folders(parent, _int(ctx.query, "limit"), _int(ctx.query, "page") or 1)

    def _get_folder(self, ctx: _Context) -> Any:
        return ctx.store.get_folder(ctx.params[0])

    def _create_folder(self, ctx: _Context) -> Any:
        return ctx.store.create_folder(_parse_json(ctx.body), ctx.actor)

    def _update_folder(self, ctx: _Context) -> Any:
        return ctx.store.update_folder(ctx.params[0], _parse_json(ctx.body), ctx.actor)

    def _delete_folder(self, ctx: _Context) -> Any:
        return ctx.store.delete_folder(ctx.params[0])

    def _current_org(self, ctx: _Context) -> Any:
        return {
            "id": ctx.store.org_id,
            "name": "Main Org." if ctx.store.org_id == 1 else f"Org {ctx.store.org_id}",
            "address": {"address1": "", "address2": "", "city": "", "zipCode": "", "state": "", "country": ""},
        }

    def _apis_scope(self, ctx: _Context) -> str:
        """The API version of the path, after checking it is served and the namespace is the caller's org."""
        version, namespace = ctx.params[0], ctx.params[1]
        apis.check_version(self.mode, version)
        if apis.org_of(namespace) != ctx.store.org_id:
            raise apis.status_error(403, "Forbidden", f"namespace {namespace!r} is not the organisation of the caller")
        return version

    def _apis_get(self, ctx: _Context) -> Any:
        version, name = self._apis_scope(ctx), ctx.params[2]
        with ctx.store.lock:
            dash = ctx.store.dashboards.get(name)
            key = (
                (
                    ctx.store.org_id,
                    name,
                    version,
                    dash.resource_version,
                    dash.folder_uid,
                    dash.stored_version,
                    self.settings.latest_schema_version,
                )
                if dash is not None
                else None
            )
            cached = self._encoded.get(key) if key else None
            if cached is not None:
                return _Answer(200, cached)
            body = _encode(apis.get_resource(ctx.store, version, name))
        if key is not None:  # an object's answer only changes with its resourceVersion: encode it once
            with self._lock:
                if len(self._encoded) > 256:
                    self._encoded.clear()
                self._encoded[key] = body
        return _Answer(200, body)

    def _apis_list(self, ctx: _Context) -> Any:
        return apis.list_resources(ctx.store, self._apis_scope(ctx), ctx.query)

    def _apis_write(self, ctx: _Context, name: str | None) -> _Answer:
        if len(ctx.body) > self.max_dashboard_bytes:
            raise apis.status_error(413, "RequestEntityTooLarge", "request object is too big")
        dry_run = (ctx.query.get("dryRun") or [""])[0] == "All"
        status, body = apis.write_resource(
            ctx.store,
            self._apis_scope(ctx),
            name,
            _parse_json(ctx.body),
            ctx.actor,
            create=name is None,
            dry_run=dry_run,
        )
        return _Answer(status, _encode(body))

    def _apis_put(self, ctx: _Context) -> Any:
        return self._apis_write(ctx, ctx.params[2])

    def _apis_post(self, ctx: _Context) -> Any:
        return self._apis_write(ctx, None)


@dataclass
class _Context:
    query: dict[str, list[str]]
    body: bytes
    params: list[str]
    actor: str = "Anonymous"
    store: OrgStore = None  # type: ignore[assignment]
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout test) leaves a broken pipe behind; that is expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; avoid the 40 ms delayed-ACK stall
    timeout = 10  # an idle keep-alive connection is dropped after this many seconds
    server_version = "Grafana"
    sys_version = ""

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        pass

    def _dispatch(self) -> None:
        standin: GrafanaStandin = self.server.standin  # type: ignore[attr-defined]
        split = urlsplit(self.path)
        body = self._read_body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        entry = LoggedRequest(
            self.command,
            split.path,
            _redacted(self.headers.items()),
            body,
            parse_qs(split.query, keep_blank_values=True),
        )
        standin._log(entry)
        with standin._lock:
            standin.in_flight += 1
            standin.max_in_flight = max(standin.max_in_flight, standin.in_flight)
        try:
            self._handle(standin, split, entry, body, headers)
        finally:
            with standin._lock:
                standin.in_flight -= 1

    def _handle(
        self, standin: GrafanaStandin, split: Any, entry: LoggedRequest, body: bytes, headers: dict[str, str]
    ) -> None:
        standin._wait(standin.latency)

        fault = standin.faults.take(self.command, split.path)
        if fault is not None and not fault.after_handling:
            if fault.kind == CLOSE:
                self.close_connection = True
                return
            if fault.kind == STATUS:
                self._send(entry, _Answer(fault.status, fault.body, fault.content_type, fault.headers))
                return
            standin._wait(fault.seconds)

        # a reverse proxy that forwards the path alone (nginx ``proxy_pass http://grafana$uri;``) drops the query
        answer = standin._answer(
            self.command, split.path, {} if standin.drop_query_strings else entry.query, headers, body
        )

        if fault is not None and fault.after_handling:
            if fault.kind == CLOSE:
                self.close_connection = True
                return
            if fault.kind == STATUS:  # the request took effect, the answer says otherwise
                self._send(entry, _Answer(fault.status, fault.body, fault.content_type, fault.headers))
                return
            if fault.kind == DELAY:
                standin._wait(fault.seconds)
            elif fault.kind == TRUNCATE:
                self._send_truncated(entry, answer, fault)
                return
            elif fault.kind == STALE and answer.status == 200:
                answer = _stale(answer, fault)
        self._send(entry, answer)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        chunks = []
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            length -= len(chunk)
        return b"".join(chunks)

    def _send(self, entry: LoggedRequest, answer: _Answer) -> None:
        entry.status = answer.status
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    def _send_truncated(self, entry: LoggedRequest, answer: _Answer, fault: Fault) -> None:
        entry.status = answer.status
        cut = answer.body[: max(0, int(len(answer.body) * fault.keep_fraction))]
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(cut) if fault.honest_length else len(answer.body)))
        self.end_headers()
        self.wfile.write(cut)
        self.wfile.flush()
        if not fault.honest_length:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_WR)


def _redacted(items: Any) -> dict[str, str]:
    out = {}
    for name, value in items:
        if name.lower() == "authorization":
            scheme = value.split(" ", 1)[0]
            value = f"{scheme} ***"
        out[name] = value
    return out


# JSON in and out through orjson, as fast as Grafana's Go encoder is next to the client: the stand-in serves every
# request under one GIL, and Python's encoder made its own CPU a queue that real Grafana does not have (issue 16's
# bench: 0.4 s of it per 50 dashboards, in line before every answer). Go's rules are kept: sorted keys, no spaces,
# UTF-8 as is (grafana-api.md §1); NaN / Infinity are refused (Go cannot read them) and a number is read as
# Python's parser reads it (integers beyond 64 bits too, which orjson would read as floats).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _encode(payload: Any) -> bytes:
    try:
        return orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400: Go's decoder refuses it as out of range
        raise ValueError(text)
    return value


def _parse_json(body: bytes) -> Any:
    try:
        if b"0" * 19 not in body.translate(_DIGITS_TO_ZERO):
            with contextlib.suppress(orjson.JSONDecodeError):
                return orjson.loads(body)
        return json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise response_error(400, "bad request data") from None


def _int(query: dict[str, list[str]], name: str) -> int:
    raw = (query.get(name) or [""])[0]
    return int(raw) if raw.isdigit() else 0


def _rbac_denied(needs: tuple[str, ...]) -> ApiError:
    wanted = f"any of {', '.join(needs)}" if len(needs) > 1 else needs[0]
    return ApiError(
        403,
        {
            "accessErrorId": "ACE" + "".join(random.choices("0123456789", k=10)),
            "message": f"You'll need additional permissions to perform this action. Permissions needed: {wanted}",
            "title": "Access denied",
        },
    )


def free_port() -> int:
    """A local port nobody listens on right now (for connection-refused tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


__all__ = ["ALL_PERMISSIONS", "GrafanaStandin", "LoggedRequest", "free_port"]
