"""PromQL of the catalogue rows whose alert the catalogue itself writes (``FailureMode.expr``), and of a failing
scrape target (the collection rows, written by ``dashgen.rules.alerts``): host memory, OOM kills,
CPU and NIC errors; filesystems by role (mount point); NVLink and PCIe errors; the KV pool; the HiCache storage tier;
the Store's segments and allocations; the transfer engine (PD failures, TENT failovers); the gateway's backends,
routing policy, event loop and KV-event subscriptions.

Each function keeps the labels of the entity the row names, reads series by the exporter table's names (so the
profile's stated versions, flags and prefix apply when the rules are written) and is deployment-scoped without any
Grafana variable. Thresholds are defined here once, each with why.

Several counters of one kind (NVLink CRC / replay / recovery; NIC receive / transmit errors) are summed one rate at
a time, each ``label_replace``d to its own ``counter`` label before the sum: ``rate({__name__=~"a|b"})`` drops the
names and leaves two series with one label set, which Prometheus refuses ("vector cannot contain metrics with the
same labelset") and VictoriaMetrics silently accepts.
"""

from __future__ import annotations

from dashgen_queries import mooncake as mc
from dashgen_queries import store_tent as tent
from dashgen_queries import vmagent as va
from dashgen_queries.gateway import gateway, gateway_labels
from dashgen_queries.inventory import REPLICA, node_to_replica
from dashgen_queries.node_exporter import mount_devices
from dashgen_queries.promql import agg, job, matcher, scoped_job, selector
from dashgen_queries.sglang import ENGINE_TYPE, stage_key

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import DCGM, GATEWAY, HICACHE_STORAGE, MOONCAKE_MASTER, NODE_EXPORTER, SGLANG

# -- thresholds (one definition each; the reason is the catalogue row's test_reason) ---------------------------------
MEMORY_AVAILABLE_SHARE = 0.05  # host RAM available below this share of the total: the page cache is gone
CPU_BUSY_SHARE = 0.95  # every core busy but this share: the engine's tokenizer and scheduler threads wait
NIC_ERRORS_PER_SECOND = 1.0  # receive + transmit errors per second on one interface
FILESYSTEM_FREE_SHARE = 0.02  # below 2 % free (or 0 bytes) a filesystem is full for the writers that use it
NVLINK_ERRORS_PER_SECOND = 1.0  # CRC + replay + recovery errors per second on one GPU (healthy links read ~0)
PCIE_REPLAYS_PER_SECOND = 1.0  # PCIe replays per second on one GPU
KV_USAGE_FULL = 0.98  # KV pool used share at which new requests cannot be admitted
RETRACTIONS_PER_SECOND = 0.5  # requests retracted (preempted back to the queue) per second on one stage
BACKUP_DROP_SHARE = 0.2  # share of the storage tier's backups dropped (the backend cannot keep up or is full)
SEGMENT_LOSS_SHARE = 0.9  # a node's mounted Store capacity below this share of its own peak within the window
SEGMENT_WINDOW = "30m"
ALLOC_FAILURE_SHARE = 0.05  # share of Store puts whose allocation failed
TRANSFER_FAILURES_PER_SECOND = 0.05  # PD transfer or bootstrap failures per second on one stage
# failovers (a transfer retried on another transport) per transfer request of one node's transfer engines: healthy
# RDMA retries one request in a hundred; RDMA down sends every request to TCP after a failed first try
TENT_FAILOVER_SHARE = 0.1
GATEWAY_STALLS_PER_SECOND = 0.5  # event-loop wake-ups > 5 ms late per second on one gateway (healthy: a few a minute)
KV_EVENT_FAILURES_PER_SECOND = 0.01  # KV-event subscription failures per second on one gateway (healthy: ~0)
POLICY_NOW, POLICY_BEFORE = "10m", "30m"  # policies selecting now vs in the 30 minutes ending 30 minutes ago
BACKLOG_BYTES = 64 * 2**20  # a collector's pending remote-write bytes above this are minutes of data
BACKLOG_NODE_SHARE = 0.5  # ... on at least this share of the nodes: the store, not one node's network

# A scrape target is failing when more than this share of its scrapes failed over SCRAPE_WINDOW: a target that
# times out every other scrape never reads up == 0 for minutes on end, and a restart's scrape or two (2 of the
# window's 10 at a 30 s interval) stays above it.
SCRAPE_FAILED_SHARE = 0.25
SCRAPE_WINDOW = "5m"

