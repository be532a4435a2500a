"""PromQL for the SLO and health group and for the rule files: latency SLIs from SGLang's request
histograms, error ratios and burn rates over fixed windows, per-stage scheduler gauges, and the
per-GPU / per-node memory share behind the GPU memory alert.

SLIs are read from bucket counters: the share of requests at or under the bucket bound ``le`` that
the profile's threshold maps to (``slo_bucket``). SGLang's default bucket bounds are pinned here
(``TokenizerMetricsCollector`` in ``python/sglang/srt/observability/metrics_collector.py``; the same
lists in the older ``srt/metrics/collector.py``); a deployment that passes
``--bucket-time-to-first-token`` / ``--bucket-e2e-request-latency`` changes them.

Tokenizer histograms are emitted by the tokenizer manager on node 0 of each engine, without rank
labels: they are summed ``by (le)`` (or by model) across engines, never averaged as per-series
ratios. Prefill servers of a PD deployment are excluded (``engine_type!="prefill"``) so that a
request is counted once, by the server that answers the client.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen.errors import ProfileError
from dashgen.profile import Profile
from queries.gpu import GpuSource
from queries.promql import RATE_WINDOW, agg, divide, job, matcher, node_var, rate, selector

TTFT_BUCKETS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
E2E_BUCKETS: tuple[float, ...] = (
    0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400,
)
BUCKET_SOURCE = (
    "SGLang default buckets (TokenizerMetricsCollector, python/sglang/srt/observability/metrics_collector.py; "
    "overridable with --bucket-time-to-first-token / --bucket-e2e-request-latency)"
)

# Google SRE workbook, "Alerting on SLOs", multiwindow multi-burn-rate: (long, short, burn rate).
FAST_BURN = ("1h", "5m", 14.4)
SLOW_BURN = ("6h", "30m", 6.0)
BURN_PANEL_WINDOWS = ("1h", "6h", "3d")
RECORDED_WINDOWS = ("5m", "30m", "1h", "6h", "3d")

MODEL = "model_name"


@dataclass(frozen=True)
class Sli:
    """One latency SLI: requests whose latency is at or under ``bound`` count as good."""

    key: str  # "ttft" | "e2e"
    name: str
    metric: str  # histogram base name (without _bucket/_count)
    field: str  # the profile field the threshold comes from
    threshold: float
    bound: float

    @property
    def rounded(self) -> bool:
        return self.bound != self.threshold

    def evaluation_note(self) -> str:
        """Where the SLO is evaluated, said plainly (the threshold may not be a bucket bound)."""
        exact = f"{self.name} SLO: {_fmt(self.threshold)} s ({self.field})"
        if not self.rounded:
            return f"{exact}, evaluated at the bucket bound le={_fmt(self.bound)} s exactly"
        return (
            f"{exact} is not a bucket bound; it is evaluated at the next bound above, le={_fmt(self.bound)} s, "
            f"so requests between {_fmt(self.threshold)} s and {_fmt(self.bound)} s count as meeting it "
            "(the share shown is an upper bound of the share under the exact threshold)"
        )


def _fmt(value: float) -> str:
    return f"{value:g}"


def slo_bucket(threshold: float, bounds: tuple[float, ...], profile_path: str, field: str) -> float:
    """The bucket bound at or just above ``threshold``.

    Raises ProfileError naming the profile field when the threshold is above the largest finite
    bound: the only bucket left would be ``+Inf`` and every request would meet the SLO.
    """
    for bound in sorted(bounds):
        if bound >= threshold - 1e-12:
            return float(bound)
    raise ProfileError(
        profile_path,
        field,
        f"{_fmt(threshold)} s is above the largest histogram bucket bound {_fmt(max(bounds))} s of "
        f"{BUCKET_SOURCE}; the SLO could not be evaluated (every request would count as good)",
    )


def check_objective(profile: Profile) -> None:
    """The fast-burn threshold must be reachable: burn 14.4 x budget has to stay below an error ratio of 1."""
    budget = error_budget(profile)
    for _long, _short, burn in (FAST_BURN, SLOW_BURN):
        if burn * budget >= 1:
            raise ProfileError(
                profile.path,
                "slo.objective",
                f"objective {profile.slo.objective} leaves a budget of {budget:g}; a burn rate of {burn:g} would "
                "need an error ratio of at least 1, so the burn-rate alert could never fire",
            )


def error_budget(profile: Profile) -> float:
    """1 - objective, rounded so that 1 - 0.99 prints as 0.01."""
    return round(1 - profile.slo.objective, 12)


def slis(profile: Profile) -> tuple[Sli, ...]:
    """The profile's latency SLIs (TTFT and end-to-end), their thresholds mapped to bucket bounds."""
    slo = profile.slo
    return (
        Sli("ttft", "TTFT", "sglang:time_to_first_token_seconds", "slo.ttft_seconds", slo.ttft_seconds,
            slo_bucket(slo.ttft_seconds, TTFT_BUCKETS, profile.path, "slo.ttft_seconds")),
        Sli("e2e", "E2E", "sglang:e2e_request_latency_seconds", "slo.e2e_seconds", slo.e2e_seconds,
            slo_bucket(slo.e2e_seconds, E2E_BUCKETS, profile.path, "slo.e2e_seconds")),
    )


