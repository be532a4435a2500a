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
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import orjson

from dashgen.errors import DashgenError, InputError, redact
from dashgen.escape import terminal_text
from dashgen.net.http import NO_RETRY, HttpResponse, HttpTransport, NoAnswer, without_credentials
from dashgen.net.urls import url_problem

RESULT_TYPES = ("vector", "matrix", "scalar", "string")
# Series one answer may hold: counted in the raw bytes before decoding (one million series took 2.1 GiB once
# decoded); no dashboard panel needs more, and a query that returns more is itself the problem to report.
MAX_SERIES = 50_000
_SERIES_KEY = b'"metric":'  # a key: inside a JSON string its quotes would be escaped


ResultType = Literal["vector", "matrix", "scalar", "string"]


class DatasourceError(DashgenError):
    """The data source refused or failed a request. ``status`` is the HTTP status (None: no answer)."""

    exit_code = 1

    def __init__(
        self, url: str, status: int | None, message: str, error_type: str = "", connection: bool = False
    ) -> None:
        # the server's words, shown as text: no control sequence of theirs reaches a terminal or a report
        url = terminal_text(redact(without_credentials(url)))
        message, error_type = terminal_text(redact(message)), terminal_text(redact(error_type), 100)
        self.url = url
        self.status = status
        self.message = message
        self.error_type = error_type
        self.connection = connection  # no answer at all (refused, unreachable, timed out)
        where = f"HTTP {status}" if status is not None else "no answer"
        kind = f" {error_type}" if error_type else ""
        super().__init__(f"{url}: {where}{kind}: {message}")


