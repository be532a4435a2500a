"""The session's demo store under xdist: a worker's store restarted on a copy of a stopped store's data folder
holds that store's samples and, put back, what it held before, on the same port; a copy that lost a part is
told by the demo counts (``victoriametrics.import_all_once``); and the store's build started ahead in a process of
its own (``demo_ahead``) is started once per run and stops on SIGTERM, even while it waits at the store's lock."""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from demo_ahead import start, stop
from victoriametrics import (
    demo_counts,
    import_native,
    restart_on_copy,
    start_or_skip,
    windows_at,
)

from dashgen.demo import vmlauncher
from dashgen.live.datasource import Datasource

ANCHOR = 1_700_000_000 // 3600 * 3600.0


def write(url: str, name: str, points: int) -> None:
    """``points`` samples of series ``name``, one a minute up to ``ANCHOR``, imported and flushed."""
    timestamps = [int((ANCHOR - 60 * i) * 1000) for i in range(points)]
    line = {"metric": {"__name__": name}, "values": [1.0] * points, "timestamps": timestamps}
    request = urllib.request.Request(f"{url}/api/v1/import", data=json.dumps(line).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()
    Datasource(url, timeout=30).flush()


def samples(url: str, name: str) -> float:
    params = urllib.parse.urlencode({"query": f"sum(count_over_time({name}[2h]))", "time": repr(ANCHOR)})
    with urllib.request.urlopen(f"{url}/api/v1/query?{params}", timeout=30) as answer:
        result = json.load(answer)["data"]["result"]
    return float(result[0]["value"][1]) if result else 0.0


@pytest.fixture()
def stopped_store(tmp_path: Path) -> Path:
    """The data folder of a store that held 50 samples of ``demo_copy_a`` and was stopped cleanly."""
    source = start_or_skip()
    try:
        write(source.url, "demo_copy_a", 50)
        vmlauncher.stop_process(source.process, timeout=60)
        assert source.process is not None and source.process.returncode == 0, source.log_tail()
        shutil.copytree(source.data_dir / "data", tmp_path / "data")
    finally:
        source.stop()
    return tmp_path / "data"


def test_a_store_restarted_on_a_copy_holds_it_and_what_it_held_before(stopped_store: Path) -> None:
    server = start_or_skip()
    try:
        port = server.port
        write(server.url, "demo_copy_b", 7)
        held = restart_on_copy(server, stopped_store)
        assert server.port == port
        assert (samples(server.url, "demo_copy_a"), samples(server.url, "demo_copy_b")) == (50.0, 0.0)
        import_native(server.url, held)
        assert (samples(server.url, "demo_copy_a"), samples(server.url, "demo_copy_b")) == (50.0, 7.0)
    finally:
        server.stop()
    assert not server.data_dir.exists()


def test_a_copy_that_lost_a_part_is_told_by_the_demo_counts(stopped_store: Path, tmp_path: Path) -> None:
    windows = windows_at(ANCHOR)
    server = start_or_skip()
    try:
        restart_on_copy(server, stopped_store)
        whole = demo_counts(server.url, windows)
        assert whole["long-context-64/healthy: samples"] == 50.0
        assert whole["long-context-64/healthy: series"] == 1.0
        parts = [part for part in (stopped_store / "data" / "small").glob("*/*") if part.is_dir()]
        assert parts, "the stopped store wrote no part"
        for part in parts:
            shutil.rmtree(part)
        restart_on_copy(server, stopped_store)
        assert demo_counts(server.url, windows) != whole
    finally:
        server.stop()


def test_the_demo_store_is_built_ahead_by_one_process_a_run(tmp_path: Path) -> None:
    """The first worker starts the builder, the others do not; a builder finding the store built (another process
    built it first) reads it and ends."""
    (tmp_path / "demo-windows.anchor").write_text(repr(ANCHOR), encoding="utf-8")
    (tmp_path / "demo-windows.counts").write_text("{}", encoding="utf-8")
    builder = start(tmp_path)
    assert builder is not None
    assert start(tmp_path) is None
    assert builder.wait(timeout=120) == 0, (tmp_path / "demo-windows.ahead.log").read_text(encoding="utf-8")
    stop(builder)


def test_a_builder_waiting_at_the_lock_stops_on_sigterm(tmp_path: Path) -> None:
    """A run that ends before any test read the store reaps a builder still running (``stop``: SIGTERM), which
    unwinds (its store stopped) instead of waiting for the lock or building on."""
    with (tmp_path / "demo-windows.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        builder = start(tmp_path)
        assert builder is not None
        _wait_catching_sigterm(builder)  # a SIGTERM before its handler is set would end it as -15, not unwind
        with contextlib.suppress(subprocess.TimeoutExpired):  # Python started, waiting for the lock this test holds
            builder.wait(timeout=3)
        stop(builder)
    assert builder.returncode == 128 + signal.SIGTERM, (tmp_path / "demo-windows.ahead.log").read_text("utf-8")
    assert not (tmp_path / "demo-windows.anchor").exists()


def _wait_catching_sigterm(process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Until ``process`` has its SIGTERM handler set (Linux: the caught-signals mask in /proc/<pid>/status)."""
    bit = 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        status = Path(f"/proc/{process.pid}/status").read_text(encoding="utf-8")
        caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
        if int(caught, 16) & bit:
            return
        time.sleep(0.02)
    raise AssertionError(f"the builder set no SIGTERM handler within {timeout:g} s (exit {process.poll()})")