def le_matcher(bound: float) -> str:
    """Matches the bucket whatever the writer's float spelling: prometheus_client writes ``6.0``,
    Prometheus 3 normalises classic-histogram ``le`` to ``6``."""
    python = repr(float(bound))
    spellings = [python]
    if python.endswith(".0"):
        spellings.insert(0, python[:-2])
    if len(spellings) == 1:
        return matcher("le", "=", python)
    return 'le=~"' + "|".join(s.replace(".", "\\\\.") for s in spellings) + '"'


def request_matchers(profile: Profile, with_node_var: bool) -> tuple[str, ...]:
    """Matchers of the tokenizer (request) histograms: the engine job, not prefill servers."""
    matchers = [job(profile, "sglang"), matcher("engine_type", "!=", "prefill")]
    if with_node_var:
        matchers.append(node_var(profile))
    return tuple(matchers)


def good_ratio(profile: Profile, sli: Sli, window: str, by: tuple[str, ...] = (MODEL,),
               with_node_var: bool = False) -> str:
    """Share of requests at or under the SLI's bucket bound over ``window``, summed across engines first."""
    base = request_matchers(profile, with_node_var)
    good = agg("sum", by, rate(selector(f"{sli.metric}_bucket", *base, le_matcher(sli.bound)), window))
    total = agg("sum", by, rate(selector(f"{sli.metric}_count", *base), window))
    return divide(good, total)


def error_ratio(profile: Profile, sli: Sli, window: str, by: tuple[str, ...] = (MODEL,),
                with_node_var: bool = False) -> str:
    """Share of requests over the SLI's bound (1 - good share); no sample when no request finished."""
    return f"1 - ({good_ratio(profile, sli, window, by, with_node_var)})"


def burn_rate(profile: Profile, sli: Sli, window: str, with_node_var: bool = True) -> str:
    """Error ratio over ``window`` divided by the error budget (1 = spending exactly the budget)."""
    return f"({error_ratio(profile, sli, window, with_node_var=with_node_var)}) / {error_budget(profile):g}"


def budget_left(profile: Profile, sli: Sli, with_node_var: bool = True) -> str:
    """Share of the error budget left over the profile's SLO window (negative once overspent)."""
    window = f"{profile.slo.window_days}d"
    return f"1 - ({error_ratio(profile, sli, window, with_node_var=with_node_var)}) / {error_budget(profile):g}"


def tagged(expr: str, label: str, value: str) -> str:
    """Add a constant label so that several SLIs can share one vector (``or`` keeps both)."""
    return f'label_replace({expr}, "{label}", "{value}", "", "")'


def worst_good_ratio(profile: Profile, window: str) -> str:
    """Health: the lower of the SLIs' good shares per model (an upper bound of the share meeting all)."""
    parts = [tagged(good_ratio(profile, sli, window, with_node_var=True), "sli", sli.key) for sli in slis(profile)]
    return agg("min", (MODEL,), " or ".join(parts))


def latency_quantile(profile: Profile, metric: str, quantile: float) -> str:
    """``histogram_quantile`` over the bucket rates summed ``by (le)`` across engines."""
    buckets = selector(f"{metric}_bucket", *request_matchers(profile, with_node_var=True))
    return f"histogram_quantile({quantile:g}, {agg('sum', ('le',), rate(buckets))})"


