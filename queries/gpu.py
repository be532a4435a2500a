"""Per-GPU quantities and which source measures them: the GPM 1 s sampler or the DCGM exporter.

S18: SM active, GPU busy, DRAM active, memory and power are different quantities; each has its
own metric per source, and a panel names the one it uses. DCGM units are converted to the
GPM ones (MiB -> bytes, MHz -> Hz) so both sources render with the same Grafana unit; the
conversion is named only where it happens (DCGM), never on GPM panels.

Every selector carries the source's scrape job (a second scrape of the same exporter under
another job is never merged in) and the ``$node``/``$gpu`` selection.

Window statistics (the per-GPU tables):
- GPM: samples whose ``gpm_sample_valid`` is not 1 are dropped before the mean and the peak, with
  a subquery at the GPM sample interval over the window (measured on a local VictoriaMetrics with
  video-200's 200 GPUs and ~50 min of 1 s samples: ~0.3 s for the five columns of one table,
  against ~0.1 s unfiltered; it grows linearly with the window). Inside the subquery the series
  are reduced to one per (node, gpu), so a series split by exporter labels counts once.
- DCGM: no validity series; the mean is sum / count of the raw samples per (node, gpu), so a GPU
  whose series is split (Kubernetes pod labels, a driver-version label change) keeps one exact
  mean; the peak is the max over the split series.
- Samples in window: the sum over a GPU's series of ``count_over_time`` on the raw samples
  (a split series adds up instead of undercounting; no subquery, so no step-filled samples).
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen.deployment.profile import Profile
from queries.promql import agg, divide, gpu_var, job, node_var, over_time, scale, selector

DCGM_DEFAULT_COLLECT_SECONDS = 30.0  # dcgm-exporter -c 30000 (ms), metric catalogue §4


@dataclass(frozen=True)
class GpuQuantity:
    """A per-GPU quantity, its metric in each source and its Grafana unit.

    ``meaning`` is source-neutral; the DCGM unit conversion is said only on DCGM panels.
    """

    key: str
    label: str
    unit: str
    gpm_metric: str
    dcgm_metric: str
    dcgm_scale: float
    meaning: str
    dcgm_note: str = ""
    table_unit: str = ""
    table_factor: float = 1.0  # from the common (GPM) unit to the unit shown in table headers
    dcgm_unit: str = ""  # the unit DCGM reports when it differs from the common one (converted)

    @property
    def header_unit(self) -> str:
        """The unit a table header states, since table cells carry no per-column unit."""
        return self.table_unit or {"watt": "W", "celsius": "°C", "percentunit": "%"}.get(self.unit, self.unit)

    @property
    def display_factor(self) -> float:
        return 100.0 if self.unit == "percentunit" and self.table_factor == 1.0 else self.table_factor

    def describe(self, source: GpuSource, table: bool = False) -> str:
        """What the quantity is, as the panel shows it from ``source``: the range of a ratio
        (0-1 in the metric; x100 in % in tables, a 0-100 % axis on graphs) and a DCGM unit
        conversion where one happens."""
        text = self.meaning
        if self.unit == "percentunit":
            text += ("; the metric is 0-1, the column shows it x100 in %" if table
                     else "; the metric is 0-1, drawn on a fixed 0-100 % axis")
        elif table and self.table_factor != 1.0:
            text += f", shown in {self.header_unit}"
        if source.key == "dcgm" and self.dcgm_unit:
            target = self.header_unit if table else {"bytes": "bytes", "hertz": "Hz"}.get(self.unit, self.unit)
            text += f" (DCGM reports {self.dcgm_unit}; converted to {target})"
        return text


QUANTITIES: dict[str, GpuQuantity] = {
    q.key: q
    for q in (
        GpuQuantity("power", "Power", "watt", "gpm_power_watts", "DCGM_FI_DEV_POWER_USAGE", 1,
                    "board power draw in watts"),
        GpuQuantity("memory_used", "Memory used", "bytes", "gpm_memory_used_bytes", "DCGM_FI_DEV_FB_USED", 1048576,
                    "framebuffer memory in use", table_unit="GiB", table_factor=1 / 2**30,
                    dcgm_unit="MiB"),
        GpuQuantity("sm_active", "SM active", "percentunit", "gpm_sm_active_ratio", "DCGM_FI_PROF_SM_ACTIVE", 1,
                    "share of time an SM has at least one warp resident; "
                    "not nvidia-smi dmon's 'sm' column, not GPU busy, not MFU",
                    "DCGM_FI_PROF_SM_ACTIVE is commented out in dcgm-exporter's default CSV: absent unless added"),
        GpuQuantity("sm_occupancy", "SM occupancy", "percentunit", "gpm_sm_occupancy_ratio",
                    "DCGM_FI_PROF_SM_OCCUPANCY", 1, "resident warps / maximum warps per SM",
                    "DCGM_FI_PROF_SM_OCCUPANCY is commented out in dcgm-exporter's default CSV: absent unless added"),
        GpuQuantity("tensor_active", "Tensor active", "percentunit", "gpm_tensor_active_ratio",
                    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1, "share of time the tensor pipe is active"),
        GpuQuantity("dram_active", "DRAM active", "percentunit", "gpm_dram_active_ratio", "DCGM_FI_PROF_DRAM_ACTIVE", 1,
                    "share of time the device-memory interface is active; not GB/s"),
        GpuQuantity("busy", "GPU busy", "percentunit", "gpm_gpu_busy_ratio", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1,
                    "share of time the graphics/compute engine is active (GPU busy); not SM active"),
        GpuQuantity("temperature", "Temperature", "celsius", "gpm_temperature_celsius", "DCGM_FI_DEV_GPU_TEMP", 1,
                    "GPU die temperature, degrees Celsius"),
        GpuQuantity("sm_clock", "SM clock", "hertz", "gpm_sm_clock_hertz", "DCGM_FI_DEV_SM_CLOCK", 1e6,
                    "SM clock frequency", table_unit="MHz", table_factor=1e-6,
                    dcgm_unit="MHz"),
    )
}


def _seconds_text(seconds: float) -> str:
    return f"{seconds:g}s"


@dataclass(frozen=True)
class GpuSource:
    """The source a profile uses for per-GPU quantities: GPM when exported, else DCGM.

    ``interval`` is the scrape interval (kept for rule texts); ``resolution_seconds`` is the real
    spacing of distinct samples: GPM's stored sample interval, and for DCGM the exporter's collect
    interval (30 s by default) or the stored interval when that is coarser.
    """

    key: str  # "gpm" | "dcgm"
    name: str
    interval: str
    uuid_label: str
    sample_interval: str = ""
    resolution_seconds: float = 0.0

    def metric(self, quantity: GpuQuantity) -> str:
        return quantity.gpm_metric if self.key == "gpm" else quantity.dcgm_metric

    def caption(self) -> str:
        """Source and scrape interval, as the rule files name it."""
        return f"{'GPM' if self.key == 'gpm' else 'DCGM'} {self.interval}"

    def title_caption(self) -> str:
        """Source and real resolution, for panel titles and table headers (``GPM 1s``, ``DCGM 30s``)."""
        return f"{'GPM' if self.key == 'gpm' else 'DCGM'} {self.resolution}"

    @property
    def resolution(self) -> str:
        return _seconds_text(self.resolution_seconds)

    def sampling(self) -> str:
        """One sentence on what a stored sample is, for descriptions (S18, S19)."""
        if self.key == "gpm":
            stored = ("" if self.sample_interval == self.interval else
                      f", stored one per {self.sample_interval}")
            return (f"The GPM sampler takes one sample per GPU every {self.interval}{stored}; its node-side "
                    "1 s sample rings hold the formal numbers")
        return (f"dcgm-exporter collects every {_seconds_text(DCGM_DEFAULT_COLLECT_SECONDS)} by default "
                f"(-c 30000), whatever the scrape interval; scraped every {self.interval}"
                f"{'' if self.sample_interval == self.interval else ', stored every ' + self.sample_interval}"
                f", so the resolution is {self.resolution} and faster scrapes only store repeated values. "
                "There is no GPM sampler here, so DCGM is the only per-GPU source")


def gpu_source(profile: Profile) -> GpuSource | None:
    """GPM when the profile exports it, else DCGM; None when neither is exported."""
    for key in ("gpm", "dcgm"):
        source = profile.source(key)
        if source.exported:
            label = profile.label("gpm_uuid" if key == "gpm" else "dcgm_uuid")
            name = "GPM sampler" if key == "gpm" else "DCGM exporter"
            resolution = source.sample_interval_seconds
            if key == "dcgm":
                resolution = max(resolution, DCGM_DEFAULT_COLLECT_SECONDS)
            return GpuSource(key, name, source.scrape_interval, label, source.sample_interval, resolution)
    return None


def _per_gpu_labels(profile: Profile) -> list[str]:
    return [profile.label("node"), profile.label("gpu")]


def _raw(profile: Profile, source_key: str, metric: str) -> str:
    """``metric{job="<source job>", node=~"$node", gpu=~"$gpu"}``."""
    return selector(metric, job(profile, source_key), node_var(profile), gpu_var(profile))


def gpm_valid_only(profile: Profile, expr: str) -> str:
    """``expr`` kept only where the GPU's GPM sample at that instant was valid."""
    labels = ", ".join(_per_gpu_labels(profile))
    return f"{expr} and on({labels}) {_raw(profile, 'gpm', 'gpm_sample_valid')} == 1"


