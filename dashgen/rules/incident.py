"""The incident alerts (S31-S33): a failure class per alert that fired nothing before, each keeping the labels of
what is wrong (node and device, node and PP stage, gateway instance and worker, Store master, node).

The conditions are ``queries.health``'s, the same the Now row's health states are recorded from
(``dashgen.rules.recording.layer_health_records``), so an alert and its matrix cell cannot drift apart; the
thresholds are the profile's ``[alerts]``. Each alert is written only where the profile exports its source (an
alert that cannot fire is not written). Severity: the health state's where one exists.
"""

from __future__ import annotations

from dashgen_queries import health

from dashgen.deployment.profile import TEXT, Profile
from dashgen.rules.model import AlertRule

GATEWAY_WHAT = (
    "The Gateway group shows the instance's answers by status code, its admission queue and rejections, "
    "and each backend's health and circuit breaker; the first screen's gateway panel marks it red"
)


def _label(profile: Profile, role: str) -> str:
    return f"{{{{ $labels.{profile.label(role)} }}}}"


def disk_alert(profile: Profile) -> AlertRule:
    t, node = profile.alerts, _label(profile, "node")
    text = profile.has_kind(TEXT)  # S25: a video pool's disks are scratch disks, and it has no KV cache
    kind, what = ("Cache", "a cache device") if text else ("Scratch", "a scratch device")
    effect = (
        (
            "The KV cache reads and writes of this node wait on the disk: Store-tier prefetches slow down or "
            "miss their deadline. Open the Cache disk rows (busy, queue, await, IOPS) for the node and the "
            "HiCache Store tier's prefetch reasons."
        )
        if text
        else (
            "The jobs' intermediate and output files on this node wait on the disk: stage latency grows. Open the "
            "Scratch disk rows (busy, queue, await, IOPS) for the node and the Jobs group's stage latency."
        )
    )
    return AlertRule(
        alert="CacheDiskSaturated",
        expr=health.disk_saturated(profile),
        for_="10m",
        severity=health.DISK_SATURATED.severity,
        summary=f"{kind} disk {{{{ $labels.device }}}} saturated on {node}",
        description=(
            f"Node {node}, device {{{{ $labels.device }}}} ({what}, "
            f"the device mounted at {profile.disks.cache_mountpoint}): "
            f"busy {{{{ $value | humanizePercentage }}}} of the time (above {t.disk_busy_share:.0%}), more "
            f"than {t.disk_queue_depth:g} I/Os queued on average, and each I/O takes more than "
            f"{t.disk_await_factor:g} x the device's own await of the {t.baseline_window} ending "
            f"{t.baseline_offset} ago, for 10m ({health.DISK_WINDOW} rates, node_exporter diskstats). "
            f"{effect}"
        ),
        anchor="cachedisksaturated",
    )


def host_tier_alert(profile: Profile) -> AlertRule:
    t, node, stage = profile.alerts, _label(profile, "node"), _label(profile, "pp_rank")
    return AlertRule(
        alert="HostTierHitCollapsed",
        expr=health.host_tier_collapsed(profile),
        for_="15m",
        severity=health.TIER_COLLAPSED.severity,
        summary=f"HiCache host-tier hit share collapsed on {node} PP stage {stage}",
        description=(
            f"Node {node}, PP stage {stage}: the host tier's (L2) share of prefill input tokens is "
            f"{{{{ $value | humanizePercentage }}}} over {health.HOST_WINDOW}, below 1/"
            f"{t.host_hit_drop_factor:g} of both its own share over the {t.baseline_window} ending "
            f"{t.baseline_offset} ago (which was at least {t.host_hit_min_share:.0%}) and the median share of "
            "every serving stage of the deployment now, for 15m (sglang:prefill_effective_tokens_total, "
            "mode host_hit / input). The stage recomputes prefixes its host pool used to hold: its host "
            "pool was flushed or shrunk, or the router stopped sending it the requests whose prefixes it "
            "holds. Open the cache-evidence ladder and the Host tier rows (occupancy, load-back, dropped "
            "tokens by reason) for the node; an idle stage does not alert."
        ),
        anchor="hosttierhitcollapsed",
    )


def _gateway(
    profile: Profile,
    alert: str,
    expr: str,
    for_: str,
    severity: str,
    summary: str,
    description: str,
    worker: bool = False,
) -> AlertRule:
    node, instance = _label(profile, "node"), _label(profile, "instance")
    backend = ", backend {{ $labels.worker }}" if worker else ""
    return AlertRule(
        alert=alert,
        expr=expr,
        for_=for_,
        severity=severity,
        summary=f"{summary} (gateway {instance} on {node}{backend})",
        description=f"Node {node}, gateway instance {instance}{backend}: {description} {GATEWAY_WHAT}.",
        anchor=alert.lower(),
    )


