"""KV cache and NVMe: the GPU KV pool per rank and per PP stage, the HiCache host tier, PD KV
transfer, the Mooncake Store node-group capacity, the NVMe cache disks (bandwidth, IOPS, latency,
queue, busy), their filesystem next to the disk's nominal size, per-node CPU, host RAM and the
model disk.

S17 is carried by keeping three kinds of number apart: configured limits (from the profile),
logical allocation (engine / Store master) and real filesystem usage (node_exporter), each on its
own panel; a disk sold as 3.84 TB is shown in decimal TB, its filesystem in binary TiB.
"""

from __future__ import annotations

from typing import Any

from dashgen_panels.engine_load import pd_roles, pool_key, pool_matchers, pool_title
from dashgen_panels.store_replica import store_panels
from dashgen_queries import node_exporter as ne
from dashgen_queries import pd
from dashgen_queries import sglang as sg
from dashgen_queries.promql import divide, scale

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.sizes import format_binary, format_decimal
from dashgen.deployment.topology import Topology
from dashgen.render.kit import (
    NO_DATA_TEXT,
    merge_table,
    ratio_axis,
    ref,
    source_status_panel,
    stat,
    table,
    text,
    timeseries,
)
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target, split_rows

TITLE = "KV cache and NVMe"
WORKLOADS = (TEXT, VIDEO)  # S25: the workload kinds this group serves (dashgen.dashboard)
VIDEO_TITLE = "Disks, CPU and host memory"  # the group of a deployment without text-generation pools
GROUP = "kv_cache_nvme"

ALL_SCHEDULERS = (
    "scheduler gauges exist for every TP rank only with --enable-metrics-for-all-schedulers; by default only the "
    "stats-logging rank (tp_rank 0) of each PP stage reports, so other ranks are absent, not empty"
)
PER_STAGE = (
    "every TP rank of a stage holds the same token slots (each a shard of the heads), so a stage shows the max "
    "over its TP ranks; stages are never summed (S3): a request holds slots in each of its PP stages"
)
NODE_EXPORTER = "node_exporter"
NO_IO = "an idle disk gives no point, not 0 (S6 'no I/O'): a gap means nothing completed in the interval"


def _ts(key: str, title: str, evidence: Evidence, targets: list[Target], unit: str = "short", width: int = 8,
        **kw: Any) -> PanelSpec:
    return timeseries(key=f"{GROUP}.{key}", title=title, evidence=evidence,
                     targets=tuple(targets), unit=unit, width=width, **kw)


# --- GPU KV pool ---------------------------------------------------------------------------------


def kv_pool_table(profile: Profile) -> PanelSpec:
    node, pp_rank, tp_rank = profile.label("node"), profile.label("pp_rank"), profile.label("tp_rank")
    columns = (
        ("sglang:max_total_num_tokens", "KV pool capacity (tokens)", 1.0),
        ("sglang:kv_used_tokens", "Used by running requests (tokens)", 1.0),
        ("sglang:kv_evictable_tokens", "Evictable radix cache (tokens)", 1.0),
        ("sglang:kv_available_tokens", "Free (tokens)", 1.0),
        ("sglang:kv_cache_memory_usage_gb", "KV cache memory (GB)", 1.0),
    )
    targets = []
    rename = {node: "Node", pp_rank: "PP stage", tp_rank: "TP rank"}
    for index, (metric, header, factor) in enumerate(columns):
        ref_id = ref(index)
        targets.append(Target(scale(sg.per_rank_gauge(profile, metric), factor), instant=True, table=True,
                              ref_id=ref_id))
        rename[f"Value #{ref_id}"] = header
    ref_id = ref(len(columns))
    used_share = scale(divide(sg.per_rank_gauge(profile, "sglang:kv_used_tokens"),
                              sg.per_rank_gauge(profile, "sglang:max_total_num_tokens")), 100)
    targets.append(Target(used_share, instant=True, table=True, ref_id=ref_id))
    rename[f"Value #{ref_id}"] = "Used / capacity (%)"
    return table(
        key=f"{GROUP}.kv_pool_per_rank",
        title="KV pool per GPU rank at the window end (tokens)",
        evidence=Evidence(
            "SGLang scheduler (sglang:max_total_num_tokens, sglang:kv_used_tokens, sglang:kv_evictable_tokens, "
            "sglang:kv_available_tokens, sglang:kv_cache_memory_usage_gb)",
            "one row per engine rank (node, PP stage, TP rank; each rank is one GPU): the token-slot capacity of "
            "its KV pool, the slots locked by running requests, the evictable radix-cache slots and the free "
            "slots (used + evictable + free <= capacity), the KV cache memory in GB, and used / capacity in %. "
            "Instant values at the window end; each header states its unit",
            ALL_SCHEDULERS + ". Slots are logical tokens, not bytes: memory comes from the engine's own GB figure "
            "(decimal GB, set once at start-up). No total row: ranks of one stage hold shards of the same slots",
        ),
        targets=tuple(targets),
        unit="none",
        decimals=0,
        width=24,
        height=10,
        no_value=NO_DATA_TEXT,
        transformations=merge_table(rename, exclude=["Time"]),
        options={"sortBy": [{"displayName": "Used / capacity (%)", "desc": True}]},
    )


