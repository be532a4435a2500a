"""PromQL for the P:D balance of a PD-disaggregated pool (S27): which pool is the bottleneck.

Pool membership comes from the engine's own ``engine_type`` label, never from a node list frozen in
the profile (P:D ratios change): ``pool_of_node`` is one series per (node, engine_type) of the
scheduler gauge every engine reports, and per-GPU series are joined to it by node. Pools never
share a node (the profile checks it); a node that switches role inside the rate interval matches
two pools and the join fails for that step rather than mixing them.

Nothing here adds prefill and decode together: every result keeps ``engine_type`` or is selected
for one pool. Request counts are summed over the instances of one pool on the first PP stage only
(each PP stage's scheduler sees the same requests, S3). TTFT parts are means per request
(``rate(_sum) / rate(_count)``), which add up where percentiles do not.
"""

from __future__ import annotations

from dashgen_queries import sglang as sg
from dashgen_queries.gpu_source import GpuSource
from dashgen_queries.promql import agg, divide, job, matcher, node_var, rate, scale, selector

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import SGLANG

POOL_METRIC = SGLANG.name("sglang:num_running_reqs")  # every scheduler reports it, labelled with its engine_type
TTFT = SGLANG.name("sglang:time_to_first_token_seconds")
QUEUE_TIME = SGLANG.name("sglang:queue_time_seconds")
STAGE_LATENCY = SGLANG.name("sglang:per_stage_req_latency_seconds")
KV_TRANSFER_MS = SGLANG.name("sglang:kv_transfer_latency_ms")
PREFILL_FORWARD = "prefill_forward"  # SGLang's stage name for the prefill forward pass


def role(pool: str) -> str:
    """The matcher selecting one pool by the engine's own label."""
    return matcher(sg.ENGINE_TYPE, "=", pool)


def first_stage(profile: Profile) -> str:
    """``pp_rank="0"``: one scheduler per replica, so requests are counted once (S3)."""
    return matcher(profile.label("pp_rank"), "=", "0")


def pool_of_node(profile: Profile, pool: str | None = None) -> str:
    """One series per (node, engine_type) of the nodes in ``$node``: which pool each node serves now
    (only ``pool``'s nodes when given)."""
    matchers = [role(pool)] if pool else []
    return agg(
        "group", [profile.label("node"), sg.ENGINE_TYPE], sg.engine(profile, POOL_METRIC, *matchers, stage=False)
    )


def in_pool(profile: Profile, expr: str, pool: str) -> str:
    """A series without an engine_type label of its own (radix cache, storage, GPU) kept to one pool's nodes,
    the pool attached by node from the engine's own label; as is without pools (``pool`` "")."""
    if not pool:
        return expr
    return f"{expr} * on({profile.label('node')}) group_left({sg.ENGINE_TYPE}) {pool_of_node(profile, pool)}"


def gpu_busy(profile: Profile, source: GpuSource, pool: str | None = None) -> str:
    """GPU busy (0-1) per GPU of the selected nodes (of ``pool`` when given), with the node's pool
    (``engine_type``) attached from the engine's own label."""
    node = profile.label("node")
    raw = selector(source.metric("busy"), job(profile, source.key), node_var(profile))
    per_gpu = scale(agg("max", [node, profile.label("gpu")], raw), source.scale("busy"))
    return f"{per_gpu} * on({node}) group_left({sg.ENGINE_TYPE}) {pool_of_node(profile, pool)}"


def pool_busy(profile: Profile, source: GpuSource) -> str:
    """Mean GPU busy over the GPUs of each pool (0-1), one series per engine_type."""
    return agg("avg", [sg.ENGINE_TYPE], gpu_busy(profile, source))


def node_busy(profile: Profile, source: GpuSource, pool: str) -> str:
    """Mean GPU busy over each node's GPUs, for the nodes of one pool."""
    return agg("avg", [profile.label("node"), sg.ENGINE_TYPE], gpu_busy(profile, source, pool))


def gpus_of_pool(profile: Profile, source: GpuSource) -> str:
    """GPUs reporting busy per pool at the evaluation time (a count of GPUs, not a sum of a quantity)."""
    return agg("count", [sg.ENGINE_TYPE], gpu_busy(profile, source))


def instances_of_pool(profile: Profile) -> str:
    """Nodes serving each pool now, as the engines label themselves."""
    return agg("count", [sg.ENGINE_TYPE], pool_of_node(profile))


def pool_tokens(profile: Profile, modes: str, pool: str | None = None, *by: str) -> str:
    """Tokens per second a pool's schedulers processed in ``modes`` (a regex of realtime_tokens_total modes),
    first PP stage, TP copies removed with max, instances and DP groups added; by engine_type (and ``by``)."""
    matchers = [first_stage(profile), matcher("mode", "=~", modes)] + ([role(pool)] if pool else [])
    per_scheduler = sg.per_stage_rate(profile, SGLANG.name("sglang:realtime_tokens_total"), *matchers, extra=("mode",))
    return agg("sum", [sg.ENGINE_TYPE, *by], per_scheduler)


def pool_requests(profile: Profile, metric: str, pool: str | None = None) -> str:
    """A scheduler request gauge summed over a pool's instances and DP groups (first PP stage, TP copies
    removed with max): the pool's load, one series per engine_type."""
    matchers = [first_stage(profile)] + ([role(pool)] if pool else [])
    return agg("sum", [sg.ENGINE_TYPE], sg.per_stage_gauge(profile, metric, *matchers))


def least_kv_headroom(profile: Profile, pool: str | None = None) -> str:
    """The smallest KV headroom among a pool's schedulers: 1 - used / capacity (the full-attention pool's
    slots not locked by running requests; evictable radix-cache slots count as headroom)."""
    matchers = [role(pool)] if pool else []
    used = sg.per_stage_gauge(profile, SGLANG.name("sglang:kv_used_tokens"), *matchers)
    capacity = sg.per_stage_gauge(profile, SGLANG.name("sglang:max_total_num_tokens"), *matchers)
    return agg("min", [sg.ENGINE_TYPE], f"1 - {divide(used, capacity)}")


def mean_seconds(
    profile: Profile, histogram: str, pool: str, by: tuple[str, ...] = (), *matchers: str, factor: float = 1.0
) -> str:
    """Mean observation per request over the rate interval, seconds: rate(_sum) / rate(_count), summed over
    the pool's schedulers (by ``engine_type`` and ``by``) before dividing, never an average of means."""
    labels = [sg.ENGINE_TYPE, *by]
    total = agg("sum", labels, rate(sg.engine(profile, f"{histogram}_sum", role(pool), *matchers)))
    count = agg("sum", labels, rate(sg.engine(profile, f"{histogram}_count", role(pool), *matchers)))
    return scale(divide(total, count), factor)


def mean_ttft(profile: Profile, pool: str) -> str:
    """Mean TTFT of the requests a pool's tokenizers finished (request level, no rank labels)."""
    labels = [sg.ENGINE_TYPE]
    total = agg("sum", labels, rate(sg.tokenizer(profile, f"{TTFT}_sum", role(pool))))
    count = agg("sum", labels, rate(sg.tokenizer(profile, f"{TTFT}_count", role(pool))))
    return divide(total, count)
