"""Drill-down links of the cluster dashboard: cluster -> node -> GPU, keeping the time range, the
data source and the variables that scope the panels (replica, PP stage)."""

from __future__ import annotations

from typing import Any

from dashgen_queries.sglang_slo import request_scope_variable

from dashgen.deployment.profile import Profile
from dashgen.render.ids import cluster_dashboard_uid
from dashgen.render.kit import link


def _kept_vars(profile: Profile) -> str:
    """Variables a drill-down keeps: the data source, the replica (it scopes the request-level panels) and
    the PP stage."""
    kept = "${datasource:queryparam}"
    if request_scope_variable(profile) == "replica":
        kept += "&${replica:queryparam}"
    if profile.has_pp:
        kept += "&${stage:queryparam}"
    return kept


def node_link(profile: Profile) -> dict[str, Any]:
    """Data link: the same dashboard narrowed to the clicked series' node, time range kept."""
    node = profile.label("node")
    uid = cluster_dashboard_uid(profile.name)
    return link(
        f"Drill down to node ${{__field.labels.{node}}}",
        f"/d/{uid}/?var-node=${{__field.labels.{node}}}&${{__url_time_range}}&{_kept_vars(profile)}",
    )


def gpu_link(profile: Profile) -> dict[str, Any]:
    """Data link: the same dashboard narrowed to the clicked series' node and GPU (per-GPU rows)."""
    node, gpu = profile.label("node"), profile.label("gpu")
    uid = cluster_dashboard_uid(profile.name)
    return link(
        f"Drill down to node ${{__field.labels.{node}}} GPU ${{__field.labels.{gpu}}}",
        f"/d/{uid}/?var-node=${{__field.labels.{node}}}&var-gpu=${{__field.labels.{gpu}}}"
        f"&${{__url_time_range}}&{_kept_vars(profile)}",
    )


def per_gpu_rows_link(profile: Profile) -> dict[str, Any]:
    """Panel link: the per-GPU rows of this dashboard for the nodes and GPUs selected now."""
    uid = cluster_dashboard_uid(profile.name)
    return link(
        "Per-GPU rows for the selected nodes",
        f"/d/{uid}/?${{node:queryparam}}&${{gpu:queryparam}}&${{__url_time_range}}&{_kept_vars(profile)}",
    )
