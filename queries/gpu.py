"""Per-GPU quantities and which source measures them: the GPM 1 s sampler or the DCGM exporter.

S18: SM active, GPU busy, DRAM active, memory and power are different quantities; each has its
own metric per source, and a panel names the one it uses. DCGM units are converted to the
GPM ones (MiB -> bytes, MHz -> Hz) so both sources render with the same Grafana unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen.profile import Profile
from queries.promql import agg, divide, gpu_var, node_var, over_time, scale, selector


@dataclass(frozen=True)
class GpuQuantity:
    """A per-GPU quantity, its metric in each source and its Grafana unit."""

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

    @property
    def header_unit(self) -> str:
        """The unit a table header states, since table cells carry no per-column unit."""
        return self.table_unit or {"watt": "W", "celsius": "°C", "percentunit": "%"}.get(self.unit, self.unit)

    @property
    def display_factor(self) -> float:
        return 100.0 if self.unit == "percentunit" and self.table_factor == 1.0 else self.table_factor


QUANTITIES: dict[str, GpuQuantity] = {
    q.key: q
    for q in (
        GpuQuantity("power", "Power", "watt", "gpm_power_watts", "DCGM_FI_DEV_POWER_USAGE", 1,
                    "board power draw in watts"),
        GpuQuantity("memory_used", "Memory used", "bytes", "gpm_memory_used_bytes", "DCGM_FI_DEV_FB_USED", 1048576,
                    "framebuffer memory in use, bytes (DCGM reports MiB; converted)",
                    table_unit="GiB", table_factor=1 / 2**30),
        GpuQuantity("sm_active", "SM active", "percentunit", "gpm_sm_active_ratio", "DCGM_FI_PROF_SM_ACTIVE", 1,
                    "share of time an SM has at least one warp resident (GPM SM_ACTIVE), 0-1; "
                    "not nvidia-smi dmon's 'sm' column, not GPU busy, not MFU",
                    "DCGM_FI_PROF_SM_ACTIVE is commented out in dcgm-exporter's default CSV: absent unless added"),
        GpuQuantity("sm_occupancy", "SM occupancy", "percentunit", "gpm_sm_occupancy_ratio",
                    "DCGM_FI_PROF_SM_OCCUPANCY", 1, "resident warps / maximum warps per SM, 0-1",
                    "DCGM_FI_PROF_SM_OCCUPANCY is commented out in dcgm-exporter's default CSV: absent unless added"),
        GpuQuantity("tensor_active", "Tensor active", "percentunit", "gpm_tensor_active_ratio",
                    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1, "share of time the tensor pipe is active, 0-1"),
        GpuQuantity("dram_active", "DRAM active", "percentunit", "gpm_dram_active_ratio", "DCGM_FI_PROF_DRAM_ACTIVE", 1,
                    "share of time the device-memory interface is active, 0-1; not GB/s"),
        GpuQuantity("busy", "GPU busy", "percentunit", "gpm_gpu_busy_ratio", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1,
                    "share of time the graphics/compute engine is active (GPU busy), 0-1; not SM active"),
        GpuQuantity("temperature", "Temperature", "celsius", "gpm_temperature_celsius", "DCGM_FI_DEV_GPU_TEMP", 1,
                    "GPU die temperature, degrees Celsius"),
        GpuQuantity("sm_clock", "SM clock", "hertz", "gpm_sm_clock_hertz", "DCGM_FI_DEV_SM_CLOCK", 1e6,
                    "SM clock frequency (DCGM reports MHz; converted to Hz)",
                    table_unit="MHz", table_factor=1e-6),
    )
}


@dataclass(frozen=True)
class GpuSource:
    """The source a profile uses for per-GPU quantities: GPM when exported, else DCGM."""

    key: str  # "gpm" | "dcgm"
    name: str
    interval: str
    uuid_label: str

    def metric(self, quantity: GpuQuantity) -> str:
        return quantity.gpm_metric if self.key == "gpm" else quantity.dcgm_metric

    def caption(self) -> str:
        return f"{'GPM' if self.key == 'gpm' else 'DCGM'} {self.interval}"


def gpu_source(profile: Profile) -> GpuSource | None:
    """GPM when the profile exports it, else DCGM; None when neither is exported."""
    for key in ("gpm", "dcgm"):
        source = profile.source(key)
        if source.exported:
            label = profile.label("gpm_uuid" if key == "gpm" else "dcgm_uuid")
            name = "GPM sampler" if key == "gpm" else "DCGM exporter"
            return GpuSource(key, name, source.scrape_interval, label)
    return None


def gpu_series(profile: Profile, source: GpuSource, quantity: GpuQuantity) -> str:
    """The quantity's series for the selected nodes and GPUs, in the common unit."""
    expr = selector(source.metric(quantity), node_var(profile), gpu_var(profile))
    return expr if source.key == "gpm" else scale(expr, quantity.dcgm_scale)


def gpu_window(profile: Profile, source: GpuSource, quantity: GpuQuantity, func: str) -> str:
    """``func_over_time`` of the quantity over the dashboard window, one series per (node, gpu),
    in the unit its table header states (W, GiB, %, °C, MHz).

    The unit conversion is applied after the window function, so no subquery is needed, and
    exporter-specific labels (UUID, modelName, pci_bus_id...) are aggregated away by node and GPU.
    """
    raw = selector(source.metric(quantity), node_var(profile), gpu_var(profile))
    per_gpu = agg("max", [profile.label("node"), profile.label("gpu")], over_time(func, raw))
    factor = quantity.display_factor * (1 if source.key == "gpm" else quantity.dcgm_scale)
    return scale(per_gpu, factor)


def gpu_timeline(profile: Profile, source: GpuSource, quantity: GpuQuantity) -> str:
    """The quantity over time, exactly one series per (node, gpu), in the common (GPM) unit.

    Exporter-specific labels (UUID, modelName, pci_bus_id, pod...) are aggregated away with ``max``
    so a relabelled or restarted exporter never splits one GPU into two colours.
    """
    raw = selector(source.metric(quantity), node_var(profile), gpu_var(profile))
    per_gpu = agg("max", [profile.label("node"), profile.label("gpu")], raw)
    return per_gpu if source.key == "gpm" else scale(per_gpu, quantity.dcgm_scale)


def gpu_memory_used_share(profile: Profile, source: GpuSource) -> str:
    """Framebuffer used / total per GPU, 0-1. DCGM's default CSV has no FB_TOTAL, so its total is
    USED + FREE + RESERVED (all MiB, the unit cancels)."""
    labels = [profile.label("node"), profile.label("gpu")]

    def per_gpu(metric: str) -> str:
        return agg("max", labels, selector(metric, node_var(profile), gpu_var(profile)))

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


def gpu_clock_event_reasons(profile: Profile, source: GpuSource) -> str:
    """The clock-event (throttle) reason bitmask per GPU, as the source reports it."""
    raw = selector(CLOCK_EVENT_METRICS[source.key], node_var(profile), gpu_var(profile))
    return agg("max", [profile.label("node"), profile.label("gpu")], raw)


def gpm_valid_share(profile: Profile, window: str) -> str:
    """Share of GPM samples whose validity code was OK, per GPU, over ``window``."""
    raw = selector("gpm_sample_valid", node_var(profile), gpu_var(profile))
    return agg("max", [profile.label("node"), profile.label("gpu")], over_time("avg", raw, window))
