"""Queries on open (S26): how many queries each profile's dashboard sends when it is opened (targets of the
panels not inside a collapsed row), now and at a base revision (``git show <base>:dashboards/...``; the
merge-base with ``main`` by default, ``BENCH_BASE`` to choose). A count, not a timing: it is exact on any
machine. Every query of the dashboard (all rows opened) is reported beside it.
"""

from __future__ import annotations

import json
import os
import subprocess

from bench.harness import ROOT, BenchResult, Row


def _base() -> str | None:
    wanted = os.environ.get("BENCH_BASE")
    if wanted:
        return wanted
    found = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() or None if found.returncode == 0 else None


def _at(base: str, path: str) -> dict | None:
    shown = subprocess.run(["git", "show", f"{base}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return json.loads(shown.stdout) if shown.returncode == 0 else None


def run() -> BenchResult:
    from dashgen.build import build_profile
    from dashgen.deployment.profile import load_profiles
    from dashgen.document.on_open import queries_in_all_panels, queries_on_open

    result = BenchResult("open_queries")
    base = _base()
    details: dict[str, dict] = {}
    for profile in load_profiles([], ROOT / "profiles"):
        for built in build_profile(profile):
            path = f"dashboards/{profile.name}/{built.spec.uid}.json"
            now, every = queries_on_open(built.document), queries_in_all_panels(built.document)
            before_doc = _at(base, path) if base else None
            before = queries_on_open(before_doc) if before_doc else None
            case = f"{profile.name}: queries on open"
            if before is not None:
                result.add(
                    Row(
                        "open_queries",
                        f"{profile.name}: queries on open at base",
                        "count",
                        [float(before)],
                        note=f"base {base[:12]}",
                    )
                )
            result.add(
                Row(
                    "open_queries",
                    case,
                    "count",
                    [float(now)],
                    baseline=f"{profile.name}: queries on open at base" if before is not None else None,
                    note=f"{every} queries with every row opened",
                )
            )
            details[profile.name] = {"on_open": now, "all_rows_opened": every, "on_open_at_base": before, "base": base}
    result.details = details
    result.resolve_ratios()
    return result
