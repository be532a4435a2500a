"""PromQL for the SLO and health group and for the rule files: latency SLIs from SGLang's request
histograms plus aborted requests, error ratios and burn rates over fixed windows, per-stage
scheduler gauges (queue pressure, stalled stages). The GPU memory share behind the GPU memory alert
is ``queries.gpu.gpu_memory_used_share``.

SLIs are read from bucket counters: the share of requests at or under the bucket bound ``le`` that
the profile's threshold maps to (``slo_bucket``). SGLang's default bucket bounds are pinned here
(``TokenizerMetricsCollector`` in ``python/sglang/srt/observability/metrics_collector.py``; the same
lists in the older ``srt/metrics/collector.py``); a deployment that passes
``--bucket-time-to-first-token`` / ``--bucket-e2e-request-latency`` changes them. The TPOT
histogram (``sglang:request_time_per_output_token_seconds``) is newer than the pinned source; its
bounds are assumed to be the inter-token-latency defaults (``TPOT_BUCKETS``), to be checked on a
live ``/metrics``. A bound the deployment does not have gives that SLI no sample, never a false 0 %.

Bad events of every SLI: finished requests over the SLI's bound, plus aborted requests
(``sglang:num_aborted_requests_total``, counted by the tokenizer when a client disconnects or a
request is aborted), which never finish and so never reach a latency histogram's good bucket. The
abort counter has no latency, so each abort is a bad event of every SLI. Gateway sheds (429/503)
never reach the engine and are not counted.

Tokenizer histograms are emitted by the tokenizer manager on node 0 of each engine, without rank
labels: they are summed ``by (le)`` (or by model) across engines, never averaged as per-series
ratios. Prefill servers of a PD deployment are excluded (``engine_type!="prefill"``) so that a
request is counted once, by the server that answers the client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from dashgen_queries.exported import not_written, written
from dashgen_queries.promql import RATE_WINDOW, agg, divide, in_deployment, job, matcher, node_var, rate, selector
from dashgen_queries.sglang import ENGINE_TYPE, histogram_quantile, on_logging_ranks, stage_key

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import topology_of
from dashgen.errors import ProfileError
from dashgen.exporters.table import SGLANG

TTFT_BUCKETS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
E2E_BUCKETS: tuple[float, ...] = (
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1,
    2,
    4,
    6,
    8,
    10,
    20,
    40,
    60,
    80,
    100,
    200,
    400,
    600,
    1200,
    1800,
    2400,
)
# Assumed (see the module docstring): SGLang's inter-token-latency default bounds.
TPOT_BUCKETS: tuple[float, ...] = (
    0.002,
    0.004,
    0.006,
    0.008,
    0.01,
    0.015,
    0.02,
    0.025,
    0.03,
    0.035,
    0.04,
    0.06,
    0.08,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1,
    2,
    4,
    6,
    8,
)
BUCKET_SOURCE = (
    "SGLang default buckets (TokenizerMetricsCollector, python/sglang/srt/observability/metrics_collector.py; "
    "overridable with --bucket-time-to-first-token / --bucket-e2e-request-latency); TPOT bounds assumed to be the "
    "inter-token-latency defaults (check the le values on /metrics: a missing bound gives the TPOT SLI no sample)"
)
ABORTED = SGLANG.name("sglang:num_aborted_requests_total")
ABORT_TAG = "event"  # the label that keeps the abort rate apart from the count's in one sum (never shown)
BAD_EVENTS = (
    "bad events: finished requests over the SLI's bound plus aborted requests (sglang:num_aborted_requests_total, "
    "each a bad event of every SLI); gateway sheds (429/503) never reach the engine and are not counted; an SLI "
    "whose histogram does not exist yet has no sample"
)

# Google SRE workbook, "Alerting on SLOs", multiwindow multi-burn-rate: (long, short, burn rate).
FAST_BURN = ("1h", "5m", 14.4)
SLOW_BURN = ("6h", "30m", 6.0)
BURN_PANEL_WINDOWS = ("1h", "6h", "3d")
# The windows the burn-rate alerts read (long and short of each pair): the only error ratios recorded. The 3d burn
# panel reads its raw expression once (instant); a recorded 3d ratio was written and never read.
RECORDED_WINDOWS = (FAST_BURN[1], SLOW_BURN[1], FAST_BURN[0], SLOW_BURN[0])
# EngineStalled: a stage with waiting requests that processed no token over this window (alert `for` the same).
STALL_WINDOW = "5m"
# Queue pressure of a stage with waiting requests and none running: a sentinel above any real waiting/running.
STALLED_VALUE = 1e9

MODEL = "model_name"  # the role: the level of the recorded ratios' names; its label is model_label(profile)


def model_label(profile: Profile) -> str:
    """The label naming the served model on the engine's series (the profile's ``[labels] model_name``): what the
    SLO ratios are summed by, so that each model keeps its own series and the burn alerts name it."""
    return profile.label(MODEL)


TTFT_METRIC = SGLANG.name("sglang:time_to_first_token_seconds")
TPOT_METRIC = SGLANG.name("sglang:request_time_per_output_token_seconds")
E2E_METRIC = SGLANG.name("sglang:e2e_request_latency_seconds")


SliKey = Literal["ttft", "tpot", "e2e"]


@dataclass(frozen=True)
class Sli:
    """One latency SLI: requests whose latency is at or under ``bound`` count as good."""

    key: SliKey
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


@dataclass(frozen=True)
class BurnCondition:
    """A multiwindow burn-rate alert's condition (``FAST_BURN`` / ``SLOW_BURN``): the recorded error ratio above
    ``burn`` x the budget over both windows, and ``spent``, the share of the whole SLO window's budget this rate
    spends in the long window."""

    long_window: str
    short_window: str
    burn: float
    budget: float
    expr: str
    spent: float


def burn_condition(profile: Profile, spec: tuple[str, str, float], recorded: Callable[[str], str]) -> BurnCondition:
    """The condition of ``spec`` on the error-ratio series ``recorded(window)`` (text SLIs or video jobs)."""
    long_window, short_window, burn = spec
    budget = error_budget(profile)
    threshold = f"({burn:g} * {budget:g})"
    expr = " and ".join(
        f"{in_deployment(profile, recorded(window))} > {threshold}" for window in (long_window, short_window)
    )
    hours = int(long_window.removesuffix("h"))  # the long windows are whole hours (1h, 6h)
    return BurnCondition(long_window, short_window, burn, budget, expr, burn * hours / (24 * profile.slo.window_days))


def slis(profile: Profile) -> tuple[Sli, ...]:
    """The profile's latency SLIs (TTFT, TPOT and end-to-end), their thresholds mapped to bucket bounds; an SLI
    whose histogram the stated SGLang version does not write (TPOT before 0.5.22, ``queries.exported``) is left
    out, so the SLO, burn rates and alerts count the others instead of reading nothing."""
    slo = profile.slo
    every = (
        Sli(
            "ttft",
            "TTFT",
            TTFT_METRIC,
            "slo.ttft_seconds",
            slo.ttft_seconds,
            slo_bucket(slo.ttft_seconds, TTFT_BUCKETS, profile.path, "slo.ttft_seconds"),
        ),
        Sli(
            "tpot",
            "TPOT",
            TPOT_METRIC,
            "slo.tpot_seconds",
            slo.tpot_seconds,
            slo_bucket(slo.tpot_seconds, TPOT_BUCKETS, profile.path, "slo.tpot_seconds"),
        ),
        Sli(
            "e2e",
            "E2E",
            E2E_METRIC,
            "slo.e2e_seconds",
            slo.e2e_seconds,
            slo_bucket(slo.e2e_seconds, E2E_BUCKETS, profile.path, "slo.e2e_seconds"),
        ),
    )
    return tuple(sli for sli in every if written(profile, f"{sli.metric}_bucket"))


def left_out_notes(profile: Profile) -> str:
    """A sentence per SLI ``slis`` leaves out because the stated SGLang version does not write its histogram
    ("" when none is): the SLO panels say which SLI their numbers do not count (S35)."""
    every = {"TTFT": TTFT_METRIC, "TPOT": TPOT_METRIC, "E2E": E2E_METRIC}
    counted = {sli.metric for sli in slis(profile)}
    return "".join(
        f". {name} is not counted: {not_written(profile, f'{metric}_bucket')}"
        for name, metric in every.items()
        if metric not in counted
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


def request_scope(profile: Profile) -> str:
    """The dashboard matcher that narrows request-level (tokenizer) series, or "" for none.

    Tokenizer histograms exist only on each replica's entry node, so ``$node`` cannot select them
    where a replica spans several nodes: a non-entry node would read "no requests". Instead:
    one-node replicas without pools -> ``$node`` (each node is its own entry node, exact); replicas
    spanning nodes -> the replica variable (``${replica:pipe}``, the nodes of the chosen replicas,
    entry node included); PD pools -> no narrowing (a request passes a prefill and a decode server,
    so a pool does not own it); a single multi-node replica -> no narrowing (it is the whole engine).
    """
    variable = request_scope_variable(profile)
    if variable == "node":
        return node_var(profile)
    if variable:
        return f'{profile.label("node")}=~"${{{variable}:pipe}}"'
    return ""


def request_scope_variable(profile: Profile) -> str:
    """``node``, ``replica`` or "" (see ``request_scope``), from the dashboard's own variables."""
    if profile.has_pools:
        return ""
    topology = topology_of(profile)
    if all(len(replica.nodes) == 1 for replica in topology.replicas):
        return "node"
    return "replica" if topology.node_group == "replica" else ""