def kv_stage_panels(profile: Profile) -> list[PanelSpec]:
    """The per-stage KV panels, once per pool in a PD deployment (engine_type), never both on one axis (S27)."""
    return [panel for role in pd_roles(profile) for panel in kv_pool_panels(profile, role)]


def _per(profile: Profile, staged: str, instance: str) -> str:
    """The PP-stage title where the profile has PP, the per-instance one where it has none (S27)."""
    return staged if profile.has_pp else instance


def kv_pool_panels(profile: Profile, role: str) -> list[PanelSpec]:
    legend = sg.stage_legend(profile)
    pool = pool_matchers(role)

    def gauge(p: Profile, metric: str) -> str:
        return sg.per_stage_gauge(p, metric, *pool)

    slots = (
        ("kv_used_per_stage", "sglang:kv_used_tokens",
         _per(profile, "KV slots used by running requests per PP stage (tokens)",
              "KV slots used by running requests per instance (tokens)"),
         "token slots locked by running requests"),
        ("kv_evictable_per_stage", "sglang:kv_evictable_tokens",
         _per(profile, "KV slots held by the radix cache per PP stage (evictable, tokens)",
              "KV slots held by the radix cache per instance (evictable, tokens)"),
         "token slots holding cached prefixes that can be evicted"),
        ("kv_available_per_stage", "sglang:kv_available_tokens", _per(profile, "KV slots free per PP stage (tokens)",
                                                                 "KV slots free per instance (tokens)"),
         "free token slots"),
    )
    panels = [
        _ts(pool_key(key, role), pool_title(title, role),
            Evidence(f"SGLang scheduler ({metric})", f"logical {meaning}, per node and PP stage", PER_STAGE + "; "
                     + ALL_SCHEDULERS),
            [Target(sg.named_stage(profile, gauge(profile, metric)), legend)], decimals=0)
        for key, metric, title, meaning in slots
    ]
    used = gauge(profile, "sglang:kv_used_tokens")
    capacity = gauge(profile, "sglang:max_total_num_tokens")
    held = f"{used} + {gauge(profile, 'sglang:kv_evictable_tokens')}"
    panels += [
        _ts(pool_key("kv_locked_ratio", role),
            pool_title(_per(profile, "KV pool locked by running requests per PP stage (used / capacity)",
                             "KV pool locked by running requests per instance (used / capacity)"), role),
            Evidence("SGLang scheduler (sglang:kv_used_tokens / sglang:max_total_num_tokens)",
                     "share of the stage's KV token slots locked by running requests, 0-100 % on a fixed axis "
                     "(KV pressure: near 100 % requests get retracted)",
                     PER_STAGE + "; excludes the evictable radix cache (see the next panel)"),
            [Target(sg.named_stage(profile, divide(used, capacity)), legend)], **ratio_axis("percentunit")),
        _ts(pool_key("kv_held_ratio", role),
            pool_title(_per(profile, "KV pool occupied incl. radix cache per PP stage ((used + evictable) / capacity)",
                             "KV pool occupied incl. radix cache per instance ((used + evictable) / capacity)"),
                        role),
            Evidence("SGLang scheduler (sglang:kv_used_tokens, sglang:kv_evictable_tokens, "
                     "sglang:max_total_num_tokens)",
                     "share of the stage's KV token slots holding data, running or cached (the GPU tier's "
                     "occupancy), 0-100 % fixed axis",
                     PER_STAGE + "; a high value is normal for a warm prefix cache: evictable slots are reclaimed "
                     "on demand"),
            [Target(sg.named_stage(profile, divide(held, capacity)), legend)], **ratio_axis("percentunit")),
        _ts(pool_key("kv_evictions", role), pool_title(_per(profile, "GPU KV evictions per PP stage (tokens/s)",
                                                            "GPU KV evictions per instance (tokens/s)"), role),
            Evidence("SGLang radix cache (sglang:evicted_tokens_total)",
                     "device token slots freed by eviction per second (backed up to host or destroyed), max over "
                     "the TP ranks of a stage",
                     "counter absent (not 0) until the first eviction, and rate() starts from a series' first "
                     "stored sample, so the first eviction batch (the value the counter is created with) is "
                     "never drawn; an eviction is not a loss when HiCache backed the tokens up to host. "
                     + PER_STAGE),
            [Target(sg.named_stage(profile, pd.in_pool(
                profile, sg.per_stage_rate(profile, "sglang:evicted_tokens_total"), role)), legend)],
            "count:tok/s"),
    ]
    return panels


