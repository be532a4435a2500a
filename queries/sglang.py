"""PromQL for the SGLang engine: scheduler series (per TP/PP rank) and tokenizer series (request level).

Two label worlds (metric catalogue §1.1):
- scheduler series carry ``tp_rank``/``pp_rank`` (and ``engine_type``); by default only the
  stats-logging TP rank of each PP stage reports, and every TP rank of a stage reports the same
  logical count, so per stage we take ``max`` over TP ranks, never a ``sum`` — and nothing is
  ever aggregated across ``pp_rank`` (S3: one request is counted once in each of its stages);
- tokenizer series come from the API server on node 0 of each instance, without rank labels.

Every series is narrowed to the ``$node`` selection (and ``$stage`` where the profile has PP); the one exception is
``restarted_ranks`` (which PP stages restarted within ``RESTART_WINDOW``: the EngineRestarted alert and the health
state), written for every stage of the deployment.
"""

from __future__ import annotations

from collections.abc import Callable

from dashgen_queries.promql import agg, job, matcher, node_var, rate, selector

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology, topology_of
from dashgen.exporters.table import SGLANG

ENGINE_TYPE = "engine_type"  # SGLang's own label: unified / prefill / decode
STAGE_NAME = "stage_name"  # added by ``named_stage``: "<pp_rank>" or "<pp_rank> dp<dp_rank>"
STAGE_LEGEND = "PP{{" + STAGE_NAME + "}}"  # "PP0", or "PP0 dp1" under DP attention
QUANTILES = (0.5, 0.95, 0.99)


def stage_var(profile: Profile) -> str:
    """``pp_rank=~"$stage"`` when the profile has a PP stage variable, else nothing."""
    return f'{profile.label("pp_rank")}=~"$stage"' if profile.has_pp else ""


def engine(profile: Profile, metric: str, *matchers: str, stage: bool = True) -> str:
    """An SGLang series on the selected nodes (and PP stages, for scheduler/radix series)."""
    return selector(metric, job(profile, "sglang"), node_var(profile), stage_var(profile) if stage else "", *matchers)


def tokenizer(profile: Profile, metric: str, *matchers: str) -> str:
    """A tokenizer (request-level) series: node 0 of each instance, no rank labels."""
    return engine(profile, metric, *matchers, stage=False)


def stage_key(profile: Profile, *extra: str) -> list[str]:
    """Node and PP stage: the key of one row or series per stage, the finest grouping the cache tables and
    the SLO group's stage panels use (never coarser: stages are never summed, S3)."""
    return [profile.label("node"), profile.label("pp_rank"), *extra]


def on_logging_ranks(profile: Profile, build: Callable[[str], str]) -> str:
    """``build(matcher)`` read only where a logical count can be non-zero: the stats-logging TP rank of each DP
    group. Every other rank of a group carries 0 (a pre-seeded counter) or the same count (with
    ``--enable-metrics-for-all-schedulers``), so a ``max`` over the ranks above this reads the same value from
    an eighth of the series at TP8. Two reads joined by ``or``: ``tp_rank="0"`` (DP group 0's logging rank,
    the only group without DP attention) and every rank of the other DP groups (``dp_rank`` neither absent
    nor "0": nothing without DP attention), whose logging rank the profile does not name."""
    first, others = (build(ranks) for ranks in logging_rank_matchers(profile))
    return f"({first} or {others})"


def node_first_rank_matchers(profile: Profile) -> tuple[str, str]:
    """Matchers of two selectors that together hold, on every node, the lowest TP rank it hosts of DP group 0
    (from the profile's topology: ``tp_rank`` 0, or 8 on the second node of a TP16 stage) and every rank of the
    other DP groups. For per-shard counters, whose TP ranks all move together (each rank copies its shard of the
    same pages), one rank per node and DP group tells whether the node moved anything, from an eighth of the
    series at eight GPUs per node."""
    ranks = "|".join(str(r) for r in _node_first_ranks(topology_of(profile)))
    return matcher(profile.label("tp_rank"), "=~", ranks), matcher(profile.label("dp_rank"), "!~", "|0")