def request_matchers(profile: Profile, scoped: bool) -> tuple[str, ...]:
    """Matchers of the tokenizer (request) series: the engine job, not prefill servers; ``scoped`` adds
    the dashboard's request scope (``request_scope``)."""
    matchers = [job(profile, "sglang"), matcher("engine_type", "!=", "prefill")]
    if scoped:
        matchers.append(request_scope(profile))
    return tuple(m for m in matchers if m)


# How an error ratio reads a rate: (raw series name, extra matchers, window) -> the rate's PromQL. The raw reader
# rates the scraped series; ``queries.request_rates.reader`` reads the recorded rates of the same series.
RateReader = Callable[[str, tuple[str, ...], str], str]


def raw_reader(profile: Profile, scoped: bool) -> RateReader:
    """Rates of the raw tokenizer series (``scoped``: narrowed by the request scope)."""
    base = request_matchers(profile, scoped)
    return lambda metric, extra, window: rate(selector(metric, *base, *extra), window)


def _good_and_events(
    profile: Profile, sli: Sli, window: str, by: tuple[str, ...], scoped: bool, reader: RateReader | None
) -> tuple[str, str]:
    """The SLI's good-event rate (finished at or under the bound) and every event's rate (finished + aborted),
    each summed ``by`` across engines, each series read once: the abort rate joins the count's with ``or`` under
    a label of its own (``ABORT_TAG``), so the sum adds both where the abort counter exists and reads the count
    alone where it does not yet (it appears at the first abort: exact, no abort since the engine started)."""
    read = reader or raw_reader(profile, scoped)
    good = agg("sum", by, read(f"{sli.metric}_bucket", (le_matcher(sli.bound),), window))
    aborted = f'label_replace({read(ABORTED, (), window)}, "{ABORT_TAG}", "aborted", "", "")'
    events = agg("sum", by, f"{read(f'{sli.metric}_count', (), window)} or {aborted}")
    return good, events


