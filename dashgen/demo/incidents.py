"""The incident drills' data (``dashgen.demo.scenarios.INCIDENTS``): each drill reshapes the healthy series of ONE
entity from its fault time on (``scenarios.fault_time``), as the real exporter would show the fault (metric
catalogue §1-§5, §10), and adds the series only the fault has (a standby master, 429 responses, dropped-samples
counters).
Also the node clock series (``node_timex_*``, node_exporter's timex collector) of every node, every scenario.

:func:`apply` wraps the stream of import objects ``dashgen.demo.series`` and ``collector_series`` make: a
per-series value change (:func:`_reshape`), then the node-wide stamp changes of a node whose collector drops
samples (one in three kept) or whose clock runs behind (every stamp early).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dashgen.demo.endpoints import PORTS
from dashgen.demo.pd_models import lookup
from dashgen.demo.scenarios import FATAL_XID, SKEW_SECONDS, fault_time, incident, standby_master
from dashgen.demo.scopes import Plan, target_labels
from dashgen.demo.values import import_object, series_rng, timestamps

ENGINE_SOURCES = frozenset({"sglang", "hicache", "hicache_storage"})
TIMEX_NAMES = frozenset(
    {
        "node_timex_offset_seconds",
        "node_timex_sync_status",
        "node_timex_maxerror_seconds",
        "node_timex_estimated_error_seconds",
    }
)
MAXERROR_CAP = 16.0  # the kernel stops growing maxerror here (NTP_PHASE_LIMIT) once the clock is unsynchronised
# Series a drill reshapes that no panel or rule of a profile may read: an incident scenario generates them anyway
# (dashgen.demo.run.demo_models), so the fault is in the store for whatever alert comes to read it.
DRILL_METRICS = (
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_POWER_USAGE",
    "gpm_temperature_celsius",
    "gpm_clock_event_reasons",
    "gpm_sm_clock_hertz",
    "gpm_power_watts",
    "node_disk_io_now",
    "node_disk_io_time_seconds_total",
    "node_disk_io_time_weighted_seconds_total",
    "node_disk_read_time_seconds_total",
    "node_disk_write_time_seconds_total",
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "sglang:num_queue_reqs",
    "sglang:realtime_tokens_total",
    "sglang:num_requests_total",
    "sglang:prefill_effective_tokens_total",
    "sglang:load_back_tokens_total",
    "sglang:load_back_bytes_total",
    "smg_http_responses_total",
    "smg_admission_queue_rejected_total",
    "smg_router_request_errors_total",
    "master_key_count",
    "valid_get_nums_",
    "total_get_nums_",
    "smg_worker_health",
    "smg_worker_cb_state",
)
REFILLED = frozenset({"sglang:hicache_host_used_tokens", "sglang:kv_evictable_tokens", "sglang:cache_hit_rate"})
REFILL_SECONDS = 900.0  # how long a restarted engine's radix and host caches take to fill again
HUNG_QUEUE = 20  # requests waiting on each stage of a hung replica
DISK = {  # disk-saturated: the cache disk's counters from the fault on (rate, or a factor on the healthy increments)
    "node_disk_io_time_seconds_total": ("rate", 0.995),
    "node_disk_io_time_weighted_seconds_total": ("rate", 60.0),
    "node_disk_reads_completed_total": ("scale", 0.7),
    "node_disk_writes_completed_total": ("scale", 0.7),
    "node_disk_read_bytes_total": ("scale", 0.7),
    "node_disk_written_bytes_total": ("scale", 0.7),
    # await x80 at 0.7 x the operations: the time counters grow 80 x 0.7 as fast
    "node_disk_read_time_seconds_total": ("scale", 56.0),
    "node_disk_write_time_seconds_total": ("scale", 56.0),
}
HOST_TIER_FACTOR = 0.05  # host-tier-collapse: ~20x fewer host hits and load-backs
SHED = {"429": 0.45, "504": 0.15}  # gateway-shedding: share of client requests answered with each code
ADMITTED = 1.0 - sum(SHED.values())
ERROR_CODES = {"429": "queue_full", "504": "request_timeout"}
# master-failover: the new leader's metadata starts empty; these gauges keep their meaning (capacity mounted
# again by the re-registered segments, clients reconnected), the others climb from near 0.
MASTER_KEEPS = frozenset(
    {
        "master_total_capacity_bytes",
        "segment_total_capacity_bytes",
        "master_active_clients",
        "master_total_file_capacity_bytes",
    }
)
MASTER_HITS = frozenset(
    {
        "mem_cache_hit_nums_",
        "file_cache_hit_nums_",
        "mem_cache_hit_bytes_total",
        "file_cache_hit_bytes_total",
        "valid_get_nums_",
    }
)
MISS_FACTOR = 0.05  # the share of the old hit rate left once the metadata is gone


@dataclass(frozen=True)
class Drill:
    """The active drill of a plan, with the label names and times its reshaping needs (ms)."""

    scenario: str
    nodes: frozenset[str]
    idle: frozenset[str]
    worker: str
    gpu: str
    device: str
    at: int
    end: int
    node_label: str
    gpu_label: str
    job_label: str
    instance_label: str


def active(plan: Plan) -> Drill | None:
    scenario = next((f.incident for f in plan.faults.values() if f.incident), "")
    if not scenario:
        return None
    found = incident(plan.profile, scenario)
    p = plan.profile
    return Drill(
        scenario,
        frozenset(found.nodes),
        frozenset(found.idle),
        found.worker,
        "" if found.gpu is None else str(found.gpu),
        found.device,
        int(fault_time(scenario, plan.start, plan.end) * 1000),
        int(plan.end * 1000),
        p.label("node"),
        p.label("gpu"),
        p.label("job"),
        p.label("instance"),
    )


# -- counter and gauge shapes after the fault ------------------------------------------------------------


def _base(values: list[float], stamps: list[int], at: int) -> tuple[int, float]:
    """Index of the first sample at or after ``at`` and the counter's value just before it."""
    first = next((i for i, ms in enumerate(stamps) if ms >= at), len(stamps))
    return first, values[first - 1] if first else (values[0] if values else 0.0)


