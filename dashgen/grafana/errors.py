"""The domain errors of talking to Grafana: one class per thing that can go wrong.

``dashgen.grafana.answers`` turns every HTTP outcome into one of these exactly once; the publish
pipeline catches these classes and never looks at status codes. Every message is one line,
names the URL, and never contains a credential.
"""

from __future__ import annotations

from typing import Any

from dashgen.errors import DashgenError
from dashgen.escape import terminal_text


class GrafanaError(DashgenError):
    """Base of every error raised while talking to Grafana. Exit code 1: Grafana answered and refused (a 401 or
    403, a version conflict, a guard) or a write's outcome is unknown; a Grafana that gives no answer, or an
    answer that is not Grafana's, is an input error instead (2: ``GrafanaUnreachable``, ``BadResponse``)."""

    exit_code = 1

    def __init__(self, message: str, *, method: str = "", url: str = "") -> None:
        self.method = method
        self.url = url
        super().__init__(terminal_text(" ".join(message.split()), 2000))  # always a single line, shown as text

    def said_of(self, what: str) -> GrafanaError:
        """This error (its class, so its exit code) with ``what`` the command was doing before its message."""
        self.args = (terminal_text(" ".join(f"{what}: {self.args[0]}".split()), 2200),)
        return self

    def as_input_error(self) -> GrafanaError:
        """This error with exit code 2 whatever Grafana answered: for a command whose exit 1 means what it found
        (``drift``: edited in Grafana; ``diff --live``: the dashboards differ), a read that failed, a refused token
        too, must not read as that finding."""
        self.exit_code = 2
        return self


class GrafanaUnreachable(GrafanaError):
    """No HTTP answer: connection refused, DNS failure, TLS failure or timeout (after retries for GETs).

    When raised for a write, the request is known NOT to have been sent (the connection never opened).
    Exit code 2: the Grafana URL (or the network to it) is wrong, not a release.
    """

    exit_code = 2


class TLSVerificationFailed(GrafanaUnreachable):
    """The TLS handshake failed (certificate not trusted, wrong host name); never retried."""


class WriteOutcomeUnknown(GrafanaError):
    """A write was sent but no usable answer came back: it may or may not have landed.

    Never retried automatically. ``GrafanaClient.resolve_save(exc)`` reads the dashboard back and
    tells whether Grafana now holds what was sent.
    """

    def __init__(
        self,
        message: str,
        *,
        method: str = "",
        url: str = "",
        uid: str | None = None,
        dashboard: dict[str, Any] | None = None,
        folder_uid: str | None = None,
        reason: str = "",
        api_version: str | None = None,
    ) -> None:
        super().__init__(message, method=method, url=url)
        self.uid = uid
        self.dashboard = dashboard
        self.folder_uid = folder_uid
        self.reason = reason
        self.api_version = api_version  # the /apis version written through (None: the legacy API)


class BadResponse(GrafanaError):
    """Grafana (or something in front of it) answered with a body that is not the expected JSON, or a redirect.
    Exit code 2, as no answer: the URL does not lead to Grafana's API."""

    exit_code = 2


class BrokenAnswer(BadResponse):
    """An answer typed as JSON that does not parse (cut short, a body of the wrong length): Grafana's API answered
    and failed, which a release reports as failed (exit 1), not as a wrong URL."""

    exit_code = 1


class GrafanaHTTPError(GrafanaError):
    """Grafana answered with an error status. ``grafana_message`` is the body's ``message``."""

    def __init__(
        self,
        message: str,
        *,
        method: str = "",
        url: str = "",
        status: int = 0,
        grafana_message: str = "",
        grafana_status: str = "",
        message_id: str = "",
    ) -> None:
        super().__init__(message, method=method, url=url)
        self.status = status
        self.grafana_message = terminal_text(grafana_message)
        self.grafana_status = terminal_text(grafana_status, 100)
        self.message_id = terminal_text(message_id, 200)


class Unauthorized(GrafanaHTTPError):
    """401: the credentials were missing, unknown, expired or for another organisation."""


class Forbidden(GrafanaHTTPError):
    """403: authenticated but not allowed. ``permission`` is what Grafana says is needed, if it says."""

    def __init__(self, message: str, *, permission: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.permission = permission


class NotFound(GrafanaHTTPError):
    """404: the dashboard, version or API path does not exist."""


class ApiNotServed(NotFound):
    """A 404 for an API path rather than for an object: this Grafana does not serve that API (version)."""


class FolderNotFound(NotFound):
    """The target folder does not exist (Grafana answers 400 "folder not found" on save, 404 on GET)."""


class VersionConflict(GrafanaHTTPError):
    """The dashboard changed since the version that was sent: 412 version-mismatch [12] or 409 [13]."""


class RequestRejected(GrafanaHTTPError):
    """Grafana refused the request as invalid or not allowed in this state (400, 406, 412, 422 ...).

    Examples: provisioned dashboard, plugin dashboard, illegal uid, title empty, uid taken by another id.
    """


class StoredAsV2(RequestRejected):
    """406 on the legacy API [12]: the dashboard is stored in the v2 schema; read it through ``/apis``."""


class RateLimited(GrafanaHTTPError):
    """429 after the bounded retries that honour ``Retry-After``."""


class PayloadTooLarge(GrafanaHTTPError):
    """413 from Grafana or from a proxy in front of it."""


class ServerError(GrafanaHTTPError):
    """5xx (after retries for GETs)."""
