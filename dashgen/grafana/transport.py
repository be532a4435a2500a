"""HTTP plumbing for the Grafana client: one session, timeouts, TLS, credentials and retries.

``HttpTransport.request`` returns the raw answer for any status; it raises only when there
is no usable answer. The retry rule lives here and nowhere else: GET and HEAD are retried
with exponential backoff on connection errors, timeouts and 500/502/503/504; anything else
(POST, PUT, DELETE) is sent exactly once. A write that may have been sent but got no answer
raises ``WriteOutcomeUnknown``; a write whose connection never opened raises
``GrafanaUnreachable`` (nothing was sent).

Credentials never reach a message, repr or log line: they live only in the auth object
attached to each request, and ``redact`` scrubs them from any text built from server input.
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
from dashgen.grafana.errors import GrafanaUnreachable, TLSVerificationFailed, WriteOutcomeUnknown

log = logging.getLogger("dashgen.grafana")

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD"})


class InsecureTLSWarning(UserWarning):
    """TLS certificate verification was switched off for Grafana."""


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


@dataclass(frozen=True)
class HttpResponse:
    """An HTTP answer. ``url`` has no credentials and no query string."""

    method: str
    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    attempts: int
    sent_bytes: int

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    def json(self) -> Any:
        """The parsed JSON body; raises ValueError when it is not JSON."""
        return json.loads(self.body)


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
    """One ``requests.Session`` bound to one Grafana base URL, organisation and identity."""

    def __init__(
        self,
        base_url: str,
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
        self.base_url = _check_base_url(base_url)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.retry = retry or RetryPolicy()
        self._secrets: list[str] = []
        if token is not None and basic_auth is not None:
            raise InputError("Grafana credentials: give a token or basic_auth, not both")
        self.auth_kind = "none"
        auth: requests.auth.AuthBase | None = None
        if token is not None:
            if not token.strip() or any(c in token for c in "\r\n"):
                raise InputError("Grafana token is empty or contains a line break")
            self._secrets.append(token)
            auth, self.auth_kind = _BearerAuth(token), "token"
        elif basic_auth is not None:
            user, password = basic_auth
            self._secrets += [password, base64.b64encode(f"{user}:{password}".encode()).decode()]
            auth, self.auth_kind, self.user = _BasicAuth(user, password), "basic", user
        if ca_bundle is not None and insecure:
            raise InputError("Grafana TLS: ca_bundle and insecure exclude each other")
        self._verify: bool | str = False if insecure else (ca_bundle or True)
        if insecure:
            text = (f"TLS certificate verification is OFF for Grafana at {self.base_url}: "
                    "anyone on the network path can read the credentials and change what is published")
            warnings.warn(text, InsecureTLSWarning, stacklevel=3)
            log.warning(text)

        self.session = requests.Session()
        self.session.trust_env = trust_env
        self.session.auth = auth
        self.session.headers.update({"Accept": "application/json", "User-Agent": f"dashgen/{__version__}"})
        if org_id is not None:
            self.session.headers["X-Grafana-Org-Id"] = str(int(org_id))

    def __repr__(self) -> str:
        return f"HttpTransport({self.base_url!r}, auth={self.auth_kind})"

    def close(self) -> None:
        self.session.close()

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def url_for(self, path: str) -> str:
        return self.base_url + path

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        final: Callable[[HttpResponse], bool] | None = None,
    ) -> HttpResponse:
        """Send one request (several for a retried GET). ``final(resp)`` True stops retrying that answer."""
        method = method.upper()
        url = self.url_for(path)
        data = None
        headers = {}
        if json_body is not None:
            data = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode()
            headers["Content-Type"] = "application/json"
        attempts = 1 + (max(self.retry.retries, 0) if method in IDEMPOTENT_METHODS else 0)
        for attempt in range(1, attempts + 1):
            started = time.monotonic()
            try:
                raw = self.session.request(
                    method, url, params=params, data=data, headers=headers, allow_redirects=False,
                    timeout=(self.connect_timeout, self.read_timeout), verify=self._verify,
                )
            except requests.exceptions.RequestException as exc:
                reason, sent = self._describe(exc)
                if isinstance(exc, requests.exceptions.SSLError):
                    raise TLSVerificationFailed(
                        self.redact(f"TLS with Grafana failed for {method} {url}: {reason} "
                                    "(pass ca_bundle= with the CA that signed Grafana's certificate)"),
                        method=method, url=url,
                    ) from None
                if attempt < attempts:
                    pause = self.retry.delay(attempt)
                    log.warning("%s %s failed (%s); retry %d/%d in %.2f s", method, url, reason,
                                attempt, attempts - 1, pause)
                    time.sleep(pause)
                    continue
                tries = f" ({attempt} attempts)" if attempt > 1 else ""
                if sent and method not in IDEMPOTENT_METHODS:
                    raise WriteOutcomeUnknown(
                        self.redact(f"{method} {url} was sent but got no answer ({reason}); "
                                    "it may or may not have taken effect"),
                        method=method, url=url, reason=reason,
                    ) from None
                raise GrafanaUnreachable(
                    self.redact(f"Grafana did not answer {method} {url}: {reason}{tries}"), method=method, url=url,
                ) from None

            response = HttpResponse(method, url, raw.status_code, raw.headers, raw.content, attempt,
                                    len(data or b""))
            log.debug("%s %s -> %d in %.0f ms (attempt %d)", method, url, raw.status_code,
                      (time.monotonic() - started) * 1000, attempt)
            retryable = raw.status_code in self.retry.statuses and not (final and final(response))
            if retryable and attempt < attempts:
                pause = self.retry.delay(attempt, raw.headers.get("Retry-After"))
                log.warning("%s %s answered %d; retry %d/%d in %.2f s", method, url, raw.status_code,
                            attempt, attempts - 1, pause)
                time.sleep(pause)
                continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises

    def _describe(self, exc: requests.exceptions.RequestException) -> tuple[str, bool]:
        """A short reason and whether the request may have reached the server."""
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            return f"connect timed out after {self.connect_timeout:g} s", False
        if isinstance(exc, requests.exceptions.ReadTimeout):
            return f"read timed out after {self.read_timeout:g} s", True
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


def _check_base_url(base_url: str) -> str:
    parts = urlsplit(base_url.strip())
    if "@" in parts.netloc:
        # Credentials in the URL would leak into every message that names the URL.
        raise InputError("Grafana URL must not contain credentials; pass token= or basic_auth=")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"Grafana URL must look like https://grafana.example.com[/sub-path], not {base_url!r}")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