def scaled(values: list[float], stamps: list[int], at: int, factor: float) -> list[float]:
    """The counter's increments from ``at`` on multiplied by ``factor`` (0: flat)."""
    first, base = _base(values, stamps, at)
    return values[:first] + [round(base + (v - base) * factor, 3) for v in values[first:]]


def restarted(values: list[float], stamps: list[int], at: int) -> list[float]:
    """A process restarted at ``at``: the counter starts again from what it counted since (near 0)."""
    first, base = _base(values, stamps, at)
    return values[:first] + [round(max(v - base, 0.0), 3) for v in values[first:]]


def growing(values: list[float], stamps: list[int], at: int, per_second: float, rng: Any) -> list[float]:
    """From ``at`` on the counter grows at about ``per_second``."""
    first, total = _base(values, stamps, at)
    out, last = values[:first], stamps[first - 1] if first else at
    for ms in stamps[first:]:
        total += per_second * max(ms - last, 0) / 1000 * rng.uniform(0.95, 1.05)
        last = ms
        out.append(round(total, 3))
    return out


def held(
    values: list[float], stamps: list[int], at: int, level: float, noise: float, rng: Any, integer: bool = False
) -> list[float]:
    """A gauge that sits at ``level`` (± ``noise``) from ``at`` on."""
    out = []
    for v, ms in zip(values, stamps, strict=True):
        if ms >= at:
            v = level + rng.gauss(0, noise) if noise else level
            v = float(round(v)) if integer else round(v, 6)
        out.append(v)
    return out


# -- per-series reshaping ------------------------------------------------------------------------------------


def _with(
    obj: dict[str, Any], values: list[float], stamps: list[int] | None = None, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metric": {**obj["metric"], **(labels or {})},
        "values": values,
        "timestamps": obj["timestamps"] if stamps is None else stamps,
    }


