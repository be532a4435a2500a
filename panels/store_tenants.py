"""The Mooncake Store's tenant quotas and L2 -> L1 promotion on hit (Mooncake 0.3.12): per master, which tenant
holds how many bytes against its quota, which are over it and whose puts the master refuses; and whether reads
of keys held only on a client's local disk are promoted into memory, or fail, expire, or are turned away at a
gate. Shown where the profile exports the Store master (else one text saying why); a stated Mooncake older than
0.3.12, or a master without ``--enable_multi_tenants`` stated in its features, gets the reason instead of a chart
(``dashgen.render.exporters``)."""

from __future__ import annotations

from dashgen_queries import store_tenants as st

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import ratio_axis, source_status_panel, stat, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Mooncake Store: tenant quotas and L2 -> L1 promotion"
GROUP = "store_tenants"
WORKLOADS = ("text-generation",)
LAYER = "Store tenants and promotion"
PER_MASTER = "per master as the profile maps them ([[mooncake.masters]]), HA copies read once with max"
NO_TENANT = "no tenant quota state (multi-tenancy off, or no tenant has written)"
PROMOTION_OFF = (
    "the counters are written by every 0.3.12 master and stay 0 unless it runs with --promotion_on_hit=true "
    "(default false): a flat 0 here may be promotion switched off, not a healthy L1"
)
TENANT_LIMIT = "one series per tenant the master holds quota state for (tenant_id as the client set it)"


def tenant_panels(profile: Profile) -> list[PanelSpec]:
    """Bytes against quota per tenant, tenants over quota, refused puts and tenant-scoped eviction."""
    legend = "{{tenant_id}} · {{master}}"
    return [
        timeseries(
            f"{GROUP}.tenant_bytes",
            "Store tenant quota: committed and reserved bytes against the effective quota",
            Evidence(
                f"Mooncake master ({st.USED}, {st.RESERVED}, {st.EFFECTIVE}; 0.3.12, --enable_multi_tenants)",
                "per tenant the bytes committed and the bytes reserved by puts in flight, and the effective quota "
                "(the requested quota scaled to what the Store can allocate): committed + reserved above the "
                "quota line is a tenant over quota",
                f"{TENANT_LIMIT}; {PER_MASTER}; the quota is the master's accounting, not the segments' allocation",
                layer=LAYER,
            ),
            (
                Target(st.tenant_bytes(profile, st.USED), f"committed {legend}"),
                Target(st.tenant_bytes(profile, st.RESERVED), f"reserved {legend}"),
                Target(st.tenant_bytes(profile, st.EFFECTIVE), f"effective quota {legend}"),
            ),
            unit="bytes",
            min=0,
            width=12,
            height=8,
            no_value=NO_TENANT,
        ),
        stat(
            f"{GROUP}.over_quota",
            "Store tenants over quota",
            Evidence(
                f"Mooncake master ({st.OVER_QUOTA}, 0.3.12, --enable_multi_tenants)",
                "tenants whose over-quota flag is set at the window end, per master (0 is a real count while "
                "the master holds tenant state)",
                f"{PER_MASTER}; an over-quota tenant's puts are refused until eviction brings it back under",
                layer=LAYER,
            ),
            (Target(st.tenants_over_quota(profile), "{{master}}", instant=True),),
            decimals=0,
            width=6,
            height=8,
            thresholds=(("green", None), ("red", 1)),
            color_mode="background",
            no_value=NO_TENANT,
        ),
        timeseries(
            f"{GROUP}.rejects_evictions",
            "Store tenant quota: refused puts per second and tenant-scoped eviction",
            Evidence(
                f"Mooncake master ({st.REJECTS}{{tenant_id, reason}}, {st.TENANT_EVICTED}{{tenant_id}}; 0.3.12)",
                "puts the master refused at tenant quota admission per second, per tenant and reason, and bytes "
                "per second evicted by a tenant's own quota",
                f"counters appear at their first event (absent before: no refusal, not a missing exporter); "
                f"{PER_MASTER}",
                layer=LAYER,
            ),
            (
                Target(st.reject_rate(profile), "refused/s {{reason}} " + legend),
                Target(st.tenant_evicted_rate(profile), "evicted B/s " + legend),
            ),
            unit="none",
            min=0,
            width=6,
            height=8,
            no_value="no refusal and no tenant eviction in window",
        ),
    ]