def gpu_window(profile: Profile, source: GpuSource, quantity: GpuQuantity, func: str) -> str:
    """The window mean (``avg``) or peak (``max``) per (node, gpu) over ``$__range``, in the unit
    its table header states (W, GiB, %, °C, MHz). See the module docstring for the validity filter
    (GPM) and the split-series handling (both)."""
    if func not in ("avg", "max"):
        raise ValueError(f"window statistic {func!r} is not avg or max")
    labels = _per_gpu_labels(profile)
    raw = _raw(profile, source.key, source.metric(quantity))
    if source.key == "gpm":
        valid = agg("max", labels, gpm_valid_only(profile, raw))
        per_gpu = f"{func}_over_time(({valid})[$__range:{source.sample_interval}])"
    elif func == "max":
        per_gpu = agg("max", labels, over_time("max", raw))
    else:
        per_gpu = divide(agg("sum", labels, over_time("sum", raw)), agg("sum", labels, over_time("count", raw)))
    factor = quantity.display_factor * (1 if source.key == "gpm" else quantity.dcgm_scale)
    return scale(per_gpu, factor)


def gpu_window_samples(profile: Profile, source: GpuSource, metric: str) -> str:
    """Raw samples the window holds per (node, gpu), summed over the GPU's series (a series split by
    pod or driver labels adds up instead of undercounting)."""
    return agg("sum", _per_gpu_labels(profile), over_time("count", _raw(profile, source.key, metric)))


