"""Per-GPU window statistics: two tables, one row per GPU, of the mean and the peak over the
dashboard window of power, memory used, SM active, DRAM active and busy (S18, S19).

For hot and outlier GPUs: sortable, paginated, each column naming its source, quantity and unit.
Cells carry no per-column unit (Grafana's schema admits no scalar field overrides), so each query
returns the value in the unit its header states.
"""

from __future__ import annotations

from dashgen.profile import Profile
from dashgen.spec import Evidence, GroupSpec, PanelSpec, Target
from dashgen.topology import Topology
from panels.common import NO_DATA_TEXT, merge_table, source_status_panel
from queries.gpu import QUANTITIES, GpuSource, gpu_source, gpu_window

TITLE = "Per-GPU window statistics"
COLUMNS = ("power", "memory_used", "sm_active", "dram_active", "busy")
STATISTICS = {"mean": ("avg", "Window mean"), "peak": ("max", "Window peak")}


def column_title(source: GpuSource, quantity_key: str, statistic: str) -> str:
    """E.g. ``SM active (%) · GPM 1s · mean``: every column names quantity, unit and source (S18)."""
    quantity = QUANTITIES[quantity_key]
    return f"{quantity.label} ({quantity.header_unit}) · {source.caption()} · {statistic}"


def _caveat(source: GpuSource) -> str:
    return (
        f"avg_over_time / max_over_time over [$__range] see one sample per {source.interval} scrape; "
        "the values depend on the window and the step and can miss spikes shorter than the sampling interval "
        "(S19). The central store can hold duplicated or sparse samples and lag (S20): use these tables to "
        "locate hot or outlier GPUs; formal numbers come from the node-side 1 s sample rings"
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
    samples_ref = chr(ord("A") + len(COLUMNS))
    power_metric = source.metric(QUANTITIES["power"])
    targets.append(
        Target(
            f'max by ({node}, {gpu}) (count_over_time({power_metric}{{{node}=~"$node", {gpu}=~"$gpu"}}[$__range]))',
            instant=True,
            table=True,
            ref_id=samples_ref,
        )
    )
    samples_column = f"Samples in window · {source.caption()}"
    rename[f"Value #{samples_ref}"] = samples_column
    quantities = "; ".join(f"{QUANTITIES[k].label}: {QUANTITIES[k].meaning}" for k in COLUMNS)
    metrics = ", ".join(source.metric(QUANTITIES[k]) for k in COLUMNS)
    evidence = Evidence(
        source=f"{source.name}, {source.caption()} sampling ({metrics})",
        quantity=f"{title.lower()} per GPU over the dashboard window, one row per GPU. {quantities}. "
        "The last column counts the samples the window holds for that GPU",
        limit=_caveat(source) + (". " + "; ".join(notes) if notes else ""),
    )
    return PanelSpec(
        key=f"gpu_window_stats.{statistic}",
        title=f"{title} per GPU ({source.caption()})",
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
