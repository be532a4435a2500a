"""KV cache and NVMe: the GPU KV pool per rank and per PP stage, the HiCache host tier, PD KV
transfer, the Mooncake Store node-group capacity, and in their own rows the NVMe cache disks, their
filesystem, per-node CPU, host RAM and the model disk (``node_disks``). A deployment without a
text-generation pool (S25) gets only the disks, CPU and host memory row.

S17 is carried by keeping three kinds of number apart: configured limits (from the profile),
logical allocation (engine / Store master) and real filesystem usage (node_exporter), each on its
own panel; a disk sold as 3.84 TB is shown in decimal TB, its filesystem in binary TiB.
"""

from __future__ import annotations

from dashgen_panels.engine_load import pd_roles, pool_key, pool_matchers, pool_title
from dashgen_panels.node_disks import (
    GROUP,
    SIZE_KEYS,
    disk_panels,
    filesystem_panels,
    for_kind,
    host_panels,
    no_cache_tier_panel,
)
from dashgen_panels.node_disks import group_timeseries as _ts
from dashgen_panels.store_replica import store_panels
from dashgen_queries import pd
from dashgen_queries import sglang as sg
from dashgen_queries.promql import divide, scale

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.sizes import format_binary
from dashgen.deployment.topology import Topology
from dashgen.render.kit import (
    NO_DATA_TEXT,
    Column,
    Sort,
    ratio_axis,
    source_status_panel,
    table,
)
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target, split_rows

TITLE = "KV cache and NVMe"
WORKLOADS = (TEXT, VIDEO)  # S25: the workload kinds this group serves (dashgen.dashboard)
VIDEO_TITLE = "Disks, CPU and host memory"  # the group of a deployment without text-generation pools

ALL_SCHEDULERS = (
    "scheduler gauges exist for every TP rank only with --enable-metrics-for-all-schedulers; by default only the "
    "stats-logging rank (tp_rank 0) of each PP stage reports, so other ranks are absent, not empty"
)
PER_STAGE = (
    "every TP rank of a stage holds the same token slots (each a shard of the heads), so a stage shows the max "
    "over its TP ranks; stages are never summed (S3): a request holds slots in each of its PP stages"
)
NODE_EXPORTER = "node_exporter"


# --- GPU KV pool ---------------------------------------------------------------------------------


