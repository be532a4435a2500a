"""Demo value models the P:D balance row reads beyond ``dashgen.demo.catalogue`` (which is at its size
limit): the model gateway's PD legs (``smg_pd_*`` histograms, metric catalogue §2) and the Mooncake transfer
engine's own metrics (TENT, written only where the profile exports ``mooncake_tent``), and the Mooncake master's
tenant quotas and L2 -> L1 promotion (0.3.12). ``CATALOGUE`` and
``lookup`` here are the whole demo catalogue, the base one's models plus these; the demo resolves
metric names through them.
"""

from __future__ import annotations

from dashgen.demo import catalogue as base
from dashgen.demo.catalogue import (
    SECONDS_BUCKETS,
    SHORT_BUCKETS,
    TENANTS,
    Histogram,
    MetricModel,
    Rate,
    Wave,
    _c,
    _g,
    _h,
    _store_total,
)

GATEWAY_PD = {"backend_type": ("pd",), "model": ("demo-model",), "runtime": ("sglang",)}

PD_MODELS: list[MetricModel] = [
    _h("smg_pd_prefill_duration_seconds", "gateway", Histogram(1.6, 0.6, 0.7), **GATEWAY_PD),
    _h("smg_pd_kv_transfer_duration_seconds", "gateway", Histogram(1.6, 0.04, 0.6, SHORT_BUCKETS), **GATEWAY_PD),
    _h("smg_pd_ttft_seconds", "gateway", Histogram(1.6, 0.9, 0.7, SECONDS_BUCKETS), **GATEWAY_PD),
]

# TENT per process running a transfer engine (one per rank): failures and failovers draw as a part of their
# requests (``share_of``): 0.2 % of reads and 0.1 % of writes fail, 1 % of reads fail over to another transport.
TENT_US_BUCKETS = (10, 50, 100, 500, 1000, 5000, 10000, 50000)  # transfer latencies, microseconds
TENT_MODELS: list[MetricModel] = [
    _c("tent_read_requests_total", "client", Rate(120)),
    _c("tent_write_requests_total", "client", Rate(80)),
    _c("tent_read_failures_total", "client", Rate(0.24, share_of="tent_read_requests_total")),
    _c("tent_write_failures_total", "client", Rate(0.08, share_of="tent_write_requests_total")),
    _c("tent_read_bytes_total", "client", Rate(120 * 4 * 2**20)),
    _c("tent_write_bytes_total", "client", Rate(80 * 4 * 2**20)),
    _c("tent_transport_failover_total", "client", Rate(1.2, share_of="tent_read_requests_total")),
    _c("tent_deadline_infeasible_total", "client", Rate(0.05)),
    _h("tent_read_latency_us", "client", Histogram(120, 800, 0.6, TENT_US_BUCKETS)),
    _h("tent_write_latency_us", "client", Histogram(80, 1200, 0.6, TENT_US_BUCKETS)),
    _h("tent_deadline_mlu_permille", "client", Histogram(200, 400, 0.4, (100, 250, 500, 750, 900, 1000))),
    _h("tent_stage_queue_wait_us", "client", Histogram(200, 60, 0.8, TENT_US_BUCKETS)),
    _h("tent_stage_transport_us", "client", Histogram(200, 700, 0.6, TENT_US_BUCKETS)),
]

# Mooncake master: tenant quotas and L2 -> L1 promotion (0.3.12).
STORE_0312_MODELS: list[MetricModel] = [
    # Two tenants, each with a quota of 40 % of the Store: committed ~25 %, a little reserved, neither over.
    _g(
        "mooncake_tenant_quota_effective_bytes",
        "master",
        Wave(lambda p, t: _store_total(p, t) * 0.4),
        tenant_id=TENANTS,
    ),
    _g(
        "mooncake_tenant_quota_used_bytes",
        "master",
        Wave(lambda p, t: _store_total(p, t) * 0.25, lambda p, t: _store_total(p, t) * 0.05, 0, 0),
        tenant_id=TENANTS,
    ),
    _g(
        "mooncake_tenant_quota_reserved_bytes",
        "master",
        Wave(lambda p, t: _store_total(p, t) * 0.01),
        tenant_id=TENANTS,
    ),
    _g("mooncake_tenant_quota_over_quota", "master", Wave(0, integer=True), tenant_id=TENANTS),
    _g("mooncake_tenant_quota_allocatable_capacity_bytes", "master", Wave(lambda p, t: _store_total(p, t) * 0.9)),
    _c("mooncake_tenant_quota_reject_total", "master", Rate(0.01), True, tenant_id=TENANTS, reason=("quota_exceeded",)),
    _c("mooncake_tenant_evict_bytes_total", "master", Rate(4 * 2**20), True, tenant_id=TENANTS),
    _g("master_promotion_in_flight", "master", Wave(3, 2, 1, 0, integer=True, load=True)),
    _c("master_promotion_admitted_total", "master", Rate(2.0)),
    _c("master_promotion_completed_total", "master", Rate(1.85)),
    _c("master_promotion_completed_bytes_total", "master", Rate(1.85 * 2 * 2**20)),
    _c("master_promotion_failed_total", "master", Rate(0.03)),
    _c("master_promotion_expired_total", "master", Rate(0.02)),
    _c("master_promotion_cancelled_total", "master", Rate(0.05)),
    _c("master_promotion_rejected_frequency_total", "master", Rate(6.0)),
    _c("master_promotion_rejected_watermark_total", "master", Rate(0.2)),
    _c("master_promotion_rejected_cap_total", "master", Rate(0.01), True),
    _c("master_promotion_candidate_recorded_total", "master", Rate(0.5)),
    _c("master_promotion_candidate_dropped_limit_total", "master", Rate(0.01), True),
    _c("master_promotion_candidate_expired_unevaluated_total", "master", Rate(0.02), True),
]

CATALOGUE: dict[str, MetricModel] = {
    **base.CATALOGUE,
    **{model.name: model for model in (*PD_MODELS, *TENT_MODELS, *STORE_0312_MODELS)},
}


def lookup(name: str) -> tuple[MetricModel, str] | None:
    """The model of an exposed series name and the histogram suffix it names ("" for the base), over the
    base catalogue and the models of this module."""
    if name in CATALOGUE:
        return CATALOGUE[name], ""
    for suffix in base.HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            model = CATALOGUE.get(name[: -len(suffix)])
            if model is not None and model.kind == "histogram":
                return model, suffix
    return None
