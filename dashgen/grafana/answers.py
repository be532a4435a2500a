"""Grafana's answers -> domain errors: the one place where a status code, an unreadable body or a
missing answer becomes an error of ``dashgen.grafana.errors`` (contract: grafana-api.md).

Every message is one line, names the method and URL, and passes through the transport's
``redact`` (server text may echo a credential back).
"""

from __future__ import annotations

import re
from typing import Any

from dashgen.grafana.errors import (
    BadResponse,
    BrokenAnswer,
    Forbidden,
    GrafanaError,
    GrafanaUnreachable,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RequestRejected,
    ServerError,
    TLSVerificationFailed,
    Unauthorized,
    VersionConflict,
    WriteOutcomeUnknown,
)
from dashgen.net.http import HttpResponse, HttpTransport, NoAnswer, TLSFailure
from dashgen.render.canonical import loads_strict

_PERMISSION_RE = re.compile(r"Permissions needed:\s*(.+?)\s*$")


def body_dict(resp: HttpResponse) -> dict[str, Any]:
    """The body when it is a JSON object, else ``{}``."""
    try:
        body = resp.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def grafana_message(resp: HttpResponse) -> str:
    """The body's ``message`` on one line; for a non-JSON body, a note that a proxy probably answered."""
    body = body_dict(resp)
    if "message" in body:
        return " ".join(str(body["message"]).split())
    if resp.body and resp.content_type != "application/json":
        return f"non-JSON {resp.content_type or 'untyped'} body, probably from a proxy"
    return ""


def parse_json(resp: HttpResponse) -> Any:
    """The JSON body; ``BadResponse`` when it is not JSON at all (truncated, or not Grafana)."""
    try:
        return loads_strict(resp.body)
    except ValueError:
        broken = BrokenAnswer if resp.content_type == "application/json" else BadResponse
        raise broken(
            f"Grafana answered {resp.method} {resp.url} with {resp.status} but the body is not valid JSON "
            f"({len(resp.body)} bytes, {resp.content_type or 'no content type'}): truncated, or not Grafana?",
            method=resp.method,
            url=resp.url,
        ) from None


def bad_shape(resp: HttpResponse, expected: str) -> BadResponse:
    """``BadResponse`` for a JSON body that is not ``expected``."""
    return BadResponse(
        f"Grafana answered {resp.method} {resp.url} with {resp.status} but not {expected}",
        method=resp.method,
        url=resp.url,
    )


def http_fields(resp: HttpResponse, http: HttpTransport) -> dict[str, Any]:
    """The attributes every ``GrafanaHTTPError`` carries; server text is redacted too."""
    body = body_dict(resp)
    return {
        "method": resp.method,
        "url": resp.url,
        "status": resp.status,
        "grafana_message": http.redact(grafana_message(resp)),
        "grafana_status": str(body.get("status") or ""),
        "message_id": str(body.get("messageId") or ""),
    }


def no_answer_error(exc: NoAnswer, http: HttpTransport) -> GrafanaError:
    """No usable answer: TLS failure, a write that may have landed, or Grafana unreachable (nothing landed)."""
    method, url, reason = exc.method, exc.url, exc.reason
    if isinstance(exc, TLSFailure):
        return TLSVerificationFailed(
            http.redact(
                f"TLS with Grafana failed for {method} {url}: {reason} "
                "(pass ca_bundle= with the CA that signed Grafana's certificate)"
            ),
            method=method,
            url=url,
        )
    if exc.write_may_have_landed:
        return WriteOutcomeUnknown(
            http.redact(f"{method} {url} was sent but got no answer ({reason}); it may or may not have taken effect"),
            method=method,
            url=url,
            reason=reason,
        )
    tries = f" ({exc.attempts} attempts)" if exc.attempts > 1 else ""
    return GrafanaUnreachable(
        http.redact(f"Grafana did not answer {method} {url}: {reason}{tries}"), method=method, url=url
    )


def answer_error(resp: HttpResponse, what: str, http: HttpTransport, *, sent_version: Any = None) -> GrafanaError:
    """The error for an answer that is not the success the caller expected; ``what`` names the object."""
    status, url, msg = resp.status, resp.url, grafana_message(resp)
    grafana_status = str(body_dict(resp).get("status") or "")
    detail = f"{status} {grafana_status + ': ' if grafana_status else ''}{msg}".strip()
    fields = http_fields(resp, http)
    redact = http.redact
    if 300 <= status < 400:
        location = resp.headers.get("Location", "?")
        return BadResponse(
            redact(
                f"Grafana answered {resp.method} {url} with a redirect ({status}) to "
                f"{location}; configure the final URL"
            ),
            method=resp.method,
            url=url,
        )
    if status == 401:
        return Unauthorized(redact(f"Grafana refused {_who(http)} ({detail}) at {url}"), **fields)
    if status == 403:
        match = _PERMISSION_RE.search(msg)
        permission = match.group(1) if match else None
        reason = f"missing permission {permission}" if permission else msg
        return Forbidden(redact(f"Grafana denied {resp.method} {url} (403): {reason}"), permission=permission, **fields)
    if status == 404:
        return NotFound(redact(f"Grafana has no {what} ({detail}) at {url}"), **fields)
    if status == 409 or (status == 412 and grafana_status in ("", "version-mismatch")):
        since = (
            f" since version {sent_version} was read"
            if isinstance(sent_version, int)
            else f" since resourceVersion {sent_version} was read"
            if isinstance(sent_version, str) and sent_version
            else " (no version was sent: read it first, or save with overwrite)"
        )
        return VersionConflict(
            redact(f"Grafana refused the change to {what}: it was changed by someone else{since} ({detail}) at {url}"),
            **fields,
        )
    if status == 413:
        size = f"a {resp.sent_bytes / 1_048_576:.1f} MiB request" if resp.sent_bytes else "the request"
        return PayloadTooLarge(
            redact(f"Grafana or a proxy in front of it refused {size} as too large ({detail}) at {url}"),
            **fields,
        )
    if status == 429:
        wait = resp.headers.get("Retry-After")
        after = f", Retry-After {wait}" if wait else ""
        return RateLimited(
            redact(
                f"Grafana rate-limited {resp.method} {url} (429{after}{': ' + msg if msg else ''}) "
                f"after {resp.attempts} attempts"
            ),
            **fields,
        )
    if status >= 500:
        tries = f" after {resp.attempts} attempts" if resp.attempts > 1 else ""
        return ServerError(redact(f"Grafana failed on {resp.method} {url} ({detail}){tries}"), **fields)
    return RequestRejected(redact(f"Grafana rejected the request for {what} ({detail}) at {url}"), **fields)


def _who(http: HttpTransport) -> str:
    if http.auth_kind == "token":
        return "the token"
    if http.auth_kind == "basic":
        return f"user {http.user!r} and its password"
    return "the request without credentials"
