"""Lint findings and rule metadata: the values rules produce and reports print."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dashgen.document import Panel
    from dashgen.lint.context import LintContext


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Hit:
    """What a rule reports: the panel (None for the dashboard itself) and a message."""

    panel: Panel | None
    message: str
    severity: Severity | None = None  # overrides the rule's severity for this hit


@dataclass(frozen=True)
class Rule:
    """A lint rule: an id (``S5``, ``panel-units``), a severity, a one-line doc and a check."""

    id: str
    severity: Severity
    doc: str
    check: Callable[[LintContext], Iterable[Hit]]


@dataclass(frozen=True)
class Finding:
    """One finding, ready to print: where (file, dashboard, panel), which rule, what."""

    file: str
    dashboard: str
    panel: str | None
    panel_id: int | None
    rule: str
    severity: Severity
    message: str

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = str(self.severity)
        return data
