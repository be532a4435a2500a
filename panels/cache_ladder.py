"""The cache-evidence ladder over time (S29): each layer of the evidence chain on its own graph, in the
chain's order, per node, on one shared time axis beside the deployment's TTFT p95, so a Host or Store
stall lines up with a latency spike:

    occupancy -> metadata (query) hit -> prefetch transfer -> final reuse per tier -> physical reads/writes

The window tables of the Cache evidence group hold the same layers as totals; here each layer is a rate.
Every graph says what its layer proves and what it does not (a query hit is no transfer, a transfer no
reuse, S9); series are per node and PP stage and never added across stages (S3). In a PD deployment every
per-node layer is drawn once per pool, the pool read from the engine's own ``engine_type`` (joined by node
for the series that lack it: radix cache, storage, disks), so prefill and decode never share an axis (S27);
the TTFT reference and the master's whole-Store lookups have no node, and stay one graph.
"""

from __future__ import annotations

from dashgen_panels.engine_load import pd_roles, pool_key, pool_title
from dashgen_queries import hicache as sg
from dashgen_queries import mooncake as mc
from dashgen_queries import node_exporter as ne
from dashgen_queries import pd
from dashgen_queries.sglang_slo import latency_quantile

from dashgen.deployment.profile import TEXT, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import ratio_axis, source_status_panel, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Cache evidence over time"
WORKLOADS = (TEXT,)  # S25: the workload kinds this group serves (dashgen.dashboard)
KEY = "cache_ladder"
STAGE = "{{node}} PP{{pp_rank}}"


def _stage(profile: Profile) -> str:
    """The series legend: node and PP stage, or the node alone where the profile has no PP (an instance)."""
    return STAGE if profile.has_pp else "{{node}}"


PER_STAGE = (
    "per node and PP stage, one TP rank per DP group, DP groups added; stages are never added (S3); a "
    "counter that appears only at its first event draws nothing until its second sample"
)


def _graph(key: str, title: str, evidence: Evidence, targets: list[Target], unit: str, **fields) -> PanelSpec:
    return timeseries(f"{KEY}.{key}", title, evidence, targets, unit=unit, width=24, height=6, **fields)


def _pooled(
    profile: Profile, key: str, title: str, evidence: Evidence, targets: list[Target], unit: str, role: str, **fields
) -> PanelSpec:
    """A per-node layer for one pool of a PD deployment (``role``; "" without pools): every target kept to that
    pool's nodes with its ``engine_type`` attached, the legend naming it, the limit saying so (S27)."""
    if role:
        targets = [
            Target(pd.in_pool(profile, f"({t.expr})", role), f"{t.legend} · {{{{engine_type}}}}") for t in targets
        ]
        evidence = Evidence(
            evidence.source,
            evidence.quantity,
            f'{evidence.limit}; the {role} pool only (engine_type="{role}", joined by node): '
            "prefill and decode are never on one axis or one sum (S27)",
            layer=evidence.layer,
        )
    return _graph(pool_key(key, role), pool_title(title, role), evidence, targets, unit, **fields)


def latency_reference(profile: Profile) -> PanelSpec:
    return _graph(
        "ttft_p95",
        "Ladder: TTFT p95, whole deployment (s)",
        Evidence(
            "SGLang tokenizer (sglang:time_to_first_token_seconds histogram)",
            "p95 time to first token of finished requests over the whole deployment, seconds, on the same "
            "time axis as the ladder below",
            "a reference for lining up the layers, not one of them: a latency spike with a flat ladder points "
            "away from the cache; buckets bound the precision",
        ),
        [Target(latency_quantile(profile, "sglang:time_to_first_token_seconds", 0.95), "TTFT p95")],
        "s",
    )


def occupancy(profile: Profile, role: str = "") -> PanelSpec:
    targets = [Target(sg.gpu_kv_occupancy_pct(profile), f"GPU KV · {_stage(profile)}")]
    if profile.exported("hicache"):
        targets.append(Target(sg.host_occupancy_pct(profile), f"Host KV · {_stage(profile)}"))
    return _pooled(
        profile,
        "occupancy",
        "Ladder 1: tier occupancy per node (%)",
        Evidence(
            "SGLang scheduler kv_used_tokens + kv_evictable_tokens / max_total_num_tokens; HiCache "
            "hicache_host_used_tokens / hicache_host_total_tokens",
            "share of each tier's token slots holding data, per node and PP stage, 0-100 %",
            "occupancy is not reuse: a full tier proves nothing about hits. " + PER_STAGE,
            layer="occupancy",
        ),
        targets,
        role=role,
        **ratio_axis("percent"),
    )


def query_hits(profile: Profile, roles: tuple[str, ...] = ("",)) -> list[PanelSpec]:
    panels = [
        _pooled(
            profile,
            "query_hits",
            "Ladder 2: Store query hits per node (engine L3 lookups, tokens/s)",
            Evidence(
                "SGLang storage collector sglang:storage_prefetch_hit_tokens_total",
                "tokens per second an L3 query found in the Store, per node and PP stage",
                "a metadata answer before any host allocation or transfer: not a transfer and not a reuse (S9). "
                + PER_STAGE,
                layer="metadata (query) hit",
            ),
            [Target(sg.logical_rate(profile, sg.PREFETCH_HIT), _stage(profile))],
            "count:tok/s",
            role,
        )
        for role in roles
    ]
    if profile.exported("mooncake_master"):
        panels.append(
            _graph(
                "master_get_hits",
                "Ladder 2: Store get hit share (master, whole Store)",
                Evidence(
                    "Mooncake master valid_get_nums_ / total_get_nums_ (GetReplicaList with a completed replica / all)",
                    "share of the master's replica lookups that found a completed replica, 0-100 %",
                    "a lookup answer, not a transfer and not a reuse; the master's counters have no storage-node "
                    "label, so there is no per-node split (S14); HA masters are read once (max over targets). A "
                    "'Store hit 92 %' figure is this layer",
                    layer="metadata (query) hit",
                ),
                [Target(mc.get_hit_share_per_master(profile), "valid / all gets · {{master}}")],
                **ratio_axis("percentunit"),
            )
        )
    return panels