# The model disk read faster than this while the node's engine does not answer: weights loading (a serving engine
# reads ~nothing from its model disk; a slow disk still streams tens of MB/s).
LOADING_READ_BYTES_PER_SECOND = 20e6
WINDOW = "5m"
SLOW_WINDOW = "10m"
ROOT_MOUNTPOINT = "/"

# -- helpers ---------------------------------------------------------------------------------------------------------


def _node(profile: Profile) -> str:
    return profile.label("node")


def summed_rates(names: tuple[str, ...], matchers: tuple[str, ...], window: str, by: list[str]) -> str:
    """``sum by (by)`` of the rates of several counters, each kept apart by a ``counter`` label before the sum (see
    the module docstring: one rate of a name regex is refused by Prometheus)."""
    parts = " or ".join(
        f'label_replace(rate({selector(name, *matchers)}[{window}]), "counter", "{name}", "", "")' for name in names
    )
    return agg("sum", by, parts)


# -- scrape targets --------------------------------------------------------------------------------------------------


def scrape_failing(profile: Profile, job_name: str) -> str:
    """The targets of scrape job ``job_name`` that failed more than ``SCRAPE_FAILED_SHARE`` of their scrapes over
    ``SCRAPE_WINDOW`` (value: the share that succeeded): down, or flapping."""
    up = selector("up", scoped_job(profile, job_name))
    return f"avg_over_time({up}[{SCRAPE_WINDOW}]) < {1 - SCRAPE_FAILED_SHARE:g}"


# -- host ------------------------------------------------------------------------------------------------------------


def host_memory_pressure(profile: Profile) -> str:
    """Nodes whose available RAM is below ``MEMORY_AVAILABLE_SHARE`` of the total (value: the share)."""
    exporter = job(profile, "node_exporter")
    available = agg("max", [_node(profile)], selector(NODE_EXPORTER.name("node_memory_MemAvailable_bytes"), exporter))
    total = agg("max", [_node(profile)], selector(NODE_EXPORTER.name("node_memory_MemTotal_bytes"), exporter))
    return f"({available} / {total}) < {MEMORY_AVAILABLE_SHARE:g}"


def host_oom_kills(profile: Profile) -> str:
    """Nodes whose kernel OOM-killed a process within ``SLOW_WINDOW`` (value: the kills)."""
    kills = selector(NODE_EXPORTER.name("node_vmstat_oom_kill"), job(profile, "node_exporter"))
    return f"{agg('max', [_node(profile)], f'increase({kills}[{SLOW_WINDOW}])')} > 0"


def host_cpu_saturated(profile: Profile) -> str:
    """Nodes whose CPUs were busy (not idle, not iowait) more than ``CPU_BUSY_SHARE`` over ``WINDOW``."""
    cpu = NODE_EXPORTER.name("node_cpu_seconds_total")
    exporter = job(profile, "node_exporter")
    idle = agg(
        "sum", [_node(profile)], f"rate({selector(cpu, exporter, matcher('mode', '=~', 'idle|iowait'))}[{WINDOW}])"
    )
    every = agg("sum", [_node(profile)], f"rate({selector(cpu, exporter)}[{WINDOW}])")
    return f"(1 - {idle} / {every}) > {CPU_BUSY_SHARE:g}"


def host_nic_errors(profile: Profile) -> str:
    """Network interfaces (node, device) with more than ``NIC_ERRORS_PER_SECOND`` receive + transmit errors."""
    names = (
        NODE_EXPORTER.name("node_network_receive_errs_total"),
        NODE_EXPORTER.name("node_network_transmit_errs_total"),
    )
    rates = summed_rates(names, (job(profile, "node_exporter"),), WINDOW, [_node(profile), "device"])
    return f"{rates} > {NIC_ERRORS_PER_SECOND:g}"


# -- filesystems by role (mount point) -------------------------------------------------------------------------------


