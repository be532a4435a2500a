"""Per-GPU quantities, independent of the source that measures them, the one place a profile's
source is chosen (``gpu_source``: the GPM 1 s sampler when exported, else DCGM), and the builders.

S18: SM active, GPU busy, DRAM active, memory and power are different quantities; each has its
own metric per source (``queries.gpm``, ``queries.dcgm``), and a panel names the one it uses.
Quantities are in one common unit (bytes, Hz, W, °C, 0-1); a source reporting another unit (DCGM:
MiB, MHz) is converted where its metric is read, and the conversion is named only there.

Builders ask the chosen source what differs (its metric, its factor to the common unit, whether it
has a validity series and how to filter on it); they never compare source keys. Every selector
carries the source's scrape job (a second scrape of the same exporter under another job is never
merged in) and, on the dashboards (``scoped``), the ``$node``/``$gpu`` selection.

Window statistics (the per-GPU table reads them per rule interval, recorded: ``queries.gpu_window``):
- with a validity series (GPM): invalid samples are dropped before the mean and the peak, with a
  subquery stepping at the stored sample interval, so it sees every stored sample. Inside the subquery
  the series are reduced to one per (node, gpu), so a series split by exporter labels counts once.
- without (DCGM): the mean is sum / count of the raw samples per (node, gpu), so a GPU whose series
  is split (Kubernetes pod labels, a driver-version label change) keeps one exact mean; the peak is
  the max over the split series.

GPUs reporting (S22): a GPU reports when its source's presence series (power, or the first metric
the exporter collects) has a sample within ``seen_window`` before the evaluation time: four of the
source's real sample intervals plus the store's latency offset, at least 2 minutes. Counted per node
(``gpus_seen``: the reasons table and the GpuMissing alert, against ``cluster.gpus_per_node``) and
for the whole deployment (``gpus_reporting``: against the profile's total). Exporter labels are
aggregated away per (node, gpu) first, so a split series counts one GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries.dcgm import DcgmSource
from dashgen_queries.gpm import GpmSource
from dashgen_queries.gpu_source import GpuSource, seconds_text
from dashgen_queries.promql import agg, divide, gpu_var, job, node_var, over_time, scale, scoped_job, selector

from dashgen.deployment.profile import Profile

# The per-GPU sources in order of preference: the first one the profile exports is the dashboards' source.
SOURCES: tuple[type[GpuSource], ...] = (GpmSource, DcgmSource)
GPU_SOURCE_KEYS: tuple[str, ...] = tuple(source.key for source in SOURCES)


@dataclass(frozen=True)
class GpuQuantity:
    """A per-GPU quantity and its Grafana unit, the same whichever source measures it.

    ``meaning`` is source-neutral; a source's unit conversion is said only where it happens.
    """

    key: str
    label: str
    unit: str
    meaning: str
    table_unit: str = ""
    table_factor: float = 1.0  # from the common unit to the unit shown in table headers

    @property
    def header_unit(self) -> str:
        """The unit a table header states, since table cells carry no per-column unit."""
        return self.table_unit or {"watt": "W", "celsius": "°C", "percentunit": "%"}.get(self.unit, self.unit)

    @property
    def display_factor(self) -> float:
        return 100.0 if self.unit == "percentunit" and self.table_factor == 1.0 else self.table_factor

    def describe(self, source: GpuSource, table: bool = False) -> str:
        """What the quantity is, as the panel shows it from ``source``: the range of a ratio
        (0-1 in the metric; x100 in % in tables, a 0-100 % axis on graphs) and the source's unit
        conversion where one happens."""
        text = self.meaning
        if self.unit == "percentunit":
            text += (
                "; the metric is 0-1, the column shows it x100 in %"
                if table
                else "; the metric is 0-1, drawn on a fixed 0-100 % axis"
            )
        elif table and self.table_factor != 1.0:
            text += f", shown in {self.header_unit}"
        if reported := source.reported_unit(self.key):
            target = self.header_unit if table else {"bytes": "bytes", "hertz": "Hz"}.get(self.unit, self.unit)
            text += f" ({source.short} reports {reported}; converted to {target})"
        return text


QUANTITIES: dict[str, GpuQuantity] = {
    q.key: q
    for q in (
        GpuQuantity("power", "Power", "watt", "board power draw in watts"),
        GpuQuantity(
            "memory_used", "Memory used", "bytes", "framebuffer memory in use", table_unit="GiB", table_factor=1 / 2**30
        ),
        GpuQuantity(
            "sm_active",
            "SM active",
            "percentunit",
            "share of time an SM has at least one warp resident; "
            "not nvidia-smi dmon's 'sm' column, not GPU busy, not MFU",
        ),
        GpuQuantity("sm_occupancy", "SM occupancy", "percentunit", "resident warps / maximum warps per SM"),
        GpuQuantity("tensor_active", "Tensor active", "percentunit", "share of time the tensor pipe is active"),
        GpuQuantity(
            "dram_active", "DRAM active", "percentunit", "share of time the device-memory interface is active; not GB/s"
        ),
        GpuQuantity(
            "busy",
            "GPU busy",
            "percentunit",
            "share of time the graphics/compute engine is active (GPU busy); not SM active",
        ),
        GpuQuantity("temperature", "Temperature", "celsius", "GPU die temperature, degrees Celsius"),
        GpuQuantity("sm_clock", "SM clock", "hertz", "SM clock frequency", table_unit="MHz", table_factor=1e-6),
    )
}


def gpu_sources(profile: Profile) -> list[GpuSource]:
    """Every per-GPU source the profile exports, in order of preference (the No Data table checks each)."""
    return [source.from_profile(profile) for source in SOURCES if profile.source(source.key).exported]


def gpu_source(profile: Profile) -> GpuSource | None:
    """The source of every per-GPU panel and rule: GPM when the profile exports it, else DCGM; None
    when neither is exported. The only place the choice is made."""
    exported = gpu_sources(profile)
    return exported[0] if exported else None


SEEN_SAMPLES = 4  # a GPU reports when it sent a sample within this many sample intervals (+ the store's lag)
SEEN_MIN_SECONDS = 120.0


def seen_window(profile: Profile, source: GpuSource) -> str:
    """How far back a GPU's newest sample may lie for the GPU to count as reporting (see the module docstring)."""
    seconds = SEEN_SAMPLES * source.resolution_seconds + profile.store.latency_offset_seconds
    return seconds_text(max(SEEN_MIN_SECONDS, seconds))


