"""Static lint of Grafana dashboards: domain evidence rules (S3, S5, S7, S12, S18) and hygiene.

Public API: :func:`lint_dashboard`, :func:`lint_paths`, :data:`ALL_RULES`, :class:`Finding`.
"""

from dashgen.lint.findings import Finding, Rule, Severity
from dashgen.lint.registry import ALL_RULES, select_rules
from dashgen.lint.runner import UnreadableInput, lint_dashboard, lint_paths

__all__ = [
    "ALL_RULES",
    "Finding",
    "Rule",
    "Severity",
    "UnreadableInput",
    "lint_dashboard",
    "lint_paths",
    "select_rules",
]