def filesystem_full(profile: Profile, mountpoint: str) -> str:
    """The filesystem mounted at ``mountpoint`` on each node with less than ``FILESYSTEM_FREE_SHARE`` of its size
    available to unprivileged writers, or of its inodes free (value: the available share). Either way a create
    fails with ENOSPC: many small files (logs, a file-per-page cache, frames) use up the inodes while bytes are free.
    A filesystem that reports no inode total (btrfs, some network filesystems) is judged by its bytes alone."""
    exporter = job(profile, "node_exporter")
    mount = matcher("mountpoint", "=", mountpoint)
    by = [_node(profile), "mountpoint"]

    def share(free: str, total: str) -> str:
        available = agg("max", by, selector(NODE_EXPORTER.name(free), exporter, mount))
        size = agg("max", by, selector(NODE_EXPORTER.name(total), exporter, mount))
        return f"({available} / ({size} > 0)) < {FILESYSTEM_FREE_SHARE:g}"

    bytes_low = share("node_filesystem_avail_bytes", "node_filesystem_size_bytes")
    inodes_low = share("node_filesystem_files_free", "node_filesystem_files")
    return f"({bytes_low}) or on ({', '.join(by)}) ({inodes_low})"


def role_mountpoints(profile: Profile) -> tuple[str, ...]:
    """The mount points of the disks by role: the KV cache (or scratch), the model weights, the root filesystem."""
    found = [profile.disks.cache_mountpoint, profile.disks.model_mountpoint, ROOT_MOUNTPOINT]
    return tuple(dict.fromkeys(m for m in found if m))


def filesystem_failing(profile: Profile) -> str:
    """Filesystems of a role mount point that went read-only (an ext4 / xfs error remounts them so) or whose device
    node_exporter cannot stat (value: 1)."""
    exporter = job(profile, "node_exporter")
    mounts = matcher("mountpoint", "=~", "|".join(mc.regex_literal(m) for m in role_mountpoints(profile)))
    by = [_node(profile), "mountpoint"]
    readonly = agg("max", by, selector(NODE_EXPORTER.name("node_filesystem_readonly"), exporter, mounts))
    error = agg("max", by, selector(NODE_EXPORTER.name("node_filesystem_device_error"), exporter, mounts))
    return f"({readonly} > 0) or on ({', '.join(by)}) ({error} > 0)"


# -- GPU links -------------------------------------------------------------------------------------------------------