def _reporting_gpus(profile: Profile, source: GpuSource, selected: bool) -> str:
    matchers = [job(profile, source.key)] + ([node_var(profile)] if selected else [])
    recent = f"last_over_time({selector(source.presence_metric(), *matchers)}[{seen_window(profile, source)}])"
    return agg("max", _per_gpu_labels(profile), recent)


def gpus_seen(profile: Profile, source: GpuSource, *, selected: bool = True) -> str:
    """GPUs reporting per node at the evaluation time; ``selected`` narrows to the dashboard's ``$node``
    (never to ``$gpu``: the count is of the node's GPUs). A node with none has no row."""
    return agg("count", [profile.label("node")], _reporting_gpus(profile, source, selected))


def gpus_reporting(profile: Profile, source: GpuSource) -> str:
    """GPUs reporting in the whole deployment at the evaluation time: one count over every node (a count of
    GPUs, never a sum of a quantity across nodes or PP stages), compared with ``profile.total_gpus``."""
    return f"count({_reporting_gpus(profile, source, selected=False)})"


def gpus_missing(profile: Profile, source: GpuSource) -> str:
    """Nodes whose scrape target of the source is up but that report fewer GPUs than ``cluster.gpus_per_node``;
    the value is the number reporting (0 when the exporter answers without any GPU). Every node of the
    deployment, no dashboard variable: the GpuMissing alert."""
    node = profile.label("node")
    seen = gpus_seen(profile, source, selected=False)
    up = agg("max", [node], selector("up", scoped_job(profile, profile.source(source.key).job)))
    return f"({seen} < {profile.gpus_per_node}) or on({node}) (({up} == 1) * 0 unless on({node}) {seen})"


def _with_job(profile: Profile, expr: str, source: GpuSource) -> str:
    """``expr`` labelled with the source's scrape job (the label an aggregation took away)."""
    job_label = profile.label("job")
    return f'label_replace({expr}, "{job_label}", "{profile.source(source.key).job}", "", "")'


def gpus_missing_any(profile: Profile) -> str:
    """``gpus_missing`` of every per-GPU source the profile exports (GPM and DCGM), each labelled with its job: a
    GPU that one exporter lost while the other still sees it makes that exporter's node count short (the GpuMissing
    alert reads this, not only the dashboards' source)."""
    return " or ".join(
        _with_job(profile, f"({gpus_missing(profile, source)})", source) for source in gpu_sources(profile)
    )


