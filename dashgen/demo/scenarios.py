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

The incident drills (``INCIDENTS``, S31-S35): each faults ONE entity (:func:`entity`) from ``FAULT_AT`` of
the window to its end, everything else healthy; :func:`incident` says where (node, GPU, device), and
``dashgen.demo.incidents`` shapes the data as the real exporters would show it. A profile without the source a
drill needs is refused (InputError naming the drill and the source).
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries import nodata

from dashgen.demo.catalogue import WORKERS
from dashgen.demo.endpoints import PORTS, cache_devices
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.errors import InputError

INCIDENTS = (
    "dcgm-lost-gpu",
    "xid-no-loss",
    "replica-restart",
    "stage-restart",
    "replica-hung",
    "master-failover",
    "master-copy-down",
    "disk-saturated",
    "host-tier-collapse",
    "gateway-shedding",
    "gateway-no-backend",
    "collector-dropping",
    "clock-skew",
    "thermal-throttling",
)
SCENARIOS = ("healthy", "five-reasons", "gpu-missing", "stuck-instance", *INCIDENTS)

# The reason each scenario puts on a node, named as the dashboards name it (queries.nodata); the demo never writes
# an unmapped segment host (6).
REASONS = {
    **{code: name for code, (name, _colour) in nodata.REASONS.items() if code != nodata.UNMAPPED},
    nodata.GPU_MISSING: nodata.GPU_MISSING_TEXT,
}

# Which source's series go missing on the "uninitialised" node: the deepest exported cache layer first.
UNINITIALISED_LAYERS = ("hicache_storage", "hicache", "gpm", "dcgm")
INSUFFICIENT_SAMPLES = 3
# Node index -> reason code in five-reasons.
FIVE_REASONS_NODES = {1: 5, 2: 4, 3: 3, 4: 1, 5: 2}
# gpu-missing: which node and GPU are lost, when the Xid is recorded and when the GPU's series end.
LOST_NODE_INDEX, LOST_GPU_INDEX = 3, 5
LOST_XID, XID_AT, LOST_AT = 79, 0.35, 0.40
# Incident drills: the fault starts at this share of the window and lasts to its end; node and GPU as gpu-missing's.
FAULT_AT = 0.60
# An event (a restart, a failover) is seen by counter resets over a short window (15 min): it happens at FAULT_AT or
# EVENT_BEFORE_END before the window's end, whichever is later, so the window's end still sees it.
EVENTS = frozenset({"replica-restart", "stage-restart", "master-failover"})
EVENT_BEFORE_END = 600.0
FATAL_XID = 48  # double-bit ECC error: fatal, the GPU stays on the bus
SKEW_SECONDS = 100.0  # clock-skew: the node's clock runs this far behind
# The sources each drill's fault shows in (all must be exported), and whether it needs more of the profile.
INCIDENT_SOURCES = {
    "dcgm-lost-gpu": ("dcgm", "gpm"),
    "xid-no-loss": ("dcgm",),
    "replica-restart": ("sglang",),
    "stage-restart": ("sglang",),
    "replica-hung": ("sglang",),
    "master-failover": ("mooncake_master",),
    "master-copy-down": ("mooncake_master",),
    "disk-saturated": ("node_exporter",),
    "host-tier-collapse": ("hicache",),
    "gateway-shedding": ("gateway",),
    "gateway-no-backend": ("gateway", "sglang"),
    "collector-dropping": (),
    "clock-skew": ("node_exporter",),
    "thermal-throttling": (),  # DCGM or GPM: whichever the profile exports shows it
}


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
    incident: str = ""  # an incident drill's fault on this node (dashgen.demo.incidents shapes its series)
    gpu: int | None = None  # the drill's GPU, for a GPU fault
    device: str = ""  # the drill's disk, for a disk fault

    @property
    def layer(self) -> str:
        return next(iter(sorted(self.absent_sources)), "")


@dataclass(frozen=True)
class Assignment:
    node: str
    reason: int
    detail: str
    label: str = ""  # an incident drill's name, read instead of the missing-data reason (its nodes read ok)

    @property
    def reason_name(self) -> str:
        return self.label or REASONS[self.reason]


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
    if scenario in INCIDENTS:
        found = incident(profile, scenario)
        return {node: NodeFault(incident=scenario, gpu=found.gpu, device=found.device) for node in found.nodes}
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
    return (profile.node_names[min(LOST_NODE_INDEX, profile.nodes - 1)], min(LOST_GPU_INDEX, profile.gpus_per_node - 1))


def fault_time(scenario: str, start: float, end: float) -> float:
    """When an incident drill's fault starts in the window ``start``..``end`` (epoch seconds)."""
    at = start + (end - start) * FAULT_AT
    return max(at, end - EVENT_BEFORE_END) if scenario in EVENTS else at


