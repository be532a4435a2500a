"""GPU health (S22): the hardware faults of every GPU, from the DCGM exporter whatever the
utilisation source (the GPM sampler measures load, not faults).

- one sortable table, one row per GPU with its node, index and UUID: the last Xid code and how often it
  changed in the window, correctable and uncorrectable remapped rows, whether row remapping failed, and
  the PCIe replays in the window;
- PCIe replays per GPU over time;
- NVLink errors per GPU in the window (CRC flit, CRC data, replay, recovery).

A field the exporter's field list does not collect (``queries.dcgm.collects``) is never an empty
column or chart: a table drops its column and says so, a panel whose every field is missing is a
"<what>: not collected" text naming the fields and how to add them. A deployment without DCGM gets
the S15 not-available text.
"""

from __future__ import annotations

from dashgen_queries import dcgm
from dashgen_queries.dcgm import DcgmSource
from dashgen_queries.gpu_source import GpuSource, seconds_text
from dashgen_queries.promql import RATE_WINDOW, agg, job

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, Column, Sort, source_status_panel, table, text, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "GPU health"
WORKLOADS = (TEXT, VIDEO)  # S25: the workload kinds this group serves (dashgen.dashboard)
GROUP = "gpu_health"
LEGEND = "{{node}} GPU {{gpu}}"
FATAL = ", ".join(f"{code} {meaning}" for code, meaning in dcgm.FATAL_XIDS.items())
# (field, column header, what the cell is) of the fault table, in column order.
FAULT_COLUMNS: tuple[tuple[str, str, str], ...] = (
    (
        dcgm.XID,
        "Last Xid code",
        "the last Xid code the GPU reported in the window (0: none since the exporter or the GPU started)",
    ),
    (
        dcgm.XID,
        "Xid code changes in window",
        "how often that code changed in the window (changes()): at least one Xid event per change",
    ),
    (dcgm.CORRECTABLE_ROWS, "Correctable remapped rows", "rows remapped for correctable errors, lifetime count"),
    (dcgm.UNCORRECTABLE_ROWS, "Uncorrectable remapped rows", "rows remapped for uncorrectable errors, lifetime count"),
    (dcgm.ROW_REMAP_FAILURE, "Row remap failed (1 = yes)", "1 when row remapping has failed: no spare row was left"),
    (
        dcgm.PCIE_REPLAYS,
        "PCIe replays in window",
        "PCIe link retries in the window (increase(), summed over the GPU's series)",
    ),
)


def _caveat(source: GpuSource) -> str:
    return (
        f"dcgm-exporter collects every {seconds_text(dcgm.COLLECT_SECONDS)} by default, scraped every "
        f"{source.interval}: the resolution is {source.resolution}. Health signals come from DCGM even where "
        "the GPM sampler is the utilisation source. The central store can hold duplicated or sparse samples "
        "and lag (S20): for locating a faulty GPU, not for a formal count"
    )


def _dropped(profile: Profile, missing: list[str]) -> str:
    return f". Columns dropped: {dcgm.not_collected(profile, missing)}" if missing else ""


def _not_collected(profile: Profile, what: str, missing: list[str]) -> str:
    return (
        f"**{what}** is not shown for this deployment ({profile.name}): {dcgm.not_collected(profile, missing)}."
        "\n\nAn empty chart here would read as a healthy GPU; the fields are not collected, which says nothing "
        "about the GPUs."
    )


def _cell(profile: Profile, column: str, field: str) -> str:
    if column == "Xid code changes in window":
        return dcgm.xid_changes(profile)
    if field == dcgm.PCIE_REPLAYS:
        return dcgm.window_increase(profile, field)
    return dcgm.last_in_window(profile, field)


def faults_table(profile: Profile, source: GpuSource) -> PanelSpec:
    node, gpu, uuid = dcgm.health_keys(profile)
    columns = [c for c in FAULT_COLUMNS if dcgm.collects(profile, c[0])]
    missing = sorted({field for field, _, _ in FAULT_COLUMNS if not dcgm.collects(profile, field)})
    if not columns:
        return text(
            f"{GROUP}.faults_not_collected",
            "Xid and row remapping per GPU: not collected",
            _not_collected(profile, "Xid and row remapping per GPU", missing),
            width=24,
            height=6,
        )
    cells = [Column(header, _cell(profile, header, field)) for field, header, _ in columns]
    fields = ", ".join(sorted({field for field, _, _ in columns}))
    evidence = Evidence(
        source=f"{source.name} ({fields}; {job(profile, 'dcgm')})",
        quantity="one row per GPU (node, GPU index, UUID), over the dashboard window: "
        + "; ".join(f"'{header}': {what}" for _, header, what in columns)
        + f". Fatal Xid classes (the GpuXidFatal alert): {FATAL}",
        limit=(
            "DCGM_FI_DEV_XID_ERRORS holds only the last code: a repeat of the same code, or several events "
            "within one collect interval, is one change or none, and the code stays until the exporter restarts "
            "after a GPU reset; dmesg (NVRM: Xid) has every event. Remapped-row counts live in the GPU's InfoROM "
            "and only grow; a remap takes effect at the next GPU reset. A GPU that stopped reporting keeps its "
            "row with the values it last sent (see GPUs reporting and the Missing-data reasons). "
            + _caveat(source)
            + _dropped(profile, missing)
        ),
    )
    return table(
        key=f"{GROUP}.faults",
        title=f"Xid and row remapping per GPU ({source.title_caption()})",
        evidence=evidence,
        labels={node: "Node", gpu: "GPU", uuid: "UUID"},
        columns=cells,
        unit="none",
        decimals=0,
        width=24,
        height=12,
        no_value=NO_DATA_TEXT,
        sort=(Sort(cells[0].header, descending=True),),
    )


