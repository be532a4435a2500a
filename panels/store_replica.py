"""The Mooncake Store in the KV cache and NVMe group: capacity, allocation and segments per engine
replica (the node group that shares one ``global_segment_size``, S17) and per node (segment host),
the configured quota, and the Store's health beside its capacity (request and allocation failures,
evictions, active clients), once per Mooncake master as the profile maps masters to replicas
(``[[mooncake.masters]]``, else one shared master). HA copies of a master are read once, the same way
everywhere: ``max`` over a master's targets for its global metrics, ``max`` over targets per segment.
"""

from __future__ import annotations

from typing import Any

from dashgen_queries import mooncake as mc
from dashgen_queries.promql import FIRST_EVENT_RATE, divide

from dashgen.deployment.profile import Profile
from dashgen.deployment.sizes import format_binary
from dashgen.deployment.topology import Topology
from dashgen.render.kit import ratio_axis, ref, source_status_panel, stat, timeseries
from dashgen.render.spec import Evidence, PanelSpec, Target

GROUP = "kv_cache_nvme"
S11 = (
    'segments are mapped to their node by the host part of segment="host:port" (the real address of the rank '
    "that mounted it, cluster.node_addresses); the master's own node label names where the master runs, not "
    "where data lives (S11); a segment's series disappears when it unmounts; each segment is read once over HA "
    "master targets"
)


def _ts(key: str, title: str, evidence: Evidence, targets: list[Target], unit: str, **fields: Any) -> PanelSpec:
    return timeseries(f"{GROUP}.{key}", title, evidence, targets, unit=unit, width=8, **fields)


def _ranks(topology: Topology) -> str:
    """The ranks per replica, as the pools give them ("32", or "8 or 16" across pools)."""
    return " or ".join(dict.fromkeys(str(pool.gpus_per_replica) for pool in topology.profile.pools))


def _quota(topology: Topology) -> str:
    cap = topology.capacity
    return (
        f"The configured quota (S17): global_segment_size {format_binary(cap.store_per_replica or 0)} per "
        f"replica = {format_binary(cap.store_per_rank or 0)} per rank = {format_binary(cap.store_per_node or 0)} "
        "per node"
    )


def capacity_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    legend = "{{replica}} (master {{master}})"
    masters = mc.masters_text(profile)
    return [
        _ts(
            "store_capacity_per_replica",
            "Store memory mounted per replica (bytes)",
            Evidence(
                "Mooncake master (segment_total_capacity_bytes{segment})",
                "Store DRAM capacity mounted by the segments of each engine replica's nodes, bytes, with the "
                f"master serving the replica ({masters}). " + _quota(topology),
                S11 + "; a segment whose host maps to no node is in no replica",
                layer="Store capacity",
            ),
            [Target(mc.per_replica(profile, topology, mc.CAPACITY), legend)],
            "bytes",
        ),
        _ts(
            "store_allocated_per_replica",
            "Store memory allocated per replica (bytes)",
            Evidence(
                "Mooncake master (segment_allocated_bytes{segment})",
                "Store DRAM allocated to objects in each replica's segments, bytes (logical allocation, not the "
                "quota and not RSS)",
                S11,
                layer="Store allocation",
            ),
            [Target(mc.per_replica(profile, topology, mc.ALLOCATED), legend)],
            "bytes",
        ),
        _ts(
            "store_segments_per_replica",
            "Store segments mounted per replica",
            Evidence(
                "Mooncake master (segment_total_capacity_bytes{segment})",
                "number of mounted segments of each replica's nodes (one per SGLang rank that mounts Store "
                f"memory; expect {_ranks(topology)} "
                "per replica)",
                S11,
            ),
            [Target(mc.per_replica(profile, topology, mc.CAPACITY, op="count"), legend)],
            "short",
            decimals=0,
        ),
        _ts(
            "store_capacity_per_host",
            "Store memory mounted per node (segment host, bytes)",
            Evidence(
                "Mooncake master (segment_total_capacity_bytes{segment})",
                "Store DRAM capacity mounted by the segments of each host, bytes; a host the profile does not "
                "map keeps its raw address, so its segments stay visible",
                S11,
                layer="Store capacity",
            ),
            [Target(mc.by_host(profile, mc.CAPACITY), "{{host}}")],
            "bytes",
        ),
        _ts(
            "store_allocated_per_host",
            "Store memory allocated per node (segment host, bytes)",
            Evidence(
                "Mooncake master (segment_allocated_bytes{segment})",
                "Store DRAM allocated to objects in each host's segments, bytes",
                S11,
                layer="Store allocation",
            ),
            [Target(mc.by_host(profile, mc.ALLOCATED), "{{host}}")],
            "bytes",
        ),
        _ts(
            "store_segments_per_host",
            "Store segments mounted per node (segment host)",
            Evidence(
                "Mooncake master (segment_total_capacity_bytes{segment})",
                "number of mounted segments per host (one per SGLang rank that mounts Store memory; expect the "
                "ranks per node)",
                S11,
            ),
            [Target(mc.by_host(profile, mc.CAPACITY, op="count"), "{{host}}")],
            "short",
            decimals=0,
        ),
    ]