def gpus_missing_from_exporter(profile: Profile) -> str:
    """GPUs (node, gpu) that one exported per-GPU source reports and another does not, on a node where the other's
    target is scraped (``up == 1``; a failed or vanished target is CollectionFailed / TargetMissing), labelled with
    the job of the exporter that lost the GPU (value 1). Empty unless the profile exports two per-GPU sources."""
    node = profile.label("node")
    keys = ", ".join(_per_gpu_labels(profile))
    sources = gpu_sources(profile)
    parts = []
    for lost in sources:
        up = agg("max", [node], selector("up", scoped_job(profile, profile.source(lost.key).job)))
        for seen in sources:
            if seen is lost:
                continue
            gone = (
                f"({_reporting_gpus(profile, seen, selected=False)} * 0 + 1) "
                f"unless on({keys}) {_reporting_gpus(profile, lost, selected=False)}"
            )
            parts.append(_with_job(profile, f"(({gone}) and on({node}) ({up} == 1))", lost))
    return " or ".join(parts)


def with_uuid(profile: Profile, source: GpuSource, expr: str) -> str:
    """A per-(node, gpu) ``expr`` with the GPU's UUID label added from the source's presence series (S31: an alert
    names the GPU by index and UUID); unchanged where the GPU has no recent presence series. ``topk`` keeps one
    UUID per GPU, so a GPU swapped within the window can never make the join fail."""
    keys = ", ".join(_per_gpu_labels(profile))
    presence = selector(source.presence_metric(), job(profile, source.key))
    recent = f"last_over_time({presence}[{seen_window(profile, source)}])"
    uuids = f"topk by ({keys}) (1, {agg('max', [*_per_gpu_labels(profile), source.uuid_label], recent)})"
    return f"(({expr}) * on({keys}) group_left({source.uuid_label}) ({uuids} * 0 + 1)) or on({keys}) ({expr})"


def _per_gpu_labels(profile: Profile) -> list[str]:
    return [profile.label("node"), profile.label("gpu")]


def _matchers(profile: Profile, source: GpuSource, scoped: bool = True) -> list[str]:
    """The source's job, and with ``scoped`` the dashboard's ``$node``/``$gpu`` selection."""
    matchers = [job(profile, source.key)]
    if scoped:
        matchers += [node_var(profile), gpu_var(profile)]
    return matchers


def _per_gpu(profile: Profile, source: GpuSource, metric: str, scoped: bool, valid_only: bool) -> str:
    """``metric`` as one series per (node, gpu) (exporter labels aggregated away with ``max``);
    ``valid_only`` keeps only valid samples where the source has a validity series."""
    matchers = _matchers(profile, source, scoped)
    per_gpu = agg("max", _per_gpu_labels(profile), selector(metric, *matchers))
    return source.valid_only(profile, per_gpu, matchers) if valid_only else per_gpu


def _validity_metric(source: GpuSource) -> str:
    if source.validity_metric is None:
        raise ValueError(f"the {source.name} has no per-sample validity series")
    return source.validity_metric


def gpu_window(
    profile: Profile,
    source: GpuSource,
    quantity: GpuQuantity,
    func: str,
    *,
    window: str = "$__range",
    step: str = "$__interval",
    scoped: bool = True,
) -> str:
    """The mean (``avg``), peak (``max``) or low (``min``) per (node, gpu) over ``window``, in the common unit
    (the per-GPU table reads it per rule interval, recorded: ``queries.gpu_window``). See the module docstring
    for the validity filter and the split-series handling."""
    if func not in ("avg", "max", "min"):
        raise ValueError(f"window statistic {func!r} is not avg, max or min")
    labels = _per_gpu_labels(profile)
    matchers = _matchers(profile, source, scoped)
    raw = selector(source.metric(quantity.key), *matchers)
    if source.validity_metric is not None:
        valid = agg("max", labels, source.valid_samples(profile, raw, matchers))
        # the subquery steps at ``step`` (the stored sample interval in the recording rule), so it sees every
        # stored sample and only the valid ones
        per_gpu = f"{func}_over_time(({valid})[{window}:{step}])"
    elif func in ("max", "min"):
        per_gpu = agg(func, labels, over_time(func, raw, window))
    else:
        per_gpu = divide(
            agg("sum", labels, over_time("sum", raw, window)), agg("sum", labels, over_time("count", raw, window))
        )
    return scale(per_gpu, source.scale(quantity.key))


def gpu_valid_share(profile: Profile, source: GpuSource, window: str) -> str:
    """Share of samples whose validity code was OK, per GPU, over ``window``; only for a source with
    a validity series."""
    raw = selector(_validity_metric(source), *_matchers(profile, source))
    return agg("max", _per_gpu_labels(profile), over_time("avg", raw, window))


