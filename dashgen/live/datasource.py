"""A client for the Prometheus-compatible HTTP API: VictoriaMetrics (single node or cluster) and Prometheus.

Query side (``base_url``): ``/api/v1/query``, ``/api/v1/query_range``, ``/api/v1/series``,
``/api/v1/label/<name>/values``. Base URLs look like ``http://host:8428`` (single VictoriaMetrics),
``http://vmselect:8481/select/0/prometheus`` (cluster) or ``http://prom:9090`` (Prometheus).

Write side (``import_url``): VictoriaMetrics' JSON-lines ``/api/v1/import``. A single node
imports at its own base URL; a cluster imports at vminsert (``http://vminsert:8480/insert/0/prometheus``),
so the import URL is configured separately; Prometheus has none.

Every failure becomes a :class:`DatasourceError` naming the URL, the HTTP status and the data
source's own error message. HTTP itself (session, timeouts, TLS) is ``dashgen.net.http``, the same
transport the Grafana client uses; the data source's requests are not retried (``NO_RETRY``).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from dashgen.errors import DashgenError, InputError
from dashgen.net.http import NO_RETRY, HttpResponse, HttpTransport, NoAnswer


class DatasourceError(DashgenError):
    """The data source refused or failed a request. ``status`` is the HTTP status (None: no answer)."""

    exit_code = 1

    def __init__(self, url: str, status: int | None, message: str, error_type: str = "") -> None:
        self.url = url
        self.status = status
        self.message = message
        self.error_type = error_type
        where = f"HTTP {status}" if status is not None else "no answer"
        kind = f" {error_type}" if error_type else ""
        super().__init__(f"{url}: {where}{kind}: {message}")


@dataclass(frozen=True)
class QueryResult:
    """The ``data`` of a query answer: ``result_type`` (vector, matrix, scalar, string) and the result list."""

    result_type: str
    result: list[Any]

    @property
    def series(self) -> int:
        if self.result_type in ("vector", "matrix"):
            return len(self.result)
        return 1 if self.result else 0


def _seconds(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


class Datasource:
    """A Prometheus-compatible API at ``base_url``; ``import_url`` (VictoriaMetrics only) for writes."""

    def __init__(self, base_url: str, import_url: str | None = None, timeout: float = 30.0) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InputError(f"data source URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.import_url = (import_url or self.base_url).rstrip("/")
        self.timeout = timeout
        self._http = HttpTransport(
            "data source", self.base_url, connect_timeout=timeout, read_timeout=timeout, retry=NO_RETRY,
            follow_redirects=True, logger=logging.getLogger("dashgen.live"),
        )

    # -- plumbing ---------------------------------------------------------------------------------

    def _request(self, method: str, url: str, timeout: float | None = None, **kwargs: Any) -> HttpResponse:
        seconds = timeout or self.timeout
        try:
            return self._http.request(method, url, timeout=seconds, **kwargs)
        except NoAnswer as exc:
            if exc.timed_out:
                raise DatasourceError(url, None, f"timed out after {seconds:g}s") from None
            raise DatasourceError(url, None, f"cannot connect: {exc.cause.__class__.__name__}: {exc.cause}") from None

    def _api(self, path: str, params: dict[str, Any] | list[tuple[str, Any]], timeout: float | None = None,
             method: str = "POST") -> Any:
        """The ``data`` of a ``{"status": "success", "data": ...}`` answer; anything else is a DatasourceError."""
        url = f"{self.base_url}{path}"
        # POST with a form body: long expressions and many match[] do not hit URL length limits.
        if method == "POST":
            response = self._request("POST", url, timeout=timeout, data=params)
        else:
            response = self._request(method, url, timeout=timeout, params=params)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            text = response.text.strip()[:500] or response.reason
            raise DatasourceError(url, response.status, text)
        if response.status >= 400 or body.get("status") != "success":
            raise DatasourceError(
                url, response.status, str(body.get("error") or response.reason), str(body.get("errorType") or "")
            )
        return body.get("data")

    # -- queries ----------------------------------------------------------------------------------

    def query(self, expr: str, time: float | None = None, timeout: float | None = None) -> QueryResult:
        """Instant query at ``time`` (unix seconds; None = now)."""
        params: dict[str, Any] = {"query": expr}
        if time is not None:
            params["time"] = _seconds(time)
        data = self._api("/api/v1/query", params, timeout)
        return QueryResult(data.get("resultType", ""), data.get("result") or [])

    def query_range(
        self, expr: str, start: float, end: float, step: float, timeout: float | None = None
    ) -> QueryResult:
        """Range query over [start, end] (unix seconds) with ``step`` seconds."""
        params = {"query": expr, "start": _seconds(start), "end": _seconds(end), "step": _seconds(step)}
        data = self._api("/api/v1/query_range", params, timeout)
        return QueryResult(data.get("resultType", ""), data.get("result") or [])

    def label_values(
        self, label: str, matchers: Iterable[str] = (), start: float | None = None, end: float | None = None
    ) -> list[str]:
        """Values of ``label`` on the series matching any of ``matchers`` (all series when none) in [start, end]."""
        params: list[tuple[str, Any]] = [("match[]", m) for m in matchers]
        if start is not None:
            params.append(("start", _seconds(start)))
        if end is not None:
            params.append(("end", _seconds(end)))
        return list(self._api(f"/api/v1/label/{label}/values", params, method="GET") or [])

    # -- VictoriaMetrics writes -------------------------------------------------------------------

    def import_lines(self, lines: Iterable[bytes], chunk_bytes: int = 16 << 20, timeout: float = 120.0) -> int:
        """POST JSON lines to ``<import_url>/api/v1/import`` in bodies of about ``chunk_bytes``; returns lines sent."""
        url = f"{self.import_url}/api/v1/import"
        sent = 0
        for body, count in _chunks(lines, chunk_bytes):
            response = self._request("POST", url, timeout=timeout, data=body)
            if response.status >= 300:
                raise DatasourceError(url, response.status, response.text.strip()[:500] or response.reason)
            sent += count
        return sent

    def import_series(self, series: Iterable[dict[str, Any]], chunk_bytes: int = 16 << 20) -> int:
        """Import ``{"metric": {...}, "values": [...], "timestamps": [ms, ...]}`` objects."""
        return self.import_lines((json.dumps(s, separators=(",", ":")).encode() for s in series), chunk_bytes)

    def flush(self) -> None:
        """Make imported samples searchable now (VictoriaMetrics ``/internal/force_flush``; best effort)."""
        url = f"{self.import_url.split('/insert/')[0]}/internal/force_flush"
        with contextlib.suppress(DatasourceError):
            self._request("GET", url, timeout=30)


def _chunks(lines: Iterable[bytes], limit: int) -> Iterator[tuple[bytes, int]]:
    buffer: list[bytes] = []
    size = 0
    for line in lines:
        buffer.append(line if line.endswith(b"\n") else line + b"\n")
        size += len(buffer[-1])
        if size >= limit:
            yield b"".join(buffer), len(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer), len(buffer)
