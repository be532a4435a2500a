"""Panel definitions, one module per dashboard group. ``GROUPS`` is the reading order of
``domain.md``; each module exposes ``TITLE``, ``WORKLOADS`` (the workload kinds it serves, S25) and
``build(profile, topology) -> GroupSpec``."""

from __future__ import annotations

from dashgen_panels import (
    cache_evidence,
    cache_ladder,
    collector,
    first_screen,
    gpu_health,
    gpu_timelines,
    gpu_window_stats,
    jobs,
    kv_cache_nvme,
    pd_balance,
    requests_gateway,
    slo_health,
    video_slo,
)

GROUPS = (first_screen, slo_health, video_slo, jobs, collector, cache_evidence, cache_ladder, gpu_window_stats,
          gpu_health, requests_gateway, pd_balance, kv_cache_nvme, gpu_timelines)
# Heavy groups start collapsed, so the dashboard opens on the Now row and SLO / GPU health only (S26): a
# collapsed row runs no query until it is opened.
COLLAPSED_ON_OPEN = frozenset({"cache_evidence", "cache_ladder", "gpu_window_stats", "requests_gateway",
                               "kv_cache_nvme"})
