"""Panel definitions, one module per dashboard group. ``GROUPS`` is the reading order of
``domain.md``; each module exposes ``TITLE``, ``WORKLOADS`` (the workload kinds it serves, S25) and
``build(profile, topology) -> GroupSpec``."""

from __future__ import annotations

from dashgen_panels import (
    cache_evidence,
    cache_ladder,
    collector,
    efficiency,
    first_screen,
    gateway_runtime,
    gpu_health,
    gpu_timelines,
    gpu_window_stats,
    jobs,
    kv_cache_nvme,
    pd_balance,
    reference,
    requests_gateway,
    slo_health,
    store_tenants,
    store_tent,
    video_slo,
)

# In an incident (S34): the Now row, then the rows that localise (SLO and engine state per stage, requests and
# the gateway, the P:D balance, GPU health and the per-GPU table, cache-disk / Store / node health, the
# collector), then the cache-evidence review, then reference material.
GROUPS = (
    first_screen,
    slo_health,
    video_slo,
    jobs,
    requests_gateway,
    gateway_runtime,
    pd_balance,
    gpu_health,
    gpu_window_stats,
    gpu_timelines,
    efficiency,
    kv_cache_nvme,
    store_tenants,
    store_tent,
    collector,
    cache_evidence,
    cache_ladder,
    reference,
)
# Heavy groups start collapsed, so the dashboard opens on the Now row and the first localising rows only (S26,
# S34): a collapsed row runs no query until it is opened. Modules with rows of their own (requests_gateway,
# reference) say per row which start collapsed.
COLLAPSED_ON_OPEN = frozenset(
    {
        "cache_evidence",
        "cache_ladder",
        "efficiency",
        "gateway_runtime",
        "gpu_window_stats",
        "kv_cache_nvme",
        "store_tenants",
        "store_tent",
    }
)
# Rows that draw one series or one table row per GPU (row keys, ``<group key>[:<row>]``) open with the dashboard
# only up to this many GPUs: beyond it they start collapsed (1,024 lines on one graph is drill-down, not a first
# view; at 1,024 GPUs these rows were 0.18 s of the 0.40 s the dashboard's open took). The Now row's matrix and
# the firing alerts still show a missing or failing GPU at any size.
PER_GPU_ROWS = frozenset({"gpu_health", "slo_health:gpu_memory"})
PER_GPU_OPEN_MAX_GPUS = 256
# The v2 dashboard's tabs: the reading order grouped by question, the first screen first. Each tab names
# the group modules whose rows it holds (row keys ``<group key>[:<row>]``); a tab without a row is left out, and
# rows of a module no tab names (a team's ``extra_modules``) go to a last tab, ``TEAM_TAB``.
TABS = (
    ("Now", ("first_screen",)),
    ("SLO and health", ("slo_health", "video_slo")),
    ("Requests and gateway", ("requests_gateway", "gateway_runtime", "pd_balance", "jobs")),
    ("GPUs", ("gpu_health", "gpu_window_stats", "gpu_timelines", "efficiency")),
    ("Cache evidence", ("cache_evidence", "cache_ladder")),
    ("KV cache, Store and disks", ("kv_cache_nvme", "store_tenants", "store_tent")),
    ("Collector", ("collector",)),
    ("Reference", ("reference",)),
)
TEAM_TAB = "Team panels"
