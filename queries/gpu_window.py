"""Per-GPU window statistics (the per-GPU table, S28) read from recorded per-interval statistics.

Every column of the table is one statistic per (node, gpu) over the dashboard window. Computed from the raw
series on every refresh, each column read its quantity and, on GPM, the validity series of every GPU: 36 reads
of every GPU's series per refresh (36,864 series at 1,024 GPUs, over ``dashgen cost``'s 20,000 per panel).
Instead dashgen's recording rules (group ``dashgen-<profile>-gpu-window``) summarise each evaluation interval
(``INTERVAL_SECONDS``, the evaluator's default) per GPU, with exactly the filters the table applied (valid
samples only on GPM, split series counted once), and the table combines the intervals over ``$__range``:

- peak / low: the max / min of the per-interval peaks / lows: the peak of every sample the intervals hold;
- mean: the mean of the per-interval means: the window mean when the intervals hold as many samples each
  (a partly empty interval weighs as much as a full one);
- throttle and valid shares: the mean of the per-interval shares, the same way.

One read of one recorded series per GPU and column. The samples count stays on the raw series (a count
cannot be rebuilt from overlapping or missed evaluations) and carries the GPU's UUID, so the table needs no
separate read for it. ``window_records`` is the one definition of the recorded statistics: the rule files
write exactly those the table reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries.gpu import (
    CLOCK_EVENT_REASONS,
    HW_SLOWDOWN_BITS,
    POWER_BITS,
    QUANTITIES,
    THERMAL_BITS,
    GpuSource,
    gpu_clock_event_reasons,
    gpu_window,
)
from dashgen_queries.gpu_source import seconds_text
from dashgen_queries.nodata import RULE_INTERVAL_SECONDS
from dashgen_queries.promql import agg, divide, gpu_var, in_deployment, job, node_var, over_time, scale, selector

from dashgen.deployment.profile import Profile

INTERVAL_SECONDS = RULE_INTERVAL_SECONDS  # what one recorded sample summarises: one evaluation interval
RECORD_PREFIX = "node_gpu:dashgen_gpu_window_"
# The quantity columns (mean and peak side by side, S28) and the heat columns (S34): (quantity key, statistic
# title, *_over_time function), in table order.
QUANTITY_KEYS = ("power", "memory_used", "sm_active", "dram_active", "busy")
STATISTICS = {"mean": "avg", "peak": "max"}
HEAT_STATISTICS = (
    ("temperature", "mean", "avg"),
    ("temperature", "peak", "max"),
    ("sm_clock", "mean", "avg"),
    ("sm_clock", "low", "min"),
)
# The throttle shares: clock-event reason bits per column (DCGM's layout): heat; power, with HW slowdown (its own
# alert and matrix state, but two columns hold the table inside its panel).
THROTTLES = (("thermal", THERMAL_BITS), ("power", POWER_BITS + HW_SLOWDOWN_BITS))


@dataclass(frozen=True)
class WindowStatistic:
    """One column's recorded statistic: the series name, the rule expression over one interval (common unit or
    0-1), and how the table combines the intervals (``max``, ``min`` or ``avg`` over ``$__range``)."""

    record: str
    rule: str
    combine: str


def record_name(what: str, statistic: str) -> str:
    """``node_gpu:dashgen_gpu_window_power:max``."""
    return f"{RECORD_PREFIX}{what}:{statistic}"


def is_window_record(name: str) -> bool:
    return name.startswith(RECORD_PREFIX)


def statistics(source: GpuSource) -> list[tuple[str, str, str]]:
    """The (quantity key, statistic title, function) of every quantity column the source can fill, in table order."""
    found = [(key, title, func) for key in QUANTITY_KEYS for title, func in STATISTICS.items() if source.collects(key)]
    return found + [(key, title, func) for key, title, func in HEAT_STATISTICS if source.collects(key)]


def _step(source: GpuSource) -> str:
    return source.sample_interval or seconds_text(source.resolution_seconds)


def quantity_statistic(profile: Profile, source: GpuSource, key: str, func: str) -> WindowStatistic:
    """The quantity's per-interval ``func`` (avg / max / min) per GPU, in the common unit."""
    rule = gpu_window(profile, source, QUANTITIES[key], func, window=_interval(), step=_step(source), scoped=False)
    return WindowStatistic(record_name(key, func), rule, func)


