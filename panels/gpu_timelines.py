"""Per-GPU timelines: one quantity per panel over time, one series and one colour per GPU
(legend ``{{node}} GPU {{gpu}}``), from the GPM 1 s sampler when exported, else DCGM (S18).

Memory used, memory share, GPU busy, SM active, SM occupancy, tensor active, DRAM active,
power against the TDP, temperature, SM clock and clock-event (throttle) reasons; with GPM, the
share of valid samples. Every title names its quantity and source (with the source's real
resolution: DCGM's is its collect interval, not the scrape interval).

Clock-event reasons are a bitmask, and real throttling sets several bits at once (12 =
sw_power_cap + hw_slowdown), so the state timeline draws one row per GPU and power/thermal bit,
each 0 (clear, green) or the bit's value (set, named and coloured); the benign bits are not drawn.

A quantity whose metric the exporter does not collect (DCGM's default CSV has no SM active, SM
occupancy or clock-event reasons) is a "<title>: not collected" text naming the field and how to
collect it, never an empty chart (S22).

The group's row is collapsed by default: at 64-200 GPUs it holds ~1,000-2,400 series (power of the
whole fleet at 1 s), and a collapsed row runs no query until opened. The reading order puts it
last: the window-statistics tables find the hot or outlier GPUs first, then ``$node``/``$gpu``
narrow these timelines to them.
"""

from __future__ import annotations

from dashgen_queries.gpu import (
    CLOCK_EVENT_BITS,
    CLOCK_EVENT_REASONS,
    GPU_SOURCE_KEYS,
    MEMORY_FULL_SHARE,
    QUANTITIES,
    REASON_LABEL,
    TEMPERATURE_HIGH_CELSIUS,
    THROTTLE_BITS,
    GpuSource,
    gpu_clock_event_bit,
    gpu_memory_used_share,
    gpu_memory_used_share_formula,
    gpu_source,
    gpu_timeline,
    gpu_valid_share,
)
from dashgen_queries.promql import RATE_WINDOW, job

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import ratio_axis, ref, source_status_panel, state_timeline, text, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Per-GPU timelines"
WORKLOADS = (TEXT, VIDEO)  # S25: the workload kinds this group serves (dashgen.dashboard)
GROUP = "gpu_timelines"
LEGEND = "{{node}} GPU {{gpu}}"
REASON_LEGEND = LEGEND + " {{" + REASON_LABEL + "}}"
# Power-capped by software is a policy limit (orange); hardware slowdown, thermal and power-brake
# reasons are the GPU protecting itself (red).
REASON_COLOURS = {0x4: "orange", 0x8: "red", 0x20: "red", 0x40: "red", 0x80: "red"}
# quantity key -> panel title before the source caption, in reading order
TIMELINE_QUANTITIES = {
    "memory_used": "Memory used per GPU",
    "busy": "GPU busy per GPU",
    "sm_active": "SM active per GPU",
    "sm_occupancy": "SM occupancy per GPU",
    "tensor_active": "Tensor active per GPU",
    "dram_active": "DRAM active per GPU",
    "power": "Power per GPU",
    "temperature": "Temperature per GPU",
    "sm_clock": "SM clock per GPU",
}
# quantity key (or the clock-event reasons) -> the title of its text where the exporter does not collect it
NOT_COLLECTED = {
    "memory_used": "Memory used per GPU: not collected",
    "busy": "GPU busy per GPU: not collected",
    "sm_active": "SM active per GPU: not collected",
    "sm_occupancy": "SM occupancy per GPU: not collected",
    "tensor_active": "Tensor active per GPU: not collected",
    "dram_active": "DRAM active per GPU: not collected",
    "power": "Power per GPU: not collected",
    "temperature": "Temperature per GPU: not collected",
    "sm_clock": "SM clock per GPU: not collected",
    "memory_used_share": "Memory used share per GPU: not collected",
    CLOCK_EVENT_REASONS: "Clock-event (throttle) reasons per GPU: not collected",
}


