"""The per-stage prefix-cache reuse rates recorded once per rule interval (group ``dashgen-<profile>-stage-reuse``),
read by *Prefix-cache reuse share per stage* (per instance without PP).

Computed from the raw counter on every refresh, the panel read every logging rank's
``sglang:prefill_effective_tokens_total`` by mode, and where the deployment has more than a screenful of stages
five times (the worst stages, the end-of-range ranking and the min / median / max band: 2.4 M samples on open at
4,096 GPUs on the bench store). The rules record, per rule interval and (node, PP stage, engine type), the two
rates the share divides: reused prefill tokens (device, host and storage hits) and input prefill tokens, exactly as
``sglang_slo.prefix_token_rates`` builds them (the logging ranks, ``max`` across TP copies, DP groups added).

The rate window is the request-rates records' (``queries.request_rates``): one rule interval per record, the panel
averaging the evaluations within its own ``$__rate_interval``, which is the rate over that window to the rule
interval. Without the rules loaded the panel reads No data and says why.
"""

from __future__ import annotations

from dashgen_queries.exported import written
from dashgen_queries.promql import agg, divide, matcher, node_var
from dashgen_queries.request_rates import RecordedRate, recorded_rate, window
from dashgen_queries.sglang import ENGINE_TYPE, stage_key
from dashgen_queries.sglang_slo import prefix_hit_ratio as raw_prefix_hit_ratio
from dashgen_queries.sglang_slo import prefix_token_rates

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import SGLANG

GROUP = "stage-reuse"
REUSED = f"node_stage:dashgen_sglang_prefill_reused_tokens:rate{window()}"
INPUT = f"node_stage:dashgen_sglang_prefill_input_tokens:rate{window()}"
COUNTER = SGLANG.name("sglang:prefill_effective_tokens_total")
NO_VALUE = "No data: no prefill, or the stage-reuse rules not loaded"


def records(profile: Profile) -> tuple[RecordedRate, ...]:
    """The two recorded rates per (node, PP stage, engine type): the one definition of the rules."""
    reused, inputs = prefix_token_rates(profile, window(), with_vars=False, keep=(ENGINE_TYPE,))
    return RecordedRate(REUSED, reused), RecordedRate(INPUT, inputs)


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