def bit_runs(bits: tuple[int, ...]) -> list[tuple[int, int]]:
    """``bits`` (powers of two) as runs of adjacent bits, ``(lowest bit, run length)``: any bit of a run is set in
    x iff ``floor(x / lowest) % 2 ** length`` is not 0, so a run costs one read of the mask, not one per bit (0x4,
    0x8 and 0x80 are two reads, 0x20 and 0x40 one)."""
    runs: list[tuple[int, int]] = []
    for bit in sorted(bits):
        if runs and runs[-1][0] * 2 ** runs[-1][1] == bit:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((bit, 1))
    return runs


def throttle_statistic(profile: Profile, source: GpuSource, what: str, bits: tuple[int, ...]) -> WindowStatistic:
    """The share (0-1) of the interval's samples whose clock-event reason bitmask has any of ``bits`` set, sampled
    at the stored sample interval. PromQL has no bitwise operators: bit b of x is ``floor(x / b) % 2``."""
    reasons = gpu_clock_event_reasons(profile, source, scoped=False)
    flags = " + ".join(f"(floor({reasons} / {low}) % {2**width})" for low, width in bit_runs(bits))
    rule = f"avg_over_time((({flags}) > bool 0)[{_interval()}:{_step(source)}])"
    return WindowStatistic(record_name(f"{what}_throttle", "share"), rule, "avg")


def valid_statistic(profile: Profile, source: GpuSource) -> WindowStatistic:
    """The share (0-1) of the interval's validity samples equal to 1, summed over the GPU's series (a split series
    adds up); only for a source with a validity series."""
    if source.validity_metric is None:
        raise ValueError(f"the {source.name} has no per-sample validity series")
    labels = [profile.label("node"), profile.label("gpu")]
    raw = selector(source.validity_metric, job(profile, source.key))
    window = _interval()
    share = divide(
        agg("sum", labels, over_time("sum", raw, window)), agg("sum", labels, over_time("count", raw, window))
    )
    return WindowStatistic(record_name("valid", "share"), share, "avg")


def throttled(source: GpuSource) -> bool:
    return source.collects(CLOCK_EVENT_REASONS)


def window_records(profile: Profile, source: GpuSource) -> list[WindowStatistic]:
    """Every recorded statistic the per-GPU table of ``source`` reads: the one definition of the rules."""
    found = [quantity_statistic(profile, source, key, func) for key, _, func in statistics(source)]
    if throttled(source):
        found += [throttle_statistic(profile, source, what, bits) for what, bits in THROTTLES]
    if source.validity_metric is not None:
        found.append(valid_statistic(profile, source))
    return found


def over_window(profile: Profile, statistic: WindowStatistic, factor: float = 1.0) -> str:
    """The table's column: the recorded intervals of the selected GPUs combined over ``$__range``, times
    ``factor`` (the unit the header states)."""
    recorded = in_deployment(profile, statistic.record, node_var(profile), gpu_var(profile))
    labels = [profile.label("node"), profile.label("gpu")]
    return scale(agg("max", labels, over_time(statistic.combine, recorded, "$__range")), factor)


def samples_with_uuid(profile: Profile, source: GpuSource) -> str:
    """Raw samples the window holds per (node, gpu, UUID), summed over the GPU's series (a series split by pod or
    driver labels adds up instead of undercounting): the samples column, which also brings each row its UUID."""
    keys = [profile.label("node"), profile.label("gpu"), source.uuid_label]
    raw = selector(source.presence_metric(), job(profile, source.key), node_var(profile), gpu_var(profile))
    return agg("sum", keys, over_time("count", raw, "$__range"))


def _interval() -> str:
    return seconds_text(INTERVAL_SECONDS)