def error_ratio(
    profile: Profile,
    sli: Sli,
    window: str,
    by: tuple[str, ...] | None = None,
    scoped: bool = False,
    reader: RateReader | None = None,
) -> str:
    """Bad events / all events of the SLI over ``window``, bucket and abort rates summed across engines first.

    all = finished + aborted; bad = all - finished at or under the bound, so the ratio is 1 - good / all
    (``_good_and_events``: each series read once). No finished request ever (no histogram series) gives no
    sample; an idle window gives no sample (guarded division), not 0. ``reader`` reads each rate (the raw series
    by default).
    """
    return f"1 - {good_ratio(profile, sli, window, by, scoped, reader)}"


def good_ratio(
    profile: Profile,
    sli: Sli,
    window: str,
    by: tuple[str, ...] | None = None,
    scoped: bool = False,
    reader: RateReader | None = None,
) -> str:
    """Share of requests meeting the SLI over ``window`` (good / all events, 1 - the error ratio), per model unless
    ``by`` says otherwise; no sample when nothing happened."""
    keys = by if by is not None else (model_label(profile),)
    return divide(*_good_and_events(profile, sli, window, keys, scoped, reader))


def burn_rate(profile: Profile, sli: Sli, window: str, reader: RateReader | None = None) -> str:
    """Error ratio over ``window`` divided by the error budget (1 = spending exactly the budget), per model
    over the whole deployment, as the alerts see it. From the raw series unless ``reader`` reads recorded rates
    (``queries.request_rates``)."""
    return f"({error_ratio(profile, sli, window, reader=reader)}) / {error_budget(profile):g}"


