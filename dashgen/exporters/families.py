"""The panel families that rest on newer or optional series, each with the series it reads, the source and
version that write them and the flag or setting they need: what ``dashgen doctor`` reports per family from
the store's metric names (present, partly present, absent and why it may be).

Data plus one pure function; the names come from the exporter table (``dashgen.exporters.table``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dashgen.exporters.availability import spelling_of
from dashgen.exporters.table import (
    DCGM,
    GATEWAY,
    MOONCAKE_MASTER,
    MOONCAKE_TENT,
    MULTI_TENANTS,
    SGLANG,
    SPECULATIVE,
    TENT_METRICS,
    TENT_PORT,
)


@dataclass(frozen=True)
class Family:
    """A panel family: its series (table names), the exporter version behind them and what turns them on."""

    key: str
    title: str
    source: str
    series: tuple[str, ...]
    version: str
    needs: str


FAMILIES: tuple[Family, ...] = (
    Family(
        "energy",
        "Energy and cost per token",
        "dcgm",
        (DCGM.name("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),),
        "every dcgm-exporter version read",
        "the field in dcgm-exporter's CSV (default-counters.csv lists it) and [cost] usd_per_kwh for dollars",
    ),
    Family(
        "speculative",
        "Speculative decoding",
        "sglang",
        tuple(
            SGLANG.name(n)
            for n in ("sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:spec_verify_calls_total")
        ),
        "every SGLang version read",
        f"{SPECULATIVE} on the engines and [speculative] algorithm in the profile",
    ),
    Family(
        "slo_attainment",
        "SLO attainment",
        "sglang",
        tuple(
            SGLANG.name(n)
            for n in (
                "sglang:time_to_first_token_seconds",
                "sglang:request_time_per_output_token_seconds",
                "sglang:e2e_request_latency_seconds",
                "sglang:num_aborted_requests_total",
            )
        ),
        "TPOT's histogram from SGLang 0.5.22",
        "--enable-metrics (the aborted-request counter appears at the first abort)",
    ),
    Family(
        "gateway_runtime",
        "Gateway runtime health",
        "gateway",
        tuple(
            GATEWAY.name(n)
            for n in (
                "smg_tokio_event_loop_delay_seconds",
                "smg_tokio_event_loop_stalls_total",
                "smg_tokio_worker_busy_ratio",
                "smg_workers_overloaded",
                "smg_worker_overload_shed_total",
                "smg_worker_retry_backoff_seconds",
                "smg_kv_event_subscription_failures_total",
            )
        ),
        "smg 1.6.0 for smg_tokio_* and KV-event failures; main's 1.9.0 for overload vetoes and the model-label cap "
        '(1,024 values, the rest model="other")',
        "always on for smg_tokio_*; overload series with --worker-overload-protection; KV-event failures with "
        "gRPC workers and KV events; counters appear at their first event",
    ),
    Family(
        "pd_failures",
        "PD transfer failures",
        "sglang",
        (
            SGLANG.name("sglang:num_bootstrap_failed_reqs_total"),
            SGLANG.name("sglang:num_transfer_failed_reqs_total"),
            GATEWAY.name("smg_pd_bootstrap_failures_total"),
            GATEWAY.name("smg_pd_kv_transfer_failures_total"),
        ),
        "engine counters in every SGLang version read; the gateway's from smg 1.7.0",
        "a PD deployment (prefill and decode apart); the gateway's KV-transfer counter with vLLM NIXL only",
    ),
    Family(
        "store_tenants",
        "Store tenant quotas",
        "mooncake_master",
        tuple(
            MOONCAKE_MASTER.name(n)
            for n in (
                "mooncake_tenant_quota_used_bytes",
                "mooncake_tenant_quota_reserved_bytes",
                "mooncake_tenant_quota_effective_bytes",
                "mooncake_tenant_quota_over_quota",
            )
        ),
        "Mooncake 0.3.12",
        f"{MULTI_TENANTS}=true on the master and a tenant holding bytes (the reject and tenant-eviction counters "
        "appear at their first event)",
    ),
    Family(
        "store_promotion",
        "Store L2 -> L1 promotion",
        "mooncake_master",
        tuple(
            MOONCAKE_MASTER.name(n)
            for n in (
                "master_promotion_in_flight",
                "master_promotion_admitted_total",
                "master_promotion_completed_total",
                "master_promotion_failed_total",
            )
        ),
        "Mooncake 0.3.12",
        "nothing to be written (every 0.3.12 master writes them); --promotion_on_hit=true for them to count",
    ),
    Family(
        "tent",
        "Mooncake transfer engine (TENT) metrics",
        "mooncake_tent",
        tuple(
            MOONCAKE_TENT.name(n)
            for n in ("tent_read_requests_total", "tent_write_requests_total", "tent_deadline_infeasible_total")
        ),
        "Mooncake 0.3.9 (deadline counters from 0.3.12; per-attempt counters on main only)",
        f"Mooncake built with {TENT_METRICS} (compiled out by default) and TENT_METRICS_ENABLED=true; served on "
        f"TENT_METRICS_HTTP_PORT, default {TENT_PORT}: node_exporter's default port",
    ),
)


def present_series(names: Iterable[str]) -> frozenset[str]:
    """The exporter-table series the store's names show (any prefix, old name or histogram suffix)."""
    found = set()
    for name in names:
        spelled = spelling_of(name)
        if spelled is not None:
            found.add(spelled[1].name)
    return frozenset(found)


def family_reports(names: Iterable[str]) -> list[dict[str, object]]:
    """Per family: the series present and absent in the store, the version behind them and what they need."""
    present = present_series(names)
    reports: list[dict[str, object]] = []
    for family in FAMILIES:
        have = [name for name in family.series if name in present]
        reports.append(
            {
                "family": family.key,
                "title": family.title,
                "state": "present" if len(have) == len(family.series) else "partly present" if have else "absent",
                "present": have,
                "absent": [name for name in family.series if name not in present],
                "version": family.version,
                "needs": family.needs,
            }
        )
    return reports
