"""Semantic diff of Grafana dashboards: live vs generated, or git base vs working tree.

Public API: :func:`diff_dashboards`, :func:`canonicalise_for_diff`, :class:`DashboardDiff`.
"""

from dashgen.diff.engine import DashboardDiff, FieldChange, diff_dashboards, diff_models
from dashgen.diff.noise import canonicalise_for_diff

__all__ = ["DashboardDiff", "FieldChange", "canonicalise_for_diff", "diff_dashboards", "diff_models"]
