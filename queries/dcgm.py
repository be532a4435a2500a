"""NVIDIA's dcgm-exporter: its metric per quantity, the units it reports (MiB, MHz) and their factors
to the common unit, what its default counters CSV leaves out (and so what panels and alerts must
say), the framebuffer total as ``FB_USED + FB_FREE + FB_RESERVED``, and its 30 s collect interval.

dcgm-exporter collects every 30 s by default (``-c 30000`` ms, metric catalogue §4) whatever the
scrape interval: a faster scrape only stores repeated values, so the source's real resolution is
the coarser of the collect and the stored sample interval. It has no per-sample validity series: a
field it could not read is simply absent.
"""

from __future__ import annotations

from typing import ClassVar

from queries.gpu_source import GpuSource, seconds_text

COLLECT_SECONDS = 30.0  # dcgm-exporter -c 30000 (ms), metric catalogue §4
METRICS: dict[str, str] = {
    "power": "DCGM_FI_DEV_POWER_USAGE",
    "memory_used": "DCGM_FI_DEV_FB_USED",
    "sm_active": "DCGM_FI_PROF_SM_ACTIVE",
    "sm_occupancy": "DCGM_FI_PROF_SM_OCCUPANCY",
    "tensor_active": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "dram_active": "DCGM_FI_PROF_DRAM_ACTIVE",
    "busy": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "temperature": "DCGM_FI_DEV_GPU_TEMP",
    "sm_clock": "DCGM_FI_DEV_SM_CLOCK",
    "clock_event_reasons": "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
}
CLOCK_EVENT_REASONS_FIELD = 112  # the DCGM field id of DCGM_FI_DEV_CLOCKS_EVENT_REASONS
# quantity key -> (unit DCGM reports, factor to the common unit): MiB -> bytes, MHz -> Hz
REPORTED_UNITS: dict[str, tuple[str, float]] = {"memory_used": ("MiB", 1048576), "sm_clock": ("MHz", 1e6)}
# The default CSV has no DCGM_FI_DEV_FB_TOTAL: the total is used + free + reserved (all MiB, the unit cancels).
MEMORY_TOTAL = ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED")
COMMENTED_OUT = "is commented out in dcgm-exporter's default CSV"
NOT_IN_DEFAULT = "is not in dcgm-exporter's default CSV"
ABSENT_UNLESS_ADDED = "absent unless added"
CAVEATS: dict[str, str] = {
    "sm_active": f"{METRICS['sm_active']} {COMMENTED_OUT}: {ABSENT_UNLESS_ADDED}",
    "sm_occupancy": f"{METRICS['sm_occupancy']} {COMMENTED_OUT}: {ABSENT_UNLESS_ADDED}",
    "clock_event_reasons": f"{METRICS['clock_event_reasons']} {NOT_IN_DEFAULT}: {ABSENT_UNLESS_ADDED}",
}
RULE_CAVEATS: dict[str, str] = {
    "clock_event_reasons": f"{METRICS['clock_event_reasons']} (field {CLOCK_EVENT_REASONS_FIELD}) {NOT_IN_DEFAULT}",
}


class DcgmSource(GpuSource):
    """dcgm-exporter: MiB and MHz converted to bytes and Hz, no validity series, 30 s collect interval."""

    key: ClassVar[str] = "dcgm"
    name: ClassVar[str] = "DCGM exporter"
    short: ClassVar[str] = "DCGM"
    uuid_label_key: ClassVar[str] = "dcgm_uuid"
    metrics: ClassVar[dict[str, str]] = METRICS
    memory_total_metrics: ClassVar[tuple[str, ...]] = MEMORY_TOTAL
    memory_share_formula: ClassVar[str] = f"{METRICS['memory_used']} / (FB_USED + FB_FREE + FB_RESERVED)"
    memory_total_caveat: ClassVar[str] = "FB_TOTAL is not in the default CSV"
    collect_seconds: ClassVar[float] = COLLECT_SECONDS
    reported_units: ClassVar[dict[str, tuple[str, float]]] = REPORTED_UNITS
    caveats: ClassVar[dict[str, str]] = CAVEATS
    rule_caveats: ClassVar[dict[str, str]] = RULE_CAVEATS

    def sampling(self) -> str:
        stored = "" if self.sample_interval == self.interval else f", stored every {self.sample_interval}"
        return (f"dcgm-exporter collects every {seconds_text(COLLECT_SECONDS)} by default "
                f"(-c {COLLECT_SECONDS * 1000:.0f}), whatever the scrape interval; scraped every {self.interval}"
                f"{stored}, so the resolution is {self.resolution} and faster scrapes only store repeated values. "
                "There is no GPM sampler here, so DCGM is the only per-GPU source")

    def window_validity(self) -> str:
        return "DCGM has no per-sample validity: a blank field is simply absent"
