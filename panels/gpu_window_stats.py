"""Per-GPU window statistics: one table, one row per GPU (S28), with the mean and the peak over the
dashboard window of power, memory used, SM active, DRAM active and busy side by side (S18, S19), the
GPU's UUID and where it sits (pool / replica / PP stage), with the
samples the window holds per GPU and, with GPM, the share of them that were valid; beside them the
GPUs reporting at the window end against the profile's GPU count (S22), so a GPU that fell off is
never just a silently shorter table.

Beside them, so the hot GPU of a thermal event is found in the same table (S34): temperature (mean, peak),
SM clock (mean, low), the share of the window the clock was held down by heat or by power (the clock-event
reason bits, ``THROTTLE_COLUMNS``) and the last Xid code (DCGM).

A quantity the exporter does not collect (DCGM's field list) has no column; the description says
which and how to collect it.

For hot and outlier GPUs: sortable, paginated, each column naming its source, quantity and unit.

The statistics are read from dashgen's recorded per-interval statistics (``queries.gpu_window``: one read of
one recorded series per GPU and column, where the raw series cost two: 36,864 series at 1,024 GPUs before,
over ``dashgen cost``'s 20,000 per panel); the samples count stays on the raw series and brings each row its
UUID. The group's row is collapsed by default: a collapsed row runs no query until it is opened; lost GPUs
stay visible on open in the Missing-data reasons table ("GPU missing (k of N)") and the GpuMissing alert.
Cells carry no per-column unit (Grafana's schema admits no scalar field overrides), so each query
returns the value in the unit its header states.
"""

from __future__ import annotations

from dashgen_queries import dcgm
from dashgen_queries.gpu import (
    CLOCK_EVENT_REASONS,
    GPU_SOURCE_KEYS,
    QUANTITIES,
    THROTTLE_MEANINGS,
    GpuSource,
    gpu_source,
    gpus_reporting,
    seen_window,
)
from dashgen_queries.gpu_window import (
    HEAT_STATISTICS,
    INTERVAL_SECONDS,
    QUANTITY_KEYS,
    RECORD_PREFIX,
    THROTTLES,
    over_window,
    quantity_statistic,
    samples_with_uuid,
    throttle_statistic,
    throttled,
    valid_statistic,
)
from dashgen_queries.promql import agg, job, over_time

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, Column, Sort, source_status_panel, stat, table
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Per-GPU window statistics"
WORKLOADS = (TEXT, VIDEO)  # S25: the workload kinds this group serves (dashgen.dashboard)
COLUMNS = QUANTITY_KEYS
# statistic -> (PromQL *_over_time function, what the column shows)
STATISTICS = {"mean": ("avg", "window mean"), "peak": ("max", "window peak")}
HEAT_COLUMNS = HEAT_STATISTICS  # the thermal / clock columns (S34): (quantity key, statistic title, function)
# Clock-event reason bits per throttle column (queries.gpu_window.THROTTLES): heat; power, with HW slowdown.
THROTTLE_HEADERS = {"thermal": "Thermal throttle (% of window)", "power": "Power throttle (% of window)"}
THROTTLE_COLUMNS = tuple((THROTTLE_HEADERS[what], bits) for what, bits in THROTTLES)
XID_HEADER = "Last Xid (DCGM)"
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
        return (
            f"{source.window_validity()}. '{SAMPLES_HEADER}' counts every stored sample, valid or not; "
            f"'{VALID_HEADER}' is the share of them that were valid (the mean of the rule intervals' shares)"
        )
    return (
        f"{source.window_validity()}. The mean is sum / count of the samples in each rule interval (the window's "
        f"mean is the mean of the intervals'), and '{SAMPLES_HEADER}' their count, both summed over the GPU's "
        "series, so a series split by Kubernetes pod labels (a pod moved) still gives one row; scraped faster "
        "than collected, repeated values count as samples"
    )


HOW_TO_COLLECT = " To collect "  # where an uncollected column's sentence turns to how to collect it


def _caveat(source: GpuSource) -> str:
    return (
        f"{source.sampling()}. Mean and peak over [$__range] see only these samples; the values depend on the "
        "window and miss spikes shorter than the sampling interval (S19). The central store can hold "
        "duplicated or sparse samples and lag (S20): use these tables to locate hot or outlier GPUs, not for "
        "formal numbers"
    )


def columns(source: GpuSource) -> list[str]:
    """The quantity columns the source can fill: those whose metric the exporter collects."""
    return [key for key in COLUMNS if source.collects(key)]


