"""The demo's series model: (profile, topology, scenario, window, wanted metrics) -> VictoriaMetrics
import objects ``{"metric": {...}, "values": [...], "timestamps": [ms, ...]}``, streamed one series
at a time so hours of 1 s GPU data never sit in memory at once.

Labels follow the metric catalogue's contract with the profile's label names: ``node``, ``job``
and ``instance`` on every series; ``gpu`` and ``UUID``/``uuid`` on DCGM/GPM; ``tp_rank``/``pp_rank``
from the topology's RankPlacement on radix/storage series and the logging rank's on scheduler
series; tokenizer series on node_rank 0 of each replica; ``up`` per target per node.
Counters are monotonic; histogram buckets are cumulative and monotonic in time.
Values are deterministic: each series seeds its own generator from its name and labels.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from dashgen.demo.catalogue import CPUS_PER_NODE, Histogram, MetricModel, Rate, Wave
from dashgen.demo.scenarios import NodeFault
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import RankPlacement, Topology

PORTS = {"sglang": 30000, "dcgm": 9400, "gpm": 9500, "node_exporter": 9100, "mooncake_master": 9003,
         "gateway": 29000, "mooncake_client": 12300}
# Sources that are collectors inside another source's process share its scrape target.
TARGET_OF = {"hicache": "sglang", "hicache_storage": "sglang"}
MODEL_NAME = "demo-model"
SEGMENT_BASE_PORT = 12300
_NOISE_TABLE = 509
UPTIME_SECONDS = 2 * 86400  # counters start as if the process had been up this long
_DEVICE_CANDIDATES = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1", "nvme0n2", "sdb", "vdb")
SYSTEM_DISK = "sda"
# Labels the scopes set themselves; a panel's equality matcher on one of them selects, it adds nothing.
SCOPE_LABELS = frozenset({"engine_type", "cache_type", "storage_backend", "pp_size", "attn_cp_rank", "attn_cp_size",
                          "moe_ep_rank", "device", "mountpoint", "fstype", "cpu", "segment", "Hostname",
                          "modelName", "nodename", "sysname", "release"})


@dataclass(frozen=True)
class Plan:
    """Everything the generator needs; ``step`` is the coarsest spacing the caller allows (0: scrape interval)."""

    profile: Profile
    topology: Topology
    start: float
    end: float
    step: float = 0.0
    faults: dict[str, NodeFault] = field(default_factory=dict)

    def fault(self, node: str) -> NodeFault:
        return self.faults.get(node, NodeFault())

    def spacing(self, source: str) -> float:
        return max(self.profile.source(source).scrape_interval_seconds, self.step)

    @property
    def master_node(self) -> str:
        return self.profile.node_names[0]

    @property
    def gateway_node(self) -> str:
        return self.profile.node_names[0]


@dataclass(frozen=True)
class SeriesSpec:
    """One series to generate: its labels, node, and whether it carries real values (else a seeded 0)."""

    labels: dict[str, str]
    node: str
    active: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def cache_devices(profile: Profile) -> list[str]:
    pattern = re.compile(f"^(?:{profile.disks.cache_device_regex})$")
    found = [d for d in _DEVICE_CANDIDATES if pattern.match(d)]
    return found[:1] or ["nvme0n1"]


def mounts(profile: Profile, topology: Topology) -> list[tuple[str, str, str, float]]:
    """(device, mountpoint, fstype, size bytes) of the node's filesystems."""
    cache_size = (profile.capacity.disk_nominal_size or 3_840_000_000_000) * 0.895
    return [
        (f"/dev/{cache_devices(profile)[0]}", profile.disks.cache_mountpoint, "xfs", cache_size),
        (f"/dev/{SYSTEM_DISK}3", profile.disks.model_mountpoint, "ext4", 2.0e12),
        (f"/dev/{SYSTEM_DISK}2", "/", "ext4", 4.8e11),
    ]


def _number(value: Any, plan: Plan) -> float:
    return float(value(plan.profile, plan.topology)) if callable(value) else float(value)