def transfer(profile: Profile, role: str = "") -> PanelSpec:
    return _pooled(
        profile,
        "prefetch_transfer",
        "Ladder 3: Store→Host prefetch transfer per node (tokens/s)",
        Evidence(
            "SGLang storage collector sglang:prefetched_tokens_total",
            "tokens per second prefetched from the Store into the Host tier, per node and PP stage",
            "a transfer is an attempt: prefetched tokens may be dropped before any request reuses them "
            "(S9). " + PER_STAGE,
            layer="prefetch transfer",
        ),
        [Target(sg.logical_rate(profile, sg.PREFETCHED), _stage(profile))],
        "count:tok/s",
        role,
    )


def final_reuse(profile: Profile, role: str = "") -> PanelSpec:
    tiers = [("gpu", "GPU")] + [
        (t, n)
        for t, n, source in (("host", "Host", "hicache"), ("store", "Store", "hicache_storage"))
        if profile.exported(source)
    ]
    targets = [
        Target(
            sg.logical_rate(profile, sg.PREFILL_EFFECTIVE, f'mode="{sg.TIERS[tier][0]}"'), f"{name} · {_stage(profile)}"
        )
        for tier, name in tiers
    ]
    return _pooled(
        profile,
        "final_reuse",
        "Ladder 4: final reuse per tier per node (tokens/s)",
        Evidence(
            "SGLang scheduler sglang:prefill_effective_tokens_total{mode=device_hit|host_hit|storage_hit}",
            "tokens per second the engine reported as reused at prefill from each tier, per node and PP stage",
            "the only layer that proves reuse (S9); tiers are separate series, never added. " + PER_STAGE,
            layer="final reuse",
        ),
        targets,
        "count:tok/s",
        role,
    )


def physical(profile: Profile, role: str = "") -> list[PanelSpec]:
    panels = [
        _pooled(
            profile,
            "host_bytes",
            "Ladder 5: GPU↔Host bytes per node (bytes/s)",
            Evidence(
                "SGLang HiCache sglang:hicache_backup_bytes_total (GPU→Host), sglang:load_back_bytes_total (Host→GPU)",
                "physical bytes per second in each direction, TP shards summed, per node and stage",
                "bytes moved prove I/O, not reuse; the two directions are separate series (S8)",
                layer="physical reads/writes",
            ),
            [
                Target(sg.shard_bytes_rate(profile, sg.BACKUP_BYTES), f"GPU→Host backup · {_stage(profile)}"),
                Target(sg.shard_bytes_rate(profile, sg.LOAD_BACK_BYTES), f"Host→GPU load-back · {_stage(profile)}"),
            ],
            "Bps",
            role,
        )
    ]
    if profile.exported("hicache_storage"):
        panels.append(
            _pooled(
                profile,
                "store_writes",
                "Ladder 5: Host→Store backed-up per node (tokens/s)",
                Evidence(
                    "SGLang storage collector sglang:backuped_tokens_total",
                    "tokens per second acknowledged as written to the Store, per node and PP stage",
                    "a write proves the Store holds the data, not that anything reads it. " + PER_STAGE,
                    layer="physical reads/writes",
                ),
                [Target(sg.logical_rate(profile, sg.BACKUPED), _stage(profile))],
                "count:tok/s",
                role,
            )
        )
    if profile.exported("node_exporter") and profile.disks.has_cache_tier:
        legend = "{{node}} {{device}}"
        panels.append(
            _pooled(
                profile,
                "disk_bytes",
                "Ladder 5: cache disk read / write per node (bytes/s)",
                Evidence(
                    "node_exporter node_disk_read_bytes_total, node_disk_written_bytes_total on the cache devices",
                    "bytes per second read and written on each cache disk",
                    "everything on the disk counts, not only KV; an idle disk gives no point, not 0 (S6 'no I/O')",
                    layer="physical reads/writes",
                ),
                [
                    Target(ne.disk_rate(profile, "node_disk_read_bytes_total"), legend + " read"),
                    Target(ne.disk_rate(profile, "node_disk_written_bytes_total"), legend + " write"),
                ],
                "Bps",
                role,
            )
        )
    return panels


def unavailable(profile: Profile) -> PanelSpec:
    return source_status_panel(
        f"{KEY}.unavailable", profile, ["sglang", "hicache"], "Cache evidence over time: not available"
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    if not (profile.exported("sglang") and profile.exported("hicache")):
        panels: list[PanelSpec] = [unavailable(profile)]
    else:
        roles = pd_roles(profile)  # ("",) without pools: one graph per layer
        panels = [latency_reference(profile), *(occupancy(profile, role) for role in roles)]
        if profile.exported("hicache_storage"):
            panels += [*query_hits(profile, roles), *(transfer(profile, role) for role in roles)]
        panels += [
            *(final_reuse(profile, role) for role in roles),
            *(panel for role in roles for panel in physical(profile, role)),
        ]
    return GroupSpec(key=KEY, title=TITLE, panels=tuple(panels))