def _model(name: str) -> tuple[str, bool, str] | None:
    """(source, counter-like, traffic) of a catalogue series name (histogram parts are counters)."""
    found = lookup(name)
    if found is None:
        return None
    model, suffix = found
    traffic = getattr(model.model, "traffic", "")
    return model.source, model.kind != "gauge" or bool(suffix), traffic


def _reshape(plan: Plan, drill: Drill, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The object as the drill's fault shows it, and any series the fault adds beside it."""
    metric = obj["metric"]
    name, node = metric["__name__"], metric.get(drill.node_label, "")
    values, stamps, at = obj["values"], obj["timestamps"], drill.at
    rng = series_rng("incident:" + drill.scenario + name, metric)
    on_node, on_gpu = node in drill.nodes, metric.get(drill.gpu_label) == drill.gpu
    job = metric.get(drill.job_label, "")
    jobs = {s.name: s.job for s in plan.profile.sources.values()}
    model = _model(name)
    s = drill.scenario
    if s == "dcgm-lost-gpu" and on_node and on_gpu and job == jobs.get("dcgm"):
        kept = [i for i, ms in enumerate(stamps) if ms < at]
        return [_with(obj, [values[i] for i in kept], [stamps[i] for i in kept])]
    if s == "xid-no-loss" and on_node and on_gpu and name == "DCGM_FI_DEV_XID_ERRORS":
        return [_with(obj, held(values, stamps, at, FATAL_XID, 0, rng))]
    if s == "thermal-throttling" and on_node and on_gpu:
        return [_with(obj, _thermal(name, values, stamps, at, rng))]
    if s in ("replica-restart", "stage-restart") and on_node and model and model[0] in ENGINE_SOURCES:
        if model[1]:
            return [_with(obj, restarted(values, stamps, at))]
        if name in REFILLED:  # a restarted engine's caches start empty and fill again
            return [
                _with(
                    obj,
                    [
                        v if ms < at else round(v * min(1.0, (ms - at) / 1000 / REFILL_SECONDS), 3)
                        for v, ms in zip(values, stamps, strict=True)
                    ],
                )
            ]
    if s == "replica-hung" and on_node and model and model[0] in ENGINE_SOURCES:
        return [_with(obj, _hung(name, model[1], model[2], values, stamps, at, rng))]
    if s == "disk-saturated" and on_node and metric.get("device") == drill.device and job == jobs.get("node_exporter"):
        if name in DISK:
            how, number = DISK[name]
            shaped = growing(values, stamps, at, number, rng) if how == "rate" else scaled(values, stamps, at, number)
            return [_with(obj, shaped)]
        if name == "node_disk_io_now":
            return [_with(obj, held(values, stamps, at, 60, 3, rng, integer=True))]
    if (
        s == "host-tier-collapse"
        and on_node
        and (
            (name == "sglang:prefill_effective_tokens_total" and metric.get("mode") == "host_hit")
            or name.startswith(
                ("sglang:load_back_tokens_total", "sglang:load_back_bytes_total", "sglang:load_back_duration_seconds")
            )
            or (name == "sglang:cached_tokens_total" and metric.get("cache_source") == "host")
        )
    ):
        return [_with(obj, scaled(values, stamps, at, HOST_TIER_FACTOR))]
    if s == "gateway-shedding":
        return _shedding(drill, obj, model, rng)
    if s == "gateway-no-backend":
        return _no_backend(drill, obj, model, node)
    if s in ("master-failover", "master-copy-down") and job == jobs.get("mooncake_master") and node == plan.master_node:
        return _masters(plan, drill, obj, model)
    if s == "collector-dropping" and on_node and job == (plan.profile.collector.job if plan.profile.collector else ""):
        return _dropping(plan, drill, obj, rng)
    return [obj]


def _thermal(name: str, values: list[float], stamps: list[int], at: int, rng: Any) -> list[float]:
    if name in ("DCGM_FI_DEV_GPU_TEMP", "gpm_temperature_celsius"):
        return held(values, stamps, at, 92.0, 0.6, rng, integer=name.startswith("DCGM"))
    if name in ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gpm_clock_event_reasons"):
        return held(values, stamps, at, 0x40 | 0x20, 0, rng)  # HW thermal + SW thermal slowdown
    if name == "DCGM_FI_DEV_SM_CLOCK":
        return held(values, stamps, at, 1150, 15, rng, integer=True)
    if name == "gpm_sm_clock_hertz":
        return held(values, stamps, at, 1.15e9, 1.5e7, rng)
    if name in ("DCGM_FI_DEV_POWER_USAGE", "gpm_power_watts"):
        return [round(v * 0.8, 3) if ms >= at else v for v, ms in zip(values, stamps, strict=True)]
    return values


def _hung(
    name: str, counter: bool, traffic: str, values: list[float], stamps: list[int], at: int, rng: Any
) -> list[float]:
    if counter:
        return values if traffic == "time" else scaled(values, stamps, at, 0.0)
    if name == "sglang:num_queue_reqs":
        return held(values, stamps, at, HUNG_QUEUE, 0.6, rng, integer=True)
    if name == "sglang:gen_throughput":
        return held(values, stamps, at, 0.0, 0, rng)
    if name in ("sglang:num_running_reqs", "sglang:num_used_tokens", "sglang:kv_used_tokens", "sglang:token_usage"):
        first, last = _base(values, stamps, at)  # the batch in flight stays where it stopped
        return values[:first] + [last] * (len(values) - first)
    return values


def _shedding(drill: Drill, obj: dict[str, Any], model: tuple[str, bool, str] | None, rng: Any) -> list[dict[str, Any]]:
    metric, values, stamps, at = obj["metric"], obj["values"], obj["timestamps"], drill.at
    name = metric["__name__"]
    if model is None:
        return [obj]
    source, counter, traffic = model
    if source in ENGINE_SOURCES and counter and traffic == "requests":  # the engines behind see the admitted share
        return [_with(obj, scaled(values, stamps, at, ADMITTED))]
    if source != "gateway":
        return [obj]
    if name == "smg_http_responses_total":
        # a shed status appears with its first shed request (absent before, then counting from ~0)
        first = next((i for i, ms in enumerate(stamps) if ms >= at), len(stamps))
        since = restarted(values, stamps, at)[first:]
        shed = [
            {
                "metric": {**metric, "status_code": code, "error_code": ERROR_CODES[code]},
                "values": [round(v * share, 3) for v in since],
                "timestamps": stamps[first:],
            }
            for code, share in SHED.items()
        ]
        return [_with(obj, scaled(values, stamps, at, ADMITTED)), *shed]
    if name.startswith(("smg_router_requests_total", "smg_router_request_duration_seconds")):
        return [_with(obj, scaled(values, stamps, at, ADMITTED))]
    if name == "smg_admission_queue_rejected_total":
        share = SHED["429"] if metric.get("reason") == "full" else 0.02
        return [_with(obj, growing(values, stamps, at, 1.6 * share, rng))]
    if name == "smg_router_request_errors_total":
        first = next((i for i, ms in enumerate(stamps) if ms >= at), len(stamps))
        timeouts = growing([0.0] * len(stamps), stamps, at, 1.6 * SHED["504"], rng)[first:]
        return [obj, {"metric": {**metric, "error_type": "timeout"}, "values": timeouts, "timestamps": stamps[first:]}]
    if name == "smg_admission_queue_depth":
        return [_with(obj, held(values, stamps, at, 128, 2, rng, integer=True))]
    if name == "smg_admission_inflight":
        return [_with(obj, held(values, stamps, at, 64, 0, rng, integer=True))]
    return [obj]


def _no_backend(
    drill: Drill, obj: dict[str, Any], model: tuple[str, bool, str] | None, node: str
) -> list[dict[str, Any]]:
    """One backend unhealthy with its circuit breaker open: the gateway stops routing to it and its replica idles."""
    metric, values, stamps, at = obj["metric"], obj["values"], obj["timestamps"], drill.at
    name = metric["__name__"]
    if model is None:
        return [obj]
    source, counter, traffic = model
    if source == "gateway" and metric.get("worker") == drill.worker:
        level = {"smg_worker_health": 0.0, "smg_worker_cb_state": 1.0}.get(name, 0.0)  # cb_state 1: open
        return [_with(obj, [level if ms >= at else v for v, ms in zip(values, stamps, strict=True)])]
    if source in ENGINE_SOURCES and node in drill.idle:
        if counter:
            return [_with(obj, scaled(values, stamps, at, 0.0))] if traffic == "requests" else [obj]
        found = lookup(name)
        wave = found[0].model if found else None
        if getattr(wave, "load", False):
            idle = float(wave.idle) if not callable(wave.idle) else values[0]  # type: ignore[union-attr]
            return [_with(obj, [idle if ms >= at else v for v, ms in zip(values, stamps, strict=True)])]
    return [obj]


def _masters(
    plan: Plan, drill: Drill, obj: dict[str, Any], model: tuple[str, bool, str] | None
) -> list[dict[str, Any]]:
    """The leader's series and its standby copy's (the HA pair's second target) in the two master drills."""
    metric, values, stamps, at = obj["metric"], obj["values"], obj["timestamps"], drill.at
    name = metric["__name__"]
    standby = standby_master(plan.profile)
    copy = {drill.node_label: standby, drill.instance_label: f"{standby}:{PORTS['mooncake_master']}"}
    before = [i for i, ms in enumerate(stamps) if ms < at]
    after = [i for i, ms in enumerate(stamps) if ms >= at]
    failover = drill.scenario == "master-failover"
    if name == "up":
        leader_up = [0.0 if ms >= at and failover else v for v, ms in zip(values, stamps, strict=True)]
        spare_up = [1.0 if ms < at or failover else 0.0 for ms in stamps]
        return [_with(obj, leader_up), _with(obj, spare_up, labels=copy)]
    if model is None:
        return [obj]
    counter = model[1]
    segment = "segment" in metric
    # The standby serves nothing while it waits: no segments, zero gauges, counters at 0.
    spare_values = [] if segment else [0.0] * len(before)
    spare_stamps = [] if segment else [stamps[i] for i in before]
    if not failover:
        return [obj, {"metric": {**metric, **copy}, "values": spare_values, "timestamps": spare_stamps}]
    span = max(drill.end - at, 1)
    if counter:
        factor = MISS_FACTOR if name in MASTER_HITS else 1.0
        new = [round(v * factor, 3) for v in restarted(values, stamps, at)]
        taken = [new[i] for i in after]
    elif name in MASTER_KEEPS:
        taken = [values[i] for i in after]
    else:
        taken = [round(values[i] * (0.01 + 0.04 * (stamps[i] - at) / span), 3) for i in after]
    leader = _with(obj, [values[i] for i in before], [stamps[i] for i in before])
    return [
        leader,
        {
            "metric": {**metric, **copy},
            "values": spare_values + taken,
            "timestamps": spare_stamps + [stamps[i] for i in after],
        },
    ]


def _dropping(plan: Plan, drill: Drill, obj: dict[str, Any], rng: Any) -> list[dict[str, Any]]:
    collector = plan.profile.collector
    assert collector is not None
    name, values, stamps, at = obj["metric"]["__name__"], obj["values"], obj["timestamps"], drill.at
    bound = float(collector.send_queue_limit_bytes)
    if name == "vmagent_remotewrite_pending_data_bytes":
        return [_with(obj, held(values, stamps, at, 0.97 * bound, 0.004 * bound, rng))]
    if name == "vm_persistentqueue_bytes_pending":
        return [_with(obj, held(values, stamps, at, 0.96 * bound, 0.004 * bound, rng))]
    if name == "vmagent_remotewrite_packets_dropped_total":
        return [_with(obj, growing(values, stamps, at, 12.0, rng))]
    if name == "vmagent_remotewrite_samples_dropped_total":  # two in three of the node's ~3000 samples/s
        return [_with(obj, growing(values, stamps, at, 2000.0, rng))]
    if name == "vm_persistentqueue_bytes_dropped_total":
        return [_with(obj, growing(values, stamps, at, 4.0e6, rng))]
    return [obj]


# -- node-wide stamp changes ------------------------------------------------------------------------------


def _thinned(obj: dict[str, Any], at: int, keep_one_in: int) -> dict[str, Any]:
    kept = [i for i, ms in enumerate(obj["timestamps"]) if ms < at or i % keep_one_in == 0]
    return _with(obj, [obj["values"][i] for i in kept], [obj["timestamps"][i] for i in kept])


def _skewed(obj: dict[str, Any], at: int, skew_ms: int) -> dict[str, Any]:
    """Stamps from ``at`` on ``skew_ms`` early; the ones that would land before ``at`` (on samples the node
    already wrote) are lost: the node is silent for the skew, then writes samples stamped in the past."""
    pairs = [
        (v, ms if ms < at else ms - skew_ms)
        for v, ms in zip(obj["values"], obj["timestamps"], strict=True)
        if ms < at or ms - skew_ms >= at
    ]
    return _with(obj, [v for v, _ in pairs], [ms for _, ms in pairs])


# -- node clock ------------------------------------------------------------------------------------------


def timex_series(plan: Plan, drill: Drill | None) -> Iterator[dict[str, Any]]:
    """node_exporter's timex collector on every node: NTP-synchronised (offset ~ms, sync status 1); the
    clock-skew drill's node from the fault on: offset SKEW_SECONDS (its clock is behind: the offset to add),
    unsynchronised, maxerror at the kernel's cap."""
    if not plan.profile.exported("node_exporter"):
        return
    skewed = drill.nodes if drill is not None and drill.scenario == "clock-skew" else frozenset()
    for node in plan.profile.node_names:
        fault = plan.fault(node)
        if fault.down or "node_exporter" in fault.absent_sources:
            continue
        labels = target_labels(plan, node, "node_exporter")
        stamps = timestamps(plan, "node_exporter", fault)
        rng = series_rng("timex", labels)
        at = drill.at if node in skewed and drill is not None else math.inf
        offset = [SKEW_SECONDS if ms >= at else round(rng.gauss(0, 0.0008), 6) for ms in stamps]
        status = [0.0 if ms >= at else 1.0 for ms in stamps]
        maxerror = [MAXERROR_CAP if ms >= at else round(rng.uniform(0.005, 0.25), 6) for ms in stamps]
        estimated = [round(abs(rng.gauss(0, 2e-5)), 7) for _ in stamps]
        for name, values in (
            ("node_timex_offset_seconds", offset),
            ("node_timex_sync_status", status),
            ("node_timex_maxerror_seconds", maxerror),
            ("node_timex_estimated_error_seconds", estimated),
        ):
            yield import_object(name, labels, values, stamps)


def apply(plan: Plan, stream: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The plan's series with its drill's fault (none: unchanged), then every node's clock series."""
    drill = active(plan)

    def more() -> Iterator[dict[str, Any]]:
        yield from stream
        yield from timex_series(plan, drill)

    if drill is None:
        yield from more()
        return
    node_label = drill.node_label
    for obj in more():
        for item in _reshape(plan, drill, obj) if obj["metric"]["__name__"] != "ALERTS" else [obj]:
            if item["metric"].get(node_label) in drill.nodes:
                if drill.scenario == "collector-dropping":
                    item = _thinned(item, drill.at, 3)
                elif drill.scenario == "clock-skew":
                    item = _skewed(item, drill.at, int(SKEW_SECONDS * 1000))
            if item["timestamps"]:
                yield item
