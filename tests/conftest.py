"""Shared fixtures. ``victoriametrics``: one real VictoriaMetrics per test session (127.0.0.1, a free
port, a temporary data path); ``demo_windows``: the demo scenarios imported into it once."""

from __future__ import annotations

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
