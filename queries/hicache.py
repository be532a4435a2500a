"""PromQL for the SGLang cache tiers as the cache-evidence tables read them (metric catalogue §1.2-§1.5).

Tiers: GPU KV (scheduler gauges), Host (HiCache L2 gauges), Store (HiCache L3 storage counters).
Every query keeps the node and the PP stage (S2, S3): a request is counted once in each of its PP
stages, so nothing here ever adds stages together. Counting rules from the catalogue's traps:

- logical token counters (``*_tokens_total``, storage counters, ``prefill_effective_tokens_total``)
  carry the same count on every TP rank, or 0 on non-logging ranks: read one rank with ``max``
  per DP group, then add the DP groups (under DP attention each ``dp_rank`` serves its own requests);
- per-shard byte counters (``hicache_backup_bytes_total``, ``load_back_bytes_total``): sum TP ranks;
- counters that appear only at their first event are never zero-filled (S7): absent stays absent,
  and a series created inside the window keeps that first event (``first_event_increase``).
"""

from __future__ import annotations

from dashgen_queries import inventory as inv
from dashgen_queries.promql import (
    WINDOW,
    agg,
    divide,
    increase,
    job,
    matcher,
    node_var,
    rate,
    scale,
    selector,
    window_increase,
)
from dashgen_queries.sglang import on_logging_ranks, stage_key

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.exporters.table import HICACHE, HICACHE_STORAGE, SGLANG

# GPU (L1) KV pool, scheduler gauges (logging rank).
KV_USED = SGLANG.name("sglang:kv_used_tokens")
KV_EVICTABLE = SGLANG.name("sglang:kv_evictable_tokens")
KV_MAX = SGLANG.name("sglang:max_total_num_tokens")
# Host (L2) tier.
HOST_USED = HICACHE.name("sglang:hicache_host_used_tokens")
HOST_TOTAL = HICACHE.name("sglang:hicache_host_total_tokens")
BACKUP_BYTES = HICACHE.name("sglang:hicache_backup_bytes_total")  # GPU->Host, per shard
LOAD_BACK_BYTES = HICACHE.name("sglang:load_back_bytes_total")  # Host->GPU, per shard
BACKUP_TOKENS = HICACHE.name(
    "sglang:hicache_backup_tokens_total"
)  # GPU->Host in tokens (written before the byte counters)
LOAD_BACK_TOKENS = HICACHE.name("sglang:load_back_tokens_total")  # Host->GPU in tokens
DROPPED = HICACHE.name(
    "sglang:hicache_dropped_tokens_total"
)  # GPU KV destroyed without Host backup (not Host eviction)
# Store (L3) tier, storage collector.
BACKUPED = HICACHE_STORAGE.name("sglang:backuped_tokens_total")  # Host->Store, acknowledged
PREFETCHED = HICACHE_STORAGE.name("sglang:prefetched_tokens_total")  # Store->Host, before reuse or discard
PREFETCH_HIT = HICACHE_STORAGE.name(
    "sglang:storage_prefetch_hit_tokens_total"
)  # tokens an L3 query found, before any transfer
BACKUP_DROPPED = HICACHE_STORAGE.name("sglang:hicache_backup_dropped_tokens_total")  # never reached the Store
UNFULFILLED = HICACHE_STORAGE.name("sglang:storage_prefetch_unfulfilled_tokens_total")
DEFERRED = HICACHE_STORAGE.name("sglang:storage_prefetch_deferred_tokens_total")
# Reuse: scheduler-level per stage, request-level on the replica's entry node.
PREFILL_EFFECTIVE = SGLANG.name("sglang:prefill_effective_tokens_total")
CACHED = SGLANG.name("sglang:cached_tokens_total")
REALTIME = SGLANG.name("sglang:realtime_tokens_total")

# Tier -> (prefill_effective mode, cached_tokens cache_source).
TIERS = {"gpu": ("device_hit", "device"), "host": ("host_hit", "host"), "store": ("storage_hit", "storage")}
# S16: the prefetch-not-satisfied reasons the catalogue lists; the first four are the ones the
# primary article names, each its own series.
UNFULFILLED_REASONS = (
    "anchor_lost",
    "aux_window_trim",
    "below_threshold",
    "cache_admission_shortfall",
    "host_capacity",
    "device_capacity",
    "device_covered",
    "storage_transfer",
    "deadline",
    "device_overlap",
    "dropped",
)
DEFERRED_REASONS = ("host_capacity", "device_capacity")
GIB = 2**30
NOT_SPLITTABLE = -1  # marker value of a request-level cell on a node it cannot be attributed to


def series(profile: Profile, metric: str, *matchers: str) -> str:
    """``metric{job="sglang", node=~"$node", ...}``."""
    return selector(metric, job(profile, "sglang"), node_var(profile), *matchers)


def one_rank(profile: Profile, expr: str, *extra: str) -> str:
    """A logical count read once per node and stage: ``max`` over the TP ranks of each DP group (they
    carry the same count, or 0 off the logging rank), then the DP groups added (disjoint requests
    under DP attention; one group, ``dp_rank`` absent or "0", otherwise). Never a sum over TP ranks
    or PP stages (S3)."""
    per_group = agg("max", stage_key(profile, profile.label("dp_rank"), *extra), expr)
    return agg("sum", stage_key(profile, *extra), per_group)


# The shared form (queries/promql.py); the name stays for the callers that read it as this module's.
first_event_increase = window_increase