def slo_error_ratio_name(window: str) -> str:
    """The recording rule holding the error ratio over ``window`` (label ``slo`` = the SLI key)."""
    return f"{MODEL}:sglang_slo_errors_per_request:ratio_rate{window}"


def budget_left(profile: Profile, sli: Sli) -> str:
    """Share of the error budget left over the profile's SLO window (negative once overspent), per model
    over the whole deployment."""
    window = f"{profile.slo.window_days}d"
    return f"1 - ({error_ratio(profile, sli, window)}) / {error_budget(profile):g}"


def tagged(expr: str, label: str, value: str) -> str:
    """Add a constant label so that several SLIs can share one vector (``or`` keeps both)."""
    return f'label_replace({expr}, "{label}", "{value}", "", "")'


def worst_good_ratio(profile: Profile, window: str, reader: RateReader | None = None) -> str:
    """Health: the lowest of the SLIs' good shares per model (an upper bound of the share meeting all); the raw
    series narrowed by the request scope, or the rates ``reader`` reads (the deployment's recorded rates)."""
    parts = [
        tagged(good_ratio(profile, sli, window, scoped=True, reader=reader), "sli", sli.key) for sli in slis(profile)
    ]
    return agg("min", (model_label(profile),), " or ".join(parts))


def latency_quantile(profile: Profile, metric: str, quantile: float) -> str:
    """``histogram_quantile`` over the bucket rates summed ``by (le)`` across engines."""
    return histogram_quantile(quantile, selector(f"{metric}_bucket", *request_matchers(profile, scoped=True)), ())


# --- scheduler gauges, per PP stage -------------------------------------------------------------


def scheduler_matchers(profile: Profile, with_vars: bool = True, role: str = "") -> tuple[str, ...]:
    """The scheduler series of the deployment (``$node``/``$stage`` with ``with_vars``); ``role`` keeps one
    pool of a PD deployment (the engine's own ``engine_type``), so prefill and decode never share a panel (S27)."""
    matchers = [job(profile, "sglang")]
    if role:
        matchers.append(matcher("engine_type", "=", role))
    if with_vars:
        matchers.append(node_var(profile))
        if profile.has_pp:
            matchers.append(f'{profile.label("pp_rank")}=~"$stage"')
    return tuple(matchers)


def per_stage_requests(profile: Profile, metric: str, with_vars: bool = True, role: str = "") -> str:
    """Running or waiting requests per (node, PP stage), never summed across stages (S3).

    ``priority=""`` keeps the total series (also matching deployments without priority labels);
    ``max`` across TP ranks of one DP group removes copies (all-schedulers mode), ``sum`` across
    DP groups adds their disjoint batches.
    """
    stage = stage_key(profile)
    series = selector(metric, *scheduler_matchers(profile, with_vars, role), matcher("priority", "=", ""))
    per_dp = agg("max", (*stage, profile.label("dp_rank")), series)
    return agg("sum", stage, per_dp)


def kv_usage(profile: Profile, role: str = "", with_vars: bool = True) -> str:
    """``sglang:token_usage`` (the fullest KV pool's used share) per (node, PP stage): the fullest DP group."""
    scope = scheduler_matchers(profile, with_vars, role=role)
    return agg("max", stage_key(profile), selector(SGLANG.name("sglang:token_usage"), *scope))


def queue_per_running(profile: Profile, role: str = "") -> str:
    """Waiting ÷ running requests per stage: scale-free queue pressure.

    A stage with waiting requests and none running (a stalled scheduler, or every request retracted)
    gets ``STALLED_VALUE``, which the panel maps to "stalled"; a stage with nothing waiting reads 0
    (the waiting gauge itself is 0, nothing is filled in); no sample only when both gauges are absent.
    """
    on = f"on ({', '.join(stage_key(profile))})"
    waiting = per_stage_requests(profile, SGLANG.name("sglang:num_queue_reqs"), role=role)
    ratio = divide(waiting, per_stage_requests(profile, SGLANG.name("sglang:num_running_reqs"), role=role))
    return f"{ratio} or {on} (({waiting} > 0) * 0 + {STALLED_VALUE:.0f}) or {on} ({waiting} == 0)"