def gateway_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    t = profile.alerts
    window = health.GATEWAY_WINDOW
    return (
        _gateway(
            profile,
            "GatewayShedding",
            health.gateway_shedding(profile),
            "5m",
            "warning",
            "Gateway shedding requests with 429",
            f"{{{{ $value | humanizePercentage }}}} of its valid answers over {window} are 429 (above "
            f"{t.gateway_shed_share:.0%}, smg_http_responses_total), or of its requests are rejected at "
            f"admission ({health.ADMISSION_REJECTED}), for 5m: the admission queue is full "
            "(--max-concurrent-requests / --queue-size) or a rate limit sheds; the clients get errors that no "
            "engine ever saw, so the engine-side SLO stays green.",
        ),
        _gateway(
            profile,
            "GatewayErrors",
            health.gateway_errors(profile),
            "5m",
            "warning",
            "Gateway answering 5xx or timing out",
            f"{{{{ $value | humanizePercentage }}}} of its valid answers over {window} are 5xx or timeouts "
            f"(408, 504; above {t.gateway_error_share:.0%}, smg_http_responses_total), for 5m: backends fail "
            "or answer too late. Check the backends' health and circuit breakers and the engines behind them "
            "(EngineStalled, EngineRestarted).",
        ),
        _gateway(
            profile,
            "GatewayNoHealthyBackend",
            health.gateway_no_healthy_backend(profile),
            "2m",
            "critical",
            "Gateway has no healthy backend",
            "no backend worker is healthy as the gateway sees it (smg_worker_health below 1 for every worker; "
            "value: the best one's, 0 unhealthy, -1 removed) for 2m: every request through it fails. The "
            "engines are down or unreachable from the gateway, or its health checks fail.",
        ),
        _gateway(
            profile,
            "GatewayCircuitBreakerOpen",
            health.gateway_breaker_open(profile),
            "2m",
            "warning",
            "Gateway circuit breaker open",
            f"the circuit breaker of this backend was not closed at any sample of {health.BREAKER_WINDOW} "
            "(smg_worker_cb_state, value: the lowest state, 1 open, 2 half-open), for 2m: the gateway routes "
            "nothing to it after consecutive failures, while the engine itself may be healthy. Check the "
            "backend's engine and the gateway's view of its errors.",
            worker=True,
        ),
    )


def store_alert(profile: Profile) -> AlertRule:
    t = profile.alerts
    targets = "; ".join(f"{m.name}: {', '.join(m.nodes) or 'every master target'}" for m in profile.masters())
    return AlertRule(
        alert="StoreMetadataReset",
        expr=health.store_reset(profile),
        for_="0m",
        severity=health.STORE_RESET.severity,
        summary="Mooncake Store master {{ $labels.master }} lost its metadata (reset, HA failover)",
        description=(
            "Cluster-wide, Mooncake master {{ $labels.master }} (its targets: " + targets + "): its key "
            f"count (master_key_count), or its allocated bytes, is {{{{ $value }}}}, below "
            f"{t.store_reset_share:.0%} of its peak within {health.STORE_RESET_WINDOW} (which was at least "
            f"{t.store_min_keys} keys or 1 GiB). After an HA failover the new leader starts empty: every "
            "object the Store held is gone while the clients' segments re-register, so Store-tier hits "
            "drop until it refills. Open the Store rows (keys, allocation, segments per node, metadata hit "
            "share) and check the master's log and /ha_status; every node the master serves reads "
            "'Store metadata reset' on the Now row."
        ),
        anchor="storemetadatareset",
    )


def clock_alert(profile: Profile) -> AlertRule:
    t, node = profile.alerts, _label(profile, "node")
    return AlertRule(
        alert="ClockSkew",
        expr=health.clock_off(profile),
        for_="5m",
        severity=health.CLOCK_OFF.severity,
        summary=f"Clock off on {node}",
        description=(
            f"Node {node}: value {{{{ $value }}}} s, the clock's offset from its time source "
            f"(|node_timex_offset_seconds|, above {t.clock_offset_seconds:g} s) or, where the kernel reports "
            f"the clock unsynchronised (node_timex_sync_status 0 over {health.CLOCK_SYNC_WINDOW}), its "
            f"estimated error (at least {health.CLOCK_MAXERROR_SECONDS} s), for 5m. The node's vmagent "
            "stamps its samples with this clock: its series land early or late in the store (gaps, "
            "'insufficient samples', rates out of step with other nodes), and TLS and the engines' "
            "timeouts misbehave. Check chronyd / ntpd on the node (chronyc tracking)."
        ),
        anchor="clockskew",
    )


def incident_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """The incident alerts whose sources the profile exports."""
    alerts: list[AlertRule] = []
    if profile.exported("node_exporter") and profile.disks.has_cache_tier:
        alerts.append(disk_alert(profile))
    if profile.exported("hicache") and profile.exported("sglang") and profile.has_kind(TEXT):
        alerts.append(host_tier_alert(profile))
    if profile.exported("gateway"):
        alerts.extend(gateway_alerts(profile))
    if profile.exported("mooncake_master"):
        alerts.append(store_alert(profile))
    if profile.exported("node_exporter"):
        alerts.append(clock_alert(profile))
    return tuple(alerts)