def promotion_panels(profile: Profile) -> list[PanelSpec]:
    """Promotion tasks by outcome, the share that failed or expired, and the reads each gate turned away."""
    return [
        timeseries(
            f"{GROUP}.promotion_outcomes",
            "Store L2 -> L1 promotion: tasks per second by outcome, and in flight",
            Evidence(
                "Mooncake master (master_promotion_{admitted,completed,failed,expired,cancelled}_total, "
                f"{st.IN_FLIGHT}; 0.3.12)",
                "promotion tasks queued per second, and per second the ones committed into memory, aborted by "
                "their holder (failed), reaped after put_start_release_timeout_sec (expired) or dropped because "
                "the key or its holder went away (cancelled); tasks in flight",
                f"{PROMOTION_OFF}; {PER_MASTER}",
                layer=LAYER,
            ),
            (
                *(
                    Target(st.outcome_rate(profile, outcome), f"{outcome}/s · {{{{master}}}}")
                    for outcome in st.OUTCOMES
                ),
                Target(st.in_flight(profile), "in flight · {{master}}"),
            ),
            unit="none",
            min=0,
            width=12,
            height=8,
        ),
        stat(
            f"{GROUP}.promotion_unsuccessful",
            "Store L2 -> L1 promotion: share of ended tasks that failed or expired (window)",
            Evidence(
                "Mooncake master (master_promotion_{completed,failed,expired,cancelled}_total; 0.3.12)",
                "over the dashboard's window, failed + expired over every task that ended (completed, failed, "
                "expired, cancelled), per master; no task ended -> no value, not 0",
                f"{PROMOTION_OFF}; a cancelled task lost its key or holder, which is not the promotion failing",
                layer=LAYER,
            ),
            (Target(st.unsuccessful_share(profile), "{{master}}", instant=True),),
            **ratio_axis("percentunit"),
            decimals=1,
            width=6,
            height=8,
            no_value="no promotion task ended in window",
        ),
        timeseries(
            f"{GROUP}.promotion_gates",
            "Store L2 -> L1 promotion: reads turned away per second, by gate",
            Evidence(
                "Mooncake master (master_promotion_rejected_{frequency,watermark,cap}_total, "
                "master_promotion_candidate_{dropped_limit,expired_unevaluated}_total; 0.3.12)",
                "reads of disk-only keys that did not promote, per second: below the frequency threshold (a "
                "first touch, by design), memory at the eviction watermark, the queue at its limit, and retry "
                "candidates dropped or aged out before the scheduler reached them",
                f"{PROMOTION_OFF}; the watermark and cap gates say L1 has no room, the frequency gate does not",
                layer=LAYER,
            ),
            tuple(Target(st.gate_rate(profile, gate), f"{gate} · {{{{master}}}}") for gate in st.GATES),
            unit="none",
            min=0,
            width=6,
            height=8,
        ),
    ]


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Tenant and promotion panels where the Store master is exported, the S15 text where it is deployed but not
    exported, nothing where the deployment runs no Store."""
    panels: list[PanelSpec] = []
    if profile.exported("mooncake_master"):
        panels += [*tenant_panels(profile), *promotion_panels(profile)]
    elif profile.source("mooncake_master").deployed:
        panels.append(
            source_status_panel(
                f"{GROUP}.unavailable",
                profile,
                ["mooncake_master"],
                "Store tenant quotas and promotion: not available",
            )
        )
    return GroupSpec(key=GROUP, title=TITLE, panels=tuple(panels))
