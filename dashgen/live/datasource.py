"""A client for the Prometheus-compatible HTTP API: VictoriaMetrics (single node or cluster) and Prometheus.

Query side (``base_url``): ``/api/v1/query``, ``/api/v1/query_range``, ``/api/v1/series``,
``/api/v1/label/<name>/values``. Base URLs look like ``http://host:8428`` (single VictoriaMetrics),
``http://vmselect:8481/select/0/prometheus`` (cluster) or ``http://prom:9090`` (Prometheus).

Write side (``import_url``): VictoriaMetrics' JSON-lines ``/api/v1/import``. A single node
imports at its own base URL; a cluster imports at vminsert (``http://vminsert:8480/insert/0/prometheus``),
so the import URL is configured separately; Prometheus has none.

Every failure becomes a :class:`DatasourceError` naming the URL, the HTTP status and the data
source's own error message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import requests

from dashgen.errors import DashgenError, InputError


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

    def __init__(
        self,
        base_url: str,
        import_url: str | None = None,
        timeout: float = 30.0,
        session: requests.Session | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InputError(f"data source URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.import_url = (import_url or self.base_url).rstrip("/")
        self.timeout = timeout
        self.session = session or requests.Session()

    # -- plumbing ---------------------------------------------------------------------------------

    def _request(self, method: str, url: str, timeout: float | None = None, **kwargs: Any) -> requests.Response:
        try:
            response = self.session.request(method, url, timeout=timeout or self.timeout, **kwargs)
        except requests.Timeout:
            raise DatasourceError(url, None, f"timed out after {timeout or self.timeout:g}s") from None
        except requests.RequestException as exc:
            raise DatasourceError(url, None, f"cannot connect: {exc.__class__.__name__}: {exc}") from None
        return response

    def _api(self, path: str, params: dict[str, Any] | list[tuple[str, Any]], timeout: float | None = None) -> Any:
        url = f"{self.base_url}{path}"
        # POST with a form body: long expressions and many match[] do not hit URL length limits.
        response = self._request("POST", url, timeout=timeout, data=params)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            text = response.text.strip()[:500] or response.reason
            raise DatasourceError(url, response.status_code, text)
        if response.status_code >= 400 or body.get("status") != "success":
            raise DatasourceError(
                url, response.status_code, str(body.get("error") or response.reason), str(body.get("errorType") or "")
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

    def series(self, matchers: Iterable[str], start: float | None = None, end: float | None = None) -> list[dict]:
        """Label sets of the series matching any of ``matchers`` in [start, end]."""
        params: list[tuple[str, Any]] = [("match[]", m) for m in matchers]
        if start is not None:
            params.append(("start", _seconds(start)))
        if end is not None:
            params.append(("end", _seconds(end)))
        return list(self._api("/api/v1/series", params) or [])

    def label_values(
        self, label: str, matchers: Iterable[str] = (), start: float | None = None, end: float | None = None
    ) -> list[str]:
        params: list[tuple[str, Any]] = [("match[]", m) for m in matchers]
        if start is not None:
            params.append(("start", _seconds(start)))
        if end is not None:
            params.append(("end", _seconds(end)))
        url = f"{self.base_url}/api/v1/label/{label}/values"
        response = self._request("GET", url, params=params)
        try:
            body = response.json()
        except ValueError:
            raise DatasourceError(url, response.status_code, response.text.strip()[:500]) from None
        if response.status_code >= 400 or body.get("status") != "success":
            raise DatasourceError(url, response.status_code, str(body.get("error") or response.reason))
        return list(body.get("data") or [])

    # -- VictoriaMetrics writes -------------------------------------------------------------------

    def import_lines(self, lines: Iterable[bytes], chunk_bytes: int = 16 << 20, timeout: float = 120.0) -> int:
        """POST JSON lines to ``<import_url>/api/v1/import`` in bodies of about ``chunk_bytes``; returns lines sent."""
        url = f"{self.import_url}/api/v1/import"
        sent = 0
        for body, count in _chunks(lines, chunk_bytes):
            response = self._request("POST", url, timeout=timeout, data=body)
            if response.status_code >= 300:
                raise DatasourceError(url, response.status_code, response.text.strip()[:500] or response.reason)
            sent += count
        return sent

    def import_series(self, series: Iterable[dict[str, Any]], chunk_bytes: int = 16 << 20) -> int:
        """Import ``{"metric": {...}, "values": [...], "timestamps": [ms, ...]}`` objects."""
        import json

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
