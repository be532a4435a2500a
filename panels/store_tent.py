"""The Mooncake transfer engine's own metrics (TENT): transfer requests and the share that failed, failovers
(a request retried on another transport) per request, requests whose deadline no transport could meet, and the
latency quantiles its histograms allow (per direction; per stage of a request from 0.3.12), per node. TENT is
compiled out unless Mooncake is built with -DTENT_METRICS_ENABLED=ON; where the profile's ``mooncake_tent`` source is
deployed but not exported, the kit's source-status text (S15) with the exporter table's note naming that flag and the
port its server takes (node_exporter's default) instead of charts that could only be empty; where it is not deployed,
nothing."""

from __future__ import annotations

from dashgen_queries import store_tent as tq
from dashgen_queries.sglang import quantile_legend

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.exporters.table import TENT_METRICS
from dashgen.render.kit import ratio_axis, source_status_panel, stat, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Mooncake transfer engine (TENT)"
GROUP = "store_tent"
WORKLOADS = ("text-generation",)
LAYER = "Transfer engine (TENT)"
PER_NODE = "per node, summed over the processes that run a transfer engine there (TENT series carry no labels)"
NO_RETRY_DETAIL = (
    "0.3.12 counts failovers only: a retry on the same transport, and the attempts of one request, are not "
    "counted (the per-attempt counters are on Mooncake's main, not in a tag)"
)
QUANTILES = (0.5, 0.99)
BUCKETS = (
    "a quantile is interpolated inside the histogram bucket it falls in, so it is no finer than the bucket "
    "bounds (latency 100 us, 500 us, 1 ms, 5 ms ... 1 s by default; stages 10 us ... 500 ms), and one beyond the "
    "top finite bound reads as that bound"
)
NO_TRANSFER = "no transfer request in window"


def tent_panels(profile: Profile) -> list[PanelSpec]:
    """Requests and failures per second, the window's failure share, failovers per request, deadline expiries."""
    source = f"Mooncake transfer engine (TENT, {TENT_METRICS})"
    return [
        timeseries(
            f"{GROUP}.requests",
            "Transfer engine: requests and failures per second, by direction",
            Evidence(
                f"{source}: tent_{{read,write}}_requests_total, tent_{{read,write}}_failures_total",
                "transfer requests per second the engine was handed, and per second the ones that failed, "
                "per node and direction (read = fetch from a remote segment, write = push to one)",
                f"{PER_NODE}; a failed transfer fails the engine request that asked for it, which the PD and "
                "Store panels count on their side",
                layer=LAYER,
            ),
            (
                *(Target(tq.request_rate(profile, d), f"{d} requests/s · {{{{node}}}}") for d in tq.DIRECTIONS),
                *(Target(tq.failure_rate(profile, d), f"{d} failures/s · {{{{node}}}}") for d in tq.DIRECTIONS),
            ),
            unit="reqps",
            min=0,
            width=12,
            height=8,
        ),
        stat(
            f"{GROUP}.failure_share",
            "Transfer engine: share of requests that failed (window)",
            Evidence(
                f"{source}: tent_{{read,write}}_failures_total over tent_{{read,write}}_requests_total",
                "over the dashboard's window, failed transfer requests over every request, both directions, per "
                "node; no request -> no value, not 0",
                f"{PER_NODE}; a request that failed over and then succeeded is not a failure here",
                layer=LAYER,
            ),
            (Target(tq.failure_share(profile), "{{node}}", instant=True),),
            **ratio_axis("percentunit"),
            decimals=2,
            width=6,
            height=8,
            no_value=NO_TRANSFER,
        ),
        stat(
            f"{GROUP}.failovers_per_request",
            "Transfer engine: failovers per request (window)",
            Evidence(
                f"{source}: tent_transport_failover_total (0.3.11) over tent_{{read,write}}_requests_total",
                "over the dashboard's window, requests retried on another transport per transfer request, per "
                "node: 0.01 is one request in a hundred moved off its first transport",
                f"{NO_RETRY_DETAIL}; {PER_NODE}",
                layer=LAYER,
            ),
            (Target(tq.failovers_per_request(profile), "{{node}}", instant=True),),
            decimals=3,
            width=6,
            height=8,
            no_value=NO_TRANSFER,
        ),
        timeseries(
            f"{GROUP}.deadlines",
            "Transfer engine: failovers and requests with an infeasible deadline, per second",
            Evidence(
                f"{source}: tent_transport_failover_total (0.3.11), tent_deadline_infeasible_total (0.3.12)",
                "per second the requests moved to another transport, and the requests whose deadline no "
                "transport could meet when they were planned, per node",
                f"{NO_RETRY_DETAIL}; a deadline missed after planning is not counted here; {PER_NODE}",
                layer=LAYER,
            ),
            (
                Target(tq.failover_rate(profile), "failovers/s · {{node}}"),
                Target(tq.deadline_infeasible_rate(profile), "deadline infeasible/s · {{node}}"),
            ),
            unit="reqps",
            min=0,
            width=24,
            height=8,
        ),
        *latency_panels(profile, source),
    ]


