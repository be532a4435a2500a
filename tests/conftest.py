"""Shared fixtures. ``victoriametrics``: one real VictoriaMetrics per test session (127.0.0.1, a free
port, a temporary data path); ``demo_windows``: the demo scenarios imported into it once;
``promtool``: the binary the rule tests run."""

from __future__ import annotations

import os
import shutil

import pytest
from victoriametrics import import_all, start_or_skip


@pytest.fixture(scope="session")
def victoriametrics():
    server = start_or_skip()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def demo_windows(victoriametrics):
    return import_all(victoriametrics)


@pytest.fixture(scope="session")
def promtool() -> str:
    """The promtool binary (Debian package 'prometheus'); required in CI, skipped elsewhere when missing."""
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is required in CI (Debian package 'prometheus'; make debian-deps)")
        pytest.skip("promtool not installed (Debian package 'prometheus'; make debian-deps)")
    return path