def hicache_host_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    """The Host tier's occupancy per stage, once per pool in a PD deployment (S27)."""
    if not profile.exported("hicache"):
        return [source_status_panel(f"{GROUP}.hicache_host_unavailable", profile, ["hicache"],
                                    "HiCache host (L2) tier occupancy: not available", width=8)]
    per_rank = topology.capacity.host_per_rank
    quota = (f" The profile's host cache is {format_binary(per_rank)} per rank "
             f"({format_binary(topology.capacity.host_per_node or 0)} per node)." if per_rank else "")
    panels = []
    for role in pd_roles(profile):
        # the Host-tier gauges may lack engine_type (HiCache collector labels): the pool is joined by node
        used = sg.per_stage_gauge(profile, "sglang:hicache_host_used_tokens")
        total = sg.per_stage_gauge(profile, "sglang:hicache_host_total_tokens")
        panels.append(_ts(
            pool_key("hicache_host_occupancy", role),
            pool_title(_per(profile, "HiCache host (L2) tier occupancy per PP stage (used / total tokens)",
                             "HiCache host (L2) tier occupancy per instance (used / total tokens)"), role),
            Evidence("SGLang scheduler (sglang:hicache_host_used_tokens / sglang:hicache_host_total_tokens)",
                     "share of the host KV pool's token slots in use, per node and PP stage, 0-100 % fixed axis."
                     + quota,
                     "only with --enable-hierarchical-cache; tokens, not bytes; " + PER_STAGE),
            [Target(sg.named_stage(profile, pd.in_pool(profile, f"({divide(used, total)})", role)),
                    sg.stage_legend(profile))],
            **ratio_axis("percentunit")))
    return panels


def pd_transfer_panels(profile: Profile) -> list[PanelSpec]:
    if not sg.is_pd(profile):
        return []
    labels = [profile.label("node"), profile.label("pp_rank"), sg.ENGINE_TYPE]
    limit = ("per node and PP stage (buckets summed by le over the TP ranks); a transfer is recorded on the side that "
             "measures it, so prefill and decode pools are kept apart by engine_type, never added")

    def quantile(q: float, histogram: str, role: str) -> str:
        return sg.histogram_quantile(q, sg.engine(profile, f"{histogram}_bucket", *pool_matchers(role)), labels)

    return [panel for role in pd_roles(profile) for panel in (
        _ts(pool_key("pd_kv_transfer_latency", role), pool_title("PD KV transfer latency p95 per node (ms)", role),
            Evidence("SGLang scheduler (sglang:kv_transfer_latency_ms histogram)",
                     "p95 time to move a request's KV from prefill to decode, milliseconds", limit),
            [Target(quantile(0.95, "sglang:kv_transfer_latency_ms", role), "p95 {{node}} · {{engine_type}}")], "ms"),
        _ts(pool_key("pd_kv_transfer_speed", role), pool_title("PD KV transfer speed p50 per node (GB/s)", role),
            Evidence("SGLang scheduler (sglang:kv_transfer_speed_gb_s histogram)",
                     "median per-transfer speed, decimal GB/s", limit + "; small transfers under-state the link"),
            [Target(quantile(0.5, "sglang:kv_transfer_speed_gb_s", role), "p50 {{node}} · {{engine_type}}")], "GBs"),
        _ts(pool_key("pd_kv_transfer_size", role), pool_title("PD KV transfer size p95 per node (MB)", role),
            Evidence("SGLang scheduler (sglang:kv_transfer_total_mb histogram)",
                     "p95 KV bytes moved per request, decimal MB (grows with prompt length)", limit),
            [Target(quantile(0.95, "sglang:kv_transfer_total_mb", role), "p95 {{node}} · {{engine_type}}")],
            "decmbytes"),
    )]


