"""The rule-file vocabulary: recording rules, alerting rules and groups, as plain immutable data."""

from __future__ import annotations

from dataclasses import dataclass, field

DOCS = "docs/alerts.md"


@dataclass(frozen=True)
class RecordingRule:
    record: str
    expr: str
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AlertRule:
    alert: str
    expr: str
    for_: str
    severity: str
    summary: str
    description: str
    labels: tuple[tuple[str, str], ...] = ()
    anchor: str = ""  # runbook section when several alerts share one
    first_steps: str = ""  # what the on-call does first (the catalogue row's runbook text)

    @property
    def runbook(self) -> str:
        """The alert's runbook section in docs/alerts.md (GitHub heading anchor)."""
        return f"{DOCS}#{self.anchor or self.alert.lower()}"


@dataclass(frozen=True)
class RuleGroup:
    name: str
    rules: tuple[RecordingRule | AlertRule, ...] = field(default_factory=tuple)

    def alerts(self) -> tuple[AlertRule, ...]:
        return tuple(rule for rule in self.rules if isinstance(rule, AlertRule))
