"""The one HTTP transport: session, timeouts, TLS, credentials and retries for Grafana and the data source.

``HttpTransport.request`` returns the raw answer for any status; it raises only when there is
no usable answer (``NoAnswer``, ``TLSFailure``). The retry rule lives here and nowhere else:
GET and HEAD are retried with exponential backoff on connection errors, timeouts and the
policy's statuses (500/502/503/504); anything else (POST, PUT, DELETE) is sent once, except after
a 429: a rate-limited request was not processed, so any method is sent again after the server's
``Retry-After`` (bounded), and every other request of the transport waits out the same pause, so
parallel workers slow down together instead of hammering the limit.
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
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
import urllib3

from dashgen import __version__
from dashgen.errors import DashgenError, InputError
from dashgen.net.body import ANSWER_TIME_FACTOR, BodyLimit, read_body
from dashgen.net.retry import NO_RETRY as NO_RETRY  # re-exported: the clients import the policy from here
from dashgen.net.retry import RetryPolicy

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD"})
Timeout = float | tuple[float, float]


class EncodedJSON(bytes):
    """A JSON request body that is already encoded: ``request(json_body=EncodedJSON(...))`` sends it as is."""


def json_object(first: Mapping[str, Any], encoded: bytes, rest: Mapping[str, Any] | None = None) -> bytes:
    """The encoded JSON object ``encoded`` with the keys of ``first`` put in front and those of ``rest`` after,
    without decoding it (``first`` and ``rest`` must not repeat its keys)."""
    head = json.dumps(dict(first), separators=(",", ":"), ensure_ascii=False).encode()[1:-1]
    tail = json.dumps(dict(rest or {}), separators=(",", ":"), ensure_ascii=False).encode()[1:-1]
    inner = encoded.strip()[1:-1].strip()
    return b"{" + b",".join(part for part in (head, inner, tail) if part) + b"}"


class InsecureTLSWarning(UserWarning):
    """TLS certificate verification was switched off for a service."""


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
        """The parsed JSON body; raises ValueError when it is not JSON. A lone surrogate escape (``"\\ud800"``:
        JSON takes it, it is no character) reads as U+FFFD: one such label value or title made every later write of
        the answer as UTF-8 fail (a whole preview page, a backup)."""
        data = json.loads(self.body)
        return _without_lone_surrogates(data) if _SURROGATE_ESCAPE.search(self.body) else data


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # what may have decoded to a surrogate (a pair or a lone one)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a pair decodes to one character: what is left is alone


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_lone_surrogates(key): _without_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    return value


class WriteRefused(DashgenError):
    """A mutating request on a read-only transport (a dry run): refused before anything is sent."""

    exit_code = 2


class NoAnswer(Exception):
    """No usable HTTP answer: connection refused, DNS or TLS failure, timeout, connection cut mid-answer.

    ``sent`` is False when the request certainly never reached the server (the connection never
    opened), True when it may have. ``cause`` is the underlying ``requests`` exception.
    """

    def __init__(
        self,
        method: str,
        url: str,
        reason: str,
        *,
        sent: bool,
        timed_out: bool,
        attempts: int,
        cause: requests.exceptions.RequestException,
    ) -> None:
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


class AnswerTooLarge(NoAnswer):
    """The answer's body went over the transport's ``max_answer_bytes``: refused, never read whole into memory."""


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
        pool_size: int = 10,
        max_answer_bytes: int = 256 << 20,
    ) -> None:
        self.service = service
        self.base_url = base_url
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        # An answer is read in chunks: over this size it is refused (a 200 MB answer took 430 MB of memory), and
        # the whole body must arrive within ANSWER_TIME_FACTOR read timeouts (the read timeout is per socket read,
        # so a server dripping a byte a second never tripped it).
        self.max_answer_bytes = max_answer_bytes
        self.retry = retry or RetryPolicy()
        self.follow_redirects = follow_redirects
        self.log = logger or logging.getLogger("dashgen.net")
        self._secrets: list[str] = []
        self._secret_pattern: re.Pattern[str] | None = None
        # A dry run's transport: every request but GET / HEAD is refused here, before it is sent; a server-side
        # dry run (``?dryRun=All``) passes only once ``server_dry_run_proven`` (the path keeps query strings).
        self.read_only = False
        self.server_dry_run_proven = False
        self.deadline: float | None = None  # time.monotonic() past which no retry waits (publish --deadline)
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
            text = (
                f"TLS certificate verification is OFF for {service} at {without_credentials(base_url)}: "
                "anyone on the network path can read the credentials and change what is published"
            )
            warnings.warn(text, InsecureTLSWarning, stacklevel=3)
            self.log.warning(text)

        self.session = requests.Session()
        if pool_size > 10:  # one kept-alive connection per parallel worker
            adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=pool_size)
            self.session.mount("http://", adapter)
            self.session.mount("https://", adapter)
        self._gate = threading.Lock()
        self._not_before = 0.0  # monotonic time before which no request is sent (after a 429)
        self.session.auth = auth
        if trust_env:
            self._read_environment_once(auth is None)
        # requests would read the proxy, CA-bundle and netrc settings of the environment again on every request
        # (a lookup that costs more than parsing a small answer); they were read once above.
        self.session.trust_env = False
        self.session.headers["User-Agent"] = f"dashgen/{__version__}"
        self.session.headers.update(headers or {})

    def _read_environment_once(self, netrc: bool) -> None:
        """What ``trust_env`` means in requests, for this transport's one host: its proxy (``*_PROXY`` and
        ``NO_PROXY``), the CA bundle of ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE`` when verifying with the
        default bundle, and ``~/.netrc`` credentials when no others were given."""
        self.session.proxies.update(requests.utils.get_environ_proxies(self.base_url))
        if self._verify is True:
            self._verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
        if netrc:
            found = requests.utils.get_netrc_auth(self.base_url)
            if found:
                self.session.auth = found

    def __repr__(self) -> str:
        return f"HttpTransport({self.service!r}, {without_credentials(self.base_url)!r}, auth={self.auth_kind})"

    def close(self) -> None:
        self.session.close()

    def redact(self, text: str) -> str:
        """``text`` with every credential of this transport replaced by ``***``: whole tokens only (a short
        password inside an ordinary word is left alone, and a password equal to the user name does not hide
        the user), in one pass over the text."""
        if self._secret_pattern is None:
            secrets = sorted({s for s in self._secrets if s and s != self.user}, key=len, reverse=True)
            if not secrets:
                return text
            self._secret_pattern = re.compile(
                r"(?<![A-Za-z0-9_])(?:" + "|".join(re.escape(s) for s in secrets) + r")(?![A-Za-z0-9_])"
            )
        return self._secret_pattern.sub("***", text)

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
        headers: Mapping[str, str] | None = None,
    ) -> HttpResponse:
        """Send one request (several for a retried GET). ``final(resp)`` True stops retrying that answer.

        ``json_body`` is sent as compact JSON; ``data`` as is (bytes) or form-encoded (a mapping or pairs);
        ``headers`` are added to the session's (never credentials: those are the session's own).
        """
        extra_headers = dict(headers or {})
        method = method.upper()
        if self.read_only and method not in ("GET", "HEAD"):
            dry = isinstance(params, Mapping) and params.get("dryRun") == "All"
            if not (dry and self.server_dry_run_proven):
                raise WriteRefused(
                    f"{method} {without_credentials(url)} refused: this is a dry run, nothing is written"
                )
        headers = extra_headers
        if isinstance(json_body, EncodedJSON):
            data = bytes(json_body)
            headers["Content-Type"] = "application/json"
        elif json_body is not None:
            data = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode()
            headers["Content-Type"] = "application/json"
        if timeout is None:
            connect, read = self.connect_timeout, self.read_timeout
        elif isinstance(timeout, tuple):
            connect, read = timeout
        else:
            connect = read = timeout
        shown = without_credentials(url)
        idempotent = method in IDEMPOTENT_METHODS
        attempts = 1 + max(self.retry.retries, 0)
        # the whole request — every attempt, every wait and every body — ends within ANSWER_TIME_FACTOR read
        # timeouts: a Retry-After of an hour or a body dripping in cannot hold a command past its --timeout's bound
        request_end = time.monotonic() + ANSWER_TIME_FACTOR * read
        for attempt in range(1, attempts + 1):
            self._wait_for_gate()
            started = time.monotonic()
            left = max(request_end - started, 0.05)
            try:
                raw = self.session.request(
                    method,
                    url,
                    params=params,
                    data=data,
                    headers=headers,
                    allow_redirects=self.follow_redirects,
                    timeout=(min(connect, left), min(read, left)),
                    verify=self._verify,
                    stream=True,
                )
                try:
                    content = read_body(
                        raw, self.max_answer_bytes, min(started + ANSWER_TIME_FACTOR * read, request_end)
                    )
                finally:
                    raw.close()
            except requests.exceptions.RequestException as exc:
                if isinstance(exc, BodyLimit) and exc.too_large:
                    raise AnswerTooLarge(
                        method, url, str(exc), sent=True, timed_out=False, attempts=attempt, cause=exc
                    ) from None
                reason, sent = (str(exc), True) if isinstance(exc, BodyLimit) else _describe(exc, connect, read)
                timed_out = isinstance(exc, requests.exceptions.Timeout | BodyLimit)
                if isinstance(exc, requests.exceptions.SSLError):
                    raise TLSFailure(
                        method, url, reason, sent=False, timed_out=False, attempts=attempt, cause=exc
                    ) from None
                if (
                    idempotent
                    and attempt < attempts
                    and self._may_wait(pause := self.retry.delay(attempt), request_end)
                ):
                    self.log.warning(
                        "%s %s failed (%s); retry %d/%d in %.2f s", method, shown, reason, attempt, attempts - 1, pause
                    )
                    time.sleep(pause)
                    continue
                raise NoAnswer(
                    method, url, reason, sent=sent, timed_out=timed_out, attempts=attempt, cause=exc
                ) from None

            response = HttpResponse(
                method,
                url,
                raw.status_code,
                raw.headers,
                content,
                attempt,
                len(data) if isinstance(data, bytes) else 0,
                raw.reason or "",
            )
            self.log.debug(
                "%s %s -> %d in %.0f ms (attempt %d)",
                method,
                shown,
                raw.status_code,
                (time.monotonic() - started) * 1000,
                attempt,
            )
            if (
                raw.status_code == 429
                and attempt < attempts
                and self._may_wait(
                    pause := self.retry.rate_limit_delay(attempt, raw.headers.get("Retry-After")), request_end
                )
            ):
                self._hold(pause)
                self.log.warning(
                    "%s %s answered 429 (rate limited); retry %d/%d in %.2f s",
                    method,
                    shown,
                    attempt,
                    attempts - 1,
                    pause,
                )
                continue
            retryable = idempotent and raw.status_code in self.retry.statuses and not (final and final(response))
            if (
                retryable
                and attempt < attempts
                and self._may_wait(pause := self.retry.delay(attempt, raw.headers.get("Retry-After")), request_end)
            ):
                self.log.warning(
                    "%s %s answered %d; retry %d/%d in %.2f s",
                    method,
                    shown,
                    raw.status_code,
                    attempt,
                    attempts - 1,
                    pause,
                )
                time.sleep(pause)
                continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises

    def _may_wait(self, seconds: float, request_end: float) -> bool:
        """Whether a retry after ``seconds`` still starts before the request's own end and the transport's
        ``deadline`` (a release's ``--deadline``): past either, the answer in hand is returned (or the failure
        raised) instead of waiting (a 429 storm took 181 s)."""
        ends = time.monotonic() + seconds
        return ends < request_end and (self.deadline is None or ends < self.deadline)

    def _hold(self, seconds: float) -> None:
        """No request of this transport is sent for ``seconds`` (a 429's Retry-After)."""
        with self._gate:
            self._not_before = max(self._not_before, time.monotonic() + seconds)

    def _wait_for_gate(self) -> None:
        with self._gate:
            wait = self._not_before - time.monotonic()
        if wait > 0:
            time.sleep(wait)


def without_credentials(url: str) -> str:
    """``url`` without user-info (``https://user:pass@host`` -> ``https://host``), for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL (a broken IPv6 literal): no user-info shown either way
        return re.sub(r"//[^/@]*@", "//", url)
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