@dataclass(frozen=True)
class Incident:
    """Where an incident drill strikes: ``nodes`` carry the fault (the first is the entity's node; a hung replica
    holds its queue on every stage), ``gpu`` / ``device`` / ``pp_rank`` / ``instance`` narrow it."""

    scenario: str
    nodes: tuple[str, ...]
    gpu: int | None = None
    device: str = ""
    pp_rank: str = ""
    instance: str = ""
    worker: str = ""  # the gateway's backend (``smg_worker_*{worker}``)
    idle: tuple[str, ...] = ()  # nodes that lose their traffic (the replica behind a dead backend)

    @property
    def node(self) -> str:
        return self.nodes[0] if self.nodes else ""


INCIDENT_DETAILS = {
    "dcgm-lost-gpu": "GPU {gpu}: dcgm-exporter stops reporting it (every DCGM series ends), GPM still samples it",
    "xid-no-loss": "GPU {gpu}: DCGM Xid " + str(FATAL_XID) + " (double-bit ECC); the GPU keeps reporting",
    "replica-restart": "entry node's engine restarts: every engine counter, tokenizer ones included, restarts near 0",
    "stage-restart": "PP stage {pp_rank}'s engine restarts: its scheduler/cache counters restart near 0; the entry "
    "node's tokenizer counters keep counting",
    "replica-hung": "the replica's schedulers hang: ~20 requests queued on every stage, token counters flat, "
    "/metrics still served",
    "master-failover": "Mooncake master leader ({instance}) dies (up 0, series end); the standby takes over with "
    "empty metadata: segments re-register, allocation and keys restart near 0, hits collapse",
    "master-copy-down": "the standby copy of the Mooncake master pair ({instance}) dies; the leader answers normally",
    "disk-saturated": "cache disk {device}: busy ~99.5 %, queue ~60, await x80, throughput lower",
    "host-tier-collapse": "HiCache host tier (L2) hits ~20x down (host_hit prefill tokens, load-back) against its "
    "own past and its peers",
    "gateway-shedding": "gateway ({instance}) answers ~60 % of requests 429 (admission queue full) or 504; the "
    "engines see less traffic",
    "gateway-no-backend": "gateway ({instance}): backend {worker} unhealthy, circuit breaker open; its replica "
    "(nodes {nodes}) gets no traffic",
    "collector-dropping": "vmagent drops samples: one in three of the node's samples reaches the store, send queue "
    "near its bound, dropped counters grow",
    "clock-skew": f"clock {SKEW_SECONDS:g} s behind: every sample of the node is stamped early; node_timex offset "
    f"{SKEW_SECONDS:g} s, sync status 0",
    "thermal-throttling": "GPU {gpu}: ~92 °C, HW/SW thermal slowdown clock-event bits (0x60), SM clock down "
    "(DCGM and GPM)",
}


def _require(profile: Profile, scenario: str, *sources: str) -> None:
    for name in sources:
        if not profile.exported(name):
            raise InputError(f"scenario {scenario} needs source {name}, which profile {profile.name} does not export")


def standby_master(profile: Profile) -> str:
    """The node of the Mooncake master's standby copy: the profile's second master node, else node index 1 (the
    demo's leader runs on node index 0)."""
    nodes = profile.masters()[0].nodes if profile.masters() else ()
    if len(nodes) > 1:
        return nodes[1]
    return profile.node_names[min(1, profile.nodes - 1)]


