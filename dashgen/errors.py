"""The exception hierarchy every dashgen stage raises; the CLI maps each to an exit code."""

from __future__ import annotations

import re


class DashgenError(Exception):
    """Base of every error dashgen reports to a user. ``exit_code`` follows the CLI contract."""

    exit_code = 2


class InputError(DashgenError):
    """Bad input: a profile, a dashboard file or an argument. Exit code 2."""

    exit_code = 2


class ProfileError(InputError):
    """A deployment profile is invalid; the message names the file and the field."""

    def __init__(self, path: str, field: str, message: str) -> None:
        self.path = path
        self.field = _printable(field, 120)
        # one line of bounded length whatever value the message quotes (a 400-digit number, a 5,000-character key)
        self.detail = _printable(" ".join(message.splitlines()), 600)
        # a problem of the whole file (missing, unreadable, not TOML) names no field
        super().__init__(f"{path}: {self.field}: {self.detail}" if self.field else f"{path}: {self.detail}")


def _printable(text: str, limit: int) -> str:
    """``text`` fit for one line of a message: control characters escaped, cut to ``limit`` characters."""
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class BuildValidationError(DashgenError):
    """A rendered dashboard failed validation; names profile, dashboard, panel and JSON path."""

    exit_code = 1

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class CheckFailed(DashgenError):
    """A check (lint, staleness, diff gate, publish refusal) failed. Exit code 1."""

    exit_code = 1


class ReleaseInterrupted(DashgenError):
    """A release stopped by SIGINT (exit 130) or SIGTERM (exit 143) after recording what it had already saved."""

    def __init__(self, message: str, exit_code: int = 130) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class DeadlineExceeded(DashgenError):
    """A command ran past its ``--deadline``; what finished is reported. Exit code 1."""

    exit_code = 1


# A scheme starts where no scheme character precedes it and is at most 32 characters: the search then tries
# each position in O(1) and scans each URL's authority (up to its first "/", "?", "#" or space) at most twice, so
# redaction stays linear in the text. The user-info runs to the authority's last "@", as a URL parser reads it: a
# password with an unencoded "@" ("admin:p@ss@host") is hidden whole, not up to its own "@".
_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,31}://)(?P<userinfo>[^/?#\s]*)@")
_SECRET_PARAM = re.compile(r"(?i)(?P<key>[?&](?:token|api_key|apikey|access_token|password|auth)=)[^&\s#]*")


def redact(text: str) -> str:
    """``text`` with the credentials of any URL in it replaced by ``***``: user-info (``user:pass@``) and
    secret query parameters (``token=``, ``password=`` ...). Every message a user sees passes through it."""
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m.group('key')}***", text)
