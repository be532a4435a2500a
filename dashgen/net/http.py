"""The one HTTP transport: session, timeouts, TLS, credentials and retries for Grafana and the data source.

``HttpTransport.request`` returns the raw answer for any status; it raises only when there is
no usable answer (``NoAnswer``, ``TLSFailure``). The retry rule lives here and nowhere else:
GET and HEAD are retried with exponential backoff on connection errors, timeouts and the
policy's statuses (500/502/503/504); anything else (POST, PUT, DELETE) is sent exactly once.
``NoAnswer.sent`` tells whether the request may have reached the server, so a client can tell
"nothing was sent" from "a write may or may not have landed".

The transport knows no service's API and raises no service's errors: ``dashgen.grafana`` and
``dashgen.live.datasource`` turn answers and ``NoAnswer`` into their own domain errors.

Credentials never reach a message, repr or log line: they live only in the auth object
attached to each request, log lines name URLs without their user-info, and ``redact`` scrubs
the secrets from any text a client builds from server input.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
import urllib3

from dashgen import __version__
from dashgen.errors import InputError

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD"})
Timeout = float | tuple[float, float]


class InsecureTLSWarning(UserWarning):
    """TLS certificate verification was switched off for a service."""


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for GET/HEAD only. ``retries`` extra attempts; sleeps ``backoff * 2**n`` capped at ``backoff_max``."""

    retries: int = 3
    backoff: float = 0.5
    backoff_max: float = 8.0
    statuses: frozenset[int] = frozenset({500, 502, 503, 504})

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to sleep before attempt ``attempt + 1``; honours a numeric ``Retry-After`` up to the cap."""
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.backoff_max)
            except ValueError:
                pass
        base = min(self.backoff * (2 ** (attempt - 1)), self.backoff_max)
        return base / 2 + random.uniform(0, base / 2)  # jitter so parallel clients do not retry in step


NO_RETRY = RetryPolicy(retries=0)


@dataclass(frozen=True)
class HttpResponse:
    """An HTTP answer. ``url`` is the requested URL without the query string."""

    method: str
    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    attempts: int
    sent_bytes: int
    reason: str = ""

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    @property
    def text(self) -> str:
        """The body decoded with the charset the server names (UTF-8 when it names none)."""
        charset = "utf-8"
        for part in self.headers.get("Content-Type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The parsed JSON body; raises ValueError when it is not JSON."""
        return json.loads(self.body)


class NoAnswer(Exception):
    """No usable HTTP answer: connection refused, DNS or TLS failure, timeout, connection cut mid-answer.

    ``sent`` is False when the request certainly never reached the server (the connection never
    opened), True when it may have. ``cause`` is the underlying ``requests`` exception.
    """

    def __init__(self, method: str, url: str, reason: str, *, sent: bool, timed_out: bool, attempts: int,
                 cause: requests.exceptions.RequestException) -> None:
        super().__init__(f"{method} {url}: {reason}")
        self.method = method
        self.url = url
        self.reason = reason
        self.sent = sent
        self.timed_out = timed_out
        self.attempts = attempts
        self.cause = cause

    @property
    def write_may_have_landed(self) -> bool:
        """True for a non-idempotent request that may have reached the server: its outcome is unknown."""
        return self.sent and self.method not in IDEMPOTENT_METHODS


class TLSFailure(NoAnswer):
    """The TLS handshake failed (certificate not trusted, wrong host name); never retried."""


class _BearerAuth(requests.auth.AuthBase):
    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token}"

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = self._header
        return request

    def __repr__(self) -> str:
        return "<bearer token ***>"


class _BasicAuth(requests.auth.HTTPBasicAuth):
    def __repr__(self) -> str:
        return f"<basic auth user={self.username!r} password ***>"


