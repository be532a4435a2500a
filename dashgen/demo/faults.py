"""The catalogue's demo fault scenarios (``fault:<key>``, ``dashgen.catalogue`` ``DemoFault.scenario``): each reshapes
the healthy series of ONE entity from ``scenarios.fault_time`` on, as the real exporter would show the fault.

A fault is a list of ``Change``s: which series (metric name, or ``~<regex>`` for several, and label values, ``*``
for every value, a regex for ``segment``), what happens to them from the fault on (a gauge set, a counter growing at
a rate, a counter stopped, a step, the series ended, or a copy with other labels growing at a rate); a fault's
``sources`` end on its node, or fail every other scrape (``flapping``). The node is given by its index
(``Fault.node``) so several faults can strike different nodes of one deployment (one store, one rule replay).
The faults are data; ``dashgen.demo.fault_stream`` applies one to the stream of import objects ``dashgen.demo.run``
makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dashgen.demo.catalogue import WORKERS
from dashgen.demo.endpoints import SYSTEM_DISK
from dashgen.demo.scenarios import fault_time
from dashgen.deployment.profile import Profile

Kind = Literal["gauge", "scale", "rate", "flat", "step", "stop", "drop", "copy"]
GIB = 2**30
NODE, GPU = "$node", "$gpu"  # placeholders: the fault's node name / GPU index


@dataclass(frozen=True)
class Change:
    metric: str
    match: tuple[tuple[str, str], ...] = ()  # label -> value ("$node", "$gpu", "*" any, "~<regex>")
    kind: Kind = "gauge"
    value: float = 0.0  # gauge: the value; scale: the factor; rate / copy: per second; step: the increment
    # copy: the labels the copy changes; the copy must be a series the demo does not already write (two series
    # with one label set merge in the store, and the healthy samples stay beside the fault's)
    relabel: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Fault:
    key: str
    changes: tuple[Change, ...]
    node: int = 1  # the node index the fault strikes (0 hosts the gateway and the Mooncake master)
    gpu: int = 2
    sources: tuple[str, ...] = ()  # the sources whose every series of the node ends (a target down or gone)
    up: float | None = None  # the up value of those targets from the fault on (None: the up series ends too)
    needs: tuple[str, ...] = field(default=())  # profile sources the fault shows in
    # What the fault occupies (two faults sharing one never share a deployment): its node, or the parts it changes (the
    # gateway's, the Mooncake master's on node 0; "slo": the requests the engine-side SLO ratios count).
    uses: tuple[str, ...] = ()
    every_node: bool = False  # the sources' targets end on every node (a cluster-wide source gone), not one
    # the sources' scrapes fail every other time from the fault on (a target timing out now and then): up reads 0
    # and the target's other series miss those scrapes, instead of ending
    flapping: bool = False
    # The share of the window the fault starts at, for a fault whose row's test looks back longer than the window
    # leaves after ``scenarios.fault_time`` (None: that time).
    share: float | None = None

    @property
    def resources(self) -> tuple[str, ...]:
        return self.uses or (f"node{self.node}",)


def _m(*pairs: str) -> tuple[tuple[str, str], ...]:
    return tuple(zip(pairs[::2], pairs[1::2], strict=True))


N, G = ("node", NODE), ("gpu", GPU)
GW_RESPONSES, GW_WORKERS, GW_POLICY = ("gw-responses",), ("gw-workers",), ("gw-policy",)
GW_RUNTIME, GW_KV_EVENTS = ("gw-runtime",), ("gw-kv-events",)
GATEWAY_ALL = (*GW_RESPONSES, *GW_WORKERS, *GW_POLICY, *GW_RUNTIME, *GW_KV_EVENTS, "gw-target")
MASTER_ALLOC, MASTER_SEGMENTS = ("master-alloc",), ("master-segments",)
MASTER_ALL = (*MASTER_ALLOC, *MASTER_SEGMENTS, "master-target")
SCRAPE_USES = {"gateway": GATEWAY_ALL, "mooncake_master": MASTER_ALL}


def _scrape(source: str, node: int, down: bool) -> Fault:
    """A target of ``source`` on a node failing (up 0) or gone (no up series): its series of the node end."""
    key = f"{source.replace('_', '-')}-{'scrape-failing' if down else 'target-missing'}"
    uses = SCRAPE_USES.get(source, ())
    every = not down and source in SCRAPE_USES  # a cluster source is missing only when no instance is left
    return Fault(
        key, (), node=node, sources=(source,), up=0.0 if down else None, needs=(source,), uses=uses, every_node=every
    )


ENGINE_SOURCES = ("sglang", "hicache", "hicache_storage")  # the engine process's targets
MODEL_DISK_IDLE = Change("node_disk_read_bytes_total", _m(*N, "device", SYSTEM_DISK), "flat")

FAULTS: tuple[Fault, ...] = (
    Fault("gpu-row-remap-failure", (Change("DCGM_FI_DEV_ROW_REMAP_FAILURE", _m(*N, *G), "gauge", 1),), 1),
    Fault("gpu-hbm-uncorrectable", (Change("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", _m(*N, *G), "gauge", 2),), 2),
    Fault(
        "gpu-nvlink-errors",
        (
            Change("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", _m(*N, *G), "rate", 4000),
            Change("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", _m(*N, *G), "rate", 900),
        ),
        3,
    ),
    Fault(
        "gpu-hw-slowdown",
        (
            Change("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", _m(*N, *G), "gauge", 0x8),
            Change("gpm_clock_event_reasons", _m(*N, *G), "gauge", 0x8),
        ),
        6,
        gpu=4,
    ),
    Fault("gpu-pcie-replays", (Change("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", _m(*N, *G), "rate", 50),), 4),
    Fault(
        "gpu-memory-near-full",
        (
            Change("gpm_memory_used_bytes", _m(*N, *G), "gauge", 0.99 * 80 * GIB),
            Change("DCGM_FI_DEV_FB_USED", _m(*N, *G), "gauge", 80_700),
            Change("DCGM_FI_DEV_FB_FREE", _m(*N, *G), "gauge", 800),
        ),
        5,
    ),
    Fault("host-memory-pressure", (Change("node_memory_MemAvailable_bytes", _m(*N), "gauge", 40 * GIB),), 1),
    Fault("host-oom-kill", (Change("node_vmstat_oom_kill", _m(*N), "step", 1),), 2),
    Fault(
        "host-cpu-saturated",
        (Change("node_cpu_seconds_total", _m(*N, "mode", "idle"), "flat"),)
        + (Change("node_cpu_seconds_total", _m(*N, "mode", "iowait"), "flat"),),
        3,
    ),
    Fault("host-nic-errors", (Change("node_network_receive_errs_total", _m(*N, "device", "*"), "rate", 50),), 4),
    Fault("disk-cache-full", (Change("node_filesystem_avail_bytes", _m(*N, "mountpoint", "$cache"), "gauge", 0),), 5),
    Fault("disk-model-full", (Change("node_filesystem_avail_bytes", _m(*N, "mountpoint", "$model"), "gauge", 0),), 6),
    Fault("disk-root-full", (Change("node_filesystem_avail_bytes", _m(*N, "mountpoint", "/"), "gauge", 0),), 7),
    Fault(
        "disk-filesystem-errors", (Change("node_filesystem_readonly", _m(*N, "mountpoint", "$cache"), "gauge", 1),), 6
    ),
    Fault(
        "kv-pool-exhausted",
        (
            Change("sglang:token_usage", _m(*N), "gauge", 0.995),
            Change("sglang:num_queue_reqs", _m(*N), "gauge", 30),
        ),
        1,
    ),
    Fault(
        "kv-retraction-storm",  # a first-event counter: the healthy one may not exist yet, so it is written anew
        (
            Change("sglang:num_retracted_requests_total", _m(*N), "drop"),
            Change(
                "sglang:realtime_tokens_total", _m(*N), "copy", 3, _m("__name__", "sglang:num_retracted_requests_total")
            ),
        ),
        2,
    ),
    Fault("transfer-engine-failing", (Change("sglang:num_transfer_failed_reqs_total", _m(*N), "rate", 1),), 3),
    Fault(  # RDMA down: every transfer of the node's engines fails over to TCP, one in two after a failed first try
        "transfer-engine-fallback",
        (Change("tent_transport_failover_total", _m(*N), "rate", 100),),
        2,
        needs=("mooncake_tent",),
    ),
    Fault(
        "hicache-storage-dropping",
        (
            Change("sglang:hicache_backup_dropped_tokens_total", _m(*N), "drop"),
            Change(
                "sglang:backuped_tokens_total",
                _m(*N),
                "copy",
                3000,
                _m("__name__", "sglang:hicache_backup_dropped_tokens_total"),
            ),
        ),
        4,
    ),
    Fault(
        "store-segments-lost",
        (Change("segment_total_capacity_bytes", _m("segment", "~$address:.*"), "stop"),),
        5,
        uses=("node5", *MASTER_SEGMENTS),
    ),
    Fault(
        "store-alloc-failing",
        (
            Change("master_put_start_alloc_failures_total", (), "drop"),
            Change(
                "master_put_start_requests_total",
                (),
                "copy",
                60,
                _m("__name__", "master_put_start_alloc_failures_total"),
            ),
        ),
        0,
        uses=MASTER_ALLOC,
    ),
    Fault(
        "gateway-errors",
        (Change("smg_http_responses_total", _m("status_code", "200"), "copy", 1.0, _m("status_code", "503")),),
        0,
        uses=GW_RESPONSES,
    ),
    Fault(
        "gateway-backends-down",
        (Change("smg_worker_health", _m("worker", WORKERS[1]), "gauge", 0),),
        0,
        uses=GW_WORKERS,
    ),
    Fault(
        "gateway-no-healthy-backend",
        (Change("smg_worker_health", _m("worker", "*"), "gauge", 0),),
        0,
        uses=GW_WORKERS,
    ),
    Fault(
        "gateway-routing-policy-changed",
        (
            Change("smg_worker_selection_total", _m("policy", "cache_aware"), "flat"),
            Change("smg_worker_selection_total", _m("policy", "cache_aware"), "copy", 2.0, _m("policy", "round_robin")),
        ),
        0,
        uses=GW_POLICY,
    ),
    Fault(
        "gateway-event-loop-stalling",
        (Change("smg_tokio_event_loop_stalls_total", _m(*N), "rate", 5.0),),
        0,
        uses=GW_RUNTIME,
    ),
    Fault(
        "gateway-kv-events-failing",  # a first-event counter: the healthy one may not exist yet, so it is written anew
        (
            Change("smg_kv_event_subscription_failures_total", _m(*N), "drop"),
            Change(
                "smg_worker_selection_total",
                _m(*N, "policy", "cache_aware", "worker", WORKERS[1]),
                "copy",
                0.5,
                _m("__name__", "smg_kv_event_subscription_failures_total", "reason", "join_error"),
            ),
        ),
        0,
        uses=GW_KV_EVENTS,
    ),
    Fault(  # every video job finishes past the job-latency bound: no observation under a finite bucket any more
        "video-jobs-late",
        (Change("sglang:diffusion_request_latency_seconds_bucket", _m("le", "~[^+].*"), "flat"),),
        0,
        needs=("sglang",),
        uses=("video-all",),
        share=0.1,  # a fast burn of a 95 % objective needs 72 % of the last hour's jobs bad
    ),
    Fault(  # every video instance's jobs queue and none finishes: the counters stop on every node
        "video-pool-stuck",
        (
            Change("sglang:diffusion_requests_total", (), "flat"),
            Change("sglang:diffusion_num_queue_reqs", (), "gauge", 3),
        ),
        0,
        needs=("sglang",),
        uses=("video-all",),
        share=0.25,  # stuck = no job finished over 2 x the 10-minute job bound, then held 5 minutes
    ),
    Fault("collector-memory-near-limit", (Change("process_resident_memory_bytes", _m(*N), "gauge", 500 * 2**20),), 6),
    Fault(
        "store-ingestion-backlog",
        (Change("vmagent_remotewrite_pending_data_bytes", (), "gauge", 200 * 2**20),),
        0,
        uses=("collector-all",),
    ),
    Fault("collector-silent", (), 7, sources=("*",)),
    Fault(  # every request's TTFT past every finite bucket: no observation under the SLO bound any more
        "slo-burn",
        (Change("sglang:time_to_first_token_seconds_bucket", _m("le", "~[^+].*"), "flat"),),
        0,
        uses=("slo",),
    ),
    # a crashed engine reads nothing from its model disk; a loading one streams its weights from it
    Fault("engine-scrape-failing", (MODEL_DISK_IDLE,), 2, sources=ENGINE_SOURCES, up=0.0),
    Fault(
        "engine-loading-slow",
        (Change("node_disk_read_bytes_total", _m(*N, "device", SYSTEM_DISK), "rate", 150e6),),
        4,
        sources=ENGINE_SOURCES,
        up=0.0,
        # an entry stage in long-context-64: its request histograms end, and an SLO burn beside it fired 7-9 min late
        uses=("node4", "slo"),
    ),
    Fault("engine-target-missing", (), 3, sources=ENGINE_SOURCES),
    *(
        _scrape(source, 0 if source in ("gateway", "mooncake_master") else index + 1, down)
        for index, source in enumerate(
            ("dcgm", "gpm", "node_exporter", "gateway", "mooncake_master", "mooncake_client", "mooncake_tent")
        )
        for down in (True, False)
    ),
)
# Held out: faults written apart from the catalogue's rows, as the exporters show an incident the catalogue's own
# demo faults do not (another counter of the same device, another GPU, another mount, a partial value, a fault of
# two signals at once). The fault suite judges them by the checks of the catalogue's rows (an alert naming the entity,
# a first-screen line naming entity and cause), to measure that coverage holds beyond the faults it was built on.
HELD_OUT: tuple[Fault, ...] = (
    Fault(  # a bad optic corrupts outgoing frames only
        "held-out-nic-transmit-errors",
        (Change("node_network_transmit_errs_total", _m(*N, "device", "*"), "rate", 5),),
        6,
    ),
    # NTP stepped back
    Fault("held-out-clock-behind", (Change("node_timex_offset_seconds", _m(*N), "gauge", -1.5),), 2),
    Fault(  # NTP lost: the kernel marks the clock unsynchronised and its estimated error sits at its 16 s limit (the
        # offset it last knew stays small). The demo writes both series on every node, so the fault changes them in
        # place: a copy onto them would leave the synchronised samples beside it in the store.
        "held-out-clock-unsynchronised",
        (
            Change("node_timex_sync_status", _m(*N), "gauge", 0.0),
            Change("node_timex_maxerror_seconds", _m(*N), "gauge", 16.0),
        ),
        5,
    ),
    Fault(  # logs fill the root filesystem to 1 % free, not to 0
        "held-out-root-disk-nearly-full",
        (Change("node_filesystem_avail_bytes", _m(*N, "mountpoint", "/"), "scale", 0.02),),  # 40-60 % free -> about 1 %
        3,
    ),
    Fault(  # an HBM row-remap failure on the last GPU: Xid 64 reported beside the latched flag
        "held-out-hbm-row-remap-failure",
        (
            Change("DCGM_FI_DEV_ROW_REMAP_FAILURE", _m(*N, *G), "gauge", 1),
            Change("DCGM_FI_DEV_XID_ERRORS", _m(*N, *G), "gauge", 64),
        ),
        4,
        gpu=7,
    ),
    Fault(  # a double-bit ECC error: Xid 48, and the row remapped at the next reset
        "held-out-hbm-double-bit-ecc",
        (
            Change("DCGM_FI_DEV_XID_ERRORS", _m(*N, *G), "gauge", 48),
            Change("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", _m(*N, *G), "step", 1),
        ),
        5,
        gpu=0,
    ),
    Fault(  # the rack's PSU trips the power brake of one GPU
        "held-out-gpu-power-brake",
        (
            Change("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", _m(*N, *G), "gauge", 0x80),
            Change("gpm_clock_event_reasons", _m(*N, *G), "gauge", 0x80),
        ),
        7,
        gpu=1,
    ),
    Fault(  # the model disk's filesystem hits an I/O error and is remounted read-only
        "held-out-model-disk-read-only",
        (Change("node_filesystem_readonly", _m(*N, "mountpoint", "$model"), "gauge", 1),),
        1,
    ),
    Fault(  # a riser going bad: a few PCIe replays a second on one GPU
        "held-out-pcie-link-degraded",
        (Change("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", _m(*N, *G), "rate", 3),),
        2,
        gpu=5,
    ),
    Fault(  # an engine OOM-killed: the kernel counts the kill, the engine's targets stop answering
        "held-out-engine-oom-killed",
        (Change("node_vmstat_oom_kill", _m(*N), "step", 1), MODEL_DISK_IDLE),
        7,
        sources=ENGINE_SOURCES,
        up=0.0,
    ),
    Fault(  # one gateway's event loop stalls now and then (a blocking call on a worker thread)
        "held-out-gateway-event-loop-stall",
        (Change("smg_tokio_event_loop_stalls_total", _m(*N), "rate", 1.0),),
        0,
        uses=GW_RUNTIME,
    ),
    Fault(  # a decode instance's KV transfers time out at bootstrap (the prefill side cannot reach it)
        "held-out-decode-kv-transfer-timeouts",
        (Change("sglang:num_bootstrap_failed_reqs_total", _m(*N), "rate", 0.3),),
        13,
    ),
)
# A second held-out round: classes of fault that neither the catalogue's rows nor the first round name (a GPU lost to
# the bus, a filesystem out of inodes, HBM heat, a target failing every other scrape, an engine wedged at light load),
# spread over the suite's profiles (``tests/fault_plan.py`` names the profile of each).
HELD_OUT_AGAIN: tuple[Fault, ...] = (
    Fault(  # Xid 79 on one GPU of a decode node: NVML no longer reaches it, so the GPM sampler loses it and
        # dcgm-exporter skips its blank fields, keeping only the Xid it last read
        "held-out-gpu-fell-off-the-bus",
        (
            Change("DCGM_FI_DEV_XID_ERRORS", _m(*N, *G), "gauge", 79),
            Change("~DCGM_FI_(?!DEV_XID_ERRORS$).*", _m(*N, *G), "stop"),
            Change("~gpm_.*", _m(*N, *G), "stop"),
        ),
        13,
        gpu=6,
    ),
    Fault(  # container logs of many small files use up the root filesystem's inodes while half its bytes are free
        "held-out-root-inodes-exhausted",
        (Change("node_filesystem_files_free", _m(*N, "mountpoint", "/"), "gauge", 0),),
        5,
    ),
    Fault(  # frames written as small files fill the video scratch filesystem's inode table: ENOSPC with bytes free
        "held-out-scratch-inodes-exhausted",
        (Change("node_filesystem_files_free", _m(*N, "mountpoint", "$cache"), "gauge", 1200),),
        9,
    ),
    Fault(  # a failed HBM cooling plate: the memory, not the die, runs hot and the GPU slows its clocks (HW thermal)
        "held-out-hbm-overheating",
        (
            Change("DCGM_FI_DEV_MEMORY_TEMP", _m(*N, *G), "gauge", 97),
            Change("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", _m(*N, *G), "gauge", 0x40),
            Change("gpm_clock_event_reasons", _m(*N, *G), "gauge", 0x40),
        ),
        2,
        gpu=3,
    ),
    Fault(  # a scheduler wedged in a collective at light load: its last logged gauges stay (requests running, none
        # waiting), every counter of the node's engine stops
        "held-out-engine-wedged-at-light-load",
        (
            Change("~sglang:.*(_total|_bucket|_count|_sum)", _m(*N), "flat"),
            Change("sglang:num_running_reqs", _m(*N), "gauge", 6),
            Change("sglang:num_queue_reqs", _m(*N), "gauge", 0),
            Change("sglang:gen_throughput", _m(*N), "gauge", 0),
        ),
        6,
    ),
    # the engine's /metrics (a multiprocess collector) times out every other scrape under load
    Fault("held-out-engine-metrics-flapping", (), 7, sources=ENGINE_SOURCES, flapping=True),
    Fault(  # node_exporter's scrape exceeds its timeout every other time (a hung NFS mount stalls its collector)
        "held-out-node-exporter-flapping", (), 7, sources=("node_exporter",), flapping=True
    ),
    Fault(  # the Store client's metrics endpoint answers every other scrape (its HTTP thread starved)
        "held-out-mooncake-client-flapping",
        (),
        3,
        sources=("mooncake_client",),
        flapping=True,
        needs=("mooncake_client",),
    ),
)
BY_KEY = {fault.key: fault for fault in (*FAULTS, *HELD_OUT, *HELD_OUT_AGAIN)}
PREFIX = "fault:"


def fault_of(scenario: str) -> Fault | None:
    """The fault of a ``fault:<key>`` scenario; None for any other scenario."""
    if not scenario.startswith(PREFIX):
        return None
    try:
        return BY_KEY[scenario.removeprefix(PREFIX)]
    except KeyError:
        raise KeyError(f"{scenario}: no such fault scenario in dashgen/demo/faults.py") from None


def starts(scenario: str, start: float, end: float) -> float:
    """When a scenario's fault starts in the window ``start``..``end``: a catalogue fault's own share of the window,
    else the incident drills' time (``scenarios.fault_time``)."""
    fault = fault_of(scenario)
    if fault is not None and fault.share is not None:
        return start + (end - start) * fault.share
    return fault_time(scenario, start, end)


def entity(profile: Profile, fault: Fault) -> dict[str, str]:
    """The label values the fault's alert must name: the node (and GPU) it strikes, where it has them; a gateway's
    backend (``worker``) instead of the gateway's host when the fault strikes one backend."""
    workers = {dict(c.match).get("worker", "*") for c in fault.changes if c.kind != "copy"} - {"*"}
    if len(workers) == 1:
        return {"worker": workers.pop()}
    node = profile.node_names[min(fault.node, profile.nodes - 1)]
    named = {profile.label("node"): node}
    if any(dict(c.match).get("gpu") == GPU for c in fault.changes):
        named[profile.label("gpu")] = str(fault.gpu)
    return named