def placement(profile: Profile, topology: Topology) -> dict[str, str]:
    """Node -> where it sits in the deployment: pool (several pools), replica and PP stage(s)."""
    found = {}
    for role in topology.nodes:
        parts = [role.pool] if profile.has_pools else []
        parts.append("replica " + ", ".join(str(r) for r in role.replicas))
        if profile.has_pp:
            parts.append("PP " + ", ".join(str(s) for s in role.pp_ranks))
        found[role.name] = " · ".join(parts)
    return found


def window_table(profile: Profile, topology: Topology, source: GpuSource) -> PanelSpec:
    """One row per GPU: the mean and the peak of each quantity side by side (S28), the GPU's UUID, and its
    node shown with its pool / replica / PP stage."""
    node, gpu, uuid = profile.label("node"), profile.label("gpu"), source.uuid_label
    cells: list[Column] = []
    # the verdict first, after the GPU's name: with two statistics per quantity the table is wider than its panel
    # at 1920 px, and what lies past the edge is not seen on open (S37)
    xid = profile.exported("dcgm") and dcgm.collects(profile, dcgm.XID)
    if xid:
        cells.append(Column(XID_HEADER, last_xid(profile)))
    shown = columns(source)
    dropped = [key for key in COLUMNS if key not in shown]
    notes = []
    if dropped:
        labels = ", ".join(QUANTITIES[key].label for key in dropped)
        notes.append(f"No {labels} column: {source.not_collected(profile, [source.metric(k) for k in dropped])}")
    for key in shown:
        factor = QUANTITIES[key].display_factor
        for statistic, (func, _title) in STATISTICS.items():
            recorded = quantity_statistic(profile, source, key, func)
            cells.append(Column(column_title(source, key, statistic), over_window(profile, recorded, factor)))
    heat = [(key, statistic, func) for key, statistic, func in HEAT_COLUMNS if source.collects(key)]
    for key, statistic, func in heat:
        recorded = quantity_statistic(profile, source, key, func)
        factor = QUANTITIES[key].display_factor
        cells.append(Column(column_title(source, key, statistic), over_window(profile, recorded, factor)))
    throttles = throttled(source)
    if throttles:
        for what, bits in THROTTLES:
            header = f"{THROTTLE_HEADERS[what]} · {source.title_caption()}"
            cells.append(Column(header, over_window(profile, throttle_statistic(profile, source, what, bits), 100)))
    presence = source.presence_metric()
    # the raw count, keyed by UUID too: it brings the uuid label into each row (no read of its own)
    cells.append(Column(samples_title(source), samples_with_uuid(profile, source)))
    if source.validity_metric is not None:
        cells.append(Column(valid_title(source), over_window(profile, valid_statistic(profile, source), 100)))
    described = [*shown, *dict.fromkeys(key for key, _, _ in heat)]
    quantities = "; ".join(f"{QUANTITIES[k].label}: {QUANTITIES[k].describe(source, table=True)}" for k in described)
    throttle_notes = ""
    if throttled(source):
        throttle_notes = "; ".join(
            f"{header}: the share of the window's samples with a clock-event reason bit of "
            + " / ".join(THROTTLE_MEANINGS[bit] for bit in bits)
            + f" set ({source.metric(CLOCK_EVENT_REASONS)})"
            for header, bits in THROTTLE_COLUMNS
        )
        quantities += "; " + ", ".join(header for header, _ in THROTTLE_COLUMNS) + ": see the notes"
    if xid:
        quantities += f"; {xid_text()}"
    if not heat or not throttles or not xid:
        notes.append(
            "Not shown: "
            + ", ".join(
                what
                for what, shown_ in (
                    ("temperature / SM clock", bool(heat)),
                    ("throttle reasons", throttles),
                    ("last Xid (DCGM not exported or not collecting it)", xid),
                )
                if not shown_
            )
        )
    metrics = ", ".join(source.metric(k) for k in shown)
    counted = (
        f"'{samples_title(source)}' counts the stored {presence} samples per GPU and UUID (a GPU replaced within "
        "the window has a row per UUID)"
    )
    if source.validity_metric is not None:
        metrics += f", {source.validity_metric}"
        counted += f"; '{valid_title(source)}' is the share of {source.validity_metric} samples equal to 1, 0-100"
    from_rules = (
        f"The statistics are dashgen's recording rules {RECORD_PREFIX}* (rules/<profile>.yml, group gpu-window: "
        f"each GPU's mean, peak, low and shares per {INTERVAL_SECONDS:g} s rule interval), combined over the window"
    )
    where = placement(profile, topology)
    # which samples count stays in the tooltip; how the subquery reads the window goes to the notes
    validity, _, how_read = source.window_validity().partition(" (")
    evidence = Evidence(
        source=f"{source.name} ({metrics}; {job(profile, source.key)}) and the profile's topology (pool, replica, "
        "PP stage of each node)",
        quantity="window mean and window peak of each quantity over the dashboard window side by side, one row per "
        f"GPU with its node (and where it sits: pool / replica / PP stage), index and UUID ({uuid} label). "
        f"{quantities}",
        # what is missing stays in the tooltip; how to collect it goes to the notes (docs/panels.md)
        limit=f"{validity}. {_caveat(source)}"
        + (". " + "; ".join(note.split(HOW_TO_COLLECT)[0].rstrip(".") for note in notes) if notes else ""),
        notes=". ".join(
            [
                f"Sorted by peak power; every column sorts. {from_rules}. {counted}. "
                + _validity(source).removeprefix(f"{source.window_validity()}. ")
                + (f". How the window is read: {how_read.removesuffix(')')}" if how_read else ""),
                *([throttle_notes] if throttle_notes else []),
                *(n[n.index(HOW_TO_COLLECT) + 1 :] for n in notes if HOW_TO_COLLECT in n),
            ]
        ),
    )
    node_names = {
        "type": "value",
        "options": {name: {"text": f"{name} · {text}", "index": i} for i, (name, text) in enumerate(where.items())},
    }
    return table(
        key="gpu_window_stats.per_gpu",
        title=f"Window mean and peak per GPU ({source.title_caption()})",
        evidence=evidence,
        labels={node: "Node", gpu: "GPU", uuid: "UUID"},
        columns=cells,
        unit="none",
        decimals=1,
        height=16,
        width=20,
        no_value=NO_DATA_TEXT,
        mappings=(node_names,),
        sort=(Sort(column_title(source, shown[0], "peak"), descending=True),),
    )


