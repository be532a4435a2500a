"""Semantic diff of Grafana dashboards: live vs generated, or git base vs working tree.

Public API: :func:`diff_dashboards`, :func:`canonicalise_for_diff`, :class:`DashboardDiff`; how a change
is shown: :func:`describe_change` (one changed value, the changed part of a query marked),
:func:`first_difference` (the first differing path of two documents, both values around it),
:func:`plan_lines` (a release plan's changes with their approval hints).
The bounded pull-request comment is ``dashgen.diff.comment``.
"""

from dashgen.diff.engine import DashboardDiff, FieldChange, diff_dashboards, diff_models
from dashgen.diff.noise import canonicalise_for_diff
from dashgen.diff.plan_view import plan_lines, query_changes
from dashgen.diff.values import describe_change, first_difference

__all__ = [
    "DashboardDiff",
    "FieldChange",
    "canonicalise_for_diff",
    "describe_change",
    "diff_dashboards",
    "diff_models",
    "first_difference",
    "plan_lines",
    "query_changes",
]