@dataclass(frozen=True)
class QueryResult:
    """The ``data`` of a query answer: ``result_type`` (vector, matrix, scalar, string) and the result list."""

    result_type: ResultType
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
            raise InputError(f"data source URL must start with http:// or https://, got {redact(base_url)!r}")
        if (problem := url_problem(base_url)) is not None:
            raise InputError(f"data source URL {redact(without_credentials(base_url))!r} {problem}")
        # user:password@ in the URL becomes basic auth, and the URL the messages name carries no credentials
        parts = urlsplit(base_url)
        auth = (unquote(parts.username or ""), unquote(parts.password or "")) if parts.username else None
        self.base_url = without_credentials(base_url).rstrip("/")
        self.import_url = without_credentials(import_url or self.base_url).rstrip("/")
        self.timeout = timeout
        self._http = HttpTransport(
            "data source",
            self.base_url,
            basic_auth=auth,
            connect_timeout=timeout,
            read_timeout=timeout,
            retry=NO_RETRY,
            follow_redirects=True,
            logger=logging.getLogger("dashgen.live"),
        )

    # -- plumbing ---------------------------------------------------------------------------------

    def _request(self, method: str, url: str, timeout: float | None = None, **kwargs: Any) -> HttpResponse:
        """One request with a total deadline of ``timeout`` seconds: not only per socket read, so a server
        that answers one byte a second is cut off too (the request runs on a daemon thread that is
        abandoned at the deadline)."""
        seconds = timeout or self.timeout
        outcome: dict[str, Any] = {}

        def send() -> None:
            try:
                outcome["response"] = self._http.request(method, url, timeout=seconds, **kwargs)
            except BaseException as exc:  # handed to the caller's thread below
                outcome["error"] = exc

        worker = threading.Thread(target=send, name="dashgen-datasource-request", daemon=True)
        worker.start()
        worker.join(seconds + 0.5)
        if worker.is_alive():
            raise DatasourceError(
                url, None, f"no complete answer within {seconds:g}s (total deadline per request)", connection=True
            )
        error = outcome.get("error")
        if isinstance(error, NoAnswer):
            if error.timed_out:
                raise DatasourceError(url, None, f"timed out after {seconds:g}s", connection=True) from None
            raise DatasourceError(
                url, None, f"cannot connect: {type(error.cause).__name__}: {error.reason}", connection=True
            ) from None
        if error is not None:
            raise DatasourceError(url, None, f"request failed: {type(error).__name__}: {error}") from None
        return outcome["response"]

    def _api(
        self,
        path: str,
        params: dict[str, Any] | list[tuple[str, Any]],
        timeout: float | None = None,
        method: str = "POST",
    ) -> Any:
        """The ``data`` of a ``{"status": "success", "data": ...}`` answer; anything else is a DatasourceError."""
        return self._answer(path, params, timeout, method).get("data")

    def _answer(
        self,
        path: str,
        params: dict[str, Any] | list[tuple[str, Any]],
        timeout: float | None = None,
        method: str = "POST",
    ) -> dict[str, Any]:
        """The whole ``{"status": "success", ...}`` answer (``data`` and, when asked for, ``stats`` or
        ``trace``); anything else is a DatasourceError."""
        url = f"{self.base_url}{path}"
        # POST with a form body: long expressions and many match[] do not hit URL length limits.
        if method == "POST":
            response = self._request("POST", url, timeout=timeout, data=params)
        else:
            response = self._request(method, url, timeout=timeout, params=params)
        if (series := response.body.count(_SERIES_KEY)) > MAX_SERIES:
            raise DatasourceError(
                url,
                response.status,
                f"the answer holds {series:,} series, over the limit of {MAX_SERIES:,}: narrow the query",
            )
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            text = response.text.strip()[:500] or response.reason
            raise DatasourceError(url, response.status, text)
        if response.status >= 400 or body.get("status") != "success":
            raise DatasourceError(
                url,
                response.status,
                str(body.get("error") or response.reason)[:500],
                str(body.get("errorType") or ""),
            )
        return body

    def _result(
        self, path: str, params: dict[str, Any], timeout: float | None, answer: dict[str, Any] | None = None
    ) -> QueryResult:
        """A query answer's ``data``, its shape checked: a known ``resultType`` and a ``result`` of that type.
        ``answer``: the whole answer, when the caller already has it (the cost report reads its statistics)."""
        data = (answer if answer is not None else self._answer(path, params, timeout)).get("data")
        url = f"{self.base_url}{path}"
        if not isinstance(data, dict):
            raise DatasourceError(url, 200, f"malformed answer: data is {type(data).__name__}, not an object")
        kind, result = data.get("resultType"), data.get("result")
        if kind not in RESULT_TYPES:
            raise DatasourceError(
                url, 200, f"malformed answer: resultType {str(kind)[:40]!r} is not one of {', '.join(RESULT_TYPES)}"
            )
        if kind in ("vector", "matrix"):
            if not isinstance(result, list):
                raise DatasourceError(
                    url, 200, f"malformed answer: {kind} result is {type(result).__name__}, not a list"
                )
            sample = "values" if kind == "matrix" else "value"
            for index, item in enumerate(result):
                if (
                    not isinstance(item, dict)
                    or not isinstance(item.get("metric", {}), dict)
                    or not isinstance(item.get(sample), list)
                ):
                    raise DatasourceError(
                        url, 200, f"malformed answer: result[{index}] is not a series object with metric and {sample}"
                    )
            return QueryResult(kind, result)
        if not isinstance(result, list) or len(result) != 2:
            raise DatasourceError(url, 200, f"malformed answer: {kind} result is not a [time, value] pair")
        return QueryResult(kind, result)

    # -- queries ----------------------------------------------------------------------------------

    def query(self, expr: str, time: float | None = None, timeout: float | None = None) -> QueryResult:
        """Instant query at ``time`` (unix seconds; None = now)."""
        params: dict[str, Any] = {"query": expr}
        if time is not None:
            params["time"] = _seconds(time)
        return self._result("/api/v1/query", params, timeout)

    def query_range(
        self, expr: str, start: float, end: float, step: float, timeout: float | None = None
    ) -> QueryResult:
        """Range query over [start, end] (unix seconds) with ``step`` seconds."""
        params = {"query": expr, "start": _seconds(start), "end": _seconds(end), "step": _seconds(step)}
        return self._result("/api/v1/query_range", params, timeout)

    def query_with_stats(
        self, expr: str, start: float, end: float, step: float = 0.0, timeout: float | None = None
    ) -> tuple[QueryResult, dict[str, Any]]:
        """An instant (``step`` 0, at ``end``) or range query that asks the data source for its own statistics
        (Prometheus ``stats=all``, VictoriaMetrics ``trace=1``; each ignores the other's parameter): the
        checked result and the whole answer, whose ``stats`` / ``data.stats`` / ``trace`` the cost report reads."""
        if step:
            path = "/api/v1/query_range"
            params = {"query": expr, "start": _seconds(start), "end": _seconds(end), "step": _seconds(step)}
        else:
            path, params = "/api/v1/query", {"query": expr, "time": _seconds(end)}
        params.update(stats="all", trace="1")
        answer = self._answer(path, params, timeout)
        return self._result(path, params, timeout, answer), answer

    def label_names(
        self, matchers: Iterable[str] = (), start: float | None = None, end: float | None = None
    ) -> list[str]:
        """Names of the labels on the series matching any of ``matchers`` (all series when none) in [start, end]."""
        params: list[tuple[str, Any]] = [("match[]", m) for m in matchers]
        params += [("start", _seconds(start))] if start is not None else []
        params += [("end", _seconds(end))] if end is not None else []
        data = self._api("/api/v1/labels", params, method="GET") or []
        if not isinstance(data, list) or not all(isinstance(name, str) for name in data):
            raise DatasourceError(f"{self.base_url}/api/v1/labels", 200, "the answer is not a list of label names")
        return data

    def label_values(
        self, label: str, matchers: Iterable[str] = (), start: float | None = None, end: float | None = None
    ) -> list[str]:
        """Values of ``label`` on the series matching any of ``matchers`` (all series when none) in [start, end]."""
        params: list[tuple[str, Any]] = [("match[]", m) for m in matchers]
        if start is not None:
            params.append(("start", _seconds(start)))
        if end is not None:
            params.append(("end", _seconds(end)))
        data = self._api(f"/api/v1/label/{label}/values", params, method="GET") or []
        if not isinstance(data, list) or not all(isinstance(value, str) for value in data):
            raise DatasourceError(
                f"{self.base_url}/api/v1/label/{label}/values",
                200,
                "malformed answer: label values are not a list of strings",
            )
        return list(data)

    # -- VictoriaMetrics writes -------------------------------------------------------------------

    def import_lines(self, lines: Iterable[bytes], chunk_bytes: int = 16 << 20, timeout: float = 120.0) -> int:
        """POST JSON lines to ``<import_url>/api/v1/import`` in bodies of about ``chunk_bytes``; returns lines sent.
        The next body is made (the demo's series generated) while the store ingests the one before: one request in
        flight, in order; a refused body stops the import at the next one."""
        url = f"{self.import_url}/api/v1/import"
        sent = 0
        pending: _InFlight | None = None
        for body, count in _chunks(lines, chunk_bytes):
            if pending is not None:
                sent += pending.result()
            pending = _InFlight(self._import_body, url, body, count, timeout)
        if pending is not None:
            sent += pending.result()
        return sent

    def _import_body(self, url: str, body: bytes, count: int, timeout: float) -> int:
        response = self._request("POST", url, timeout=timeout, data=body)
        if response.status >= 300:
            raise DatasourceError(url, response.status, response.text.strip()[:500] or response.reason)
        return count

    def import_series(self, series: Iterable[dict[str, Any]], chunk_bytes: int = 16 << 20) -> int:
        """Import ``{"metric": {...}, "values": [...], "timestamps": [ms, ...]}`` objects."""
        return self.import_lines(map(import_line, series), chunk_bytes)

    def flush(self) -> None:
        """Make imported samples searchable now (VictoriaMetrics ``/internal/force_flush``; best effort)."""
        url = f"{self.import_url.split('/insert/')[0]}/internal/force_flush"
        with contextlib.suppress(DatasourceError):
            self._request("GET", url, timeout=30)


