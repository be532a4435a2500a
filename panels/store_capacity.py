"""The panels beside the three cache-evidence tables: Store capacity and sources (S11-S13), the
prefetch-not-satisfied reasons (S16), and the capacity anatomy of S17 as three separate numbers
(limit from the profile, logical allocation, filesystem usage). A source the deployment does not
export gets one text panel naming it (S15) instead of empty charts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dashgen_panels.node_table import per_node_table
from dashgen_queries import hicache as sg
from dashgen_queries import mooncake as mc
from dashgen_queries import node_exporter as fs

from dashgen.deployment.profile import Profile
from dashgen.deployment.sizes import format_binary, format_decimal
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, Matrix, bargauge, ratio_axis, source_status_panel, stat, table, text
from dashgen.render.spec import Evidence, PanelSpec, Target

KEY = "cache_evidence"
TIER_SOURCES = ["hicache", "hicache_storage", "mooncake_master", "mooncake_client"]


def status_panel(profile: Profile) -> PanelSpec | None:
    """S15: the cache-tier sources this deployment does not export, named with their state."""
    missing = [name for name in TIER_SOURCES if not profile.exported(name)]
    if not missing:
        return None
    panel = source_status_panel(
        f"{KEY}.sources_unavailable", profile, missing, "Cache tiers not exported: not available"
    )
    evidence = Evidence(
        layer="collection health (deployment fact)",
        source="the deployment profile's source statuses",
        quantity="which cache-tier sources are not deployed, or exist in the client's code but are not exported "
        "by the client (S15)",
        limit="no empty scrape target is added to fill a graph and the model process is not changed: panels that "
        "would need these sources are left out, and their absence is not a zero",
    )
    return replace(panel, evidence=evidence)


def _store_stat(
    key: str, title: str, evidence: Evidence, series: tuple[tuple[str, str], ...], **fields: Any
) -> PanelSpec:
    """One of the Store master stats, a third of the row wide: (query, legend) values at the window end."""
    return stat(
        key=f"{KEY}.{key}",
        title=title,
        evidence=evidence,
        targets=tuple(Target(expr, legend=legend, instant=True) for expr, legend in series),
        width=8,
        height=6,
        no_value=NO_DATA_TEXT,
        **fields,
    )


def node_group_stat(profile: Profile) -> PanelSpec:
    return _store_stat(
        "store_node_group",
        "Store node group: allocated and capacity (master)",
        Evidence(
            layer="allocation",
            source="Mooncake master master_allocated_bytes and master_total_capacity_bytes",
            quantity="Store DRAM allocated and mounted capacity across all segments of the node group, at the "
            "window end (bytes)",
            limit="the master's total, not per node and not the master's own memory; capacity is the sum of "
            "mounted segments, which equals the quota only when every rank has mounted (see Capacity anatomy)",
        ),
        (
            (mc.per_master(profile, mc.MASTER_ALLOCATED), "allocated · {{master}}"),
            (mc.per_master(profile, mc.MASTER_CAPACITY), "capacity (mounted) · {{master}}"),
        ),
        unit="bytes",
    )


def allocation_table(profile: Profile) -> PanelSpec:
    """S17, second number: logical allocation per node (Store bytes, segments, Host tokens)."""
    node = profile.label("node")
    columns: list[tuple[str, str]] = []
    if profile.exported("mooncake_master"):
        columns += [
            ("Store allocated (GiB)", mc.per_node_gib(profile, mc.ALLOCATED)),
            ("Store mounted capacity (GiB)", mc.per_node_gib(profile, mc.CAPACITY)),
            ("Store segments (count, one per rank client)", mc.segments_per_node(profile)),
        ]
    if profile.exported("hicache"):
        columns += [
            ("Host KV used (tokens)", sg.host_tokens(profile, sg.HOST_USED)),
            ("Host KV pool (tokens)", sg.host_tokens(profile, sg.HOST_TOTAL)),
        ]
    panel = per_node_table(
        profile,
        "logical_allocation",
        "Capacity anatomy 2/3: logical allocation per node",
        columns,
        Evidence(
            layer="allocation",
            source="Mooncake master segment_allocated_bytes / segment_total_capacity_bytes per segment, node taken "
            'from segment="host:port" through the profile\'s node addresses (S11), segments counted per node; '
            "SGLang hicache_host_used_tokens / "
            "hicache_host_total_tokens (one TP rank per stage)",
            quantity="what is logically allocated at the window end: Store bytes per node and its mounted "
            "segments, Host KV tokens per node and stage",
            limit="allocation is neither the quota (panel 1/3) nor filesystem usage (panel 3/3). The master's node "
            f"label names the exporter, not the data holder; a segment belongs to the {node} whose profile address "
            "(cluster.node_addresses, else its name) is the segment host; segments with other hosts are in no row "
            "and are counted in 'Store segments not mapped to a node'. "
            "Host tokens and Store bytes are different units (no bytes-per-token factor is exported). The "
            "rank <-> segment port map is not exported, so segments are counted per node, not named per rank",
        ),
        decimals=1,
        width=12,
    )
    return panel


def segment_bargauge(profile: Profile, topology: Topology) -> PanelSpec:
    node = profile.label("node")
    return bargauge(
        key=f"{KEY}.store_segments",
        title="Store RAM allocated per segment (one per rank client)",
        evidence=Evidence(
            layer="allocation",
            source="Mooncake master segment_allocated_bytes{segment}, node from the segment's host through the "
            "profile's node addresses (S11)",
            quantity="bytes allocated in each mounted segment at the window end; one segment per SGLang rank "
            f"that mounts Store memory (the per-rank quota is {format_binary(topology.capacity.store_per_rank or 0)})",
            limit="the segment port does not say which rank it is (not exported); an unmounted segment has no "
            "series at all (absent, not 0); a segment whose host maps to no node is not drawn here (see 'Store "
            "segments not mapped to a node')",
        ),
        targets=(
            Target(mc.per_segment(profile, mc.ALLOCATED), legend=f"{{{{{node}}}}} {{{{segment}}}}", instant=True),
        ),
        unit="bytes",
        width=12,
        height=10,
        no_value=NO_DATA_TEXT,
    )


def unmapped_stat(profile: Profile) -> PanelSpec:
    hosts = ", ".join(f"{node} = {host}" for node, host in mc.segment_hosts(profile).items())
    return _store_stat(
        "store_unmapped",
        "Store segments not mapped to a node (count)",
        Evidence(
            layer="allocation (segment to node mapping, S11)",
            source='Mooncake master segment_total_capacity_bytes{segment="host:port"} and the profile\'s segment '
            f"hosts (cluster.node_addresses, else the node name): {hosts}",
            quantity="mounted segments at the window end whose host is none of the profile's nodes' addresses "
            "(0 when every segment maps to a node)",
            limit="such segments hold Store memory but are in no per-node row or cell: a non-zero count means the "
            "profile's node_addresses is incomplete or wrong (the Missing-data table then says 'segment host not "
            "mapped' for nodes without mapped segments). Absent (No data) when the master reports no segment at "
            "all, which is not 0",
        ),
        ((mc.unmapped_segments(profile), "not mapped to a node"),),
        unit="short",
        decimals=0,
        thresholds=(("green", None), ("red", 1)),
    )


def source_share_stat(profile: Profile) -> PanelSpec:
    return _store_stat(
        "ram_ssd_share",
        "Store returns by source: RAM / SSD share in window",
        Evidence(
            layer="prefetch attempt (Store metadata source)",
            source="Mooncake master mem_cache_hit_nums_ and file_cache_hit_nums_ (GetReplicaList results served "
            "from memory / from SSD)",
            quantity="RAM share = RAM returns / (RAM + SSD returns) and SSD share = SSD returns / (RAM + SSD returns) "
            "over the dashboard window, % (S12)",
            limit="excludes misses: it is NOT a request hit rate and not a final reuse. The counters have no "
            "storage-node label, so there is no per-node split (S14: Store memory hit per node is N/A)",
        ),
        (
            (mc.source_share_pct_per_master(profile, mc.RAM_RETURNS), "RAM share · {{master}}"),
            (mc.source_share_pct_per_master(profile, mc.SSD_RETURNS), "SSD share · {{master}}"),
        ),
        **ratio_axis("percent"),
        decimals=1,
    )


def returns_stat(profile: Profile) -> PanelSpec:
    return _store_stat(
        "ram_ssd_returns",
        "Store returns in window: RAM and SSD (count)",
        Evidence(
            layer="prefetch attempt (Store metadata source)",
            source="Mooncake master mem_cache_hit_nums_ and file_cache_hit_nums_",
            quantity="number of GetReplicaList results served from RAM and from SSD in the window",
            limit="metadata returns are not transfers and not final reuse (S9); no per-node split exists (S14)",
        ),
        (
            (mc.per_master(profile, mc.RAM_RETURNS, "increase"), "RAM returns · {{master}}"),
            (mc.per_master(profile, mc.SSD_RETURNS, "increase"), "SSD returns · {{master}}"),
        ),
        unit="short",
    )


def object_counts_stat(profile: Profile) -> PanelSpec:
    return _store_stat(
        "object_counts",
        "Store objects now: keys, in RAM, on SSD (not additive)",
        Evidence(
            layer="allocation (object counts)",
            source="Mooncake master master_key_count, mem_cache_nums_, file_cache_nums_",
            quantity="keys the master manages, and objects currently cached in memory and on SSD, at the window end",
            limit="current replica counts may count one key more than once (a key can have replicas in RAM and on "
            "SSD): the three numbers are shown apart and never summed into a count of unique objects (S13)",
        ),
        (
            (mc.per_master(profile, mc.KEY_COUNT), "keys (master) · {{master}}"),
            (mc.per_master(profile, mc.RAM_OBJECTS), "objects in RAM · {{master}}"),
            (mc.per_master(profile, mc.SSD_OBJECTS), "objects on SSD · {{master}}"),
        ),
        unit="short",
    )


def prefetch_matrix(
    profile: Profile, metric: str, reasons: tuple[str, ...], key: str, title: str, evidence: Evidence
) -> PanelSpec:
    """Rows = reason, columns = node: each reason its own series, never added together (S16)."""
    return table(
        key=f"{KEY}.{key}",
        title=title,
        evidence=evidence,
        targets=(Target(sg.prefetch_reasons(profile, metric, reasons), instant=True, table=True, ref_id="A"),),
        unit="short",
        width=12,
        height=min(len(reasons) + 4, 16),
        no_value=NO_DATA_TEXT,
        thresholds=(("text", None),),
        matrix=Matrix(rows="reason", columns=profile.label("node")),
    )


def prefetch_panels(profile: Profile) -> list[PanelSpec]:
    unfulfilled = prefetch_matrix(
        profile,
        sg.UNFULFILLED,
        sg.UNFULFILLED_REASONS,
        "prefetch_unfulfilled",
        "Prefetch not satisfied, by reason and node (tokens in window)",
        Evidence(
            layer="prefetch attempt",
            source="SGLang storage_prefetch_unfulfilled_tokens_total{reason} (pre-seeded at 0; one TP rank per node "
            "and PP stage)",
            quantity="tokens whose Store prefetch was not satisfied in the window, one row per reason (anchor_lost, "
            "aux_window_trim, below_threshold, cache_admission_shortfall and the others), one column per node",
            limit="attempt-level, not a final cache miss; reasons are counted separately and never added (S16); "
            "columns are nodes, one PP stage each, and are not added either (S3)",
        ),
    )
    deferred = prefetch_matrix(
        profile,
        sg.DEFERRED,
        sg.DEFERRED_REASONS,
        "prefetch_deferred",
        "Prefetch deferred, by reason and node (tokens in window)",
        Evidence(
            layer="prefetch attempt",
            source="SGLang storage_prefetch_deferred_tokens_total{reason} (pre-seeded at 0; one TP rank)",
            quantity="tokens whose prefetch was deferred for later reuse in the window (host_capacity, "
            "device_capacity), per node",
            limit="deferred is not a final miss and not a not-satisfied reason: shown apart from them (S16)",
        ),
    )
    return [unfulfilled, deferred]


def _anatomy_header(profile: Profile, per_node: str, nodes_per_replica: int) -> str:
    """Names every pool the quotas cover; with several pools, says which columns hold for which pool."""
    pool = profile.pools[0]
    if not profile.has_pools:
        return (
            f"Quotas of `{profile.name}` ({pool.name}: TP{pool.tp} x PP{pool.pp} = {pool.gpus_per_replica} ranks "
            f"per replica, {per_node} per node, {nodes_per_replica} node(s) per replica). Limits, not usage."
        )
    layouts = "; ".join(
        f"{p.name}{'' if p.role == p.name else f' ({p.role})'}: {p.replicas} replicas of TP{p.tp} x PP{p.pp}"
        for p in profile.pools
    )
    same = len({(p.gpus_per_replica, min(profile.gpus_per_node, p.gpus_per_replica)) for p in profile.pools}) == 1
    scope = f"the same in all {len(profile.pools)} pools" if same else f"the {pool.name} pool's (other pools differ)"
    replicas = sum(p.replicas for p in profile.pools)
    return (
        f"Quotas of `{profile.name}`, pools {layouts}. Per rank, per node ({per_node}) and per replica "
        f"({pool.gpus_per_replica} ranks): {scope}; total: all pools ({replicas} replicas, "
        f"{profile.total_gpus} ranks). Limits, not usage."
    )


def anatomy_text(profile: Profile, topology: Topology) -> PanelSpec:
    """S17, first number: the quotas, computed from the profile (never literals)."""
    cap = topology.capacity
    pool = profile.pools[0]
    per_node = f"{min(profile.gpus_per_node, pool.gpus_per_replica)} ranks"
    nodes_per_replica = max(pool.gpus_per_replica // profile.gpus_per_node, 1)

    def binary(value: int | None) -> str:
        return format_binary(value) if value is not None else "not deployed"

    def decimal(value: int | None) -> str:
        return format_decimal(value) if value is not None else "not set"

    lines = [
        _anatomy_header(profile, per_node, nodes_per_replica),
        "",
        "| tier | per rank | per node | per replica | total |",
        "|---|---|---|---|---|",
        f"| Store RAM (Mooncake) | {binary(cap.store_per_rank)} | {binary(cap.store_per_node)} | "
        f"{binary(cap.store_per_replica)} | {binary(cap.store_total)} |",
        f"| Host KV (HiCache) | {binary(cap.host_per_rank)} | {binary(cap.host_per_node)} | "
        f"{binary(cap.host_per_replica)} | {binary(cap.host_total)} |",
        f"| NVMe bucket limit | {decimal(cap.nvme_limit_per_rank)} | {decimal(cap.nvme_limit_per_node)} | - | - |",
        "",
        f"NVMe physical per node: {decimal(cap.nvme_physical_per_node)}; cache disk sold as "
        f"{decimal(cap.disk_nominal)}"
        + (
            f" = {format_binary(cap.disk_nominal)} before filesystem overhead (the filesystem reports less)."
            if cap.disk_nominal
            else "."
        ),
    ]
    if profile.capacity.global_segment_size is not None:
        lines += [
            "",
            f"`global_segment_size` = {profile.capacity.global_segment_size:,} bytes "
            f"({binary(cap.store_per_replica)}) is the Store quota **per replica**: not per node, not the "
            "master's memory.",
        ]
    return text(
        key=f"{KEY}.capacity_limits",
        title="Capacity anatomy 1/3: limits (quotas from the profile)",
        evidence=Evidence(
            layer="capacity quota",
            source=f"the deployment profile ({profile.name}): global_segment_size, host_cache_per_rank, "
            "nvme_bucket_limit_per_rank, nvme_physical_per_rank, disk_nominal_size, and the TP x PP layout",
            quantity="the configured quotas per rank, node, replica and in total (S17)",
            limit="a quota is neither allocation (panel 2/3) nor filesystem usage (panel 3/3), and an axis maximum "
            "is none of them; the numbers are as configured, not measured",
        ),
        content="\n".join(lines),
        width=12,
        height=10,
    )


def filesystem_table(profile: Profile) -> PanelSpec:
    nominal = profile.capacity.disk_nominal_size
    nominal_text = (
        f"the disk's nominal {format_decimal(nominal)} is {format_binary(nominal)} before filesystem "
        "overhead, so the filesystem size is smaller"
        if nominal
        else "the disk's nominal size is not set"
    )
    columns = [
        ("Filesystem size (TiB)", fs.size_tib(profile)),
        (f"Filesystem {fs.USED_NAME} (TiB)", fs.used_tib(profile)),
        (f"Filesystem {fs.UNAVAILABLE_NAME} (TiB)", fs.unavailable_tib(profile)),
        ("Filesystem available to the cache process (avail, TiB)", fs.avail_tib(profile)),
        (f"Filesystem {fs.UNAVAILABLE_NAME} (% of size)", fs.unavailable_pct(profile)),
    ]
    panel = per_node_table(
        profile,
        "filesystem_usage",
        f"Capacity anatomy 3/3: cache filesystem usage ({profile.disks.cache_mountpoint})",
        columns,
        Evidence(
            layer="filesystem",
            source=f"node_exporter node_filesystem_size_bytes / node_filesystem_free_bytes / "
            f'node_filesystem_avail_bytes, mountpoint="{profile.disks.cache_mountpoint}"',
            quantity="real filesystem size, used (size - free: blocks holding data), not available to the cache "
            "process (size - avail: data plus root-reserved blocks) and available (avail) on the cache mount at "
            "the window end, per node, in TiB; the share not available to the cache process in %",
            limit=f"usage is not the quota (panel 1/3) nor the allocation (panel 2/3); {nominal_text}; an axis "
            "maximum is neither capacity nor usage (S17). The two 'used' numbers differ by the root-reserved blocks "
            "(about 5 % of the size on ext4 by default): other panels' 'used' is size - free. Both count "
            "everything on the filesystem, not only KV",
        ),
        stage=False,
        decimals=2,
        width=12,
    )
    return panel


def panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    """The side panels for this profile, in reading order."""
    found: list[PanelSpec] = []
    status = status_panel(profile)
    if status:
        found.append(status)
    if profile.exported("mooncake_master"):
        found += [
            node_group_stat(profile),
            unmapped_stat(profile),
            source_share_stat(profile),
            returns_stat(profile),
            object_counts_stat(profile),
            segment_bargauge(profile, topology),
        ]
    if profile.exported("hicache_storage"):
        found += prefetch_panels(profile)
    found.append(anatomy_text(profile, topology))
    if profile.exported("mooncake_master") or profile.exported("hicache"):
        found.append(allocation_table(profile))
    if profile.exported("node_exporter") and profile.disks.has_cache_tier:
        found.append(filesystem_table(profile))
    return found