def kv_pool_table(profile: Profile) -> PanelSpec:
    node, pp_rank, tp_rank = profile.label("node"), profile.label("pp_rank"), profile.label("tp_rank")
    columns = (
        ("sglang:max_total_num_tokens", "KV pool capacity", "tokens"),
        ("sglang:kv_used_tokens", "Used by running requests", "tokens"),
        ("sglang:kv_evictable_tokens", "Evictable radix cache", "tokens"),
        ("sglang:kv_available_tokens", "Free", "tokens"),
        ("sglang:kv_cache_memory_usage_gb", "KV cache memory", "GB"),
    )
    cells = [Column(header, sg.per_rank_gauge(profile, metric), unit) for metric, header, unit in columns]
    used_share = scale(
        divide(
            sg.per_rank_gauge(profile, "sglang:kv_used_tokens"),
            sg.per_rank_gauge(profile, "sglang:max_total_num_tokens"),
        ),
        100,
    )
    cells.append(Column("Used / capacity", used_share, "%"))
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
        labels={node: "Node", pp_rank: "PP stage", tp_rank: "TP rank"},
        columns=cells,
        unit="none",
        decimals=0,
        width=24,
        height=10,
        no_value=NO_DATA_TEXT,
        sort=(Sort(cells[-1].header, descending=True),),
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
        (
            "kv_used_per_stage",
            "sglang:kv_used_tokens",
            _per(
                profile,
                "KV slots used by running requests per PP stage (tokens)",
                "KV slots used by running requests per instance (tokens)",
            ),
            "token slots locked by running requests",
        ),
        (
            "kv_evictable_per_stage",
            "sglang:kv_evictable_tokens",
            _per(
                profile,
                "KV slots held by the radix cache per PP stage (evictable, tokens)",
                "KV slots held by the radix cache per instance (evictable, tokens)",
            ),
            "token slots holding cached prefixes that can be evicted",
        ),
        (
            "kv_available_per_stage",
            "sglang:kv_available_tokens",
            _per(profile, "KV slots free per PP stage (tokens)", "KV slots free per instance (tokens)"),
            "free token slots",
        ),
    )
    panels = [
        _ts(
            pool_key(key, role),
            pool_title(title, role),
            Evidence(
                f"SGLang scheduler ({metric})",
                f"logical {meaning}, per node and PP stage",
                PER_STAGE + "; " + ALL_SCHEDULERS,
            ),
            [Target(sg.named_stage(profile, gauge(profile, metric)), legend)],
            decimals=0,
        )
        for key, metric, title, meaning in slots
    ]
    used = gauge(profile, "sglang:kv_used_tokens")
    capacity = gauge(profile, "sglang:max_total_num_tokens")
    held = f"{used} + {gauge(profile, 'sglang:kv_evictable_tokens')}"
    panels += [
        _ts(
            pool_key("kv_locked_ratio", role),
            pool_title(
                _per(
                    profile,
                    "KV pool locked by running requests per PP stage (used / capacity)",
                    "KV pool locked by running requests per instance (used / capacity)",
                ),
                role,
            ),
            Evidence(
                "SGLang scheduler (sglang:kv_used_tokens / sglang:max_total_num_tokens)",
                "share of the stage's KV token slots locked by running requests, 0-100 % on a fixed axis "
                "(KV pressure: near 100 % requests get retracted)",
                PER_STAGE + "; excludes the evictable radix cache (see the next panel)",
            ),
            [Target(sg.named_stage(profile, divide(used, capacity)), legend)],
            **ratio_axis("percentunit"),
        ),
        _ts(
            pool_key("kv_held_ratio", role),
            pool_title(
                _per(
                    profile,
                    "KV pool occupied incl. radix cache per PP stage ((used + evictable) / capacity)",
                    "KV pool occupied incl. radix cache per instance ((used + evictable) / capacity)",
                ),
                role,
            ),
            Evidence(
                "SGLang scheduler (sglang:kv_used_tokens, sglang:kv_evictable_tokens, sglang:max_total_num_tokens)",
                "share of the stage's KV token slots holding data, running or cached (the GPU tier's "
                "occupancy), 0-100 % fixed axis",
                PER_STAGE + "; a high value is normal for a warm prefix cache: evictable slots are reclaimed on demand",
            ),
            [Target(sg.named_stage(profile, divide(held, capacity)), legend)],
            **ratio_axis("percentunit"),
        ),
        _ts(
            pool_key("kv_evictions", role),
            pool_title(
                _per(profile, "GPU KV evictions per PP stage (tokens/s)", "GPU KV evictions per instance (tokens/s)"),
                role,
            ),
            Evidence(
                "SGLang radix cache (sglang:evicted_tokens_total)",
                "device token slots freed by eviction per second (backed up to host or destroyed), max over "
                "the TP ranks of a stage",
                "counter absent (not 0) until the first eviction, and rate() starts from a series' first "
                "stored sample, so the first eviction batch (the value the counter is created with) is "
                "never drawn; an eviction is not a loss when HiCache backed the tokens up to host. " + PER_STAGE,
            ),
            [
                Target(
                    sg.named_stage(
                        profile, pd.in_pool(profile, sg.per_stage_rate(profile, "sglang:evicted_tokens_total"), role)
                    ),
                    legend,
                )
            ],
            "count:tok/s",
        ),
    ]
    return panels


def hicache_host_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    """The Host tier's occupancy per stage, once per pool in a PD deployment (S27)."""
    if not profile.exported("hicache"):
        return [
            source_status_panel(
                f"{GROUP}.hicache_host_unavailable",
                profile,
                ["hicache"],
                "HiCache host (L2) tier occupancy: not available",
                width=8,
            )
        ]
    per_rank = topology.capacity.host_per_rank
    quota = (
        f" The profile's host cache is {format_binary(per_rank)} per rank "
        f"({format_binary(topology.capacity.host_per_node or 0)} per node)."
        if per_rank
        else ""
    )
    panels = []
    for role in pd_roles(profile):
        # the Host-tier gauges may lack engine_type (HiCache collector labels): the pool is joined by node
        used = sg.per_stage_gauge(profile, "sglang:hicache_host_used_tokens")
        total = sg.per_stage_gauge(profile, "sglang:hicache_host_total_tokens")
        panels.append(
            _ts(
                pool_key("hicache_host_occupancy", role),
                pool_title(
                    _per(
                        profile,
                        "HiCache host (L2) tier occupancy per PP stage (used / total tokens)",
                        "HiCache host (L2) tier occupancy per instance (used / total tokens)",
                    ),
                    role,
                ),
                Evidence(
                    "SGLang scheduler (sglang:hicache_host_used_tokens / sglang:hicache_host_total_tokens)",
                    "share of the host KV pool's token slots in use, per node and PP stage, 0-100 % fixed axis."
                    + quota,
                    "only with --enable-hierarchical-cache; tokens, not bytes; " + PER_STAGE,
                ),
                [
                    Target(
                        sg.named_stage(profile, pd.in_pool(profile, f"({divide(used, total)})", role)),
                        sg.stage_legend(profile),
                    )
                ],
                **ratio_axis("percentunit"),
            )
        )
    return panels


