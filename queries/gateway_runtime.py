"""PromQL for the model gateway's own health (smg 1.9 and later) and for PD transfer failures on both sides.

Gateway runtime: the Tokio event-loop canary (a 10 ms sleep; ``smg_tokio_event_loop_delay_seconds`` how late
it woke, ``smg_tokio_event_loop_stalls_total`` wake-ups more than 5 ms late) and the 1 s sampler (per worker
thread busy ratio, global queue depth): a stall delays every task of the gateway, so it separates "gateway
starved" from "backend slow". Overload protection: workers vetoed from routing per model and the requests
shed per stage; retry backoff (a summary: its quantile series, never averaged); KV-event subscription
failures per worker and reason. All per gateway process (``queries.gateway``), never added across layers.

PD transfer failures: the engines count bootstrap and KV-transfer failures per pool
(``sglang:num_bootstrap_failed_reqs_total``, ``sglang:num_transfer_failed_reqs_total``; first PP stage, TP
copies removed with max) and the share is over the same pool's requests; the gateway counts its own
(``smg_pd_bootstrap_failures_total``: a PD request body that could not take the bootstrap fields;
``smg_pd_kv_transfer_failures_total``: vLLM NIXL only), over the PD requests it routed. Engines do not label
the peer of a transfer, so the pool pair is the profile's prefill -> decode pair, not a measured one.
"""

from __future__ import annotations

from dashgen_queries import gateway as gw
from dashgen_queries import pd
from dashgen_queries import sglang as sg
from dashgen_queries.promql import agg, divide, matcher, rate

from dashgen.deployment.profile import Profile
from dashgen.exporters.model import parse_version
from dashgen.exporters.table import GATEWAY, SGLANG, SMG_MODEL_CAP_SINCE

STALLS = GATEWAY.name("smg_tokio_event_loop_stalls_total")
DELAY = GATEWAY.name("smg_tokio_event_loop_delay_seconds")
BUSY = GATEWAY.name("smg_tokio_worker_busy_ratio")
OVERLOADED = GATEWAY.name("smg_workers_overloaded")
SHED = GATEWAY.name("smg_worker_overload_shed_total")
BACKOFF = GATEWAY.name("smg_worker_retry_backoff_seconds")
KV_EVENT_FAILURES = GATEWAY.name("smg_kv_event_subscription_failures_total")
GATEWAY_PD_FAILURES = {
    "bootstrap": GATEWAY.name("smg_pd_bootstrap_failures_total"),
    "KV transfer": GATEWAY.name("smg_pd_kv_transfer_failures_total"),
}
ROUTER_REQUESTS = GATEWAY.name("smg_router_requests_total")
ENGINE_PD_FAILURES = {
    "bootstrap": SGLANG.name("sglang:num_bootstrap_failed_reqs_total"),
    "KV transfer": SGLANG.name("sglang:num_transfer_failed_reqs_total"),
}
ENGINE_REQUESTS = SGLANG.name("sglang:num_requests_total")
MODEL_CAP = 1024  # smg caps the model label at this many values; the rest are recorded as model="other"
OTHER_MODEL = "other"
MODEL_CAP_SINCE = SMG_MODEL_CAP_SINCE
PAIR = "pool_pair"


def stall_rate(profile: Profile) -> str:
    """Event-loop stalls (canary more than 5 ms late) per second, per gateway process."""
    return gw.counter_rate(profile, STALLS)


def delay_p99(profile: Profile) -> str:
    return gw.quantile(profile, 0.99, DELAY)


def busiest_worker(profile: Profile) -> str:
    """The busiest runtime worker thread's busy ratio (0-1), per gateway process."""
    return gw.gauge(profile, BUSY)


def overloaded_workers(profile: Profile) -> str:
    """Workers excluded from routing as overloaded, per gateway process and model."""
    return gw.gauge(profile, OVERLOADED, "model")


def shed_rate(profile: Profile) -> str:
    """Requests shed by overload protection per second, per gateway process and stage."""
    return gw.counter_rate(profile, SHED, "stage")


def backoff_p99(profile: Profile) -> str:
    """The summary's own p99 of the backoff before each retry, per gateway process and attempt."""
    quantile = gw.gateway(profile, BACKOFF, matcher("quantile", "=", "0.99"))
    return agg("max", gw.gateway_labels(profile, "attempt"), quantile)


def kv_event_failure_rate(profile: Profile) -> str:
    return gw.counter_rate(profile, KV_EVENT_FAILURES, "worker", "reason")


def caps_model_label(profile: Profile) -> bool:
    """Whether the stated gateway version ("" = the latest read) caps the model label (writes model="other")."""
    version = profile.source("gateway").stated.version
    return not version or parse_version(version) >= parse_version(MODEL_CAP_SINCE)


def other_model_share(profile: Profile) -> str:
    """Share of the gateway's routed requests recorded under model="other" (models past the label cap)."""
    other = agg(
        "sum", [profile.label("node")], rate(gw.gateway(profile, ROUTER_REQUESTS, matcher("model", "=", OTHER_MODEL)))
    )
    every = agg("sum", [profile.label("node")], rate(gw.gateway(profile, ROUTER_REQUESTS)))
    return f"({other} or 0 * {every}) / ({every} > 0)"


def _pair(expr: str) -> str:
    return f'label_replace({expr}, "{PAIR}", "prefill → decode", "", "")'


def _engine_failures(profile: Profile, kind: str) -> str:
    per_scheduler = sg.per_stage_rate(profile, ENGINE_PD_FAILURES[kind], pd.first_stage(profile))
    return agg("sum", [sg.ENGINE_TYPE], per_scheduler)


def engine_requests(profile: Profile) -> str:
    """Requests per second each pool's tokenizers received."""
    return agg("sum", [sg.ENGINE_TYPE], rate(sg.tokenizer(profile, ENGINE_REQUESTS)))


def engine_failure_share(profile: Profile, kind: str) -> str:
    """The pool's PD failures over the pool's requests (0-1)."""
    return _pair(divide(_engine_failures(profile, kind), engine_requests(profile)))


def gateway_failure_rate(profile: Profile, kind: str) -> str:
    return gw.counter_rate(profile, GATEWAY_PD_FAILURES[kind])