def gpu_timeline(
    profile: Profile, source: GpuSource, quantity: GpuQuantity, *, scoped: bool = True, valid_only: bool = False
) -> str:
    """The quantity over time, exactly one series per (node, gpu), in the common unit.

    Exporter-specific labels (UUID, modelName, pci_bus_id, pod...) are aggregated away with ``max``
    so a relabelled or restarted exporter never splits one GPU into two colours. The timelines read
    every sample of the ``$node``/``$gpu`` selection; the recording rules read valid samples of
    every GPU (``scoped=False, valid_only=True``).
    """
    per_gpu = _per_gpu(profile, source, source.metric(quantity.key), scoped, valid_only)
    return scale(per_gpu, source.scale(quantity.key))


def gpu_memory_used_share(profile: Profile, source: GpuSource, *, scoped: bool = True, valid_only: bool = False) -> str:
    """Framebuffer used / total per (node, gpu), 0-1: the one definition, read by the timelines
    (scoped, every sample), the SLO watermark panels (scoped, valid samples only) and the recording
    rule behind the memory alert (every GPU, valid samples only).

    The total is the source's total metrics summed per exporter series, then the max per GPU
    (DCGM's default CSV has no FB_TOTAL: USED + FREE + RESERVED, all MiB, the unit cancels), so one
    series' used is never added to another series' free where a GPU's series is split.
    """
    keys = _per_gpu_labels(profile)
    matchers = _matchers(profile, source, scoped)
    used = agg("max", keys, selector(source.metric("memory_used"), *matchers))
    total = agg("max", keys, " + ".join(selector(metric, *matchers) for metric in source.memory_total_metrics))
    share = divide(used, total)
    return source.valid_only(profile, share, matchers) if valid_only else share


def gpu_memory_used_share_formula(source: GpuSource, *, valid_only: bool = False, caveat: bool = False) -> str:
    """``gpu_memory_used_share`` as descriptions write it: the source's metrics, ``where <validity> == 1``
    with ``valid_only``, and with ``caveat`` why the total is a sum (where it is one)."""
    text = source.memory_share_formula
    if valid_only and source.validity_metric is not None:
        text += f" where {source.validity_metric} == 1"
    if caveat and source.memory_total_caveat:
        text += f": {source.memory_total_caveat}"
    return text


CLOCK_EVENT_REASONS = "clock_event_reasons"  # the key of the reason bitmask in a source's metrics
CLOCK_EVENT_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
    (0x100, "display_clocks"),
)
# The bits that mean the clock is held down by power or heat; the others are benign (idle, an
# application-clock setting, sync boost, display clocks).
THROTTLE_BITS = (0x4, 0x8, 0x20, 0x40, 0x80)
# Their thermal / power / HW slowdown split, the one definition the health matrix, the per-GPU table and the alerts
# read: SW / HW thermal slowdown are thermal; the SW power cap and the HW power brake are power; HW slowdown alone
# (0x8: the board's own protection - fast power-draw or an external slowdown signal, a failing PSU or sensor) is a
# failure mode of its own. With heat the thermal bits are set beside it, and thermal comes first.
THERMAL_BITS = (0x20, 0x40)
POWER_BITS = (0x4, 0x80)
HW_SLOWDOWN_BITS = (0x8,)
assert sorted(THERMAL_BITS + POWER_BITS + HW_SLOWDOWN_BITS) == sorted(THROTTLE_BITS)
THROTTLE_MEANINGS = {
    0x4: "SW power cap",
    0x8: "HW slowdown",
    0x20: "SW thermal",
    0x40: "HW thermal",
    0x80: "HW power brake",
}
REASON_LABEL = "reason"

# The GPU alert thresholds (the seed's DCGM alerts), read by the rule files and drawn as red lines on
# the panels: the one definition of each.
MEMORY_FULL_SHARE = 0.95  # GpuMemoryNearlyFull: memory used / total above this for 1 m (critical)
TEMPERATURE_HIGH_CELSIUS = 85.0  # GpuTemperatureHigh: above this for 2 m (warning)


def gpu_clock_event_reasons(
    profile: Profile, source: GpuSource, *, scoped: bool = True, valid_only: bool = False
) -> str:
    """The clock-event (throttle) reason bitmask per GPU, as the source reports it (DCGM's bit layout)."""
    return _per_gpu(profile, source, source.metric(CLOCK_EVENT_REASONS), scoped, valid_only)


def gpu_clock_event_bit(profile: Profile, source: GpuSource, bit: int) -> str:
    """One bit of the reason bitmask per GPU, as 0 (clear) or the bit's own value (set), labelled
    ``reason="<name>"``. PromQL has no bitwise operators: bit b of x is ``floor(x / 2^b) % 2``."""
    name = dict(CLOCK_EVENT_BITS)[bit]
    flag = f"floor({gpu_clock_event_reasons(profile, source)} / {bit}) % 2"
    return f'label_replace(({flag}) * {bit}, "{REASON_LABEL}", "{name}", "", "")'
