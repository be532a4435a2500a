"""A VictoriaMetrics for the test session, via ``dashgen.demo.vmlauncher``; and the demo imports the
query tests read. Missing binary: skip locally with a clear message, fail in CI (``CI=true``)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

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


def import_all(server: vmlauncher.VictoriaMetrics, anchor: float | None = None) -> dict[tuple[str, str], DemoWindow]:
    """Import every (profile, scenario) of IMPORTS at real scrape intervals; the anchor is a whole hour (by default
    the last but one)."""
    anchor = (time.time() // 3600) * 3600 - 3600 if anchor is None else anchor
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


def windows_at(anchor: float) -> dict[tuple[str, str], DemoWindow]:
    """The windows ``import_all`` writes for ``anchor``, without importing."""
    profiles = {p.name: p for p in load_profiles(sorted({name for name, _ in IMPORTS}))}
    return {
        (name, scenario): DemoWindow(
            profiles[name], Topology(profiles[name]), scenario, anchor - hours_before * 3600, HOURS
        )
        for (name, scenario), hours_before in IMPORTS.items()
    }


EVERY_SERIES = urllib.parse.urlencode({"match[]": '{__name__!=""}'})

# What a copy of the demo store must hold as the store it was made of did, per window: series, samples, recorded
# series and their samples, ALERTS samples (each over the window's hour, evaluated at its end).
DEMO_COUNTS = {
    "series": 'count(last_over_time({__name__=~".+"}[1h]))',
    "samples": 'sum(count_over_time({__name__=~".+"}[1h]))',
    "recorded series": 'count(last_over_time({__name__=~".+:.+"}[1h]))',
    "recorded samples": 'sum(count_over_time({__name__=~".+:.+"}[1h]))',
    "ALERTS samples": "sum(count_over_time(ALERTS[1h]))",
}


def demo_counts(url: str, windows: dict[tuple[str, str], DemoWindow]) -> dict[str, float]:
    """``DEMO_COUNTS`` of every window in the store at ``url``, keyed "profile/scenario: what"."""
    counts = {}
    for (name, scenario), window in sorted(windows.items()):
        for what, query in DEMO_COUNTS.items():
            params = urllib.parse.urlencode({"query": query, "time": repr(window.end)})
            with urllib.request.urlopen(f"{url}/api/v1/query?{params}", timeout=60) as answer:
                result = json.load(answer)["data"]["result"]
            counts[f"{name}/{scenario}: {what}"] = float(result[0]["value"][1]) if result else 0.0
    return counts


def export_all(url: str) -> bytes:
    """Everything the store at ``url`` holds, in VictoriaMetrics' native format (flushed first)."""
    Datasource(url, timeout=120).flush()
    with urllib.request.urlopen(f"{url}/api/v1/export/native?{EVERY_SERIES}", timeout=300) as answer:
        return answer.read()


def import_native(url: str, body: bytes) -> None:
    request = urllib.request.Request(f"{url}/api/v1/import/native", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=300) as answer:
        answer.read()
    Datasource(url, timeout=120).flush()


def restart_on_copy(server: vmlauncher.VictoriaMetrics, data: Path) -> bytes:
    """``server`` stopped and started again, on its port and data folder, with a copy of the stopped store's data
    folder ``data`` in place of its own; returns what it held before (native export, empty when nothing), which
    the copy does not have. A copy, not hard links: VictoriaMetrics replaces its parts by new ones, but rewrites
    some files of the folder in place (its caches, saved at stop), which must not reach the shared folder."""
    held = export_all(server.url)
    vmlauncher.stop_process(server.process)
    server.process = None
    shutil.rmtree(server.data_dir / "data")
    shutil.copytree(data, server.data_dir / "data")
    # The same port: fixtures and tests may keep ``server.url``. start(data_dir=...) leaves the folder to ``server``.
    # Another worker's probe for a free port may hold it for a moment; a server that kept it would take it for good,
    # and then a fresh port (``server.url`` follows) beats a failed session.
    for attempt in range(4):
        try:
            port = server.port if attempt < 3 else None
            started = vmlauncher.start(server.binary, server.data_dir, port, startup_timeout=30)
        except vmlauncher.LaunchError:
            if attempt == 3:
                raise
            time.sleep(0.5)
        else:
            server.process, server.port = started.process, started.port
            return held
    raise AssertionError("unreachable: the last attempt returns or raises")


def built_once(folder: Path) -> tuple[float, dict[str, float]]:
    """The demo store (``import_all``) built once for every process of a test run sharing ``folder`` (the xdist
    workers, and the one ``tests/demo_ahead.py`` starts): the first builds it in a VictoriaMetrics of its own (so
    that nothing a test wrote into a worker's store goes with it), stops it (VictoriaMetrics writes what it holds in
    memory to its data folder at a clean stop) and keeps its data folder and ``DEMO_COUNTS`` in ``folder``; the
    others wait for it. Returns the windows' anchor and those counts."""
    data, anchor_file, counts_file = (folder / f"demo-windows.{what}" for what in ("data", "anchor", "counts"))
    with (folder / "demo-windows.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other processes wait for the folder; released when the file closes
        if not anchor_file.exists():
            anchor = (time.time() // 3600) * 3600 - 3600
            scratch = start_or_skip()
            try:
                import_all(scratch, anchor)
                counts_file.write_text(json.dumps(demo_counts(scratch.url, windows_at(anchor))), encoding="utf-8")
                vmlauncher.stop_process(scratch.process, timeout=60)
                if scratch.process is not None and scratch.process.returncode != 0:
                    pytest.fail(f"the demo store did not stop cleanly:\n{scratch.log_tail()}")
                shutil.rmtree(data, ignore_errors=True)  # what a process stopped half way left
                shutil.move(scratch.data_dir / "data", data)
            finally:
                scratch.stop()
            anchor_file.write_text(repr(anchor), encoding="utf-8")
        return float(anchor_file.read_text(encoding="utf-8")), json.loads(counts_file.read_text(encoding="utf-8"))


def import_all_once(server: vmlauncher.VictoriaMetrics, folder: Path) -> dict[tuple[str, str], DemoWindow]:
    """``import_all`` once for every process of a test run sharing ``folder`` (``built_once``); each process restarts
    ``server`` on a copy of that store's data folder and puts back what ``server`` held before (``restart_on_copy``),
    then checks the counts: the same samples, recorded series and ALERTS, for a file copy and a restart instead of a
    native import of the whole demo (~7 s of the store's CPU per worker) or about 40 s of generating, importing and
    replaying."""
    anchor, expected = built_once(folder)
    held = restart_on_copy(server, folder / "demo-windows.data")
    windows = windows_at(anchor)
    # Before what the store held goes back in: a test may have written into a demo window's hours.
    copied = demo_counts(server.url, windows)
    if copied != expected:
        lost = {key: (expected[key], copied.get(key)) for key in expected if copied.get(key) != expected[key]}
        pytest.fail(f"the copy of the demo store differs from the store it was made of (expected, got): {lost}")
    if held:
        import_native(server.url, held)
    return windows
