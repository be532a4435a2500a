"""Per-GPU window statistics: two tables, one row per GPU, of the mean and the peak over the
dashboard window of power, memory used, SM active, DRAM active and busy (S18, S19), with the
samples the window holds per GPU and, with GPM, the share of them that were valid.

For hot and outlier GPUs: sortable, paginated, each column naming its source, quantity and unit.
Cells carry no per-column unit (Grafana's schema admits no scalar field overrides), so each query
returns the value in the unit its header states.
"""

from __future__ import annotations

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, merge_table, ref, source_status_panel, table
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target
from queries.gpu import (
    GPU_SOURCE_KEYS,
    QUANTITIES,
    GpuSource,
    gpu_source,
    gpu_window,
    gpu_window_samples,
    gpu_window_valid_percent,
)
from queries.promql import job

TITLE = "Per-GPU window statistics"
COLUMNS = ("power", "memory_used", "sm_active", "dram_active", "busy")
# statistic -> (PromQL *_over_time function, panel title before the source caption)
STATISTICS = {"mean": ("avg", "Window mean per GPU"), "peak": ("max", "Window peak per GPU")}
SAMPLES_HEADER = "Samples in window"
VALID_HEADER = "Valid samples (%)"


def column_title(source: GpuSource, quantity_key: str, statistic: str) -> str:
    """E.g. ``SM active (%) · GPM 1s · mean``: every column names quantity, unit and source (S18)."""
    quantity = QUANTITIES[quantity_key]
    return f"{quantity.label} ({quantity.header_unit}) · {source.title_caption()} · {statistic}"


def samples_title(source: GpuSource) -> str:
    return f"{SAMPLES_HEADER} · {source.title_caption()}"


def valid_title(source: GpuSource) -> str:
    return f"{VALID_HEADER} · {source.title_caption()}"


def _validity(source: GpuSource) -> str:
    """How the source's validity enters the table (its sentence), then what the columns count: with a
    validity series the filtered statistics and the valid share, without it the exact sum / count."""
    if source.validity_metric is not None:
        return (f"{source.window_validity()}. '{SAMPLES_HEADER}' counts every stored sample, valid or not; "
                f"'{VALID_HEADER}' is the share of them that were valid")
    return (f"{source.window_validity()}. The mean is sum / count of the samples, and '{SAMPLES_HEADER}' their "
            "count, both summed over the GPU's series, so a series split by Kubernetes pod labels (a pod moved) "
            "still gives one exact row; scraped faster than collected, repeated values count as samples")


def _caveat(source: GpuSource) -> str:
    return (
        f"{source.sampling()}. Mean and peak over [$__range] see only these samples; the values depend on the "
        "window and miss spikes shorter than the sampling interval (S19). The central store can hold "
        "duplicated or sparse samples and lag (S20): use these tables to locate hot or outlier GPUs, not for "
        "formal numbers"
    )


def window_table(profile: Profile, source: GpuSource, statistic: str) -> PanelSpec:
    func, title = STATISTICS[statistic]
    node, gpu = profile.label("node"), profile.label("gpu")
    targets = []
    rename = {node: "Node", gpu: "GPU"}
    notes = []
    for index, key in enumerate(COLUMNS):
        quantity = QUANTITIES[key]
        ref_id = ref(index)
        targets.append(Target(gpu_window(profile, source, quantity, func), instant=True, table=True, ref_id=ref_id))
        rename[f"Value #{ref_id}"] = column_title(source, key, statistic)
        if caveat := source.caveat(key):
            notes.append(caveat)
    extra = [(gpu_window_samples(profile, source, source.metric("power")), samples_title(source))]
    if source.validity_metric is not None:
        extra.append((gpu_window_valid_percent(profile, source), valid_title(source)))
    for offset, (expr, header) in enumerate(extra):
        ref_id = ref(len(COLUMNS) + offset)
        targets.append(Target(expr, instant=True, table=True, ref_id=ref_id))
        rename[f"Value #{ref_id}"] = header
    quantities = "; ".join(f"{QUANTITIES[k].label}: {QUANTITIES[k].describe(source, table=True)}" for k in COLUMNS)
    metrics = ", ".join(source.metric(k) for k in COLUMNS)
    counted = f"'{samples_title(source)}' counts the stored {source.metric('power')} samples per GPU"
    if source.validity_metric is not None:
        metrics += f", {source.validity_metric}"
        counted += f"; '{valid_title(source)}' is the share of {source.validity_metric} samples equal to 1, 0-100"
    evidence = Evidence(
        source=f"{source.name} ({metrics}; {job(profile, source.key)})",
        quantity=f"{title[0].lower()}{title[1:]} over the dashboard window, one row per GPU. {quantities}. {counted}",
        limit=f"{_validity(source)}. {_caveat(source)}" + (". " + "; ".join(notes) if notes else ""),
    )
    return table(
        key=f"gpu_window_stats.{statistic}",
        title=f"{title} ({source.title_caption()})",
        evidence=evidence,
        targets=tuple(targets),
        unit="none",
        decimals=1,
        width=24,
        height=14,
        no_value=NO_DATA_TEXT,
        transformations=merge_table(rename, exclude=["Time"]),
        options={"sortBy": [{"displayName": column_title(source, "power", statistic), "desc": True}]},
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    source = gpu_source(profile)
    if source is None:
        panels = (source_status_panel("gpu_window_stats.unavailable", profile, list(GPU_SOURCE_KEYS),
                                      "Per-GPU window statistics: not available"),)
    else:
        panels = tuple(window_table(profile, source, statistic) for statistic in STATISTICS)
    return GroupSpec(key="gpu_window_stats", title=TITLE, panels=panels)
