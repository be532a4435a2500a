"""The Mooncake 0.3.12 series of the Store's tenant quotas, L2 -> L1 promotion and the transfer engine's own
metrics (TENT) that no catalogue row reads, each with why it signals no failure of its own (``NOT_SIGNALS`` in
``dashgen.catalogue.signals`` includes these). Kept apart so the rows' owners and the Store panels' owners edit
different files."""

from __future__ import annotations

from dashgen.catalogue.model import NotASignal

QUOTA_STATE = "a tenant's quota accounting (bytes held, reserved, allowed): capacity, not a state that fails"
QUOTA_POLICY = (
    "a tenant at or over its quota is the quota doing its job: the master refuses that tenant's puts and evicts "
    "its keys while the Store serves every other tenant; the Store tenant panels show it per tenant"
)
PROMOTION_FLOW = "promotion traffic (tasks queued, committed, bytes copied into memory): its rate is reuse, not a fault"
PROMOTION_GATE = (
    "an admission gate turning a read away by design (a first touch, memory at the eviction watermark, the queue at "
    "its limit): the key stays served from the client's disk; L1 being full is eviction's business"
)
PROMOTION_LOSS = (
    "a promotion that fails or expires leaves the key on the client's disk, served from L2 (slower, not lost): a "
    "latency cost the SLO rows judge; the share is drawn in the Store promotion panels"
)
TENT_UNSCOPED = (
    "TENT's metrics are compiled out by default (a profile states mooncake_tent not exported unless Mooncake is "
    "built with -DTENT_METRICS_ENABLED=ON), so a rule on them would be silent on every such deployment; the transfer "
    "they count as failed fails the engine's request, which KvTransferFailing (PD) and the Store's own get/put "
    "failure counters read; the transfer engine panels draw the share"
)
TENT_TRAFFIC = "transfer-engine traffic or latency: its rate is load, its latency the SLO rows' business"


def _all(source: str, reason: str, *names: str) -> tuple[NotASignal, ...]:
    return tuple(NotASignal(source, name, reason) for name in names)


STORE_NOT_SIGNALS: tuple[NotASignal, ...] = (
    *_all(
        "mooncake_master",
        QUOTA_STATE,
        "mooncake_tenant_quota_used_bytes",
        "mooncake_tenant_quota_reserved_bytes",
        "mooncake_tenant_quota_effective_bytes",
        "mooncake_tenant_quota_allocatable_capacity_bytes",
        "mooncake_tenant_evict_bytes_total",
    ),
    *_all("mooncake_master", QUOTA_POLICY, "mooncake_tenant_quota_over_quota", "mooncake_tenant_quota_reject_total"),
    *_all(
        "mooncake_master",
        PROMOTION_FLOW,
        "master_promotion_in_flight",
        "master_promotion_admitted_total",
        "master_promotion_completed_total",
        "master_promotion_completed_bytes_total",
        "master_promotion_candidate_recorded_total",
        "master_promotion_cancelled_total",
    ),
    *_all(
        "mooncake_master",
        PROMOTION_GATE,
        "master_promotion_rejected_frequency_total",
        "master_promotion_rejected_watermark_total",
        "master_promotion_rejected_cap_total",
        "master_promotion_candidate_dropped_limit_total",
        "master_promotion_candidate_expired_unevaluated_total",
    ),
    *_all("mooncake_master", PROMOTION_LOSS, "master_promotion_failed_total", "master_promotion_expired_total"),
    *_all(
        "mooncake_tent",
        TENT_UNSCOPED,
        "tent_read_failures_total",
        "tent_write_failures_total",
        "tent_deadline_infeasible_total",
    ),
    *_all(
        "mooncake_tent",
        TENT_TRAFFIC,
        "tent_read_bytes_total",
        "tent_write_bytes_total",
        "tent_read_latency_us",
        "tent_write_latency_us",
        "tent_deadline_mlu_permille",
        "tent_stage_queue_wait_us",
        "tent_stage_transport_us",
    ),
)