# --- NVMe cache disks ---------------------------------------------------------------------------------


def disk_panels(profile: Profile) -> list[PanelSpec]:
    regex = profile.disks.cache_device_regex
    where = (f"cache disks = devices matching device=~\"{regex}\" on the selected nodes "
             "(profile disks.cache_device_regex)")
    legend = "{{node}} {{device}}"

    def ev(metrics: str, quantity: str, limit: str = "") -> Evidence:
        return Evidence(f"node_exporter diskstats ({metrics})", f"{quantity}; {where}",
                        limit or "per device, never added across nodes; rates over $__rate_interval smooth bursts",
                        layer="cache disk")

    return [
        _ts("disk_bandwidth", "Cache disk read / write bandwidth (bytes/s)",
            ev("node_disk_read_bytes_total, node_disk_written_bytes_total",
               "bytes read and written per second per device, two series each, not added"),
            [Target(ne.disk_rate(profile, "node_disk_read_bytes_total"), legend + " read"),
             Target(ne.disk_rate(profile, "node_disk_written_bytes_total"), legend + " write")], "Bps"),
        _ts("disk_iops", "Cache disk read / write IOPS",
            ev("node_disk_reads_completed_total, node_disk_writes_completed_total",
               "completed reads and writes per second per device"),
            [Target(ne.disk_rate(profile, "node_disk_reads_completed_total"), legend + " read"),
             Target(ne.disk_rate(profile, "node_disk_writes_completed_total"), legend + " write")], "iops"),
        _ts("disk_latency", "Cache disk read / write latency per I/O (s)",
            ev("node_disk_read_time_seconds_total / node_disk_reads_completed_total, write likewise",
               "mean time per completed I/O (await, queueing included) = Δtime / Δops over $__rate_interval",
               NO_IO + "; a mean per interval hides tail latency"),
            [Target(ne.disk_latency(profile, "node_disk_read_time_seconds_total", "node_disk_reads_completed_total"),
                    legend + " read"),
             Target(ne.disk_latency(profile, "node_disk_write_time_seconds_total",
                                    "node_disk_writes_completed_total"), legend + " write")], "s"),
        _ts("disk_queue", "Cache disk average queue depth (I/Os in flight)",
            ev("node_disk_io_time_weighted_seconds_total",
               "average number of I/Os in flight = rate of the weighted I/O time"),
            [Target(ne.disk_rate(profile, "node_disk_io_time_weighted_seconds_total"), legend)], decimals=2),
        _ts("disk_busy", "Cache disk busy (share of time with I/O in flight)",
            ev("node_disk_io_time_seconds_total",
               "share of wall time the device had at least one I/O in flight, 0-100 % fixed axis",
               "NVMe devices serve many I/Os in parallel: 100 % busy is not saturation, read it with the queue "
               "depth and latency"),
            [Target(ne.disk_rate(profile, "node_disk_io_time_seconds_total"), legend)], **ratio_axis("percentunit")),
    ]


