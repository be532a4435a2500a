"""The GPM sampler (in-house, one sample per GPU per second): its metric per quantity, its
per-sample validity series ``gpm_sample_valid`` and the two forms of the filter on it, and the
sentences that describe its sampling and validity.

GPM reports every quantity in the common unit (bytes, Hz, W, °C, 0-1 ratios), so nothing is
converted. A sample whose ``gpm_sample_valid`` is not 1 carries a value that must not be used
(insufficient samples in the GPM window, a counter that could not be read).
"""

from __future__ import annotations

from typing import ClassVar

from dashgen_queries.gpu_source import GpuSource
from dashgen_queries.promql import agg, selector

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import GPM

VALIDITY_METRIC = GPM.name("gpm_sample_valid")
METRICS: dict[str, str] = {
    "power": GPM.name("gpm_power_watts"),
    "memory_used": GPM.name("gpm_memory_used_bytes"),
    "sm_active": GPM.name("gpm_sm_active_ratio"),
    "sm_occupancy": GPM.name("gpm_sm_occupancy_ratio"),
    "tensor_active": GPM.name("gpm_tensor_active_ratio"),
    "dram_active": GPM.name("gpm_dram_active_ratio"),
    "busy": GPM.name("gpm_gpu_busy_ratio"),
    "temperature": GPM.name("gpm_temperature_celsius"),
    "sm_clock": GPM.name("gpm_sm_clock_hertz"),
    "clock_event_reasons": GPM.name("gpm_clock_event_reasons"),  # the bitmask as DCGM's
}
MEMORY_TOTAL = GPM.name("gpm_memory_total_bytes")


def _keys(profile: Profile) -> tuple[str, str]:
    return profile.label("node"), profile.label("gpu")


def valid_gpm(profile: Profile, expr: str, matchers: list[str]) -> str:
    """A per-(node, gpu) GPM ``expr`` kept only where the sampler marked the GPU's sample valid
    (``gpm_sample_valid`` of the same ``matchers``, one series per GPU first)."""
    keys = _keys(profile)
    validity = agg("max", keys, selector(VALIDITY_METRIC, *matchers))
    return f"({expr}) and on ({', '.join(keys)}) ({validity} == 1)"


def valid_raw_samples(profile: Profile, raw: str, matchers: list[str]) -> str:
    """Raw GPM samples (exporter labels still on, before any aggregation: inside a window subquery)
    kept only where the GPU's sample at that instant was valid."""
    return f"{raw} and on({', '.join(_keys(profile))}) {selector(VALIDITY_METRIC, *matchers)} == 1"


class GpmSource(GpuSource):
    """The GPM sampler: every quantity in the common unit, with a per-sample validity series."""

    key: ClassVar[str] = "gpm"
    name: ClassVar[str] = "GPM sampler"
    short: ClassVar[str] = "GPM"
    uuid_label_key: ClassVar[str] = "gpm_uuid"
    metrics: ClassVar[dict[str, str]] = METRICS
    memory_total_metrics: ClassVar[tuple[str, ...]] = (MEMORY_TOTAL,)
    memory_share_formula: ClassVar[str] = f"{METRICS['memory_used']} / {MEMORY_TOTAL}"
    validity_metric: ClassVar[str | None] = VALIDITY_METRIC

    def sampling(self) -> str:
        stored = "" if self.sample_interval == self.interval else f", stored one per {self.sample_interval}"
        return (
            f"The GPM sampler takes one sample per GPU every {self.interval}{stored}; its node-side "
            "1 s sample rings hold the formal numbers"
        )

    def window_validity(self) -> str:
        return (
            f"Samples whose {VALIDITY_METRIC} is not 1 are excluded from the mean and the peak (dashgen's "
            "recording rules take the valid samples of each rule interval per GPU, every stored sample at the "
            f"stored interval of {self.sample_interval}; the peak is the highest valid sample of the window, the mean "
            "the mean of the intervals' means, so an interval holding fewer valid samples weighs as much as a full "
            "one; a gap in the data repeats the sample before it for up to the store's look-back)"
        )

    def valid_only(self, profile: Profile, expr: str, matchers: list[str]) -> str:
        return valid_gpm(profile, expr, matchers)

    def valid_samples(self, profile: Profile, raw: str, matchers: list[str]) -> str:
        return valid_raw_samples(profile, raw, matchers)