def incident(profile: Profile, scenario: str) -> Incident:
    """Where the incident drill ``scenario`` strikes on ``profile``; InputError when the profile lacks what it needs."""
    if scenario not in INCIDENTS:
        raise InputError(f"unknown incident scenario {scenario!r}; known: {', '.join(INCIDENTS)}")
    _require(profile, scenario, *INCIDENT_SOURCES[scenario])
    if scenario == "thermal-throttling" and not (profile.exported("dcgm") or profile.exported("gpm")):
        raise InputError(
            f"scenario thermal-throttling needs source dcgm or gpm; profile {profile.name} exports neither"
        )
    names = profile.node_names
    node = names[min(LOST_NODE_INDEX, profile.nodes - 1)]
    gpu = min(LOST_GPU_INDEX, profile.gpus_per_node - 1)
    if scenario in ("dcgm-lost-gpu", "xid-no-loss", "thermal-throttling"):
        return Incident(scenario, (node,), gpu=gpu)
    if scenario in ("replica-restart", "replica-hung", "stage-restart"):
        replicas = [r for r in Topology(profile).replicas if any(p.name == r.pool for p in profile.pools)]
        if scenario == "stage-restart":
            staged = [r for r in replicas if len(r.nodes) > 1]
            if not staged:
                raise InputError(
                    f"scenario stage-restart needs a replica whose PP stages span several nodes; "
                    f"profile {profile.name} has none"
                )
            stage_node = staged[-1].nodes[-1]
            return Incident(scenario, (stage_node,), pp_rank=str(len(staged[-1].nodes) - 1))
        if not replicas:
            raise InputError(f"scenario {scenario} needs an engine replica; profile {profile.name} has none")
        replica = replicas[-1]  # the last replica: its entry node is not node index 0 when there are several
        nodes = replica.nodes if scenario == "replica-hung" else replica.nodes[:1]
        return Incident(scenario, tuple(nodes), pp_rank="0")
    if scenario in ("master-failover", "master-copy-down"):
        dead = names[0] if scenario == "master-failover" else standby_master(profile)
        return Incident(scenario, (dead,), instance=f"{dead}:{PORTS['mooncake_master']}")
    if scenario == "disk-saturated":
        if not profile.disks.has_cache_tier:
            raise InputError(f"scenario disk-saturated needs a cache disk ([disks]); profile {profile.name} has none")
        return Incident(scenario, (node,), device=cache_devices(profile)[0])
    if scenario in ("gateway-shedding", "gateway-no-backend"):
        instance = f"{names[0]}:{PORTS['gateway']}"
        if scenario == "gateway-shedding":
            return Incident(scenario, (names[0],), instance=instance)
        engine_replicas = Topology(profile).replicas
        if len(engine_replicas) < 2:
            raise InputError(
                f"scenario gateway-no-backend needs two engine replicas behind the gateway; profile "
                f"{profile.name} has {len(engine_replicas)}"
            )
        # the demo's gateway routes to WORKERS: replica-1 is the topology's second replica
        return Incident(scenario, (names[0],), instance=instance, worker=WORKERS[1], idle=engine_replicas[1].nodes)
    if scenario == "collector-dropping" and profile.collector is None:
        raise InputError(
            f"scenario collector-dropping needs source collector ([collector]), which profile "
            f"{profile.name} does not describe"
        )
    return Incident(scenario, (node,))


def entity(profile: Profile, scenario: str) -> dict[str, str]:
    """The failing entity of a scenario as label name -> value (the profile's label names): node, and gpu,
    device, PP stage or instance where the fault is narrower; empty for healthy and master-copy-down (a control)."""
    if scenario in ("healthy", "master-copy-down"):
        return {}
    if scenario == "gpu-missing":
        node, gpu = lost_gpu(profile)
        return {profile.label("node"): node, profile.label("gpu"): str(gpu)}
    if scenario == "stuck-instance":
        return {profile.label("node"): profile.node_names[min(LOST_NODE_INDEX, profile.nodes - 1)]}
    if scenario not in INCIDENTS:
        raise InputError(f"scenario {scenario} has no single failing entity")
    found = incident(profile, scenario)
    named = {profile.label("node"): found.node}
    if found.gpu is not None:
        named[profile.label("gpu")] = str(found.gpu)
    if found.device:
        named["device"] = found.device
    if scenario == "stage-restart":
        named[profile.label("pp_rank")] = found.pp_rank
    if found.instance:
        named[profile.label("instance")] = found.instance
    if found.worker:
        named["worker"] = found.worker
    return named


def assignments(profile: Profile, scenario: str) -> list[Assignment]:
    """The scenario's node -> reason table, for humans and tests."""
    if scenario in INCIDENTS:
        found = incident(profile, scenario)
        when = (
            f"from {FAULT_AT:.0%} of the window or {EVENT_BEFORE_END / 60:g} min before its end, whichever is later"
            if scenario in EVENTS
            else f"from {FAULT_AT:.0%} of the window"
        )
        text = f"{when}: " + INCIDENT_DETAILS[scenario].format(
            gpu=found.gpu,
            device=found.device,
            pp_rank=found.pp_rank,
            instance=found.instance,
            worker=found.worker,
            nodes=", ".join(found.idle),
        )
        if scenario == "replica-hung":
            text += f" (stages on {', '.join(found.nodes)})"
        named = ", ".join(f"{k}={v}" for k, v in entity(profile, scenario).items())
        return [Assignment(found.node, 0, f"{text}; failing: {named or 'nothing (control)'}", f"incident {scenario}")]
    rows = []
    for node, fault in faults(profile, scenario).items():
        if fault.stuck:
            detail = "video engine: running jobs never finish from a quarter of the window on, jobs keep queueing"
        elif fault.lost_gpu is not None:
            detail = (
                f"GPU {fault.lost_gpu}: Xid {LOST_XID} at {XID_AT:.0%} of the window, every series of it gone "
                f"from {LOST_AT:.0%}"
            )
        elif fault.down:
            detail = "up == 0 for every target" + (
                f"; {fault.missing_job_source} target missing from up" if fault.missing_job_source else ""
            )
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