def stalled_stages(profile: Profile, window: str = STALL_WINDOW) -> str:
    """Stages (node, PP stage, engine type) with requests waiting or running that processed no token over
    ``window``: waiting + running > 0 ``unless`` ``sglang:realtime_tokens_total`` (all modes: prefill compute,
    prefill cache, decode) rose. Value: the requests waiting and running.

    ``unless`` also covers a stage whose token counter was never created; gauges scraped fewer than twice in
    ``window`` say too little to tell (insufficient samples, not a stall). The series come from the
    stats-logging rank; a hung scheduler stops updating the counter while /metrics keeps serving the
    last gauges it set: a stage wedged at light load shows requests running and none waiting, so both count.
    Any DP group's progress counts for the stage (one stuck DP group is not caught).
    """
    stage = stage_key(profile, ENGINE_TYPE)  # the engine's role names the pool of a PD deployment (S31)
    per_dp = (*stage, profile.label("dp_rank"))
    queued = selector(
        SGLANG.name("sglang:num_queue_reqs"),
        *scheduler_matchers(profile, with_vars=False),
        matcher("priority", "=", ""),
    )
    running = selector(SGLANG.name("sglang:num_running_reqs"), *scheduler_matchers(profile, with_vars=False))
    # each gauge kept apart by a label before the sum (a stage that writes one of them still counts)
    held = agg(
        "sum",
        stage,
        " or ".join(
            f'label_replace({agg("max", per_dp, series)}, "gauge", "{kind}", "", "")'
            for kind, series in (("queued", queued), ("running", running))
        ),
    )
    tokens = agg(
        "sum", stage, rate(selector(SGLANG.name("sglang:realtime_tokens_total"), job(profile, "sglang")), window)
    )
    # Judged only on gauges scraped at least twice in the window: a hung scheduler's /metrics keeps answering with
    # its last gauges, while a node whose scrapes are too sparse to show progress says too little to tell (the
    # insufficient-samples reason says so; a store may carry a sparse gauge's last value much further than 5m).
    fresh = " or ".join(
        f"{agg('max', stage, f'count_over_time({series}[{window}])')} >= 2" for series in (queued, running)
    )
    on = f"on ({', '.join(stage)})"
    return f"(({held} > 0) and {on} ({fresh})) unless {on} ({tokens} > 0)"


def prefix_hit_ratio(profile: Profile, window: str = RATE_WINDOW, role: str = "") -> str:
    """Final prefix reuse at prefill (S9) as a share of prefill input tokens per stage, from
    ``sglang:prefill_effective_tokens_total`` (the counter of the cache-evidence table's final-reuse columns).

    ``max`` across TP ranks picks the logging rank (the others are pre-seeded at 0, or copies), read only on the
    logging ranks (``on_logging_ranks``).
    """
    return divide(*prefix_token_rates(profile, window, role))


def prefix_token_rates(
    profile: Profile, window: str = RATE_WINDOW, role: str = "", with_vars: bool = True, keep: tuple[str, ...] = ()
) -> tuple[str, str]:
    """The two rates of ``prefix_hit_ratio`` per stage (and the ``keep`` labels): reused prefill tokens (device,
    host and storage hits) and input prefill tokens. ``with_vars=False`` for the recording rules."""
    stage = (*stage_key(profile), *keep)
    dp = profile.label("dp_rank")
    metric = SGLANG.name("sglang:prefill_effective_tokens_total")
    scope = scheduler_matchers(profile, with_vars, role=role)
    hits = matcher("mode", "=~", "device_hit|host_hit|storage_hit")
    inputs = matcher("mode", "=", "input")
    numerator = agg(
        "sum",
        stage,
        agg(
            "max",
            (*stage, dp, "mode"),
            on_logging_ranks(profile, lambda m: rate(selector(metric, *scope, hits, m), window)),
        ),
    )
    denominator = agg(
        "sum",
        stage,
        agg(
            "max", (*stage, dp), on_logging_ranks(profile, lambda m: rate(selector(metric, *scope, inputs, m), window))
        ),
    )
    return numerator, denominator
