"""The exception hierarchy every dashgen stage raises; the CLI maps each to an exit code."""

from __future__ import annotations


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
        self.field = field
        self.detail = message
        super().__init__(f"{path}: {field}: {message}")


class BuildValidationError(DashgenError):
    """A rendered dashboard failed validation; names profile, dashboard, panel and JSON path."""

    exit_code = 1

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class CheckFailed(DashgenError):
    """A check (lint, staleness, diff gate, publish refusal) failed. Exit code 1."""

    exit_code = 1