def _limit(source: GpuSource) -> str:
    sampling = (
        f"{source.sampling()}; a graph point is the sample nearest the step, so at wide time ranges short "
        "spikes fall between points (S19)"
    )
    validity = (
        f"; these timelines do not drop samples whose {source.validity_metric} is 0 (see the valid-samples panel)"
        if source.validity_metric is not None
        else ""
    )
    return (
        f"{sampling}{validity}. The central store can hold duplicated or sparse samples and lag (S20): for "
        "locating problems, not for formal measurement. Narrow $node / $gpu to the GPUs the window tables flag"
    )


def _job(profile: Profile, source: GpuSource) -> str:
    return job(profile, source.key)


def not_collected_panel(profile: Profile, source: GpuSource, key: str, missing: list[str], width: int = 8) -> PanelSpec:
    """The text shown instead of a timeline whose metrics (``missing``) the exporter does not collect."""
    title = NOT_COLLECTED[key]
    what = title.removesuffix(": not collected")
    content = (
        f"**{what}** ({source.name}) is not shown for this deployment ({profile.name}): "
        f"{source.not_collected(profile, missing)}.\n\nAn empty chart here would read as an idle GPU; the "
        "metric is not collected, which says nothing about the GPUs."
    )
    return text(f"{GROUP}.{key}_not_collected", title, content, width=width, height=8)


def quantity_panel(profile: Profile, source: GpuSource, key: str) -> PanelSpec:
    if not source.collects(key):
        return not_collected_panel(profile, source, key, [source.metric(key)])
    quantity = QUANTITIES[key]
    metric = source.metric(key)
    limit = _limit(source)
    extra: dict = {}
    if quantity.unit == "percentunit":
        extra.update(ratio_axis("percentunit"))
    else:
        extra["unit"] = quantity.unit
    thresholds = None
    if key == "power" and profile.capacity.gpu_tdp_watts:
        thresholds = profile.capacity.gpu_tdp_watts
        limit += f". Red line: the profile's TDP {thresholds:g} W per GPU (a reference, not the axis maximum)"
    if key == "temperature":
        thresholds = TEMPERATURE_HIGH_CELSIUS
        limit += f". Red line: {TEMPERATURE_HIGH_CELSIUS:g} °C, the warning alert threshold"
    if thresholds is not None:
        extra["thresholds"] = (("green", None), ("red", thresholds))
        extra["threshold_style"] = "line"
    return timeseries(
        key=f"{GROUP}.{key}",
        title=f"{TIMELINE_QUANTITIES[key]} ({source.title_caption()})",
        evidence=Evidence(
            f"{source.name} ({metric}; {_job(profile, source)})",
            f"{quantity.label}: {quantity.describe(source)}; one series per GPU",
            limit,
        ),
        targets=(Target(gpu_timeline(profile, source, quantity), LEGEND),),
        width=8,
        **extra,
    )


def memory_share_panel(profile: Profile, source: GpuSource) -> PanelSpec:
    if missing := source.missing((source.metric("memory_used"), *source.memory_total_metrics)):
        return not_collected_panel(profile, source, "memory_used_share", sorted(set(missing)))
    metrics = gpu_memory_used_share_formula(source, caveat=True)
    return timeseries(
        key=f"{GROUP}.memory_used_share",
        title=f"Memory used share per GPU ({source.title_caption()})",
        evidence=Evidence(
            f"{source.name} ({metrics}; {_job(profile, source)})",
            "framebuffer used / total per GPU, 0-100 % fixed axis; red line at "
            f"{MEMORY_FULL_SHARE:.0%}, the critical alert threshold",
            "The engine reserves its KV pool at start-up, so a steady high share is by design. " + _limit(source),
        ),
        targets=(Target(gpu_memory_used_share(profile, source), LEGEND),),
        width=8,
        thresholds=(("green", None), ("red", MEMORY_FULL_SHARE)),
        threshold_style="line",
        **ratio_axis("percentunit"),
    )