def filesystem_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    mount = profile.disks.cache_mountpoint
    cap = topology.capacity
    fs_where = f"filesystem mounted at {mount} (profile disks.cache_mountpoint), one value per node"
    configured = [
        ("disk nominal size (vendor, decimal)", cap.disk_nominal),
        ("NVMe bucket limit per node (profile)", cap.nvme_limit_per_node),
        ("NVMe physical allotment per node (profile)", cap.nvme_physical_per_node),
    ]
    configured = [(label, value) for label, value in configured if value is not None]
    size = ne.filesystem(profile, "node_filesystem_size_bytes", mount)
    avail = ne.filesystem(profile, "node_filesystem_avail_bytes", mount)
    panels: list[PanelSpec] = []
    if configured:
        described = "; ".join(f"{label}: {format_decimal(value)}" for label, value in configured)
        panels.append(stat(
            key=f"{GROUP}.disk_configured_sizes", title="Cache disk sizes as configured (profile, decimal TB)",
            evidence=Evidence("deployment profile (capacity.disk_nominal_size, nvme_* per rank x ranks per node), "
                              "not a measurement",
                              f"sizes as sold and as configured, in decimal units ({described})",
                              "S17: a disk sold as 3.84 TB holds about 3.49 TiB and its filesystem shows about "
                              "3.44 TiB after metadata; the filesystem size is measured on the next panel, in "
                              "binary TiB — the two are different numbers, never one axis maximum"),
            targets=tuple(Target(f"vector({value})", label, instant=True, ref_id=ref(i))
                          for i, (label, value) in enumerate(configured)),
            unit="decbytes", width=12, height=5, options={"textMode": "value_and_name"}))
    panels += [
        stat(
            key=f"{GROUP}.cache_fs_size", title="Cache filesystem size per node (measured, binary TiB)",
            evidence=Evidence("node_exporter filesystem (node_filesystem_size_bytes)",
                              f"size of the {fs_where}, binary units (TiB)",
                              "smaller than the disk's nominal size (decimal TB, filesystem metadata): see the "
                              "configured sizes panel; no value means the mount point is not on this node"),
            targets=(Target(size, "{{node}}", instant=True),),
            unit="bytes", width=12, height=5, decimals=2, no_value=NO_DATA_TEXT,
            options={"textMode": "value_and_name"}),
        _ts("cache_fs_used", "Cache filesystem used per node (size - free, bytes)",
            Evidence("node_exporter filesystem (node_filesystem_size_bytes - node_filesystem_free_bytes)",
                     f"bytes in use on the {fs_where} (real usage, not the NVMe bucket's logical allocation)",
                     "includes every file on the filesystem, not only KV objects"),
            [Target(f"{size} - {ne.filesystem(profile, 'node_filesystem_free_bytes', mount)}", "{{node}}")],
            "bytes"),
        _ts("cache_fs_available", "Cache filesystem available per node (bytes)",
            Evidence("node_exporter filesystem (node_filesystem_avail_bytes)",
                     f"bytes available to non-root users on the {fs_where}",
                     "excludes blocks reserved for root, so size - used is larger than this"),
            [Target(avail, "{{node}}")], "bytes"),
        _ts("cache_fs_used_share",
            "Cache filesystem not available to the cache process, share per node (1 - avail / size)",
            Evidence("node_exporter filesystem (node_filesystem_avail_bytes / node_filesystem_size_bytes)",
                     f"share of the {fs_where} not available to the cache process, 0-100 % fixed axis",
                     "a share of the filesystem size, not of the nominal disk size nor the NVMe bucket limit"),
            [Target(f"1 - {divide(avail, size)}", "{{node}}")], **ratio_axis("percentunit")),
    ]
    return panels


def no_cache_tier_panel(profile: Profile) -> PanelSpec:
    """A deployment without a KV cache disk tier: one line instead of disk panels on the OS or model disks."""
    return text(f"{GROUP}.cache_disks_not_deployed", "Cache disks: not deployed",
                f"**Cache disks** are not shown for this deployment ({profile.name}): it has no KV cache disk tier "
                "(`[disks] cache_mountpoint` is not set in its profile). The node's other disks (system, model) are "
                "not cache disks and are not drawn as such.", width=24, height=3)


