"""Panel definitions, one module per dashboard group. ``GROUPS`` is the reading order of
``domain.md``; each module exposes ``TITLE``, ``WORKLOADS`` (the workload kinds it serves, S25) and
``build(profile, topology) -> GroupSpec``."""

from __future__ import annotations

from dashgen_panels import (
    cache_evidence,
    cache_ladder,
    gpu_health,
    gpu_timelines,
    gpu_window_stats,
    jobs,
    kv_cache_nvme,
    requests_gateway,
    slo_health,
    video_slo,
)

GROUPS = (slo_health, video_slo, jobs, cache_evidence, cache_ladder, gpu_window_stats, gpu_health, requests_gateway,
          kv_cache_nvme, gpu_timelines)
