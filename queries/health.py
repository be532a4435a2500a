"""Health states of S32 (in an incident): what is *wrong* with a node's layer, apart from whether its data
is missing (``queries.nodata``). One definition of each state, its code, its cell text and colour; the
conditions that recognise it are PromQL built here and read by both the alerting rules (``dashgen.rules``)
and the recording rule the Now row's matrix reads, so an alert and its matrix cell cannot drift apart.

Recorded series (group ``dashgen-<profile>-layer-health``)::

    node:dashgen_layer_health:code{<deployment>, node, layer="<layer key>"}

one series per node and layer, present only while a health state applies (its value is the state's code;
no series = healthy). Layer keys are those of ``queries.nodata.layers`` plus ``collector`` and ``clock``.

The matrix's cell for (node, layer) is the worst of the missing-data reason and the health state::

    (reason >= UNINITIALISED) or on(node) health or on(node) reason

Missing data that makes the layer unreadable (collection failed, segment host not mapped, uninitialised,
GPU missing) wins, since a health state cannot be judged without the data; a health state wins over ok,
no traffic, no I/O and insufficient samples (an engine with requests waiting is "stalled", never "no
traffic"). Health codes (20-99) sit apart from the reason codes (0-8) and the GPU-missing codes (>= 200).

Conditions (one function per failure class, every entity's labels kept, deployment-scoped, no Grafana variable;
thresholds from the profile's ``[alerts]``, ``dashgen.deployment.alerts``): ``disk_saturated`` (node, device),
``host_tier_collapsed`` (node, PP stage), ``gateway_shedding`` / ``gateway_errors`` / ``gateway_no_healthy_backend``
(gateway node, instance), ``gateway_breaker_open`` (gateway node, instance, worker), ``store_reset`` (master),
``clock_off`` (node), and the thermal / power split of the clock-event bitmask (``clock_events_set``). The engine's
stall is ``queries.sglang_slo.stalled_stages``, the GPU faults ``queries.dcgm``, the collector's the collector
alerts' own expressions.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries import mooncake as mc
from dashgen_queries import node_exporter as fs
from dashgen_queries.gateway import gateway, gateway_labels
from dashgen_queries.gpu import THROTTLE_BITS
from dashgen_queries.hicache import PREFILL_EFFECTIVE, one_rank
from dashgen_queries.promql import agg, divide, job, matcher, selector

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import GATEWAY, NODE_EXPORTER
from dashgen.render.states import State, States

LAYER_HEALTH = "node:dashgen_layer_health:code"
COLLECTOR_LAYER, CLOCK_LAYER = "collector", "clock"


@dataclass(frozen=True)
class HealthState:
    code: int
    text: str
    colour: str
    severity: str  # critical | warning: the severity of the alert that reports the same state


# Health states use the magenta family (missing data: red / orange / yellow / blue / purple), so a cell
# says by its colour alone whether its data is missing or its numbers are bad.
CRITICAL_COLOUR, WARNING_COLOUR = "#C41A8A", "#E87BD0"

ENGINE_STALLED = HealthState(21, "stalled: requests in flight, no token moves", CRITICAL_COLOUR, "critical")
ENGINE_RESTARTED = HealthState(22, "restarted (last 15 min)", WARNING_COLOUR, "warning")
GPU_XID_FATAL = HealthState(31, "GPU fatal Xid", CRITICAL_COLOUR, "critical")
GPU_REMAP_FAILED = HealthState(32, "GPU row remap failed", CRITICAL_COLOUR, "critical")
GPU_THERMAL = HealthState(33, "GPU thermal throttling", WARNING_COLOUR, "warning")
GPU_POWER = HealthState(34, "GPU power throttling", WARNING_COLOUR, "warning")
TIER_COLLAPSED = HealthState(41, "hit ratio collapsed (vs own baseline and peers)", WARNING_COLOUR, "warning")
STORE_RESET = HealthState(42, "Store metadata reset (master failover)", WARNING_COLOUR, "warning")
DISK_SATURATED = HealthState(51, "disk saturated (busy, queue, await)", WARNING_COLOUR, "warning")
COLLECTOR_DROPPING = HealthState(61, "collector dropping samples", WARNING_COLOUR, "warning")
COLLECTOR_QUEUE_FULL = HealthState(62, "collector queue near its bound", WARNING_COLOUR, "warning")
CLOCK_OFF = HealthState(71, "clock off", WARNING_COLOUR, "warning")
# The failure-mode catalogue's further states (``dashgen.catalogue``): one per row that paints a layer.
VIDEO_STUCK = HealthState(23, "stuck: jobs wait, none finish", CRITICAL_COLOUR, "critical")
KV_EXHAUSTED = HealthState(24, "KV pool exhausted, requests wait", WARNING_COLOUR, "warning")
KV_RETRACTING = HealthState(25, "requests retracted (KV pool thrashing)", WARNING_COLOUR, "warning")
TRANSFER_FAILING = HealthState(26, "PD KV transfers failing", CRITICAL_COLOUR, "critical")
GPU_NVLINK = HealthState(35, "NVLink errors climbing", WARNING_COLOUR, "warning")
GPU_HW_SLOWDOWN = HealthState(36, "GPU HW slowdown (no power or thermal cause)", WARNING_COLOUR, "warning")
STORAGE_DROPPING = HealthState(43, "storage tier dropping backups", WARNING_COLOUR, "warning")
SEGMENTS_LOST = HealthState(44, "Store segments lost", WARNING_COLOUR, "warning")
DISK_FULL = HealthState(50, "filesystem full (ENOSPC)", CRITICAL_COLOUR, "critical")

STATES: tuple[HealthState, ...] = (
    ENGINE_STALLED,
    ENGINE_RESTARTED,
    VIDEO_STUCK,
    KV_EXHAUSTED,
    KV_RETRACTING,
    TRANSFER_FAILING,
    GPU_XID_FATAL,
    GPU_REMAP_FAILED,
    GPU_THERMAL,
    GPU_POWER,
    GPU_HW_SLOWDOWN,
    GPU_NVLINK,
    TIER_COLLAPSED,
    STORE_RESET,
    STORAGE_DROPPING,
    SEGMENTS_LOST,
    DISK_SATURATED,
    DISK_FULL,
    COLLECTOR_DROPPING,
    COLLECTOR_QUEUE_FULL,
    CLOCK_OFF,
)


def health_states() -> States:
    """Each health code with its text and colour, in ``STATES`` order (shown beside ``nodata.reason_states``)."""
    return States.of(State(state.code, state.text, state.colour) for state in STATES)


def worst(profile: Profile, reason: str, health: str, unreadable_from: int) -> str:
    """The cell: a reason that makes the layer unreadable, else the health state, else the reason."""
    node = profile.label("node")
    return f"(({reason}) >= {unreadable_from}) or on({node}) ({health}) or on({node}) ({reason})"


# --- the conditions ---------------------------------------------------------------------------------------------


DISK_WINDOW = "5m"  # busy share, queue depth and await now
DISK_IO_TIME = "node_disk_read_time_seconds_total|node_disk_write_time_seconds_total"
DISK_IO_OPS = "node_disk_reads_completed_total|node_disk_writes_completed_total"
DISK_BUSY = NODE_EXPORTER.name("node_disk_io_time_seconds_total")
DISK_QUEUE = NODE_EXPORTER.name("node_disk_io_time_weighted_seconds_total")
HOST_WINDOW = "10m"  # the host-hit share now (token counts are bursty)
GATEWAY_WINDOW = "5m"
GATEWAY_MIN_RPS = 0.1  # an instance answering fewer valid requests per second is too quiet for a share to mean much
RESPONSES, STATUS = GATEWAY.name("smg_http_responses_total"), "status_code"
REQUESTS, ADMISSION_REJECTED = (
    GATEWAY.name("smg_http_requests_total"),
    GATEWAY.name("smg_admission_queue_rejected_total"),
)
VALID_STATUS = "[^4]..|429|408"  # every answer but the client's own 4xx mistakes (the client-side SLI's validity)
SHED_STATUS, ERROR_STATUS = "429", "5..|408"  # shed; failed or timed out (504 is a 5xx, 408 the request timeout)
BREAKER_WINDOW = "5m"  # a breaker not closed at any sample of this window
STORE_RESET_WINDOW = "30m"  # a master's key count (or allocated bytes) fell near zero from its peak in this window
STORE_MIN_BYTES = 2**30  # allocated bytes below 1 GiB are no healthy level to fall from
CLOCK_SYNC_WINDOW = "5m"
CLOCK_MAXERROR_SECONDS = 16  # the kernel's estimated error of an unsynchronised clock (node-mixin's guard)


def clock_events_set(profile: Profile, reasons: str, bits: tuple[int, ...] = THROTTLE_BITS) -> str:
    """The clock-event bitmask ``reasons`` (per node and GPU), kept where one of ``bits`` is set (value: the
    bitmask). PromQL has no bitwise operators: bit b of x >= 0 is ``floor(x / b) % 2``."""
    keys = f"{profile.label('node')}, {profile.label('gpu')}"
    tested = " + ".join(f"floor({reasons} / {bit}) % 2" for bit in bits)
    return f"{reasons} and on ({keys}) ({tested} > 0)"


def _disk(profile: Profile, names: str, window: str, offset: str = "", fn: str = "rate") -> str:
    """``fn`` of the diskstats counters ``names`` (``a|b``: several counters, summed), per node and device (every
    device: ``disk_saturated`` keeps the cache mount point's). Each counter is kept apart by a ``counter`` label
    before the sum: ``rate({__name__=~"a|b"})`` drops the names and leaves two series of one label set, which
    Prometheus refuses ("vector cannot contain metrics with the same labelset") where VictoriaMetrics accepts it."""
    shifted = f"[{window}] offset {offset}" if offset else f"[{window}]"
    parts = [f"{fn}({selector(name, job(profile, 'node_exporter'))}{shifted})" for name in names.split("|")]
    if len(parts) > 1:
        parts = [
            f'label_replace({part}, "counter", "{name}", "", "")'
            for part, name in zip(parts, names.split("|"), strict=True)
        ]
    return agg("sum", fs.disk_labels(profile), " or ".join(parts))


def disk_saturated(profile: Profile) -> str:
    """The device behind the cache mount point (node, device) when it is busy, queued *and* slower than its own
    baseline: the busy share (rate of io_time) above ``disk_busy_share``, the average queue (rate of
    io_time_weighted) above ``disk_queue_depth``, and the await (I/O time per completed I/O) above
    ``disk_await_factor`` x the device's own await over ``baseline_window`` ending ``baseline_offset`` ago. A busy,
    deep-queued disk that still answers as fast as usual is working, not saturated. Value: the busy share. No
    baseline (a new device): no sample."""
    t = profile.alerts
    on = f"on ({', '.join(fs.disk_labels(profile))})"
    busy = _disk(profile, DISK_BUSY, DISK_WINDOW)
    queue = _disk(profile, DISK_QUEUE, DISK_WINDOW)
    now = divide(_disk(profile, DISK_IO_TIME, DISK_WINDOW), _disk(profile, DISK_IO_OPS, DISK_WINDOW))
    base = divide(
        _disk(profile, DISK_IO_TIME, t.baseline_window, t.baseline_offset, "increase"),
        _disk(profile, DISK_IO_OPS, t.baseline_window, t.baseline_offset, "increase"),
    )
    # the disk's role is the mount point it carries, never a device-name pattern (the model disk is nvme*n1 too)
    cache = fs.mount_devices(profile, profile.disks.cache_mountpoint, scoped=False)
    return (
        f"({busy} > {t.disk_busy_share:g}) and {on} ({queue} > {t.disk_queue_depth:g}) "
        f"and {on} (({now}) > {t.disk_await_factor:g} * ({base})) and {on} {cache}"
    )


def host_hit_share(profile: Profile, window: str, offset: str = "") -> str:
    """The host tier's (L2) final reuse as a share of prefill input tokens per (node, PP stage), over ``window``
    (``offset`` ago): ``prefill_effective_tokens_total{mode="host_hit"}`` / ``{mode="input"}``, one TP rank per DP
    group. No input tokens (an idle stage): no sample."""
    shifted = f"[{window}] offset {offset}" if offset else f"[{window}]"

    def tokens(mode: str) -> str:
        series = selector(PREFILL_EFFECTIVE, job(profile, "sglang"), matcher("mode", "=", mode))
        return one_rank(profile, f"rate({series}{shifted})")

    return divide(tokens("host_hit"), tokens("input"))


def host_tier_collapsed(profile: Profile) -> str:
    """Stages (node, PP stage) serving prefill traffic whose host-hit share over ``HOST_WINDOW`` fell below
    1 / ``host_hit_drop_factor`` of *both* its own baseline (over ``baseline_window`` ending ``baseline_offset``
    ago, at least ``host_hit_min_share``) and the median of every serving stage of the deployment now. A
    cluster-wide drop (a workload change) is not one node's collapse; an idle stage has no share. Value: the share."""
    t = profile.alerts
    node, stage = profile.label("node"), profile.label("pp_rank")
    on = f"on ({node}, {stage})"
    now = host_hit_share(profile, HOST_WINDOW)
    base = host_hit_share(profile, t.baseline_window, t.baseline_offset)
    factor = t.host_hit_drop_factor
    return (
        f"({now}) < on () group_left () (quantile(0.5, {now}) / {factor:g}) "
        f"and {on} (({now}) < ({base}) / {factor:g}) and {on} (({base}) >= {t.host_hit_min_share:g})"
    )


def _responses(profile: Profile, status: str) -> str:
    answered = gateway(profile, RESPONSES, matcher(STATUS, "=~", status))
    return agg("sum", gateway_labels(profile), f"rate({answered}[{GATEWAY_WINDOW}])")


def _answer_share(profile: Profile, status: str) -> str:
    """The share of a gateway instance's valid answers with a ``status`` (regex), over ``GATEWAY_WINDOW``, where
    the instance answers more than ``GATEWAY_MIN_RPS`` valid requests per second."""
    valid = _responses(profile, VALID_STATUS)
    on = f"on ({', '.join(gateway_labels(profile))})"
    return f"({_responses(profile, status)} / {on} ({valid} > {GATEWAY_MIN_RPS:g}))"


def gateway_shedding(profile: Profile) -> str:
    """Gateway instances (node, instance) answering more than ``gateway_shed_share`` of their valid requests with
    429 (admission queue full, rate limit), or rejecting more than that share of their requests at admission
    (``smg_admission_queue_rejected_total``, queue full or timed out, per ``smg_http_requests_total``): requests
    shed before any engine sees them. Value: the 429 share, else the rejected share."""
    share = profile.alerts.gateway_shed_share
    by = gateway_labels(profile)
    rejected = agg("sum", by, f"rate({gateway(profile, ADMISSION_REJECTED)}[{GATEWAY_WINDOW}])")
    requests = agg("sum", by, f"rate({gateway(profile, REQUESTS)}[{GATEWAY_WINDOW}])")
    admission = f"({rejected} / on ({', '.join(by)}) ({requests} > {GATEWAY_MIN_RPS:g}))"
    return f"({_answer_share(profile, SHED_STATUS)} > {share:g}) or on ({', '.join(by)}) ({admission} > {share:g})"


def gateway_errors(profile: Profile) -> str:
    """Gateway instances (node, instance) answering more than ``gateway_error_share`` of their valid requests with a
    5xx or a timeout (408, 504). Value: that share."""
    return f"{_answer_share(profile, ERROR_STATUS)} > {profile.alerts.gateway_error_share:g}"


def gateway_no_healthy_backend(profile: Profile) -> str:
    """Gateway instances (node, instance) none of whose backends is healthy (``smg_worker_health``: 1 healthy, 0
    unhealthy, -1 removed). Value: the best backend's health. No worker series at all: no sample."""
    return f"{agg('max', gateway_labels(profile), gateway(profile, GATEWAY.name('smg_worker_health')))} < 1"


def gateway_breaker_open(profile: Profile) -> str:
    """Backends (worker) whose circuit breaker on a gateway instance (node, instance) was not closed at any sample
    of ``BREAKER_WINDOW`` (``smg_worker_cb_state``: 0 closed, 1 open, 2 half-open): the gateway routes nothing to
    it. Value: the lowest state seen."""
    state = f"min_over_time({gateway(profile, GATEWAY.name('smg_worker_cb_state'))}[{BREAKER_WINDOW}])"
    return f"{agg('min', gateway_labels(profile, 'worker'), state)} > 0"


def _per_master(profile: Profile, metric: str, window: str = "") -> str:
    """A master-global gauge once per master (``master`` label; max over its HA copies), or its peak over
    ``window``."""
    parts = []
    for found in profile.masters():
        series = mc.master_targets(profile, metric, found.name)
        if window:
            series = f"max_over_time({series}[{window}])"
        parts.append(f'label_replace({series}, "{mc.MASTER_LABEL}", "{found.name}", "{profile.label("node")}", ".*")')
    return agg("max", [mc.MASTER_LABEL], " or ".join(parts))


def store_reset(profile: Profile) -> str:
    """Mooncake masters (``master``) whose metadata was reset: the key count (``master_key_count``), or the allocated
    bytes, of the master (the highest of its HA copies) fell below ``store_reset_share`` of its peak within
    ``STORE_RESET_WINDOW``, from a healthy level (``store_min_keys`` keys, 1 GiB). After an HA failover the new
    leader starts empty and the clients' objects are gone while their segments re-register. Value: the key count
    (or the allocated bytes) now."""
    t = profile.alerts
    parts = []
    for metric, least in ((mc.KEY_COUNT, t.store_min_keys), (mc.MASTER_ALLOCATED, STORE_MIN_BYTES)):
        now, peak = _per_master(profile, metric), _per_master(profile, metric, STORE_RESET_WINDOW)
        parts.append(f"(({now} < {t.store_reset_share:g} * {peak}) and on ({mc.MASTER_LABEL}) ({peak} >= {least}))")
    return f" or on ({mc.MASTER_LABEL}) ".join(parts)


def clock_off(profile: Profile) -> str:
    """Nodes whose clock is off: ``|node_timex_offset_seconds|`` above ``clock_offset_seconds`` (value: the offset's
    size, s), or a clock the kernel reports unsynchronised (``node_timex_sync_status`` 0 over
    ``CLOCK_SYNC_WINDOW``) with an estimated error of ``CLOCK_MAXERROR_SECONDS`` or more (value: that error, s).

    Each series is read as its newest sample of the last ``CLOCK_SYNC_WINDOW`` (``last_over_time``), not at the
    instant: the node's own samples carry its clock's time stamps, so a clock a minute or more behind makes them
    look stale to an instant query at the store's now, and the very node that is off would vanish."""
    node = profile.label("node")
    exporter = job(profile, "node_exporter")

    def newest(metric: str) -> str:
        return f"last_over_time({selector(metric, exporter)}[{CLOCK_SYNC_WINDOW}])"

    offset = agg("max", [node], f"abs({newest(NODE_EXPORTER.name('node_timex_offset_seconds'))})")
    synced = agg(
        "max",
        [node],
        f"max_over_time({selector(NODE_EXPORTER.name('node_timex_sync_status'), exporter)}[{CLOCK_SYNC_WINDOW}])",
    )
    error = agg("min", [node], newest(NODE_EXPORTER.name("node_timex_maxerror_seconds")))
    return (
        f"({offset} > {profile.alerts.clock_offset_seconds:g}) "
        f"or on ({node}) (({error} >= {CLOCK_MAXERROR_SECONDS}) and on ({node}) ({synced} == 0))"
    )