class _InFlight:
    """One import body sent on a daemon thread while the caller makes the next. A daemon thread, not an executor's:
    Ctrl-C (or an error making the next body) leaves at once instead of waiting for the request in flight, and the
    interpreter does not wait for it at exit (``_request`` bounds the request itself)."""

    def __init__(self, send: Callable[..., int], *args: Any) -> None:
        self._outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                self._outcome["sent"] = send(*args)
            except BaseException as exc:  # handed to the caller's thread by result()
                self._outcome["error"] = exc

        self._thread = threading.Thread(target=run, name="dashgen-import", daemon=True)
        self._thread.start()

    def result(self) -> int:
        """The lines sent, or the send's error raised in the caller's thread (waits in short joins, so a signal
        reaches the caller while the body is in flight)."""
        while self._thread.is_alive():
            self._thread.join(0.1)
        if "error" in self._outcome:
            raise self._outcome["error"]
        return int(self._outcome["sent"])


def import_line(series: dict[str, Any]) -> bytes:
    """One import object as a JSON line. orjson writes it in a quarter of ``json``'s time (the demo's imports: ~6 s of
    CPU for the fault suite's fifteen deployments) and reads back as the same values; what orjson refuses (a key
    not a string, an integer over 64 bits) or writes as ``null`` (NaN, an infinity) is written by ``json`` as
    before, so the store reads what it always read."""
    try:
        line = orjson.dumps(series)
    except TypeError:  # orjson.JSONEncodeError
        line = b"null"
    return line if b"null" not in line else json.dumps(series, separators=(",", ":")).encode()


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
