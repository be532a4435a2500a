"""Lint at scale: ``dashgen build`` and ``dashgen lint`` of a generated 1,000-node and 10,000-node profile's
dashboards (the video-200 topology: one 8-GPU instance per node), wall time and the child's peak RSS.

Before issue 18, lint held a RecursionError at 1,000 nodes and 23.7 GB at 10,000 (promql-parser's memory is
quadratic in an expression's terms); the parse budget (``queries.promql.MAX_QUERY_TERMS``) keeps every
over-budget query away from the parser (a warning finding), so memory grows linearly. Target: < 1 GiB at
10,000 nodes. ``python -m bench --only lint_scale``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from bench.harness import DASHGEN, ROOT, BenchResult, Row, checked, run_child

SIZES = (1_000, 10_000)
REPEAT = 2
TEMPLATE = ROOT / "profiles" / "video-200.toml"
TARGET_MIB = 1024.0


def scaled_profile(nodes: int) -> str:
    """The video-200 profile with ``nodes`` nodes and one replica per node."""
    text = TEMPLATE.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^name = \"video-200\"", f'name = "scale-{nodes}"', text)
    text = re.sub(r"(?m)^nodes = \d+", f"nodes = {nodes}", text)
    text = re.sub(r"(?m)^replicas = \d+", f"replicas = {nodes}", text)
    return text.replace("{index:02d}", "{index:05d}")


def run(sizes: tuple[int, ...] = SIZES, repeat: int = REPEAT) -> BenchResult:
    result = BenchResult("lint_scale")
    work = Path(tempfile.mkdtemp(prefix="dashgen-bench-lint-"))
    details: dict[str, dict[str, float]] = {}
    try:
        profiles = work / "profiles"
        profiles.mkdir()
        for nodes in sizes:
            (profiles / f"scale-{nodes}.toml").write_text(scaled_profile(nodes), encoding="utf-8")
            out = work / f"d{nodes}"
            build = checked(run_child([DASHGEN, "--profiles-dir", str(profiles), "build", "--profile",
                                       f"scale-{nodes}", "--out", str(out)], timeout=600), f"build {nodes}")
            seconds, rss = [], []
            for _ in range(repeat):
                lint = run_child([DASHGEN, "lint", str(out)], timeout=600)
                if lint.returncode not in (0, 1):
                    raise RuntimeError(f"lint of {nodes} nodes exited {lint.returncode}: {lint.stderr[-500:]}")
                seconds.append(lint.seconds)
                rss.append(lint.max_rss_mib)
            label = f"{nodes:,} nodes"
            result.add(Row("lint_scale", f"build {label}: wall", "s", [build.seconds]))
            result.add(Row("lint_scale", f"lint {label}: wall", "s", seconds))
            result.add(Row("lint_scale", f"lint {label}: peak RSS", "MiB", rss,
                           note=f"target < {TARGET_MIB:.0f} MiB" if nodes >= 10_000 else ""))
            size = sum(path.stat().st_size for path in out.rglob("*.json"))
            details[str(nodes)] = {"dashboard_bytes": size, "build_peak_rss_mib": round(build.max_rss_mib, 1),
                                   "lint_peak_rss_mib_max": round(max(rss), 1)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.details = {"sizes": details, "target_mib": TARGET_MIB}
    return result


if __name__ == "__main__":
    bench = run(repeat=1)
    for row in bench.rows:
        print(f"{row.case:<36} {row.median:10.2f} {row.unit}")
