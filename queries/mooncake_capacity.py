"""PromQL for the Mooncake Store node-group capacity (metric catalogue §3).

The master's own ``node`` label names where the master runs, not where data lives (S11): Store
segments are mapped back to their node by the host part of ``segment="host:port"`` (one segment
per SGLang rank that mounts memory), through the profile's ``cluster.node_addresses``. The ``host``
label these queries produce is the node name for a mapped host and the raw segment host (e.g. an
IP) for a host the profile does not know, so an unmapped segment stays visible under its address
instead of vanishing. Per-host sums add distinct segments, which is sound.
Overlap note: ``queries/mooncake.py`` (cache evidence) also reads the master; this module only
holds the capacity view of the KV-cache group.
"""

from __future__ import annotations

from dashgen.deployment.profile import Profile
from queries.mooncake import PORT_REGEX, regex_literal, segment_hosts
from queries.promql import agg, job, selector

HOST_LABEL = "host"


def master(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, "mooncake_master"))


def host_of_segment(profile: Profile, expr: str) -> str:
    """``host`` := the segment's host part, then the node name wherever the profile maps that host."""
    expr = f'label_replace({expr}, "{HOST_LABEL}", "$1", "segment", "(.*){PORT_REGEX}")'
    for name, host in segment_hosts(profile).items():
        if host != name:
            regex = (regex_literal(host) + PORT_REGEX).replace("\\", "\\\\")
            expr = f'label_replace({expr}, "{HOST_LABEL}", "{name}", "segment", "{regex}")'
    return expr


def by_host(profile: Profile, metric: str, op: str = "sum") -> str:
    """``op by (host)`` of a per-segment gauge, ``host`` = the segment's node (or its raw host if unmapped)."""
    return agg(op, [HOST_LABEL], host_of_segment(profile, master(profile, metric)))