class HttpTransport:
    """One ``requests.Session`` for one service and identity. ``service`` names it in messages ("Grafana").

    ``connect_timeout``/``read_timeout`` are the defaults per connect and per socket read, in seconds;
    ``request(timeout=...)`` overrides them for one call. ``retry`` applies to GET/HEAD only.
    ``insecure=True`` switches TLS verification off and warns loudly (``InsecureTLSWarning``).
    """

    def __init__(
        self,
        service: str,
        base_url: str,
        *,
        token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 3.05,
        read_timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        ca_bundle: str | None = None,
        insecure: bool = False,
        trust_env: bool = True,
        follow_redirects: bool = False,
        logger: logging.Logger | None = None,
    ) -> None:
        self.service = service
        self.base_url = base_url
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.retry = retry or RetryPolicy()
        self.follow_redirects = follow_redirects
        self.log = logger or logging.getLogger("dashgen.net")
        self._secrets: list[str] = []
        if token is not None and basic_auth is not None:
            raise InputError(f"{service} credentials: give a token or basic_auth, not both")
        self.auth_kind = "none"
        self.user: str | None = None
        auth: requests.auth.AuthBase | None = None
        if token is not None:
            if not token.strip() or any(c in token for c in "\r\n"):
                raise InputError(f"{service} token is empty or contains a line break")
            self._secrets.append(token)
            auth, self.auth_kind = _BearerAuth(token), "token"
        elif basic_auth is not None:
            user, password = basic_auth
            self._secrets += [password, base64.b64encode(f"{user}:{password}".encode()).decode()]
            auth, self.auth_kind, self.user = _BasicAuth(user, password), "basic", user
        if ca_bundle is not None and insecure:
            raise InputError(f"{service} TLS: ca_bundle and insecure exclude each other")
        self._verify: bool | str = False if insecure else (ca_bundle or True)
        if insecure:
            text = (f"TLS certificate verification is OFF for {service} at {without_credentials(base_url)}: "
                    "anyone on the network path can read the credentials and change what is published")
            warnings.warn(text, InsecureTLSWarning, stacklevel=3)
            self.log.warning(text)

        self.session = requests.Session()
        self.session.trust_env = trust_env
        self.session.auth = auth
        self.session.headers["User-Agent"] = f"dashgen/{__version__}"
        self.session.headers.update(headers or {})

    def __repr__(self) -> str:
        return f"HttpTransport({self.service!r}, {without_credentials(self.base_url)!r}, auth={self.auth_kind})"

    def close(self) -> None:
        self.session.close()

    def redact(self, text: str) -> str:
        """``text`` with every credential of this transport replaced by ``***``."""
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
        json_body: Any = None,
        data: bytes | Mapping[str, Any] | list[tuple[str, Any]] | None = None,
        timeout: Timeout | None = None,
        final: Callable[[HttpResponse], bool] | None = None,
    ) -> HttpResponse:
        """Send one request (several for a retried GET). ``final(resp)`` True stops retrying that answer.

        ``json_body`` is sent as compact JSON; ``data`` as is (bytes) or form-encoded (a mapping or pairs).
        """
        method = method.upper()
        headers = {}
        if json_body is not None:
            data = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode()
            headers["Content-Type"] = "application/json"
        if timeout is None:
            connect, read = self.connect_timeout, self.read_timeout
        elif isinstance(timeout, tuple):
            connect, read = timeout
        else:
            connect = read = timeout
        shown = without_credentials(url)
        attempts = 1 + (max(self.retry.retries, 0) if method in IDEMPOTENT_METHODS else 0)
        for attempt in range(1, attempts + 1):
            started = time.monotonic()
            try:
                raw = self.session.request(
                    method, url, params=params, data=data, headers=headers, allow_redirects=self.follow_redirects,
                    timeout=(connect, read), verify=self._verify,
                )
            except requests.exceptions.RequestException as exc:
                reason, sent = _describe(exc, connect, read)
                timed_out = isinstance(exc, requests.exceptions.Timeout)
                if isinstance(exc, requests.exceptions.SSLError):
                    raise TLSFailure(method, url, reason, sent=False, timed_out=False, attempts=attempt,
                                     cause=exc) from None
                if attempt < attempts:
                    pause = self.retry.delay(attempt)
                    self.log.warning("%s %s failed (%s); retry %d/%d in %.2f s", method, shown, reason,
                                     attempt, attempts - 1, pause)
                    time.sleep(pause)
                    continue
                raise NoAnswer(method, url, reason, sent=sent, timed_out=timed_out, attempts=attempt,
                               cause=exc) from None

            response = HttpResponse(method, url, raw.status_code, raw.headers, raw.content, attempt,
                                    len(data) if isinstance(data, bytes) else 0, raw.reason or "")
            self.log.debug("%s %s -> %d in %.0f ms (attempt %d)", method, shown, raw.status_code,
                           (time.monotonic() - started) * 1000, attempt)
            retryable = raw.status_code in self.retry.statuses and not (final and final(response))
            if retryable and attempt < attempts:
                pause = self.retry.delay(attempt, raw.headers.get("Retry-After"))
                self.log.warning("%s %s answered %d; retry %d/%d in %.2f s", method, shown, raw.status_code,
                                 attempt, attempts - 1, pause)
                time.sleep(pause)
                continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises


def without_credentials(url: str) -> str:
    """``url`` without user-info (``https://user:pass@host`` -> ``https://host``), for messages and logs."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, parts.fragment))


def _describe(exc: requests.exceptions.RequestException, connect: float, read: float) -> tuple[str, bool]:
    """A short reason and whether the request may have reached the server."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"connect timed out after {connect:g} s", False
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return f"read timed out after {read:g} s", True
    if isinstance(exc, requests.exceptions.SSLError):
        return "certificate verification or handshake failed", False
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "the connection closed in the middle of the answer", True
    if isinstance(exc, requests.exceptions.ConnectionError):
        cause = exc.args[0] if exc.args else None
        reason_obj = getattr(cause, "reason", cause)
        if isinstance(reason_obj, urllib3.exceptions.NameResolutionError):
            return "host name could not be resolved", False
        if isinstance(reason_obj, urllib3.exceptions.NewConnectionError):
            return "connection refused or host unreachable", False
        return "the connection was closed without an answer", True
    return type(exc).__name__, True