def gpm_window_valid_percent(profile: Profile, source: GpuSource) -> str:
    """Share of the window's GPM samples that were valid per (node, gpu), in % (0-100)."""
    labels = _per_gpu_labels(profile)
    raw = _raw(profile, source.key, "gpm_sample_valid")
    return scale(divide(agg("sum", labels, over_time("sum", raw)), agg("sum", labels, over_time("count", raw))), 100)


def gpu_timeline(profile: Profile, source: GpuSource, quantity: GpuQuantity) -> str:
    """The quantity over time, exactly one series per (node, gpu), in the common (GPM) unit.

    Exporter-specific labels (UUID, modelName, pci_bus_id, pod...) are aggregated away with ``max``
    so a relabelled or restarted exporter never splits one GPU into two colours.
    """
    per_gpu = agg("max", _per_gpu_labels(profile), _raw(profile, source.key, source.metric(quantity)))
    return per_gpu if source.key == "gpm" else scale(per_gpu, quantity.dcgm_scale)


def gpu_memory_used_share(profile: Profile, source: GpuSource) -> str:
    """Framebuffer used / total per GPU, 0-1. DCGM's default CSV has no FB_TOTAL, so its total is
    USED + FREE + RESERVED (all MiB, the unit cancels)."""
    labels = _per_gpu_labels(profile)

    def per_gpu(metric: str) -> str:
        return agg("max", labels, _raw(profile, source.key, metric))

    if source.key == "gpm":
        return divide(per_gpu("gpm_memory_used_bytes"), per_gpu("gpm_memory_total_bytes"))
    total = " + ".join(per_gpu(m) for m in ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED"))
    return divide(per_gpu("DCGM_FI_DEV_FB_USED"), total)


CLOCK_EVENT_METRICS = {"gpm": "gpm_clock_event_reasons", "dcgm": "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}
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
REASON_LABEL = "reason"


def gpu_clock_event_reasons(profile: Profile, source: GpuSource) -> str:
    """The clock-event (throttle) reason bitmask per GPU, as the source reports it."""
    return agg("max", _per_gpu_labels(profile), _raw(profile, source.key, CLOCK_EVENT_METRICS[source.key]))


def gpu_clock_event_bit(profile: Profile, source: GpuSource, bit: int) -> str:
    """One bit of the reason bitmask per GPU, as 0 (clear) or the bit's own value (set), labelled
    ``reason="<name>"``. PromQL has no bitwise operators: bit b of x is ``floor(x / 2^b) % 2``."""
    name = dict(CLOCK_EVENT_BITS)[bit]
    flag = f"floor({gpu_clock_event_reasons(profile, source)} / {bit}) % 2"
    return f'label_replace(({flag}) * {bit}, "{REASON_LABEL}", "{name}", "", "")'


def gpm_valid_share(profile: Profile, window: str) -> str:
    """Share of GPM samples whose validity code was OK, per GPU, over ``window``."""
    raw = _raw(profile, "gpm", "gpm_sample_valid")
    return agg("max", _per_gpu_labels(profile), over_time("avg", raw, window))
