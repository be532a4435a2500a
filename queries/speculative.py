"""Speculative decoding on SGLang: acceptance length and rate per engine instance, and decode tokens per
verify forward.

``sglang:spec_accept_length`` (mean tokens accepted per verify step of a request, the bonus token
included) and ``sglang:spec_accept_rate`` (accepted / proposed draft tokens, 0-1) are scheduler gauges
over the last log interval, written only when the engine runs a draft algorithm
(``--speculative-algorithm``). They are the stats-logging rank's values, so per stage they are taken
with ``max`` over TP ranks and never added. Tokens per verify forward divides the decode tokens the
scheduler processed by its verify calls: the batch's tokens per target-model forward, what speculative
decoding buys over one token per request per forward.
"""

from __future__ import annotations

from dashgen_queries import pd
from dashgen_queries import sglang as sg
from dashgen_queries.promql import divide, matcher

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import SGLANG

ACCEPT_LENGTH = SGLANG.name("sglang:spec_accept_length")
ACCEPT_RATE = SGLANG.name("sglang:spec_accept_rate")
VERIFY_CALLS = SGLANG.name("sglang:spec_verify_calls_total")
TOKENS = SGLANG.name("sglang:realtime_tokens_total")


def _decoding(profile: Profile) -> list[str]:
    """The schedulers that decode: the decode pool in a PD deployment (prefill runs no draft), else every one."""
    return [pd.first_stage(profile)] + ([pd.role("decode")] if sg.is_pd(profile) else [])


def accept_length(profile: Profile) -> str:
    """Mean accepted tokens per verify step per engine instance (first PP stage)."""
    return sg.named_stage(profile, sg.per_stage_gauge(profile, ACCEPT_LENGTH, *_decoding(profile)))


def accept_rate(profile: Profile) -> str:
    """Accepted share of the proposed draft tokens per engine instance, 0-1."""
    return sg.named_stage(profile, sg.per_stage_gauge(profile, ACCEPT_RATE, *_decoding(profile)))


def tokens_per_forward(profile: Profile) -> str:
    """Decode tokens per verify forward per engine instance: rate of decode tokens / rate of verify calls."""
    tokens = sg.per_stage_rate(profile, TOKENS, *_decoding(profile), matcher("mode", "=", "decode"))
    calls = sg.per_stage_rate(profile, VERIFY_CALLS, *_decoding(profile))
    return sg.named_stage(profile, divide(tokens, calls))