def _occupancy_pct(profile: Profile, used: str, total: str) -> str:
    """used / total per node and stage, %: each read once per DP group (one TP rank) and the DP
    groups' pools added before dividing, so DP groups are weighted by their pool size."""
    return scale(divide(one_rank(profile, used), one_rank(profile, total)), 100)


def gpu_kv_occupancy_pct(profile: Profile) -> str:
    """GPU KV tier at window end: (used + evictable) / max_total_num_tokens, %, one TP rank per DP group."""
    return _occupancy_pct(
        profile, f"{series(profile, KV_USED)} + {series(profile, KV_EVICTABLE)}", series(profile, KV_MAX)
    )


def host_occupancy_pct(profile: Profile) -> str:
    """Host tier at window end: hicache_host_used_tokens / hicache_host_total_tokens, %."""
    return _occupancy_pct(profile, series(profile, HOST_USED), series(profile, HOST_TOTAL))


def host_tokens(profile: Profile, metric: str) -> str:
    return one_rank(profile, series(profile, metric))


def stage_reuse(profile: Profile, mode: str, window: str = WINDOW) -> str:
    """Scheduler-level reuse of one tier (or ``input``) in ``window`` (the dashboard's), per node and stage."""
    mode_matcher = matcher("mode", "=", mode)
    return one_rank(
        profile,
        on_logging_ranks(profile, lambda m: increase(series(profile, PREFILL_EFFECTIVE, mode_matcher, m), window)),
    )


def entry_nodes(topology: Topology) -> list[str]:
    """Nodes whose tokenizer counts requests: node_rank 0 of each replica."""
    return sorted({replica.nodes[0] for replica in topology.replicas})


def request_reuse(profile: Profile, topology: Topology, cache_source: str) -> str:
    """Request-level final reuse of one tier in the window (tokenizer, replica entry node only).

    The tokenizer has no rank labels: its count belongs to the whole replica, so on the other nodes
    of a replica the value is the marker ``NOT_SPLITTABLE`` (-1, impossible for a token count), which
    the table maps to N/A (S14) instead of a faked split. NaN would be the natural marker, but
    VictoriaMetrics drops NaN samples from query results, so the cell would read as absent.
    """
    node = profile.label("node")
    cached = series(profile, CACHED, matcher("cache_source", "=", cache_source))
    counted = agg("sum", [node], first_event_increase(cached))
    engines = agg("max", [node], selector("up", job(profile, "sglang"), node_var(profile)))
    others = f"({engines} unless on({node}) {inv.entry_nodes(profile)})"  # the entry nodes: recorded inventory
    return f"{counted} or on({node}) ({others} * 0 + {NOT_SPLITTABLE})"


def shard_bytes_gib(profile: Profile, metric: str) -> str:
    """A per-shard byte counter's window increase summed over TP ranks (physical bytes), in GiB.
    Not pre-seeded: a shard whose counter appears inside the window keeps its first event."""
    return scale(agg("sum", stage_key(profile), first_event_increase(series(profile, metric))), 1 / GIB)


def logical_tokens(profile: Profile, metric: str) -> str:
    """A logical token counter (not pre-seeded) in the window, one TP rank per DP group, first event kept."""
    return one_rank(profile, on_logging_ranks(profile, lambda m: first_event_increase(series(profile, metric, m))))


# hicache_dropped_tokens_total{reason} (S10, S30): what each reason implicates.
DROPPED_REASONS = {
    "host_pressure": "implicates Host capacity: the Host tier had no room for the backup",
    "write_through_unbacked_eviction": "not a Host capacity signal: evicted under write-through before its backup "
    "completed",
}


def dropped_tokens(profile: Profile, reason: str) -> str:
    """GPU KV destroyed without Host backup for one ``reason``, in the window: one rank per pool, the pools
    added; reasons are never added to one another (S30)."""
    chosen = matcher("reason", "=", reason)
    counted = on_logging_ranks(profile, lambda m: first_event_increase(series(profile, DROPPED, chosen, m)))
    return agg("sum", stage_key(profile), one_rank(profile, counted, "pool"))


def logical_rate(profile: Profile, metric: str, *matchers: str) -> str:
    """A logical token counter's rate per node and stage (one TP rank per DP group), for the ladder over time."""
    return one_rank(profile, on_logging_ranks(profile, lambda m: rate(series(profile, metric, *matchers, m))))


def shard_bytes_rate(profile: Profile, metric: str) -> str:
    """A per-shard byte counter's rate summed over TP ranks (physical bytes per second), per node and stage."""
    return agg("sum", stage_key(profile), rate(series(profile, metric)))


def prefetch_reasons(profile: Profile, metric: str, reasons: tuple[str, ...]) -> str:
    """Window increase per node, stage and reason: each reason its own series (S16). Both reason
    counters are pre-seeded at 0, so the plain ``increase`` loses no first event."""
    chosen = matcher("reason", "=~", "|".join(reasons))
    return one_rank(profile, increase(series(profile, metric, chosen)), "reason")


def traffic_counter(profile: Profile) -> str:
    """Tokens processed by the node's schedulers (all modes): did the engine serve anything."""
    return series(profile, REALTIME)


def presence(profile: Profile, metric: str) -> str:
    return series(profile, metric)


def storage_presence(profile: Profile) -> str:
    """The HiCache Store tier's presence series: the deferred-prefetch counter, pre-seeded at 0 for its two
    reasons from the collector's start, like the unfulfilled-prefetch counter (same first version) but with
    two series per rank, not eleven (the reasons table reads it for every rank of the deployment)."""
    return series(profile, DEFERRED)
