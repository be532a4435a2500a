"""PromQL for the Mooncake Store node-group capacity (metric catalogue §3).

The master's own ``node`` label names where the master runs, not where data lives (S11): Store
segments are mapped back to their node by the host part of ``segment="host:port"`` (one segment
per SGLang rank that mounts memory). Per-host sums add distinct segments, which is sound.
Overlap note: ``queries/mooncake.py`` (cache evidence) also reads the master; this module only
holds the capacity view of the KV-cache group.
"""

from __future__ import annotations

from dashgen.profile import Profile
from queries.promql import agg, job, selector

HOST_LABEL = "host"


def master(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, "mooncake_master"))


def by_host(profile: Profile, metric: str, op: str = "sum") -> str:
    """``op by (host)`` of a per-segment gauge, ``host`` taken from ``segment="host:port"``."""
    relabelled = f'label_replace({master(profile, metric)}, "{HOST_LABEL}", "$1", "segment", "(.*):[0-9]+")'
    return agg(op, [HOST_LABEL], relabelled)