NVLINK_COUNTERS = (
    DCGM.name("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"),
    DCGM.name("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
    DCGM.name("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
    DCGM.name("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"),
)


def gpu_nvlink_errors(profile: Profile) -> str:
    """GPUs (node, GPU) whose NVLink CRC, replay and recovery errors together exceed ``NVLINK_ERRORS_PER_SECOND``."""
    by = [_node(profile), profile.label("gpu")]
    rates = summed_rates(NVLINK_COUNTERS, (job(profile, "dcgm"),), WINDOW, by)
    return f"{rates} > {NVLINK_ERRORS_PER_SECOND:g}"


def gpu_pcie_replays(profile: Profile) -> str:
    """GPUs (node, GPU) replaying more than ``PCIE_REPLAYS_PER_SECOND`` PCIe transfers per second."""
    by = [_node(profile), profile.label("gpu")]
    series = selector(DCGM.name("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"), job(profile, "dcgm"))
    return f"{agg('sum', by, f'rate({series}[{WINDOW}])')} > {PCIE_REPLAYS_PER_SECOND:g}"


# -- engine: KV pool, transfer engine --------------------------------------------------------------------------------


def engine_loading(profile: Profile) -> str:
    """Engine nodes whose SGLang target does not answer (up == 0) while the node's model disk (the device behind the
    model mount point) reads more than ``LOADING_READ_BYTES_PER_SECOND``, with the replica the node serves (value:
    bytes/s read): SGLang answers /metrics only once its weights are loaded."""
    node = _node(profile)
    disk = [node, "device"]
    read = selector(NODE_EXPORTER.name("node_disk_read_bytes_total"), job(profile, "node_exporter"))
    model = mount_devices(profile, profile.disks.model_mountpoint, scoped=False)
    rates = agg("sum", disk, f"rate({read}[{WINDOW}])")
    reading = agg("sum", [node], f"{rates} and on ({', '.join(disk)}) {model}")
    down = agg("max", [node], f"{selector('up', job(profile, 'sglang'))} == 0")
    return (
        f"(({reading} > {LOADING_READ_BYTES_PER_SECOND:g}) and on ({node}) {down}) "
        f"* on ({node}) group_left ({REPLICA}) {node_to_replica(profile)}"
    )


def _stage(profile: Profile) -> list[str]:
    return stage_key(profile, ENGINE_TYPE)


def kv_pool_exhausted(profile: Profile) -> str:
    """Stages (node, PP stage, engine type) whose KV pool is at least ``KV_USAGE_FULL`` used while requests wait
    (value: the used share): admission stops, the queue grows, TTFT climbs."""
    sglang = job(profile, "sglang")
    usage = agg("max", _stage(profile), selector(SGLANG.name("sglang:token_usage"), sglang))
    waiting = agg(
        "sum", _stage(profile), selector(SGLANG.name("sglang:num_queue_reqs"), sglang, matcher("priority", "=", ""))
    )
    return f"({usage} >= {KV_USAGE_FULL:g}) and on ({', '.join(_stage(profile))}) ({waiting} > 0)"


def kv_retraction_storm(profile: Profile) -> str:
    """Stages retracting (preempting back to the queue) more than ``RETRACTIONS_PER_SECOND`` requests per second."""
    series = selector(SGLANG.name("sglang:num_retracted_requests_total"), job(profile, "sglang"))
    return f"{agg('sum', _stage(profile), f'rate({series}[{WINDOW}])')} > {RETRACTIONS_PER_SECOND:g}"


def transfer_failures(profile: Profile) -> str:
    """Stages of a PD deployment whose KV transfers or bootstraps fail more than ``TRANSFER_FAILURES_PER_SECOND``."""
    names = (
        SGLANG.name("sglang:num_transfer_failed_reqs_total"),
        SGLANG.name("sglang:num_bootstrap_failed_reqs_total"),
    )
    rates = summed_rates(names, (job(profile, "sglang"),), WINDOW, _stage(profile))
    return f"{rates} > {TRANSFER_FAILURES_PER_SECOND:g}"


def transfer_engine_failover(profile: Profile) -> str:
    """Nodes whose transfer engines (TENT) retried more than ``TENT_FAILOVER_SHARE`` of their transfer requests on
    another transport over ``SLOW_WINDOW`` (value: failovers per request): the preferred transport (RDMA) fails and
    transfers fall back to a slower one (TCP). They still succeed, so no failure counter moves; a node that
    requested nothing has no value, not a share."""
    tent_job = job(profile, tent.SOURCE)
    by = [_node(profile)]
    failovers = agg("sum", by, f"rate({selector(tent.FAILOVER, tent_job)}[{SLOW_WINDOW}])")
    requests = summed_rates(tuple(tent.REQUESTS.values()), (tent_job,), SLOW_WINDOW, by)
    return f"({failovers} / on ({', '.join(by)}) ({requests} > 0)) > {TENT_FAILOVER_SHARE:g}"


# -- HiCache storage tier --------------------------------------------------------------------------------------------


def storage_backup_dropping(profile: Profile) -> str:
    """Stages (node, PP stage) dropping more than ``BACKUP_DROP_SHARE`` of their storage-tier backups over
    ``SLOW_WINDOW`` (value: the dropped share): the storage backend is slow, full or down."""
    sglang = job(profile, "sglang")
    by = stage_key(profile)
    dropped = agg(
        "sum",
        by,
        f"rate({selector(HICACHE_STORAGE.name('sglang:hicache_backup_dropped_tokens_total'), sglang)}[{SLOW_WINDOW}])",
    )
    backed = agg(
        "sum", by, f"rate({selector(HICACHE_STORAGE.name('sglang:backuped_tokens_total'), sglang)}[{SLOW_WINDOW}])"
    )
    on = f"on ({', '.join(by)})"
    return f"({dropped} / {on} (({dropped} + {on} {backed}) > 0)) > {BACKUP_DROP_SHARE:g}"


# -- Mooncake Store --------------------------------------------------------------------------------------------------


def store_node_capacity(profile: Profile) -> str:
    """Mounted Store segment capacity per data-holding node (segments mapped to their node, HA copies de-duplicated)."""
    node = _node(profile)
    segments = agg("max", [node, "segment"], mc.mapped(profile, mc.CAPACITY))
    return agg("sum", [node], segments)


def store_segments_lost(profile: Profile) -> str:
    """Nodes whose mounted Store capacity fell below ``SEGMENT_LOSS_SHARE`` of its peak within ``SEGMENT_WINDOW``, or
    whose every segment is gone (value: the capacity now, or its peak when none is left)."""
    node = _node(profile)
    now = store_node_capacity(profile)
    peak = f"max_over_time(({now})[{SEGMENT_WINDOW}:1m])"
    # the master still reports segments: a master that is down or gone is its own rows', not every node's loss
    reporting = f"on () (count({now}) > 0)"
    return (
        f"(({now} < {SEGMENT_LOSS_SHARE:g} * {peak}) or on ({node}) ({peak} unless on ({node}) {now})) and {reporting}"
    )


def store_alloc_failing(profile: Profile) -> str:
    """Mooncake masters whose put allocations fail for more than ``ALLOC_FAILURE_SHARE`` of the puts (value: the
    share): the Store is full or its segments are gone; the engines' writes to the Store tier fail."""
    by = [mc.MASTER_LABEL]
    parts = []
    for found in profile.masters():

        def rate_of(metric: str, found_name: str = found.name) -> str:
            series = f"rate({mc.master_targets(profile, metric, found_name)}[{SLOW_WINDOW}])"
            return f'label_replace({series}, "{mc.MASTER_LABEL}", "{found_name}", "{_node(profile)}", ".*")'

        failed = agg("max", by, rate_of(MOONCAKE_MASTER.name("master_put_start_alloc_failures_total")))
        puts = agg("max", by, rate_of(MOONCAKE_MASTER.name("master_put_start_requests_total")))
        parts.append(f"({failed} / on ({mc.MASTER_LABEL}) ({puts} > 0))")
    return f"({' or '.join(parts)}) > {ALLOC_FAILURE_SHARE:g}"


# -- gateway ---------------------------------------------------------------------------------------------------------


def gateway_backends_down(profile: Profile) -> str:
    """Backends (worker) a gateway instance sees as unhealthy or removed (``smg_worker_health`` < 1) while it has a
    healthy one (none healthy is GatewayNoHealthyBackend). Value: the backend's health."""
    labels = gateway_labels(profile)
    health = gateway(profile, GATEWAY.name("smg_worker_health"))
    down = f"{agg('min', gateway_labels(profile, 'worker'), health)} < 1"
    return f"({down}) and on ({', '.join(labels)}) ({agg('max', labels, health)} >= 1)"


def gateway_policy_changed(profile: Profile) -> str:
    """Routing policies (``policy``) a gateway instance selects workers with now that it did not use in the hour
    ending an hour ago, while it routed then: the policy was switched (a config change, a restart with defaults)."""
    labels = gateway_labels(profile)
    selections = gateway(profile, GATEWAY.name("smg_worker_selection_total"))
    now = agg("sum", gateway_labels(profile, "policy"), f"rate({selections}[{POLICY_NOW}])")
    before = agg(
        "sum", gateway_labels(profile, "policy"), f"rate({selections}[{POLICY_BEFORE}] offset {POLICY_BEFORE})"
    )
    routed = agg("sum", labels, f"rate({selections}[{POLICY_BEFORE}] offset {POLICY_BEFORE})")
    return (
        f"({now} > 0) unless on ({', '.join(gateway_labels(profile, 'policy'))}) ({before} > 0) "
        f"and on ({', '.join(labels)}) ({routed} > 0)"
    )


def gateway_event_loop_stalling(profile: Profile) -> str:
    """Gateway instances whose Tokio event loop stalls (the canary wakes more than 5 ms late) more than
    ``GATEWAY_STALLS_PER_SECOND`` times a second. Value: stalls per second."""
    stalls = gateway(profile, GATEWAY.name("smg_tokio_event_loop_stalls_total"))
    return f"{agg('sum', gateway_labels(profile), f'rate({stalls}[{WINDOW}])')} > {GATEWAY_STALLS_PER_SECOND:g}"


def gateway_kv_events_failing(profile: Profile) -> str:
    """Gateway instances whose KV-event subscriptions to the engines fail more than
    ``KV_EVENT_FAILURES_PER_SECOND`` times a second, every worker and reason summed. Value: failures per second."""
    failures = gateway(profile, GATEWAY.name("smg_kv_event_subscription_failures_total"))
    rate_of = f"rate({failures}[{SLOW_WINDOW}])"
    return f"{agg('sum', gateway_labels(profile), rate_of)} > {KV_EVENT_FAILURES_PER_SECOND:g}"


# -- the store itself ------------------------------------------------------------------------------------------------


def store_ingestion_backlog(profile: Profile) -> str:
    """The deployment when at least ``BACKLOG_NODE_SHARE`` of its nodes' collectors hold more than ``BACKLOG_BYTES``
    of pending remote-write data (value: that share of the nodes)."""
    pending = va.per_node(profile, "sum", va.own(profile, va.PENDING, selected=False))
    return f"(count({pending} > {BACKLOG_BYTES}) / count({pending})) >= {BACKLOG_NODE_SHARE:g}"
