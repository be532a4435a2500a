"""Shared fixtures. ``victoriametrics``: one real VictoriaMetrics per test session (127.0.0.1, a free
port, a temporary data path); ``demo_windows``: the demo scenarios imported into it once;
``promtool``: the binary the rule tests run."""

from __future__ import annotations

import pytest
from victoriametrics import import_all, program_or_skip, start_or_skip

from dashgen.demo.vmlauncher import find_program


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
    return program_or_skip(
        find_program("PROMTOOL_BIN", ("promtool",)),
        "promtool not installed (Debian package 'prometheus'; make debian-deps)",
    )
