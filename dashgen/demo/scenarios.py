"""Demo scenarios: which node suffers which missing-data reason (S6). Pure data from a profile.

``healthy``: every node scrapes, serves traffic and does disk I/O.

``five-reasons``: each of the five reasons on a different node; node index 0 stays healthy because
it hosts the Mooncake master, the gateway and the first replica's API server.

====  ====================  =========================================================================
node  reason (code)         how the data shows it
====  ====================  =========================================================================
1     collection failed 5   ``up == 0`` for the node's targets, the GPU sampler's target missing
                            from ``up``, no other series of the node
2     uninitialised 4       targets up, but the deepest exported cache layer never exported a series
3     insufficient 3        every data series holds 3 samples in the window (``up`` is complete)
4     no traffic 1          request/token counters flat, load gauges idle, rare first-event counters
                            absent (its HiCache layers therefore also show no I/O)
5     no I/O 2              the cache disks' I/O counters flat, ``node_disk_io_now`` 0
====  ====================  =========================================================================

All other nodes are healthy. A profile with fewer than 6 nodes cannot show five-reasons.

``gpu-missing`` (S22): one GPU falls off the bus. On node index 3 (the last node of a smaller
profile) GPU 5 (the last GPU of a smaller node) reports an Xid 79 at 35 % of the window in DCGM, and
every series of that GPU, GPM and DCGM alike, ends at 40 %: the node's exporters stay up with one
GPU fewer. Everything else is healthy, so the node reads "GPU missing (7 of 8)" and nothing else.

``stuck-instance`` (S25, video-generation pools): on node index 3 the SGLang Diffusion engine stops
finishing jobs (``dashgen.demo.diffusion_series``); it keeps serving /metrics, so the node reads ok.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen.deployment.profile import Profile
from dashgen.errors import InputError

SCENARIOS = ("healthy", "five-reasons", "gpu-missing", "stuck-instance")

REASONS = {
    0: "ok",
    1: "no traffic",
    2: "no I/O",
    3: "insufficient samples",
    4: "uninitialised",
    5: "collection failed",
    7: "GPU missing",  # queries.nodata.GPU_MISSING
}

# Which source's series go missing on the "uninitialised" node: the deepest exported cache layer first.
UNINITIALISED_LAYERS = ("hicache_storage", "hicache", "gpm", "dcgm")
INSUFFICIENT_SAMPLES = 3
# Node index -> reason code in five-reasons.
FIVE_REASONS_NODES = {1: 5, 2: 4, 3: 3, 4: 1, 5: 2}
# gpu-missing: which node and GPU are lost, when the Xid is recorded and when the GPU's series end.
LOST_NODE_INDEX, LOST_GPU_INDEX = 3, 5
LOST_XID, XID_AT, LOST_AT = 79, 0.35, 0.40


@dataclass(frozen=True)
class NodeFault:
    """What goes wrong on one node in a scenario."""

    reason: int = 0
    down: bool = False  # every target up == 0, no data series
    missing_job_source: str | None = None  # this source's target is gone from ``up`` entirely
    absent_sources: frozenset[str] = frozenset()  # target up, series never exported
    sparse: int = 0  # keep only this many samples per data series in the window
    no_traffic: bool = False
    no_io: bool = False
    lost_gpu: int | None = None  # this GPU's series (every source) end at LOST_AT, after an Xid at XID_AT
    stuck: bool = False  # video engine: its running jobs never finish from mid-window (dashgen.demo.diffusion_series)

    @property
    def layer(self) -> str:
        return next(iter(sorted(self.absent_sources)), "")


@dataclass(frozen=True)
class Assignment:
    node: str
    reason: int
    detail: str

    @property
    def reason_name(self) -> str:
        return REASONS[self.reason]


def uninitialised_layer(profile: Profile) -> str:
    for name in UNINITIALISED_LAYERS:
        if profile.exported(name):
            return name
    raise InputError(f"profile {profile.name}: no exported cache or GPU source to leave uninitialised")


def faults(profile: Profile, scenario: str) -> dict[str, NodeFault]:
    """Node name -> fault for a scenario (nodes not listed are healthy)."""
    if scenario == "healthy":
        return {}
    if scenario == "stuck-instance":  # S25: one video engine stops finishing jobs; its node reads ok otherwise
        return {profile.node_names[min(LOST_NODE_INDEX, profile.nodes - 1)]: NodeFault(stuck=True)}
    if scenario == "gpu-missing":
        node, gpu = lost_gpu(profile)
        return {node: NodeFault(reason=7, lost_gpu=gpu)}
    if scenario != "five-reasons":
        raise InputError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    if profile.nodes < 6:
        raise InputError(
            f"scenario five-reasons needs at least 6 nodes (one healthy node plus one per reason); "
            f"profile {profile.name} has {profile.nodes}"
        )
    names = profile.node_names
    missing = next((s for s in ("gpm", "dcgm", "node_exporter") if profile.exported(s)), None)
    layer = uninitialised_layer(profile)
    by_reason = {
        5: NodeFault(reason=5, down=True, missing_job_source=missing),
        4: NodeFault(reason=4, absent_sources=frozenset({layer})),
        3: NodeFault(reason=3, sparse=INSUFFICIENT_SAMPLES),
        1: NodeFault(reason=1, no_traffic=True),
        2: NodeFault(reason=2, no_io=True),
    }
    return {names[index]: by_reason[code] for index, code in FIVE_REASONS_NODES.items()}


def lost_gpu(profile: Profile) -> tuple[str, int]:
    """(node, GPU index) the gpu-missing scenario loses."""
    return (profile.node_names[min(LOST_NODE_INDEX, profile.nodes - 1)],
            min(LOST_GPU_INDEX, profile.gpus_per_node - 1))


def assignments(profile: Profile, scenario: str) -> list[Assignment]:
    """The scenario's node -> reason table, for humans and tests."""
    rows = []
    for node, fault in faults(profile, scenario).items():
        if fault.stuck:
            detail = "video engine: running jobs never finish from a quarter of the window on, jobs keep queueing"
        elif fault.lost_gpu is not None:
            detail = (f"GPU {fault.lost_gpu}: Xid {LOST_XID} at {XID_AT:.0%} of the window, every series of it gone "
                      f"from {LOST_AT:.0%}")
        elif fault.down:
            detail = "up == 0 for every target" + (
                f"; {fault.missing_job_source} target missing from up" if fault.missing_job_source else "")
        elif fault.absent_sources:
            detail = f"targets up; {', '.join(sorted(fault.absent_sources))} series never exported"
        elif fault.sparse:
            detail = f"{fault.sparse} samples per series in the window"
        elif fault.no_traffic:
            detail = "request and token counters flat"
        else:
            detail = "cache-disk I/O counters flat"
        rows.append(Assignment(node, fault.reason, detail))
    return rows