def pd_transfer_panels(profile: Profile) -> list[PanelSpec]:
    if not sg.is_pd(profile):
        return []
    labels = [profile.label("node"), profile.label("pp_rank"), sg.ENGINE_TYPE]
    limit = (
        "per node and PP stage (buckets summed by le over the TP ranks); SGLang records these histograms on the "
        "prefill side only (disaggregation/prefill.py, S35): the decode pool writes none, so only the prefill "
        "pool has a graph, never a sum of both pools"
    )

    def quantile(q: float, histogram: str, role: str) -> str:
        return sg.histogram_quantile(q, sg.engine(profile, f"{histogram}_bucket", *pool_matchers(role)), labels)

    role = "prefill"  # the only pool that records a KV transfer
    return [
        _ts(
            pool_key("pd_kv_transfer_latency", role),
            pool_title("PD KV transfer latency p95 per node (ms)", role),
            Evidence(
                "SGLang scheduler (sglang:kv_transfer_latency_ms histogram)",
                "p95 time to move a request's KV from prefill to decode, milliseconds",
                limit,
            ),
            [Target(quantile(0.95, "sglang:kv_transfer_latency_ms", role), "p95 {{node}} · {{engine_type}}")],
            "ms",
        ),
        _ts(
            pool_key("pd_kv_transfer_speed", role),
            pool_title("PD KV transfer speed p50 per node (GB/s)", role),
            Evidence(
                "SGLang scheduler (sglang:kv_transfer_speed_gb_s histogram)",
                "median per-transfer speed, decimal GB/s",
                limit + "; small transfers under-state the link",
            ),
            [Target(quantile(0.5, "sglang:kv_transfer_speed_gb_s", role), "p50 {{node}} · {{engine_type}}")],
            "GBs",
        ),
        _ts(
            pool_key("pd_kv_transfer_size", role),
            pool_title("PD KV transfer size p95 per node (MB)", role),
            Evidence(
                "SGLang scheduler (sglang:kv_transfer_total_mb histogram)",
                "p95 KV bytes moved per request, decimal MB (grows with prompt length)",
                limit,
            ),
            [Target(quantile(0.95, "sglang:kv_transfer_total_mb", role), "p95 {{node}} · {{engine_type}}")],
            "decmbytes",
        ),
    ]


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Four rows, as the seed groups them: KV cache (GPU pool, Host tier, PD transfer), Store, cache disks
    (or one line saying the tier is not deployed), node health (CPU, host RAM, model disk). A profile without a
    text pool (S25) has no KV, HiCache or Store: one row of its disks, CPU and host memory."""
    text = profile.has_kind(TEXT)
    kv: list[PanelSpec] = []
    if profile.exported("sglang") and text:
        kv = [
            kv_pool_table(profile),
            *kv_stage_panels(profile),
            *hicache_host_panels(profile, topology),
            *pd_transfer_panels(profile),
        ]
    elif text:
        kv = [source_status_panel(f"{GROUP}.engine_unavailable", profile, ["sglang"], "GPU KV pool: not available")]
    disks: list[PanelSpec] = []
    hosts: list[PanelSpec] = []
    if profile.exported(NODE_EXPORTER) and profile.disks.has_cache_tier:
        # the disks' sizes (configured, measured) are reference material: the Reference group (S34)
        disks = [
            *disk_panels(profile),
            *(panel for panel in filesystem_panels(profile, topology) if panel.key not in SIZE_KEYS),
        ]
        hosts = host_panels(profile, topology)
    elif profile.exported(NODE_EXPORTER):
        disks, hosts = [no_cache_tier_panel(profile)], host_panels(profile, topology)
    else:
        hosts = [
            source_status_panel(
                f"{GROUP}.node_unavailable",
                profile,
                [NODE_EXPORTER],
                for_kind(
                    profile,
                    "Cache disks, CPU and host memory: not available",
                    "Disks, CPU and host memory: not available",
                ),
            )
        ]
    if not text:
        return split_rows(GROUP, VIDEO_TITLE, [("node", VIDEO_TITLE, [*disks, *hosts], False)])
    # In an incident (S34): where is it broken first (disks, Store, node), the KV pools after.
    return split_rows(
        GROUP,
        TITLE,
        [
            ("disks", "Cache disks", disks, False),
            (
                "store",
                "Store (Mooncake): capacity per replica and node, health",
                store_panels(profile, topology),
                False,
            ),
            ("node", "Node health: CPU, host RAM, clock, model disk", hosts, True),
            ("kv", "KV cache" + (" per PP stage" if profile.has_pp else " per instance"), kv, False),
        ],
    )
