"""PromQL for the Mooncake transfer engine's own metrics (TENT, Mooncake 0.3.12 built with
-DTENT_METRICS_ENABLED=ON), per node, from the profile's ``mooncake_tent`` scrape job.

TENT's series carry no label of their own in 0.3.12 (one series per process that runs a transfer engine), so a
node's value is the sum over its processes. Requests and failures are counted per direction (read, write); a
failover is a request retried on another transport, the only retry 0.3.12 counts (the per-attempt counters are
on Mooncake's main, not in a tag); a deadline-infeasible count is a request whose deadline could not be met by
any transport when it was planned. Latency is a histogram per direction (microseconds, buckets 100 us to 1 s by
default) and, from 0.3.12, per stage of a request's causal chain (queue wait, transport execution; 10 us to 500 ms).
"""

from __future__ import annotations

from dashgen_queries.promql import agg, divide, increase, job, node_var, rate, selector, window_increase
from dashgen_queries.sglang import histogram_quantile

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import MOONCAKE_TENT

SOURCE = "mooncake_tent"
DIRECTIONS = ("read", "write")
REQUESTS = {d: MOONCAKE_TENT.name(f"tent_{d}_requests_total") for d in DIRECTIONS}
FAILURES = {d: MOONCAKE_TENT.name(f"tent_{d}_failures_total") for d in DIRECTIONS}
FAILOVER = MOONCAKE_TENT.name("tent_transport_failover_total")
DEADLINE_INFEASIBLE = MOONCAKE_TENT.name("tent_deadline_infeasible_total")
LATENCY = {d: MOONCAKE_TENT.name(f"tent_{d}_latency_us") for d in DIRECTIONS}
STAGES = {
    "queue wait": MOONCAKE_TENT.name("tent_stage_queue_wait_us"),
    "transport": MOONCAKE_TENT.name("tent_stage_transport_us"),
}


def _series(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, SOURCE), node_var(profile))


def per_node(profile: Profile, expr: str) -> str:
    return agg("sum", (profile.label("node"),), expr)


def request_rate(profile: Profile, direction: str) -> str:
    """Transfer requests per second in ``direction`` (read / write), per node."""
    return per_node(profile, rate(_series(profile, REQUESTS[direction])))


def failure_rate(profile: Profile, direction: str) -> str:
    """Failed transfer requests per second in ``direction``, per node."""
    return per_node(profile, rate(_series(profile, FAILURES[direction])))


def failure_share(profile: Profile) -> str:
    """Of the transfer requests over the window (both directions), the share that failed (0-1), per node; no
    request -> no value, not 0."""
    failed = " + ".join(per_node(profile, window_increase(_series(profile, FAILURES[d]))) for d in DIRECTIONS)
    requested = " + ".join(per_node(profile, increase(_series(profile, REQUESTS[d]))) for d in DIRECTIONS)
    return divide(f"({failed})", f"({requested})")


def failovers_per_request(profile: Profile) -> str:
    """Failovers (a request retried on another transport) per transfer request over the window, per node."""
    requested = " + ".join(per_node(profile, increase(_series(profile, REQUESTS[d]))) for d in DIRECTIONS)
    return divide(per_node(profile, window_increase(_series(profile, FAILOVER))), f"({requested})")


def failover_rate(profile: Profile) -> str:
    return per_node(profile, rate(_series(profile, FAILOVER)))


def deadline_infeasible_rate(profile: Profile) -> str:
    """Requests per second whose deadline no transport could meet, per node (0.3.12)."""
    return per_node(profile, rate(_series(profile, DEADLINE_INFEASIBLE)))


def latency_quantile(profile: Profile, histogram: str, q: float) -> str:
    """The ``q`` quantile (microseconds) of one TENT latency histogram, per node: the node's processes' buckets
    summed, then interpolated (``histogram_quantile``)."""
    return histogram_quantile(q, _series(profile, f"{histogram}_bucket"), (profile.label("node"),))