def clock_events_panel(profile: Profile, source: GpuSource) -> PanelSpec:
    if not source.collects(CLOCK_EVENT_REASONS):
        return not_collected_panel(profile, source, CLOCK_EVENT_REASONS, [source.metric(CLOCK_EVENT_REASONS)], width=24)
    names = dict(CLOCK_EVENT_BITS)
    throttle = ", ".join(f"0x{bit:x} {names[bit]}" for bit in THROTTLE_BITS)
    benign = ", ".join(f"0x{bit:x} {name}" for bit, name in CLOCK_EVENT_BITS if bit not in THROTTLE_BITS)
    metric = source.metric(CLOCK_EVENT_REASONS)
    mappings = (
        {
            "type": "value",
            "options": {
                "0": {"text": "ok", "color": "green", "index": 0},
                **{
                    str(bit): {"text": names[bit], "color": REASON_COLOURS[bit], "index": i + 1}
                    for i, bit in enumerate(THROTTLE_BITS)
                },
            },
        },
    )
    rows = len(THROTTLE_BITS)
    return state_timeline(
        key=f"{GROUP}.clock_event_reasons",
        title=f"Clock-event (throttle) reasons per GPU: power and thermal ({source.title_caption()})",
        evidence=Evidence(
            f"{source.name} ({metric}, bitmask as DCGM's; {_job(profile, source)})",
            f"one row per GPU and power/thermal reason ({throttle}): ok (green) while the bit is "
            "clear, the reason's name while it is set (sw_power_cap orange, the hardware and "
            "thermal reasons red); a combination (e.g. 12 = sw_power_cap + hw_slowdown) sets "
            "several rows at once. Bit b of the mask is floor(mask / 2^b) % 2, labelled reason",
            f"The benign bits ({benign}) are not drawn: idle, an application-clock setting, "
            "sync boost and display clocks do not mean throttling. A gap is a missing sample, not "
            f"'ok'. {rows} rows per GPU: narrow $node / $gpu at large GPU counts. " + _limit(source),
        ),
        targets=tuple(
            Target(gpu_clock_event_bit(profile, source, bit), REASON_LEGEND, ref_id=ref(i))
            for i, bit in enumerate(THROTTLE_BITS)
        ),
        unit="none",
        width=24,
        height=12,
        mappings=mappings,
    )


def validity_panel(profile: Profile, source: GpuSource) -> PanelSpec | None:
    if source.validity_metric is None:
        return None
    return timeseries(
        key=f"{GROUP}.gpm_valid_share",
        title=f"Valid samples share per GPU ({source.title_caption()})",
        evidence=Evidence(
            f"{source.name} ({source.validity_metric}; {_job(profile, source)})",
            f"share of {source.short} samples whose validity code was OK, averaged over "
            "$__rate_interval, per GPU, 0-100 % fixed axis",
            f"below 100 % the {source.short} quantities of that GPU rest on fewer samples than the "
            "interval implies "
            "(S6 'insufficient samples'); no value means the sampler sent nothing. Averaged per "
            "step, so a short spike of invalid samples can be smoothed away or missed between steps "
            "(S19); the central store may hold duplicated or sparse samples (S20): use it to "
            "locate a bad sampler, not as a formal count",
        ),
        targets=(Target(gpu_valid_share(profile, source, RATE_WINDOW), LEGEND),),
        width=8,
        **ratio_axis("percentunit"),
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    source = gpu_source(profile)
    if source is None:
        panels: tuple[PanelSpec, ...] = (
            source_status_panel(
                f"{GROUP}.unavailable", profile, list(GPU_SOURCE_KEYS), "Per-GPU timelines: not available"
            ),
        )
    else:
        found = [quantity_panel(profile, source, key) for key in TIMELINE_QUANTITIES]
        found.insert(1, memory_share_panel(profile, source))
        validity = validity_panel(profile, source)
        if validity:
            found.append(validity)
        found.append(clock_events_panel(profile, source))
        panels = tuple(found)
    return GroupSpec(key=GROUP, title=TITLE, panels=panels, collapsed=True)