_FIRST_RANKS: dict[int, tuple[Topology, tuple[int, ...]]] = {}


def _node_first_ranks(topology: Topology) -> tuple[int, ...]:
    """The lowest TP rank of each node, distinct and sorted; one pass over the ranks per topology (10,000 GPUs are
    10,000 ranks, and the reasons table asks once per counter and layer)."""
    hit = _FIRST_RANKS.get(id(topology))
    if hit is not None and hit[0] is topology:  # the topology is held here, so its id is not reused meanwhile
        return hit[1]
    first: dict[str, int] = {}
    for rank in topology.ranks:
        first[rank.node] = min(first.get(rank.node, rank.tp_rank), rank.tp_rank)
    found = tuple(sorted(set(first.values())))
    if len(_FIRST_RANKS) >= 16:
        _FIRST_RANKS.pop(next(iter(_FIRST_RANKS)))
    _FIRST_RANKS[id(topology)] = (topology, found)
    return found


def logging_rank_matchers(profile: Profile) -> tuple[str, str]:
    """The two matchers of :func:`on_logging_ranks`: DP group 0's logging rank, every rank of the other groups."""
    return matcher(profile.label("tp_rank"), "=", "0"), matcher(profile.label("dp_rank"), "!~", "|0")


def stage_labels(profile: Profile, *extra: str) -> list[str]:
    """Labels that keep one series per (node, PP stage[, DP rank], engine type)."""
    return [profile.label("node"), profile.label("pp_rank"), profile.label("dp_rank"), ENGINE_TYPE, *extra]


def rank_labels(profile: Profile) -> list[str]:
    """Labels that keep one series per engine rank (one GPU)."""
    return [profile.label("node"), profile.label("pp_rank"), profile.label("tp_rank"), profile.label("dp_rank")]


def instance_labels(profile: Profile, *extra: str) -> list[str]:
    """Labels of a tokenizer series that keep one series per instance (its entry node) and pool."""
    return [profile.label("node"), ENGINE_TYPE, *extra]


def per_stage_gauge(profile: Profile, metric: str, *matchers: str) -> str:
    """A scheduler gauge per PP stage: ``max`` over the TP ranks of a stage (same logical value on
    every rank that reports; non-logging ranks report nothing or 0), never summed across stages."""
    return agg("max", stage_labels(profile), engine(profile, metric, *matchers))


def per_stage_rate(profile: Profile, metric: str, *matchers: str, extra: tuple[str, ...] = ()) -> str:
    """Rate of a logical scheduler/radix counter per PP stage (max over TP ranks, never summed)."""
    return agg("max", stage_labels(profile, *extra), rate(engine(profile, metric, *matchers)))


def named_stage(profile: Profile, expr: str) -> str:
    """``expr`` with a ``stage_name`` label for legends: the PP rank, followed by `` dp<dp_rank>`` only
    where the series carries a DP rank (DP attention). A legend cannot test for a label, and Grafana
    prints a missing label's name, so ``PP{{pp_rank}} dp{{dp_rank}}`` would read "dpdp_rank" without
    DP attention; the label is built in the query instead: join pp_rank and dp_rank with " dp", then
    strip a trailing " dp" (no DP rank)."""
    pp, dp = profile.label("pp_rank"), profile.label("dp_rank")
    if not profile.has_pp:  # no PP: an instance, never "stage 0" (S27): "dp<dp_rank>" or nothing
        joined = f'label_join({expr}, "{STAGE_NAME}", "", "{dp}")'
        return f'label_replace({joined}, "{STAGE_NAME}", "dp$1", "{STAGE_NAME}", "(.+)")'
    joined = f'label_join({expr}, "{STAGE_NAME}", " dp", "{pp}", "{dp}")'
    return f'label_replace({joined}, "{STAGE_NAME}", "$1", "{STAGE_NAME}", "(.*) dp")'


def is_pd(profile: Profile) -> bool:
    """Whether the deployment runs prefill and decode pools apart (PD disaggregation)."""
    return any(pool.role in ("prefill", "decode") for pool in profile.pools)


