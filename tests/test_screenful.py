"""Graphs stay legible at any size: at 4,096 GPUs no graph that opens with the dashboard draws more than a
screenful of series (``dashgen_panels.screenful``), the per-stage graphs draw their worst few and a band, and
every series stays one click away in a collapsed row; below a screenful nothing changes."""

from __future__ import annotations

import re
import time
from pathlib import Path

import promql_parser as pp
import pytest
from dashgen_panels.screenful import EVERY_ROW, SCREENFUL, WORST
from dashgen_queries.promql import band, worst_series
from scaled_profiles import GPUS, at_size
from series_bound import bound

from dashgen.build import build_profile
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.live.datasource import Datasource

ROOT = Path(__file__).resolve().parent.parent
GRAFANA_GLOBALS = re.compile(r"\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}")
SHIPPED = sorted(p.stem for p in (ROOT / "profiles").glob("*.toml"))
# labels a graph may keep whose count does not grow with the cluster (the band's three, a pool's two roles)
SMALL = {"band": 3, "engine_type": 2, "class": 4, "model_name": 1, "mode": 3, "tier": 4, "cluster": 1, "status": 3}
SMALL["stage"] = 8  # named pipeline / request stages (a fixed list in the engine), not PP ranks
GATEWAY_NODES = 4  # gateway replicas: the profile states none; a handful whatever the cluster size


def open_graphs(document: dict) -> list[dict]:
    """The graphs Grafana draws when the dashboard opens: top-level panels, not those inside a collapsed row."""
    return [p for p in document["panels"] if p.get("type") in ("timeseries", "stat")]


def drawn_at_most(panel: dict, profile: Profile) -> float:
    sizes = {"node": profile.nodes, "pp_rank": profile.max_pp, "gpu": profile.gpus_per_node, **SMALL}
    total = 0.0
    for target in panel.get("targets") or []:
        expr = GRAFANA_GLOBALS.sub("1m", target["expr"])
        # the gateway's series come from its own few nodes (one instance each), however many GPUs serve behind it
        if set(re.findall(r'job="(\w+)"', expr)) == {"gateway"}:
            total += bound(pp.parse(expr), {**sizes, "node": GATEWAY_NODES}, 1).count
        else:
            total += bound(pp.parse(expr), sizes, profile.gpus_per_node).count
    return total


@pytest.mark.slow  # about 1 s of CPU per profile: the build of a 4,096-GPU cluster
@pytest.mark.parametrize("name", SHIPPED)
def test_no_graph_that_opens_with_the_dashboard_draws_more_than_a_screenful_at_4096_gpus(name):
    profile = at_size(name)
    assert profile.total_gpus == GPUS or name == "video-200"  # 25 nodes: 512 of them, one instance each
    (built,) = build_profile(profile)
    over = {p["title"]: drawn for p in open_graphs(built.document) if (drawn := drawn_at_most(p, profile)) > SCREENFUL}
    assert not over


def test_the_per_stage_graphs_draw_the_worst_stages_and_a_band_with_every_stage_a_click_away():
    profile = at_size("long-context-64")
    (spec,) = dashboard_specs(profile)
    rows = {row.key: row for row in spec.groups}
    load, every = rows["slo_health:engine_load"], rows[f"slo_health:engine_load:{EVERY_ROW}"]
    assert not load.collapsed and every.collapsed
    assert [p.key for p in every.panels] == [f"{p.key}.every" for p in load.panels if p.fan_out]
    full = {p.key: p for p in every.panels}
    for panel in load.panels:
        assert panel.fan_out, panel.key  # all five engine-load panels draw one series per stage
        (original,) = full[f"{panel.key}.every"].targets
        labels = panel.fan_out.labels
        assert panel.targets[0].expr == worst_series(original.expr, labels, WORST, panel.fan_out.worst)
        assert panel.targets[0].legend == original.legend
        if panel.kind == "timeseries" and panel.fan_out.band:  # a gauge: its band recorded (queries.stage_bands)
            assert [t.expr for t in panel.targets[1:]] == [panel.fan_out.band]
            assert ":band{" in panel.fan_out.band and "stage-bands" in panel.description
        elif panel.kind == "timeseries":
            assert [t.expr for t in panel.targets[1:]] == [band(original.expr, labels)]
        else:
            assert len(panel.targets) == 1
        assert "512 stages" in panel.description and f"'{every.title}'" in panel.description
    worst = {p.title: p.fan_out.worst for p in load.panels if p.fan_out}
    assert worst["Prefix-cache reuse share per stage"] == "bottom"  # low reuse is what is wrong
    assert worst["KV usage of the fullest pool per stage (token_usage)"] == "top"


@pytest.mark.parametrize("profile", load_profiles(directory=ROOT / "profiles"), ids=lambda p: p.name)
def test_below_a_screenful_the_shipped_dashboards_keep_every_series(profile):
    """The shipped profiles (at most 25 nodes) have fewer than 64 stages: no graph is narrowed, no row added."""
    (spec,) = dashboard_specs(profile)
    assert not [row.key for row in spec.groups if row.key.endswith(EVERY_ROW)]
    assert not [p.key for p in spec.panels() if any("@ end()" in t.expr for t in p.targets)]


@pytest.mark.slow  # a VictoriaMetrics started, 90 stages over 10 minutes
def test_worst_series_draws_the_same_k_series_at_every_step_and_the_band_three(victoriametrics):
    """On a real store: 90 stages whose order changes at every step; ``topk`` alone draws many more than k
    over the range, the worst-at-the-end choice exactly k (the k highest at the end, each over the whole
    range), and the band three series."""
    store = Datasource(victoriametrics.url)
    end = int(time.time()) // 60 * 60
    stamps = [(end - 600 + step * 60) * 1000 for step in range(11)]
    store.import_series(
        {
            "metric": {"__name__": "dg_screenful_test", "node": f"n{stage}", "pp_rank": "0"},
            "values": [(stage * 7 + step * 13) % 90 for step in range(11)],  # a different order at every step
            "timestamps": stamps,
        }
        for stage in range(90)
    )
    store.flush()
    expr, labels = "max by (node, pp_rank) (dg_screenful_test)", ("node", "pp_rank")

    def drawn(query: str) -> list[dict]:
        return store.query_range(query.replace("$__interval", "60s"), end - 600, end, 60).result

    assert len(drawn(f"topk({WORST}, {expr})")) > 2 * WORST
    worst = drawn(worst_series(expr, labels, WORST, "top"))
    assert len(worst) == WORST
    at_end = sorted(((stage * 7 + 10 * 13) % 90, f"n{stage}") for stage in range(90))[-WORST:]
    assert {s["metric"]["node"] for s in worst} == {node for _, node in at_end}
    assert all(len(s["values"]) == 11 for s in worst)
    lowest = drawn(worst_series(expr, labels, WORST, "bottom"))
    assert {s["metric"]["node"] for s in lowest} == {
        node for _, node in sorted(((stage * 7 + 10 * 13) % 90, f"n{stage}") for stage in range(90))[:WORST]
    }
    assert sorted(s["metric"]["band"] for s in drawn(band(expr, labels))) == ["max", "median", "min"]