def quota_stat(topology: Topology) -> PanelSpec:
    cap = topology.capacity
    quotas = [
        ("per rank", cap.store_per_rank),
        ("per node", cap.store_per_node),
        ("per replica (global_segment_size)", cap.store_per_replica),
        ("all replicas", cap.store_total),
    ]
    return stat(
        f"{GROUP}.store_quota",
        "Store quota as configured (profile, S17)",
        Evidence(
            "deployment profile (capacity.global_segment_size), not a measurement",
            "the Store RAM quota read at each level: global_segment_size is per replica, divided by TP x PP "
            "ranks, times the ranks on a node",
            "a configured limit: the mounted and allocated bytes are on their own panels",
        ),
        tuple(
            Target(f"vector({value})", label, instant=True, ref_id=ref(i))
            for i, (label, value) in enumerate(quotas)
            if value is not None
        ),
        unit="bytes",
        width=24,
        height=4,
        text_mode="value_and_name",
    )


HA = "each master read once: max over its HA targets (the nodes the profile names for it)"


def health_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    failed_puts = mc.per_master(profile, "master_put_start_failures_total", "rate")
    failed_gets = mc.per_master(profile, "master_get_replica_list_failures_total", "rate")
    ranks = len(topology.ranks)
    return [
        _ts(
            "store_request_failures",
            "Store request failure share (master)",
            Evidence(
                "Mooncake master master_put_start_{failures,requests}_total, "
                "master_get_replica_list_{failures,requests}_total",
                "share of PutStart and GetReplicaList requests that failed per rate interval, 0-100 %, each apart",
                "a failed put is data the Store did not take; a failed get is a lookup error, not a "
                "miss. " + FIRST_EVENT_RATE + "; " + HA,
                layer="Store health",
            ),
            [
                Target(
                    divide(failed_puts, mc.per_master(profile, "master_put_start_requests_total", "rate")),
                    "put start · {{master}}",
                ),
                Target(
                    divide(failed_gets, mc.per_master(profile, "master_get_replica_list_requests_total", "rate")),
                    "get replica list · {{master}}",
                ),
            ],
            **ratio_axis("percentunit"),
        ),
        _ts(
            "store_alloc_failures",
            "Store allocation failures (Store full, per second)",
            Evidence(
                "Mooncake master master_put_start_alloc_failures_total",
                "PutStart requests per second the master could not allocate space for",
                "a non-zero rate means the Store is full for new objects (evictions did not keep up); absent, "
                "not 0, until the first failure, and " + FIRST_EVENT_RATE + "; " + HA,
                layer="Store health",
            ),
            [
                Target(
                    mc.per_master(profile, "master_put_start_alloc_failures_total", "rate"),
                    "allocation failures · {{master}}",
                )
            ],
            "reqps",
        ),
        _ts(
            "store_evictions",
            "Store evictions (master, per second)",
            Evidence(
                "Mooncake master master_successful_evictions_total, master_attempted_evictions_total",
                "eviction passes per second, successful and attempted",
                "evictions make room; attempted above successful means the master could not free enough; " + HA,
                layer="Store health",
            ),
            [
                Target(mc.per_master(profile, "master_successful_evictions_total", "rate"), "successful · {{master}}"),
                Target(mc.per_master(profile, "master_attempted_evictions_total", "rate"), "attempted · {{master}}"),
            ],
            "short",
        ),
        _ts(
            "store_active_clients",
            "Store active clients (master)",
            Evidence(
                "Mooncake master master_active_clients",
                f"clients connected to the master; every SGLang rank that mounts Store memory is one (expect {ranks})",
                "a client that disconnects unmounts its segments: its capacity leaves the panels above; " + HA,
                layer="Store health",
            ),
            [Target(mc.per_master(profile, "master_active_clients"), "active clients · {{master}}")],
            "short",
            decimals=0,
            thresholds=(("red", None), ("green", ranks)),
            threshold_style="line",
        ),
    ]


def store_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    """The Store panels of the KV group, or the S15 text when the deployment has no Store master."""
    if not profile.exported("mooncake_master"):
        return [
            source_status_panel(
                f"{GROUP}.store_unavailable", profile, ["mooncake_master"], "Store node-group capacity: not available"
            )
        ]
    return [*capacity_panels(profile, topology), *health_panels(profile, topology), quota_stat(topology)]