def pcie_replays_panel(profile: Profile, source: GpuSource) -> PanelSpec:
    if not dcgm.collects(profile, dcgm.PCIE_REPLAYS):
        return text(
            f"{GROUP}.pcie_replays_not_collected",
            "PCIe replays per GPU: not collected",
            _not_collected(profile, "PCIe replays per GPU", [dcgm.PCIE_REPLAYS]),
            width=12,
            height=6,
        )
    return timeseries(
        key=f"{GROUP}.pcie_replays",
        title=f"PCIe replays per GPU ({source.title_caption()})",
        evidence=Evidence(
            f"{source.name} ({dcgm.PCIE_REPLAYS}; {job(profile, 'dcgm')})",
            "PCIe link retries per second, rate() over $__rate_interval, one series per GPU (summed over its series)",
            "a steady replay rate points to a marginal PCIe link (riser, slot, cable), often before "
            "Xid 79; at a 30 s collect interval a short burst is spread over the rate window (S19). " + _caveat(source),
        ),
        targets=(Target(dcgm.per_second(profile, dcgm.PCIE_REPLAYS, RATE_WINDOW), LEGEND),),
        unit="cps",
        width=12,
    )


def _nvlink_absent(profile: Profile, assumed_missing: list[str]) -> str:
    """What the NVLink table shows when the store has no NVLink error series: said from the store, with the field
    list the profile assumes (the store, not the profile, decides whether the counters are there)."""
    if not assumed_missing:
        return f"No NVLink error series in the store for these GPUs ({NO_DATA_TEXT})"
    named = ", ".join(f"`{field}`" for field in assumed_missing)
    return (
        f"No NVLink error series in the store for these GPUs. The profile assumes {dcgm.field_list(profile)}, which "
        f"does not collect {named}. {dcgm.how_to_collect(profile, assumed_missing)}"
    )


def nvlink_table(profile: Profile, source: GpuSource) -> PanelSpec:
    """The NVLink error counters per GPU. The counters are queried whatever field list the profile assumes: a
    deployment whose exporter collects them (the default CSV comments them out, an edited one often does not) shows
    them; with none in the store the table says so, naming the list it assumed (S36: never a fixed sentence)."""
    node, gpu, uuid = dcgm.health_keys(profile)
    missing = [field for field, _ in dcgm.NVLINK_ERRORS if not dcgm.collects(profile, field)]
    columns = [(field, what) for field, what in dcgm.NVLINK_ERRORS if dcgm.collects(profile, field)]
    cells = [
        Column(f"{what[0].upper()}{what[1:]} in window", dcgm.window_increase(profile, field))
        for field, what in columns
    ]
    if not columns:  # none assumed collected: ask the store for every counter, in one query (the opening budget)
        columns = list(dcgm.NVLINK_ERRORS)
        every = " or ".join(
            f'label_replace({dcgm.window_increase(profile, field)}, "counter", "{field}", "", "")'
            for field, _ in columns
        )
        cells = [
            Column("NVLink errors in window (CRC, replay, recovery)", agg("sum", dcgm.health_keys(profile), every))
        ]
    dropped = _dropped(profile, missing) if len(columns) < len(dcgm.NVLINK_ERRORS) else ""
    return table(
        key=f"{GROUP}.nvlink_errors",
        title=f"NVLink errors per GPU in window ({source.title_caption()})",
        evidence=Evidence(
            source=f"{source.name} ({', '.join(field for field, _ in columns)}; {job(profile, 'dcgm')})",
            quantity="one row per GPU: each NVLink error counter's increase over the dashboard window, summed over "
            "all of the GPU's links and its series; each kind in its own column, never added to another",
            limit=(
                "CRC errors that a replay corrected cost bandwidth, recovery errors take a link down for a moment "
                "(NCCL timeouts); the per-link split needs the NVLink entity metrics. "
                + _caveat(source)
                + dropped
                + (
                    f". The profile assumes {dcgm.field_list(profile)} does not collect them; the table asks the "
                    "store anyway and says so only when the store has none"
                    if len(missing) == len(dcgm.NVLINK_ERRORS)
                    else ""
                )
            ),
        ),
        labels={node: "Node", gpu: "GPU", uuid: "UUID"},
        columns=cells,
        unit="none",
        decimals=0,
        width=12,
        height=8,
        min_width=120,  # seven columns in a half-width panel at 1920 px (dashgen.render.clipping)
        no_value=_nvlink_absent(profile, missing if len(missing) == len(dcgm.NVLINK_ERRORS) else []),
        sort=(Sort(cells[0].header, descending=True),),
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    if not profile.exported("dcgm"):
        panels: tuple[PanelSpec, ...] = (
            source_status_panel(f"{GROUP}.unavailable", profile, ["dcgm"], "GPU health: not available"),
        )
    else:
        source = DcgmSource.from_profile(profile)
        panels = (faults_table(profile, source), pcie_replays_panel(profile, source), nvlink_table(profile, source))
    return GroupSpec(key=GROUP, title=TITLE, panels=panels)