def xid_text() -> str:
    """What the last-Xid column shows (DCGM's, also where the GPM sampler is the table's source)."""
    return f"{XID_HEADER}: the last Xid code the GPU reported in the window ({dcgm.XID}; 0: none)"


def last_xid(profile: Profile) -> str:
    """The last Xid code each GPU reported in the window (DCGM), keyed by node and GPU index like every column."""
    return agg("max", dcgm.health_keys(profile, uuid=False), over_time("last", dcgm.health_selector(profile, dcgm.XID)))


def reporting_stat(profile: Profile, source: GpuSource) -> PanelSpec:
    """GPUs reporting at the window end, "63 of 64": red below the profile's count (S22)."""
    total = profile.total_gpus
    return stat(
        key="gpu_window_stats.gpus_reporting",
        title=f"GPUs reporting ({source.title_caption()})",
        evidence=Evidence(
            source=f"{source.name} ({source.presence_metric()}; {job(profile, source.key)}) and the profile's "
            f"cluster size ({profile.nodes} nodes x {profile.gpus_per_node} GPUs)",
            quantity=f"(node, GPU) pairs whose {source.presence_metric()} has a sample within the last "
            f"{seen_window(profile, source)} at the window end, for the whole deployment, against the "
            f"{total} GPUs the profile expects; red below {total}",
            limit="counts every node whatever $node / $gpu select (a GPU outside the selection still belongs to the "
            "deployment); a GPU that vanished earlier in the window still has a row in the tables beside, with the "
            "samples it sent. Which node lost it: the Missing-data reasons table ('GPU missing (k of N)') and the "
            "GpuMissing alert. No value means no GPU reports at all (see the reasons table), never 0 of "
            f"{total}. {source.sampling()}",
        ),
        targets=(Target(gpus_reporting(profile, source), instant=True),),
        unit=f"suffix: of {total}",
        decimals=0,
        width=4,
        height=14,
        no_value=NO_DATA_TEXT,
        thresholds=(("red", None), ("green", float(total))),
        color_mode="background",
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    source = gpu_source(profile)
    if source is None:
        panels: tuple[PanelSpec, ...] = (
            source_status_panel(
                "gpu_window_stats.unavailable",
                profile,
                list(GPU_SOURCE_KEYS),
                "Per-GPU window statistics: not available",
            ),
        )
    else:
        panels = (reporting_stat(profile, source), window_table(profile, topology, source))
    return GroupSpec(key="gpu_window_stats", title=TITLE, panels=panels, collapsed=True)
