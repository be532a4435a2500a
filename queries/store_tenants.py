"""PromQL for the Mooncake master's tenant quotas and L2 -> L1 promotion on hit (Mooncake 0.3.12, metric
catalogue §3), per master as the profile maps them (``queries.mooncake.per_master``: HA copies read once).

Tenant quotas (``--enable_multi_tenants``): per tenant the bytes committed (``used``) and reserved by puts in
flight, against the effective quota (the requested quota scaled to what the Store can allocate); puts rejected
at admission per tenant and reason; bytes evicted by a tenant's own quota. Per-tenant gauges exist only while the
master holds that tenant's quota state, the counters from their first event.

Promotion on hit (``--promotion_on_hit``): a read of a key held only on a client's local disk (L2) queues a copy
into memory (L1). The counters are written by every 0.3.12 master and stay 0 with promotion off.
"""

from __future__ import annotations

from dashgen_queries.mooncake import MASTER_LABEL, per_master
from dashgen_queries.promql import divide

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import MOONCAKE_MASTER

TENANT = "tenant_id"
USED = MOONCAKE_MASTER.name("mooncake_tenant_quota_used_bytes")
RESERVED = MOONCAKE_MASTER.name("mooncake_tenant_quota_reserved_bytes")
EFFECTIVE = MOONCAKE_MASTER.name("mooncake_tenant_quota_effective_bytes")
OVER_QUOTA = MOONCAKE_MASTER.name("mooncake_tenant_quota_over_quota")
REJECTS = MOONCAKE_MASTER.name("mooncake_tenant_quota_reject_total")
TENANT_EVICTED = MOONCAKE_MASTER.name("mooncake_tenant_evict_bytes_total")
IN_FLIGHT = MOONCAKE_MASTER.name("master_promotion_in_flight")
# The promotion task's outcomes, in the order a task meets them: queued, then committed, or ended otherwise.
OUTCOMES = {
    "admitted": MOONCAKE_MASTER.name("master_promotion_admitted_total"),
    "completed": MOONCAKE_MASTER.name("master_promotion_completed_total"),
    "failed": MOONCAKE_MASTER.name("master_promotion_failed_total"),
    "expired": MOONCAKE_MASTER.name("master_promotion_expired_total"),
    "cancelled": MOONCAKE_MASTER.name("master_promotion_cancelled_total"),
}
# Why a read that could promote did not: the admission gates, and candidates the retry list dropped unread.
GATES = {
    "below the frequency threshold": MOONCAKE_MASTER.name("master_promotion_rejected_frequency_total"),
    "memory at the eviction watermark": MOONCAKE_MASTER.name("master_promotion_rejected_watermark_total"),
    "queue at its limit": MOONCAKE_MASTER.name("master_promotion_rejected_cap_total"),
    "candidate list full (dropped)": MOONCAKE_MASTER.name("master_promotion_candidate_dropped_limit_total"),
    "candidate aged out unevaluated": MOONCAKE_MASTER.name("master_promotion_candidate_expired_unevaluated_total"),
}
ENDED = ("completed", "failed", "expired", "cancelled")


def tenant_bytes(profile: Profile, metric: str) -> str:
    """A per-tenant quota gauge (bytes) per master and tenant."""
    return per_master(profile, metric, by=(TENANT,))


def tenants_over_quota(profile: Profile) -> str:
    """Tenants whose over-quota flag is set, counted per master (0 is a real count while tenants exist)."""
    return f"sum by ({MASTER_LABEL}) ({per_master(profile, OVER_QUOTA, by=(TENANT,))})"


def reject_rate(profile: Profile) -> str:
    """Puts rejected by tenant quota admission per second, per master, tenant and reason."""
    return per_master(profile, REJECTS, "rate", by=(TENANT, "reason"))


def tenant_evicted_rate(profile: Profile) -> str:
    """Bytes per second evicted by a tenant's own quota, per master and tenant."""
    return per_master(profile, TENANT_EVICTED, "rate", by=(TENANT,))


def in_flight(profile: Profile) -> str:
    return per_master(profile, IN_FLIGHT)


def outcome_rate(profile: Profile, outcome: str) -> str:
    """Promotion tasks per second reaching ``outcome`` (a key of OUTCOMES), per master."""
    return per_master(profile, OUTCOMES[outcome], "rate")


def gate_rate(profile: Profile, gate: str) -> str:
    """Reads per second that did not promote for ``gate`` (a key of GATES), per master."""
    return per_master(profile, GATES[gate], "rate")


def unsuccessful_share(profile: Profile) -> str:
    """Of the promotion tasks that ended over the window, the share that failed or expired (0-1), per master;
    no task ended -> no value (not 0)."""
    bad = " + ".join(per_master(profile, OUTCOMES[o], "increase") for o in ("failed", "expired"))
    ended = " + ".join(per_master(profile, OUTCOMES[o], "increase") for o in ENDED)
    return divide(f"({bad})", f"({ended})")
