"""Panel definitions, one module per dashboard group. ``GROUPS`` is the reading order of
``domain.md``; each module exposes ``TITLE`` and ``build(profile, topology) -> GroupSpec``."""

from __future__ import annotations

from dashgen_panels import (
    cache_evidence,
    cache_ladder,
    gpu_health,
    gpu_timelines,
    gpu_window_stats,
    kv_cache_nvme,
    pd_balance,
    requests_gateway,
    slo_health,
)

GROUPS = (slo_health, cache_evidence, cache_ladder, gpu_window_stats, gpu_health, requests_gateway, pd_balance,
          kv_cache_nvme, gpu_timelines)