def host_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    host_note = ""
    if topology.capacity.host_per_node:
        host_note = (f" HiCache pins {format_binary(topology.capacity.host_per_node)} of host memory per node "
                     "(profile), so a low MemAvailable is expected with the host tier on")
    model = profile.disks.model_mountpoint
    total = ne.memory(profile, "node_memory_MemTotal_bytes")
    available = ne.memory(profile, "node_memory_MemAvailable_bytes")
    return [
        _ts("cpu_busy", "CPU busy per node (1 - idle)",
            Evidence("node_exporter cpu (node_cpu_seconds_total{mode=\"idle\"})",
                     "share of CPU time not idle, averaged over the node's CPUs, 0-100 % fixed axis",
                     "a node average: one saturated core (e.g. a tokenizer or scheduler process) barely shows"),
            [Target(f"1 - {ne.cpu_mode_share(profile, 'idle')}", "{{node}}")], **ratio_axis("percentunit")),
        _ts("cpu_iowait", "CPU iowait per node",
            Evidence("node_exporter cpu (node_cpu_seconds_total{mode=\"iowait\"})",
                     "share of CPU time idle while waiting for I/O, averaged over the node's CPUs, 0-100 % fixed "
                     "axis (rises when cache-disk reads stall the host)",
                     "iowait is idle time, not work; it is not a disk metric"),
            [Target(ne.cpu_mode_share(profile, "iowait"), "{{node}}")], **ratio_axis("percentunit")),
        _ts("host_memory_used_share", "Host RAM in use per node (1 - MemAvailable / MemTotal)",
            Evidence("node_exporter meminfo collector (node_memory_MemAvailable_bytes, node_memory_MemTotal_bytes; "
                     "standard node_exporter metrics, not listed in the metric catalogue tables)",
                     "share of host RAM not available for new allocations, 0-100 % fixed axis." + host_note,
                     "MemAvailable is the kernel's estimate (page cache counted as reclaimable)"),
            [Target(f"1 - {divide(available, total)}", "{{node}}")], **ratio_axis("percentunit")),
        _ts("host_memory_available", "Host RAM available per node (bytes)",
            Evidence("node_exporter meminfo collector (node_memory_MemAvailable_bytes)",
                     "bytes of host RAM available for new allocations without swapping",
                     "the kernel's estimate; MemTotal is on the share panel's denominator"),
            [Target(available, "{{node}}")], "bytes"),
        _ts("model_disk_free", "Model disk available per node (bytes)",
            Evidence("node_exporter filesystem (node_filesystem_avail_bytes)",
                     f"bytes available to non-root users on the filesystem at {model} (profile disks.model_mountpoint)",
                     "no value means nothing is mounted there on that node"),
            [Target(ne.filesystem(profile, "node_filesystem_avail_bytes", model), "{{node}}")], "bytes"),
    ]


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Four rows, as the seed groups them: KV cache (GPU pool, Host tier, PD transfer), Store, cache disks
    (or one line saying the tier is not deployed), node health (CPU, host RAM, model disk). A profile without a
    text pool (S25) has no KV, HiCache or Store: one row of its disks, CPU and host memory."""
    text = profile.has_kind(TEXT)
    kv: list[PanelSpec] = []
    if profile.exported("sglang") and text:
        kv = [kv_pool_table(profile), *kv_stage_panels(profile), *hicache_host_panels(profile, topology),
              *pd_transfer_panels(profile)]
    elif text:
        kv = [source_status_panel(f"{GROUP}.engine_unavailable", profile, ["sglang"], "GPU KV pool: not available")]
    disks: list[PanelSpec] = []
    hosts: list[PanelSpec] = []
    if profile.exported(NODE_EXPORTER) and profile.disks.has_cache_tier:
        disks = [*disk_panels(profile), *filesystem_panels(profile, topology)]
        hosts = host_panels(profile, topology)
    elif profile.exported(NODE_EXPORTER):
        disks, hosts = [no_cache_tier_panel(profile)], host_panels(profile, topology)
    else:
        hosts = [source_status_panel(f"{GROUP}.node_unavailable", profile, [NODE_EXPORTER],
                                     "Cache disks, CPU and host memory: not available")]
    if not text:
        return split_rows(GROUP, VIDEO_TITLE, [("node", VIDEO_TITLE, [*disks, *hosts], False)])
    return split_rows(GROUP, TITLE, [
        ("kv", "KV cache" + (" per PP stage" if profile.has_pp else " per instance"), kv, False),
        ("store", "Store (Mooncake): capacity per replica and node, health", store_panels(profile, topology), False),
        ("disks", "Cache disks", disks, False),
        ("node", "Node health: CPU, host RAM, model disk", hosts, True),
    ])

