"""Panel definitions, one module per dashboard group. ``GROUPS`` is the reading order of
``domain.md``; each module exposes ``TITLE`` and ``build(profile, topology) -> GroupSpec``."""

from __future__ import annotations

from panels import cache_evidence, gpu_window_stats, slo_health

GROUPS = (slo_health, cache_evidence, gpu_window_stats)