def latency_panels(profile: Profile, source: str) -> list[PanelSpec]:
    """p50 / p99 of the read and write latency histograms, and p99 of the queue-wait and transport stages."""
    return [
        timeseries(
            f"{GROUP}.latency",
            "Transfer engine: read and write latency p50 / p99, per node",
            Evidence(
                f"{source}: tent_{{read,write}}_latency_us histograms",
                "the p50 and p99 over the rate interval of the time the engine took per transfer request, in "
                "microseconds, per node and direction; a node whose p99 stands above its peers' is the one to "
                "open (its NIC, its transport, or the remote segments it reads)",
                f"{BUCKETS}; it cannot say which request or peer was slow; {PER_NODE}",
                layer=LAYER,
            ),
            tuple(
                Target(tq.latency_quantile(profile, tq.LATENCY[d], q), f"{d} {quantile_legend(q)} · {{{{node}}}}")
                for d in tq.DIRECTIONS
                for q in QUANTILES
            ),
            unit="µs",
            min=0,
            width=12,
            height=8,
            no_value=NO_TRANSFER,
        ),
        timeseries(
            f"{GROUP}.stages",
            "Transfer engine: p99 queue wait and transport execution, per node",
            Evidence(
                f"{source}: tent_stage_queue_wait_us, tent_stage_transport_us histograms (0.3.12)",
                "the p99 over the rate interval of the time a request waited in the engine's queue before a "
                "transport took it, and of the transport's execution, per node: a queue wait near the transport "
                "time is an engine short of workers, a transport time alone is the wire or the remote side",
                f"{BUCKETS}; the p99 of two stages does not add up to the p99 of a request (each is its own "
                f"distribution); the dispatch stage is not read; {PER_NODE}",
                layer=LAYER,
            ),
            tuple(
                Target(tq.latency_quantile(profile, histogram, 0.99), f"{stage} p99 · {{{{node}}}}")
                for stage, histogram in tq.STAGES.items()
            ),
            unit="µs",
            min=0,
            width=12,
            height=8,
            no_value=NO_TRANSFER,
        ),
    ]


def unavailable_text(profile: Profile) -> PanelSpec:
    """Why there is no TENT chart (S15): the source's state and the exporter table's note (the build flag, the port
    its server takes)."""
    return source_status_panel(
        f"{GROUP}.unavailable", profile, [tq.SOURCE], "Transfer engine (TENT) metrics: not available"
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """TENT panels where the profile exports it, the text naming the build flag where it is deployed but not
    exported, nothing where the deployment runs no transfer engine."""
    del topology
    source = profile.source(tq.SOURCE)
    panels: list[PanelSpec] = []
    if source.exported:
        panels = tent_panels(profile)
    elif source.deployed:
        panels = [unavailable_text(profile)]
    return GroupSpec(key=GROUP, title=TITLE, panels=tuple(panels))
