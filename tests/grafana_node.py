"""The shipped @grafana/data bundle run in Node (Debian's ``nodejs``), for tests that hold the preview to
Grafana's own code: :func:`call` sends one call of ``DashgenGrafana`` to a Node process kept per shipped minor
for the test session (each bundle is loaded once) and returns its answer. :func:`use` picks the minor that
calls without one go to (the newest by default)."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from dashgen.preview.page import GRAFANA_DATA

RUNNER = Path(__file__).with_name("grafana_data.cjs")
_lock = threading.Lock()
_process: dict[str, subprocess.Popen[str]] = {}
_current = [GRAFANA_DATA[-1]]


def use(minor: str) -> None:
    """Send the calls that name no minor to the bundle of ``minor``."""
    _current[0] = minor


def bundle(minor: str | None = None) -> Path:
    folder = resources.files("dashgen").joinpath("data", "grafana-data", minor or _current[0])
    return Path(str(folder.joinpath("grafana-data.iife.min.js")))


def node_or_skip() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    if found is None:
        pytest.skip("node not installed (Debian package nodejs)")
    return found


def _close() -> None:
    for process in _process.values():
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


atexit.register(_close)


def _node(minor: str) -> subprocess.Popen[str]:
    if minor not in _process or _process[minor].poll() is not None:
        _process[minor] = subprocess.Popen(
            [node_or_skip(), str(RUNNER), str(bundle(minor))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
    return _process[minor]


def call(name: str, *args: Any, timeout: float = 120, minor: str | None = None) -> Any:
    """``DashgenGrafana.<name>(*args)`` in Node with the bundle of ``minor`` (default: :func:`use`'s); its JSON
    answer (a failing call fails the test)."""
    with _lock:
        process = _node(minor or _current[0])
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"call": name, "args": list(args)}) + "\n")
        process.stdin.flush()
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            line = process.stdout.readline()
        finally:
            timer.cancel()
    assert line, f"node ended without answering {name} (timeout {timeout:g}s or crash)"
    reply = json.loads(line)
    assert "error" not in reply, reply["error"][-2000:]
    return reply["answer"]
