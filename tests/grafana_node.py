"""The shipped @grafana/data bundle run in Node (Debian's ``nodejs``), for tests that hold the preview to
Grafana's own code: :func:`call` sends one call of ``DashgenGrafana`` and returns its answer."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

RUNNER = Path(__file__).with_name("grafana_data.cjs")


def bundle() -> Path:
    return Path(str(resources.files("dashgen").joinpath("data", "grafana-data", "grafana-data.iife.min.js")))


def node_or_skip() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    if found is None:
        pytest.skip("node not installed (Debian package nodejs)")
    return found


def call(name: str, *args: Any, timeout: float = 120) -> Any:
    """``DashgenGrafana.<name>(*args)`` in Node; its JSON answer."""
    done = subprocess.run(
        [node_or_skip(), str(RUNNER), str(bundle())],
        input=json.dumps({"call": name, "args": list(args)}),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["answer"]
