"""The per-stage rates recorded once per rule interval (group ``dashgen-<profile>-stage-reuse``): the prefix-cache
reuse rates read by *Prefix-cache reuse share per stage* (per instance without PP), and the retraction rate read by
*Retracted requests per PP stage*.

Computed from the raw counter on every refresh, the panel read every logging rank's
``sglang:prefill_effective_tokens_total`` by mode, and where the deployment has more than a screenful of stages
five times (the worst stages, the end-of-range ranking and the min / median / max band: 2.4 M samples on open at
4,096 GPUs on the bench store). The rules record, per rule interval and (node, PP stage, engine type), the two
rates the share divides: reused prefill tokens (device, host and storage hits) and input prefill tokens, exactly as
``sglang_slo.prefix_token_rates`` builds them (the logging ranks, ``max`` across TP copies, DP groups added).

The rate window is the request-rates records' (``queries.request_rates``): one rule interval per record, the panel
averaging the evaluations within its own ``$__rate_interval``, which is the rate over that window to the rule
interval. Without the rules loaded the panel reads No data and says why.

The retracted-requests graph read every TP rank's ``sglang:num_retracted_requests_total`` four times where the
deployment has more than a screenful of stages (the worst stages and the three reads of the band: 195 k samples on
open at 1,024 GPUs). Its record is the same expression at one rule interval: the counter's rate per (node, PP
stage, DP group, engine type), ``max`` across TP ranks (``sglang.per_stage_rate``). A counter misses no event, so
the average of the interval rates is the rate over the panel's window (a spike is counted, not smoothed away);
the scheduler gauges (running, waiting, batch, KV usage) are left raw: a gauge recorded per rule interval would
be drawn at the rule interval, not at the store's resolution.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries.exported import written
from dashgen_queries.promql import agg, divide, job, matcher, node_var, rate, selector
from dashgen_queries.request_rates import AVERAGED, INTERVAL_SECONDS, RecordedRate, min_step_of, recorded_rate, window
from dashgen_queries.sglang import ENGINE_TYPE, per_stage_rate, stage_key, stage_labels, stage_var
from dashgen_queries.sglang_slo import prefix_hit_ratio as raw_prefix_hit_ratio
from dashgen_queries.sglang_slo import prefix_token_rates

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import SGLANG

GROUP = "stage-reuse"
REUSED = f"node_stage:dashgen_sglang_prefill_reused_tokens:rate{window()}"
INPUT = f"node_stage:dashgen_sglang_prefill_input_tokens:rate{window()}"
COUNTER = SGLANG.name("sglang:prefill_effective_tokens_total")
NO_VALUE = "No data: no prefill, or the stage-reuse rules not loaded"
RETRACTED_COUNTER = SGLANG.name("sglang:num_retracted_requests_total")
RETRACTED = f"node_stage:dashgen_sglang_num_retracted_requests_total:rate{window()}"
RETRACTED_NO_VALUE = "No data: no retraction yet, or the stage-reuse rules not loaded"


def records(profile: Profile) -> tuple[RecordedRate, ...]:
    """The two recorded rates per (node, PP stage, engine type): the one definition of the rules."""
    reused, inputs = prefix_token_rates(profile, window(), with_vars=False, keep=(ENGINE_TYPE,))
    found = [RecordedRate(REUSED, reused), RecordedRate(INPUT, inputs)]
    if written(profile, RETRACTED_COUNTER):
        retracted = rate(selector(RETRACTED_COUNTER, job(profile, "sglang")), window())
        found.append(RecordedRate(RETRACTED, agg("max", stage_labels(profile), retracted)))
    return tuple(found)


def prefix_hit_ratio(profile: Profile, role: str = "") -> str:
    """``sglang_slo.prefix_hit_ratio`` from the records: reused ÷ input prefill tokens per (node, PP stage) over
    ``$__rate_interval``, narrowed by the Node and Stage variables and to the pool ``role``. Where the stated SGLang
    version never writes the counter (S35) no rule can record it: the raw expression, which the composition turns
    into a panel naming the version that writes it, instead of a chart that can only be empty."""
    if not written(profile, COUNTER):
        return raw_prefix_hit_ratio(profile, role=role)
    matchers = [matcher(ENGINE_TYPE, "=", role) if role else "", node_var(profile)]
    if profile.has_pp:
        matchers.append(f'{profile.label("pp_rank")}=~"$stage"')
    stage = stage_key(profile)
    reused, inputs = (
        agg("sum", stage, recorded_rate(profile, name, "$__rate_interval", *matchers)) for name in (REUSED, INPUT)
    )
    return divide(reused, inputs)


def recorded_note(profile: Profile, content: str, no_value: str) -> str:
    """What a panel reading this group's records says of them: the rule file and group, what each record holds
    (``content``) per rule interval, how the panel reads it and what it shows without the rules."""
    return (
        f"(rules/{profile.name}.yml, group {GROUP}: {content} over each {INTERVAL_SECONDS:g} s rule interval), "
        f"{AVERAGED}. Without the rules loaded: '{no_value}'"
    )


@dataclass(frozen=True)
class RetractedRead:
    """What *Retracted requests per PP stage* reads: the expression, the sentence its description adds, the Min
    step and the no-value text ("" for the raw read)."""

    expr: str
    note: str = ""
    step: str = ""
    no_value: str = ""


def retracted_read(profile: Profile, *matchers: str) -> RetractedRead:
    """``sglang.per_stage_rate`` of the retraction counter from the record: per (node, PP stage, DP group, engine
    type) over ``$__rate_interval``, narrowed by the Node and Stage variables and the pool ``matchers``. Where the
    stated SGLang version never writes the counter (S35), the raw expression, as ``prefix_hit_ratio``."""
    if not written(profile, RETRACTED_COUNTER):
        return RetractedRead(per_stage_rate(profile, RETRACTED_COUNTER, *matchers))
    recorded = recorded_rate(profile, RETRACTED, "$__rate_interval", *matchers, node_var(profile), stage_var(profile))
    note = ". The rate is dashgen's recording rule " + recorded_note(
        profile, "retracted requests per (node, PP stage, DP group)", RETRACTED_NO_VALUE
    )
    return RetractedRead(agg("max", stage_labels(profile), recorded), note, min_step_of(profile), RETRACTED_NO_VALUE)
