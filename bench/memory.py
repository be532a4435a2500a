"""Memory benchmark: peak RSS (the child's own, from ``wait4``) of ``dashgen build`` against the grafanalib-only
baseline process, and of a 50-dashboard publish (the publish worker of ``bench.publish``) against the build."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench import publish
from bench.harness import DASHGEN, PYTHON, BenchResult, Row, checked, run_child

REPEAT = 2


def run(repeat: int = REPEAT) -> BenchResult:
    result = BenchResult("memory")
    work = Path(tempfile.mkdtemp(prefix="dashgen-bench-memory-"))
    try:
        build, baseline, imports = [], [], []
        for index in range(repeat):
            build.append(
                checked(run_child([DASHGEN, "build", "--out", str(work / f"d{index}")]), "dashgen build").max_rss_mib
            )
            baseline.append(
                checked(
                    run_child([PYTHON, "-m", "bench.baseline_grafanalib", str(work / f"g{index}")]), "baseline"
                ).max_rss_mib
            )
            imports.append(checked(run_child([PYTHON, "-c", "import dashgen.cli"]), "import").max_rss_mib)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.add(Row("memory", "grafanalib only: peak RSS", "MiB", baseline, note="baseline process (see build)"))
    result.add(
        Row(
            "memory",
            "dashgen build: peak RSS",
            "MiB",
            build,
            baseline="grafanalib only: peak RSS",
            note="4 profiles, whole process",
        )
    )
    result.add(
        Row(
            "memory",
            "import dashgen.cli: peak RSS",
            "MiB",
            imports,
            baseline="grafanalib only: peak RSS",
            note="interpreter + imports only",
        )
    )
    releases = publish.LAST_RELEASES or publish.releases(1)
    result.add(
        Row(
            "memory",
            "publish 50 dashboards: peak RSS",
            "MiB",
            [r["max_rss_mib"] for r in releases],
            baseline="dashgen build: peak RSS",
            note="worker: build + 3 releases (create, unchanged, changed) of 50 dashboards",
        )
    )
    result.details = {
        "publish_rss_after_phase_mib": {
            phase: [round(r[phase]["max_rss_mib"], 1) for r in releases] for phase in publish.PHASES
        }
    }
    result.resolve_ratios()
    return result