def _rng(name: str, labels: dict[str, str]) -> random.Random:
    key = name + "\x00" + "\x00".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return random.Random(int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big"))


# -- who emits what -------------------------------------------------------------------------------


def target_labels(plan: Plan, node: str, source: str) -> dict[str, str]:
    profile = plan.profile
    owner = TARGET_OF.get(source, source)
    return {
        profile.label("node"): node,
        profile.label("job"): profile.source(owner).job,
        profile.label("instance"): f"{node}:{PORTS[owner]}",
    }


def _logging_ranks(topology: Topology) -> list[RankPlacement]:
    first: dict[tuple[str, int, int], int] = {}
    for r in topology.ranks:
        key = (r.pool, r.replica, r.pp_rank)
        first[key] = min(first.get(key, r.tp_rank), r.tp_rank)
    return [r for r in topology.ranks if r.tp_rank == first[(r.pool, r.replica, r.pp_rank)]]


def _role(profile: Profile, pool: str) -> str:
    return next(p.role for p in profile.pools if p.name == pool)


def _pp_size(profile: Profile, pool: str) -> str:
    return str(next(p.pp for p in profile.pools if p.name == pool))


def _rank_labels(plan: Plan, rank: RankPlacement, model: MetricModel) -> dict[str, str]:
    p = plan.profile
    labels = target_labels(plan, rank.node, model.source)
    labels[p.label("tp_rank")] = str(rank.tp_rank)
    labels[p.label("pp_rank")] = str(rank.pp_rank)
    if model.source == "hicache":
        labels.update({"cache_type": "HiRadixCache", p.label("dp_rank"): "0"})
    elif model.source == "hicache_storage":
        labels.update({"storage_backend": "mooncake", p.label("dp_rank"): "0", "pp_size": _pp_size(p, rank.pool),
                       "attn_cp_rank": "0", "attn_cp_size": "1"})
    else:
        labels.update({p.label("model_name"): MODEL_NAME, "engine_type": _role(p, rank.pool), "moe_ep_rank": "0"})
    return labels


def _segment(rank: RankPlacement, profile: Profile, topology: Topology) -> str:
    """``<host>:<port>``: the host is the node's address from the profile (its IP where
    ``cluster.node_addresses`` lists one, else its name), one port per rank client on the node."""
    local = [r for r in topology.ranks if r.node == rank.node].index(rank)
    return f"{profile.node_address(rank.node)}:{SEGMENT_BASE_PORT + local}"


def scope_series(plan: Plan, model: MetricModel) -> list[SeriesSpec]:
    """The label sets (before the metric's own extra labels) of every series a metric has."""
    p, t = plan.profile, plan.topology
    scope = model.scope
    specs: list[SeriesSpec] = []
    if scope == "gpu":
        uuid_label = p.label("gpm_uuid" if model.source == "gpm" else "dcgm_uuid")
        for node_index, node in enumerate(p.node_names):
            for gpu in range(p.gpus_per_node):
                labels = target_labels(plan, node, model.source)
                labels[p.label("gpu")] = str(gpu)
                labels[uuid_label] = f"GPU-{node_index:04x}{gpu:04x}-d0d0-4e4e-8a8a-{node_index * 100 + gpu:012d}"
                if model.source == "dcgm":
                    labels.update({"device": f"nvidia{gpu}", "modelName": "NVIDIA H800", "Hostname": node})
                specs.append(SeriesSpec(labels, node))
    elif scope in ("rank", "client"):
        for rank in t.ranks:
            specs.append(SeriesSpec(_rank_labels(plan, rank, model), rank.node))
    elif scope == "logging_rank":
        for rank in _logging_ranks(t):
            specs.append(SeriesSpec(_rank_labels(plan, rank, model), rank.node))
    elif scope == "seeded_rank":
        logging = set(_logging_ranks(t))
        for rank in t.ranks:
            specs.append(SeriesSpec(_rank_labels(plan, rank, model), rank.node, active=rank in logging))
    elif scope == "tokenizer":
        for replica in t.replicas:
            node = replica.nodes[0]
            labels = target_labels(plan, node, model.source)
            labels.update({p.label("model_name"): MODEL_NAME, "engine_type": _role(p, replica.pool)})
            specs.append(SeriesSpec(labels, node))
    elif scope == "master":
        specs.append(SeriesSpec(target_labels(plan, plan.master_node, model.source), plan.master_node))
    elif scope == "segment":
        for rank in t.ranks:
            labels = target_labels(plan, plan.master_node, model.source)
            labels["segment"] = _segment(rank, p, t)
            specs.append(SeriesSpec(labels, plan.master_node, extra={"holder": rank.node}))
    elif scope == "gateway":
        specs.append(SeriesSpec(target_labels(plan, plan.gateway_node, model.source), plan.gateway_node))
    elif scope == "node":
        for node in p.node_names:
            labels = target_labels(plan, node, model.source)
            if model.name == "node_uname_info":
                labels.update({"nodename": node, "sysname": "Linux", "release": "6.8.0"})
            specs.append(SeriesSpec(labels, node))
    elif scope == "disk":
        for node in p.node_names:
            for device in [*cache_devices(p), SYSTEM_DISK]:
                labels = target_labels(plan, node, model.source)
                labels["device"] = device
                specs.append(SeriesSpec(labels, node, extra={"cache": device != SYSTEM_DISK}))
    elif scope == "filesystem":
        for node in p.node_names:
            for device, mountpoint, fstype, size in mounts(p, t):
                labels = target_labels(plan, node, model.source)
                labels.update({"device": device, "mountpoint": mountpoint, "fstype": fstype})
                specs.append(SeriesSpec(labels, node, extra={"size": size}))
    elif scope == "cpu":
        for node in p.node_names:
            for cpu in range(CPUS_PER_NODE):
                labels = target_labels(plan, node, model.source)
                labels["cpu"] = str(cpu)
                specs.append(SeriesSpec(labels, node))
    elif scope == "netdev":
        for node in p.node_names:
            for device in ("eth0", "ib0"):
                labels = target_labels(plan, node, model.source)
                labels["device"] = device
                specs.append(SeriesSpec(labels, node))
    else:  # pragma: no cover - the catalogue only uses the scopes above
        raise ValueError(f"{model.name}: unknown scope {scope!r}")
    return specs


def expand_extra_labels(specs: list[SeriesSpec], extra: dict[str, tuple[str, ...]]) -> list[SeriesSpec]:
    """The cartesian product of the base label sets with the metric's own labels (mode, reason...)."""
    for label, values in extra.items():
        specs = [SeriesSpec({**s.labels, label: v}, s.node, s.active, s.extra) for s in specs for v in values]
    return specs


# -- values ---------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _grid(start: float, end: float, step: float) -> tuple[int, ...]:
    first = math.ceil(start / step) * step
    count = int((end - first) // step) + 1
    return tuple(int(round((first + i * step) * 1000)) for i in range(max(count, 0)))


def _timestamps(plan: Plan, source: str, fault: NodeFault, start: float | None = None) -> list[int]:
    """Scrape times (ms) of a source in the window; a sparse node keeps ``fault.sparse`` of them (the last included)."""
    stamps = _grid(plan.start if start is None else start, plan.end, plan.spacing(source))
    if fault.sparse and stamps:
        last = len(stamps) - 1
        picks = {last - last * k // fault.sparse for k in range(fault.sparse)}
        return [stamps[i] for i in sorted(picks)]
    return list(stamps)


def gauge_values(plan: Plan, model: Wave, rng: random.Random, stamps: list[int], idle: bool,
                 override_base: float | None = None) -> list[float]:
    lo, hi = _number(model.lo, plan), _number(model.hi, plan)
    if idle and model.load:
        value = _number(model.idle, plan)
        return [value] * len(stamps)
    base = override_base if override_base is not None else _number(model.base, plan)
    amp, noise = _number(model.amp, plan), _number(model.noise, plan)
    phase = rng.uniform(0, 2 * math.pi)
    base *= rng.uniform(0.93, 1.07) if amp or noise else 1.0
    if not amp and not noise:
        value = min(max(base, lo), hi)
        return [float(round(value)) if model.integer else round(value, 4)] * len(stamps)
    omega = 2 * math.pi / model.period / 1000
    # A per-series table of gaussian noise, walked with a stride: cheap, deterministic, not periodic to the eye.
    table = [noise * rng.gauss(0, 1) for _ in range(_NOISE_TABLE)]
    offset = rng.randrange(_NOISE_TABLE)
    sin = math.sin
    raw = [base + amp * sin(omega * ms + phase) + table[(offset + 7 * i) % _NOISE_TABLE]
           for i, ms in enumerate(stamps)]
    if model.integer:
        return [float(round(min(max(v, lo), hi))) for v in raw]
    return [round(min(max(v, lo), hi), 4) for v in raw]


def counter_values(plan: Plan, model: Rate, rng: random.Random, stamps: list[int], flat: bool,
                   from_zero: bool = False, seeded_zero: bool = False) -> list[float]:
    if seeded_zero or not stamps:
        return [0.0] * len(stamps)
    rate = _number(model.per_second, plan) * rng.uniform(0.85, 1.15)
    total = rng.uniform(1, 50) if from_zero else rate * UPTIME_SECONDS * rng.uniform(0.5, 1.0)
    phase = rng.uniform(0, 2 * math.pi)
    if flat:
        value = float(math.floor(total)) if model.integer else round(total, 3)
        return [value] * len(stamps)
    omega = 2 * math.pi / 1800000
    amp = model.amp
    sin = math.sin
    values = []
    previous = stamps[0]
    for ms in stamps:
        total += max(0.0, rate * (1 + amp * sin(omega * ms + phase)) * (ms - previous) / 1000)
        previous = ms
        values.append(total)
    if model.integer:
        return [float(math.floor(v)) for v in values]
    return [round(v, 3) for v in values]


def histogram_series(plan: Plan, name: str, model: Histogram, labels: dict[str, str], rng: random.Random,
                     stamps: list[int], flat: bool) -> Iterator[dict[str, Any]]:
    """``_bucket{le}`` (cumulative, monotonic), ``_sum`` and ``_count`` of one histogram child."""
    bounds = [*model.buckets, math.inf]
    median = model.median * rng.uniform(0.8, 1.25)
    rate = model.per_second * rng.uniform(0.85, 1.15)
    buckets = [0.0] * len(bounds)
    start_count = math.floor(rate * UPTIME_SECONDS * rng.uniform(0.5, 1.0))
    for i, le in enumerate(bounds):
        buckets[i] = math.floor(start_count * _lognormal_cdf(le, median, model.sigma))
    total_sum = start_count * median * math.exp(model.sigma**2 / 2)
    series_buckets: list[list[float]] = [[] for _ in bounds]
    sums: list[float] = []
    previous = stamps[0] if stamps else 0
    for ms in stamps:
        dt = (ms - previous) / 1000
        previous = ms
        if not flat and dt > 0:
            drift = median * (1 + 0.3 * math.sin(2 * math.pi * ms / 2400000))
            observed = max(0, round(rate * dt * rng.uniform(0.7, 1.3)))
            for i, le in enumerate(bounds):
                buckets[i] += round(observed * _lognormal_cdf(le, drift, model.sigma))
            total_sum += observed * drift * math.exp(model.sigma**2 / 2)
        for i in range(len(bounds)):
            series_buckets[i].append(float(buckets[i]))
        sums.append(round(total_sum, 4))
    for le, values in zip(bounds, series_buckets, strict=True):
        yield _series(f"{name}_bucket", {**labels, "le": "+Inf" if le == math.inf else _le(le)}, values, stamps)
    yield _series(f"{name}_sum", labels, sums, stamps)
    yield _series(f"{name}_count", labels, series_buckets[-1], stamps)


def _le(value: float) -> str:
    return repr(float(value)) if value != int(value) else f"{value:.1f}"


def _lognormal_cdf(x: float, median: float, sigma: float) -> float:
    if x == math.inf:
        return 1.0
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf((math.log(x) - math.log(median)) / (sigma * math.sqrt(2))))


def _series(name: str, labels: dict[str, str], values: list[float], stamps: list[int]) -> dict[str, Any]:
    return {"metric": {"__name__": name, **labels}, "values": values, "timestamps": stamps}


def _filesystem_value(name: str, size: float, rng: random.Random, stamps: list[int]) -> list[float] | None:
    used_share = rng.uniform(0.35, 0.6)
    if name == "node_filesystem_size_bytes":
        return [round(size)] * len(stamps)
    if name in ("node_filesystem_avail_bytes", "node_filesystem_free_bytes"):
        reserve = 0.0 if name.endswith("free_bytes") else 0.02
        slope = size * 0.01 / 3600
        return [round(max(size * (1 - used_share - reserve) - slope * (ms - stamps[0]) / 1000, 0)) for ms in stamps]
    return None


# -- the generator --------------------------------------------------------------------------------


def up_series(plan: Plan) -> Iterator[dict[str, Any]]:
    """``up`` per target per node: 1, or 0 on a node whose collection failed; a missing target has none."""
    p = plan.profile
    targets = [s for s in p.sources.values() if s.exported and s.name not in TARGET_OF]
    for node in p.node_names:
        fault = plan.fault(node)
        for source in targets:
            if source.name == "mooncake_master" and node != plan.master_node:
                continue
            if source.name == "gateway" and node != plan.gateway_node:
                continue
            if fault.down and fault.missing_job_source == source.name:
                continue
            stamps = _timestamps(plan, source.name, NodeFault())
            yield _series("up", target_labels(plan, node, source.name), [0.0 if fault.down else 1.0] * len(stamps),
                          stamps)


def metric_series(plan: Plan, model: MetricModel, extra: dict[str, tuple[str, ...]]) -> Iterator[dict[str, Any]]:
    """Every series of one metric under the plan's scenario."""
    extra = dict(extra)
    bounds = {float(v) for v in extra.pop("le", ()) if v not in ("+Inf", "inf")}
    specs = expand_extra_labels(scope_series(plan, model), {**model.labels, **extra})
    for spec in specs:
        fault = plan.fault(spec.node)
        if fault.down or model.source in fault.absent_sources:
            continue
        rng = _rng(model.name, spec.labels)
        if model.kind == "histogram":
            assert isinstance(model.model, Histogram)
            stamps = _timestamps(plan, model.source, fault)
            flat = fault.no_traffic and model.model.traffic == "requests"
            histogram = model.model
            if bounds - set(histogram.buckets):
                histogram = replace(histogram, buckets=tuple(sorted(set(histogram.buckets) | bounds)))
            yield from histogram_series(plan, model.name, histogram, spec.labels, rng, stamps, flat)
            continue
        if model.kind == "counter":
            assert isinstance(model.model, Rate)
            rate_model = model.model
            flat = (fault.no_traffic and rate_model.traffic == "requests") or (
                fault.no_io and rate_model.traffic == "io" and spec.extra.get("cache", True))
            start = None
            from_zero = False
            if model.first_event and rate_model.rare and spec.active:
                if flat:
                    continue  # the rare event never happened on this node: the series does not exist yet
                start = plan.start + (plan.end - plan.start) * rng.uniform(0.3, 0.6)
                from_zero = True
            stamps = _timestamps(plan, model.source, fault, start)
            values = counter_values(plan, rate_model, rng, stamps, flat, from_zero, seeded_zero=not spec.active)
            yield _series(model.name, spec.labels, values, stamps)
            continue
        assert isinstance(model.model, Wave)
        stamps = _timestamps(plan, model.source, fault)
        idle = fault.no_traffic or (fault.no_io and model.scope == "disk" and spec.extra.get("cache", False))
        values = None
        if model.scope == "filesystem":
            values = _filesystem_value(model.name, spec.extra["size"], rng, stamps)
        if values is None:
            values = gauge_values(plan, model.model, rng, stamps, idle)
        yield _series(model.name, spec.labels, values, stamps)


def generate(plan: Plan, models: list[tuple[MetricModel, dict[str, tuple[str, ...]]]]) -> Iterator[dict[str, Any]]:
    """``up`` and every series of the given metrics (each with extra label values to cover), skipping
    sources the profile does not export."""
    yield from up_series(plan)
    for model, extra in models:
        if plan.profile.exported(model.source):
            yield from metric_series(plan, model, extra)
