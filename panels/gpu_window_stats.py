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
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target
from panels.common import NO_DATA_TEXT, merge_table, source_status_panel
from queries.gpu import (
    QUANTITIES,
    GpuSource,
    gpm_window_valid_percent,
    gpu_source,
    gpu_window,
    gpu_window_samples,
)
from queries.promql import job

TITLE = "Per-GPU window statistics"
COLUMNS = ("power", "memory_used", "sm_active", "dram_active", "busy")
STATISTICS = {"mean": ("avg", "Window mean"), "peak": ("max", "Window peak")}


def column_title(source: GpuSource, quantity_key: str, statistic: str) -> str:
    """E.g. ``SM active (%) · GPM 1s · mean``: every column names quantity, unit and source (S18)."""
    quantity = QUANTITIES[quantity_key]
    return f"{quantity.label} ({quantity.header_unit}) · {source.title_caption()} · {statistic}"


def samples_title(source: GpuSource) -> str:
    return f"Samples in window · {source.title_caption()}"


def valid_title(source: GpuSource) -> str:
    return f"Valid samples (%) · {source.title_caption()}"


def _validity(source: GpuSource) -> str:
    if source.key == "gpm":
        return ("Samples whose gpm_sample_valid is not 1 are excluded from the mean and the peak (a subquery at the "
                f"{source.sample_interval} sample interval over the window; a gap in the data repeats the sample "
                "before it for up to the store's look-back, which weighs that sample more in the mean). "
                "'Samples in window' counts every stored sample, valid or not; 'Valid samples (%)' is the share "
                "of them that were valid")
    return ("DCGM has no per-sample validity: a blank field is simply absent. The mean is sum / count of the "
            "samples, and 'Samples in window' their count, both summed over the GPU's series, so a series split "
            "by Kubernetes pod labels (a pod moved) still gives one exact row; scraped faster than collected, "
            "repeated values count as samples")


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
        ref = chr(ord("A") + index)
        targets.append(Target(gpu_window(profile, source, quantity, func), instant=True, table=True, ref_id=ref))
        rename[f"Value #{ref}"] = column_title(source, key, statistic)
        if source.key == "dcgm" and quantity.dcgm_note:
            notes.append(quantity.dcgm_note)
    extra = [(gpu_window_samples(profile, source, source.metric(QUANTITIES["power"])), samples_title(source))]
    if source.key == "gpm":
        extra.append((gpm_window_valid_percent(profile, source), valid_title(source)))
    for offset, (expr, header) in enumerate(extra):
        ref = chr(ord("A") + len(COLUMNS) + offset)
        targets.append(Target(expr, instant=True, table=True, ref_id=ref))
        rename[f"Value #{ref}"] = header
    quantities = "; ".join(f"{QUANTITIES[k].label}: {QUANTITIES[k].describe(source, table=True)}" for k in COLUMNS)
    metrics = ", ".join(source.metric(QUANTITIES[k]) for k in COLUMNS)
    if source.key == "gpm":
        metrics += ", gpm_sample_valid"
    counted = (f"'{samples_title(source)}' counts the stored {source.metric(QUANTITIES['power'])} samples per GPU"
               + (f"; '{valid_title(source)}' is the share of gpm_sample_valid samples equal to 1, 0-100"
                  if source.key == "gpm" else ""))
    evidence = Evidence(
        source=f"{source.name} ({metrics}; {job(profile, source.key)})",
        quantity=f"{title.lower()} per GPU over the dashboard window, one row per GPU. {quantities}. {counted}",
        limit=f"{_validity(source)}. {_caveat(source)}" + (". " + "; ".join(notes) if notes else ""),
    )
    return PanelSpec(
        key=f"gpu_window_stats.{statistic}",
        title=f"{title} per GPU ({source.title_caption()})",
        kind="table",
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
        panels = (source_status_panel("gpu_window_stats.unavailable", profile, ["gpm", "dcgm"], TITLE),)
    else:
        panels = tuple(window_table(profile, source, statistic) for statistic in STATISTICS)
    return GroupSpec(key="gpu_window_stats", title=TITLE, panels=panels)