def pool_legend(profile: Profile) -> str:
    """Legend suffix naming the pool (engine_type) where prefill and decode pools are apart."""
    return " · {{" + ENGINE_TYPE + "}}" if is_pd(profile) else ""


def stage_legend(profile: Profile) -> str:
    """``{{node}} PP<pp_rank>[ dp<dp_rank>][ · <engine_type>]`` (without PP: ``{{node}} [dp<dp_rank>]``, an
    instance, never "PP0"): the DP rank appears where the series carry
    one (``named_stage``, which every per-stage target wraps its query in)."""
    stage = STAGE_LEGEND if profile.has_pp else "{{" + STAGE_NAME + "}}"
    return "{{" + profile.label("node") + "}} " + stage + pool_legend(profile)


def per_rank_gauge(profile: Profile, metric: str) -> str:
    """A scheduler gauge per rank (needs --enable-metrics-for-all-schedulers for tp_rank != 0)."""
    return agg("max", rank_labels(profile), engine(profile, metric))


def tokenizer_rate(profile: Profile, metric: str, labels: list[str], *matchers: str) -> str:
    """Sum of a tokenizer counter's rate by ``labels`` (instances are distinct requests: summable)."""
    return agg("sum", labels, rate(tokenizer(profile, metric, *matchers)))


def histogram_quantile(q: float, bucket_series: str, labels: list[str] | tuple[str, ...]) -> str:
    """``histogram_quantile(q, sum by (le, labels) (rate(bucket[$__rate_interval]))) >= 0``.

    Buckets are summed before the quantile (never an average of per-series quantiles or ratios);
    ``le`` is always kept. On an idle series (no observation in the interval) Prometheus returns NaN
    where VictoriaMetrics returns nothing: ``>= 0`` drops the NaN (a comparison with NaN is false), so
    an idle node reads No data on both stores, never a NaN point.
    """
    return histogram_quantile_of(q, agg("sum", ["le", *labels], rate(bucket_series)))


def histogram_quantile_of(q: float, bucket_rates: str) -> str:
    """``histogram_quantile(q, bucket_rates) >= 0`` over rates already summed by ``le`` (see ``histogram_quantile``)."""
    return f"histogram_quantile({q:g}, {bucket_rates}) >= 0"


def quantile_legend(q: float) -> str:
    return f"p{round(q * 100):d}"


# --- restarts, per PP stage -------------------------------------------------------------------------

# Scheduler counters every PP stage's stats-logging rank writes (metric catalogue §1.1 / §1.2): the token counter
# grows with traffic, the idle-time counter (pre-seeded) with time while the stage has nothing to do, so an idle or
# a busy stage each has one that moves. SGLang's multiprocess /metrics has no process_start_time_seconds.
RESTART_COUNTERS = (SGLANG.name("sglang:realtime_tokens_total"), SGLANG.name("sglang:scheduler_idle_seconds_total"))
RESTART_WINDOW = "15m"  # a restart is news for this long: the EngineRestarted alert and the health state


def restart_keys(profile: Profile) -> list[str]:
    """What a restart is about: node, PP stage and the engine's role (``engine_type``; absent labels stay empty)."""
    return stage_key(profile, ENGINE_TYPE)


def restarted_ranks(profile: Profile, window: str = RESTART_WINDOW) -> str:
    """PP stages (node, PP stage, engine type) whose scheduler restarted within ``window``: one of
    ``RESTART_COUNTERS`` went down (``resets``). Value: the number of resets seen. Every stage of the
    deployment, no dashboard variable (the EngineRestarted alert and the health state read it).

    Per stage, not per replica: the tokenizer's request counter exists only on a replica's entry node, so a
    restart of a non-entry stage would be unseen. A restart before a counter's first increment is not seen.
    """
    resets = " or ".join(f"resets({selector(metric, job(profile, 'sglang'))}[{window}])" for metric in RESTART_COUNTERS)
    return f"{agg('max', restart_keys(profile), resets)} > 0"
