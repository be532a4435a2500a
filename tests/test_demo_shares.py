"""The demo's parts stay parts: on every shipped profile the reuse hits of ``prefill_effective_tokens_total``
(device, host, storage) add up to less than the input tokens in every 5-minute window of every rank, so the reuse
shares the dashboards draw are possible (≤ 100 %), and the host-hit share stays above the host-tier-collapse alert's
floor (a healthy demo fires no alert)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from dashgen.demo.catalogue import CATALOGUE
from dashgen.demo.run import demo_plan
from dashgen.demo.series import metric_series
from dashgen.deployment.alerts import AlertThresholds
from dashgen.deployment.profile import load_profiles

ROOT = Path(__file__).resolve().parent.parent
NAME = "sglang:prefill_effective_tokens_total"
WINDOW = 300_000  # ms


@pytest.mark.parametrize("profile", load_profiles(directory=ROOT / "profiles"), ids=lambda p: p.name)
def test_reuse_hits_are_parts_of_the_input(profile):
    plan = demo_plan(profile, "healthy", 1_700_000_000.0, 2.0, 30.0)
    by_rank: dict[tuple, dict[str, tuple[list[float], list[int]]]] = defaultdict(dict)
    for series in metric_series(plan, CATALOGUE[NAME], {}):
        labels = {k: v for k, v in series["metric"].items() if k != "__name__"}
        mode = labels.pop("mode")
        by_rank[tuple(sorted(labels.items()))][mode] = (series["values"], series["timestamps"])
    checked = 0
    for rank, modes in by_rank.items():
        values, stamps = modes["input"]
        if values[-1] == values[0]:
            continue  # a seeded zero (an inactive rank): no share is drawn
        step = next(i for i, t in enumerate(stamps) if t - stamps[0] >= WINDOW)
        for i in range(step, len(stamps)):
            total = values[i] - values[i - step]
            hits = {m: modes[m][0][i] - modes[m][0][i - step] for m in ("device_hit", "host_hit", "storage_hit")}
            assert sum(hits.values()) <= total, (rank, stamps[i], hits, total)
            assert hits["host_hit"] >= AlertThresholds().host_hit_min_share * total, (rank, stamps[i])
            checked += 1
    assert checked > 100
