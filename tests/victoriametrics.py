"""A VictoriaMetrics for the test session, via ``dashgen.demo.vmlauncher``; and the demo imports the
query tests read. Missing binary: skip locally with a clear message, fail in CI (``CI=true``)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

import pytest

from dashgen.demo import recorder, vmlauncher
from dashgen.demo.run import import_demo
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource

HOURS = 1.0
# (profile, scenario) -> how many hours before the session's anchor its window ends. Windows are 1 h
# and 2 h apart, so no query of one window (range 1 h, lookback 5 min) sees another.
IMPORTS = {
    ("long-context-64", "healthy"): 0,
    ("long-context-64", "five-reasons"): 3,
    ("h20-16", "healthy"): 6,
    ("long-context-64", "gpu-missing"): 9,
    ("pd-128", "healthy"): 12,
}
# Imports thinned to one sample per this many seconds (0: every source at its scrape interval), to keep the
# session fast: the gpu-missing window is read for GPU counts and health, at the store's 30 s resolution.
STEPS = {("long-context-64", "gpu-missing"): 30.0, ("pd-128", "healthy"): 30.0}


# S21: another deployment in the same store and the same window, reusing long-context-64's node names:
# (profile, scenario) of a window -> (scenario, deployment value) imported beside it. Its five-reasons faults
# would show in the healthy window's tables if any query read across deployments.
SHADOWS = {("long-context-64", "healthy"): ("five-reasons", "long-context-64-shadow")}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def program_or_skip(path: str | None, message: str) -> str:
    """``path``; when None (the program is not installed), skip with ``message`` locally, fail in CI."""
    if path is None:
        if in_ci():
            pytest.fail(message + " (CI=true: not skipping)")
        pytest.skip(message)
    return path


def start_or_skip() -> vmlauncher.VictoriaMetrics:
    program_or_skip(
        vmlauncher.find_binary(),
        "victoria-metrics binary not found: install the Debian package "
        "(`make debian-deps`) or set VICTORIA_METRICS_BIN",
    )
    return vmlauncher.start(startup_timeout=30)


def start_production_store(profile: Profile) -> vmlauncher.VictoriaMetrics:
    """A throw-away VictoriaMetrics run the way production runs it for ``profile`` (its ``[store]`` dedup interval
    and latency offset), with the session store's skip / fail rule."""
    start_or_skip().stop()
    return vmlauncher.start(
        startup_timeout=30,
        extra_flags=vmlauncher.production_flags(profile.store.resolution, profile.store.latency_offset),
    )


@dataclass(frozen=True)
class DemoWindow:
    profile: Profile
    topology: Topology
    scenario: str
    end: float
    hours: float


def import_all(server: vmlauncher.VictoriaMetrics) -> dict[tuple[str, str], DemoWindow]:
    """Import every (profile, scenario) of IMPORTS at real scrape intervals; the anchor is a whole hour."""
    anchor = (time.time() // 3600) * 3600 - 3600
    datasource = Datasource(server.url, timeout=120)
    profiles = {p.name: p for p in load_profiles(sorted({name for name, _ in IMPORTS}))}
    windows = {}
    recorded: list[tuple[list[Profile], float]] = []
    for (name, scenario), hours_before in IMPORTS.items():
        end = anchor - hours_before * 3600
        import_demo(datasource, profiles[name], scenario, end, HOURS, STEPS.get((name, scenario), 0.0))
        windows[(name, scenario)] = DemoWindow(profiles[name], Topology(profiles[name]), scenario, end, HOURS)
        in_window = [profiles[name]]
        if (name, scenario) in SHADOWS:
            shadow_scenario, deployment = SHADOWS[(name, scenario)]
            shadow = replace(profiles[name], deployment=deployment)
            import_demo(datasource, shadow, shadow_scenario, end, HOURS)
            in_window.append(shadow)
        recorded.append((in_window, end))
    datasource.flush()
    program_or_skip(
        recorder.find_vmalert(),
        "vmalert not found (Debian package 'victoria-metrics', `make debian-deps`, or set VMALERT_BIN)",
    )
    for in_window, end in recorded:
        for profile in in_window:  # one at a time: the shadow deployment's rule groups have its profile's names
            recorder.replay_for_dashboards(server.url, [profile], end - HOURS * 3600, end)
    datasource.flush()
    return windows