# --- scheduler gauges, per PP stage -------------------------------------------------------------

def stage_labels(profile: Profile) -> tuple[str, ...]:
    return (profile.label("node"), profile.label("pp_rank"))


def scheduler_matchers(profile: Profile) -> tuple[str, ...]:
    matchers = [job(profile, "sglang"), node_var(profile)]
    if profile.has_pp:
        matchers.append(f'{profile.label("pp_rank")}=~"$stage"')
    return tuple(matchers)


def per_stage_requests(profile: Profile, metric: str) -> str:
    """Running or waiting requests per (node, PP stage), never summed across stages (S3).

    ``priority=""`` keeps the total series (also matching deployments without priority labels);
    ``max`` across TP ranks of one DP group removes copies (all-schedulers mode), ``sum`` across
    DP groups adds their disjoint batches.
    """
    stage = stage_labels(profile)
    series = selector(metric, *scheduler_matchers(profile), matcher("priority", "=", ""))
    per_dp = agg("max", (*stage, profile.label("dp_rank")), series)
    return agg("sum", stage, per_dp)


def kv_usage(profile: Profile) -> str:
    """``sglang:token_usage`` (the fullest KV pool's used share) per (node, PP stage): the fullest DP group."""
    return agg("max", stage_labels(profile), selector("sglang:token_usage", *scheduler_matchers(profile)))


def queue_per_running(profile: Profile) -> str:
    """Waiting ÷ running requests per stage: scale-free queue pressure."""
    return divide(per_stage_requests(profile, "sglang:num_queue_reqs"),
                  per_stage_requests(profile, "sglang:num_running_reqs"))


def prefix_hit_ratio(profile: Profile, window: str = RATE_WINDOW) -> str:
    """Prefix-reuse share of prefill input tokens per stage from ``sglang:prefill_effective_tokens_total``.

    ``max`` across TP ranks picks the logging rank (the others are pre-seeded at 0, or copies).
    """
    stage = stage_labels(profile)
    dp = profile.label("dp_rank")
    metric = "sglang:prefill_effective_tokens_total"
    hits = selector(metric, *scheduler_matchers(profile), matcher("mode", "=~", "device_hit|host_hit|storage_hit"))
    inputs = selector(metric, *scheduler_matchers(profile), matcher("mode", "=", "input"))
    numerator = agg("sum", stage, agg("max", (*stage, dp, "mode"), rate(hits, window)))
    denominator = agg("sum", stage, agg("max", (*stage, dp), rate(inputs, window)))
    return divide(numerator, denominator)


# --- GPU memory share (dashboard + recording rules) ---------------------------------------------

def gpu_memory_share(profile: Profile, source: GpuSource, with_vars: bool) -> str:
    """Memory used / total per (node, gpu), 0-1.

    DCGM: ``FB_USED / (FB_USED + FB_FREE + FB_RESERVED)`` (``DCGM_FI_DEV_FB_TOTAL`` is not in the
    exporter's default CSV). GPM: ``gpm_memory_used_bytes / gpm_memory_total_bytes``, kept only
    where the sample is valid (``gpm_sample_valid == 1``).
    """
    node, gpu = profile.label("node"), profile.label("gpu")
    keys = (node, gpu)
    matchers = [job(profile, source.key)]
    if with_vars:
        matchers += [node_var(profile), f'{gpu}=~"$gpu"']
    if source.key == "dcgm":
        used = selector("DCGM_FI_DEV_FB_USED", *matchers)
        total = " + ".join(selector(m, *matchers) for m in
                           ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED"))
        return divide(agg("max", keys, used), agg("max", keys, total))
    share = divide(agg("max", keys, selector("gpm_memory_used_bytes", *matchers)),
                   agg("max", keys, selector("gpm_memory_total_bytes", *matchers)))
    return valid_gpm(profile, share, matchers)


def valid_gpm(profile: Profile, expr: str, matchers: list[str]) -> str:
    """Keep GPM values only where the sampler marked the sample valid."""
    keys = (profile.label("node"), profile.label("gpu"))
    validity = agg("max", keys, selector("gpm_sample_valid", *matchers))
    return f"({expr}) and on ({', '.join(keys)}) ({validity} == 1)"
