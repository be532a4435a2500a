"""S29, the cache-evidence ladder over time: its layers in order (occupancy -> metadata hit -> prefetch transfer
-> final reuse -> physical reads/writes), beside TTFT p95 on the same time axis, each saying what it proves;
on a real VictoriaMetrics every engine layer returns series for every node of long-context-64's healthy demo
window, and the master's metadata hit is one series per master, never per node (S14)."""

from __future__ import annotations

from dashgen_panels import cache_ladder
from group_checks import PROFILES

from dashgen.build import build_profile
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan

LADDER = ("Ladder 1", "Ladder 2", "Ladder 3", "Ladder 4", "Ladder 5")


def test_s29_layers_in_order_each_saying_what_it_proves():
    profile = PROFILES["long-context-64"]
    panels = cache_ladder.build(profile, Topology(profile)).panels
    titles = [p.title for p in panels]
    assert "TTFT p95" in titles[0], titles  # the latency the layers are read against, first
    steps = [next(i for i, t in enumerate(titles) if t.startswith(step)) for step in LADDER]
    assert steps == sorted(steps), titles
    for panel in panels[1:]:
        assert panel.evidence.layer and "Limit:" in panel.description, panel.key


def test_s29_every_engine_layer_has_a_series_per_node_on_demo_data(victoriametrics, demo_windows):
    window = demo_windows[("long-context-64", "healthy")]
    profile = window.profile
    (built,) = build_profile(profile)
    planned = plan([DashboardInput("lc", built.document, profile)], Window(window.end, window.hours * 3600))
    ds = Datasource(victoriametrics.url)
    node = profile.label("node")
    checked = 0
    for panel in planned:
        title = panel.raw.get("title", "")
        if not title.startswith(LADDER):
            continue
        for query in panel.queries:
            result = ds.query(query.expr, window.end).result
            assert result, f"{title} {query.ref_id}: no series"
            if "get_nums_" in query.expr:  # the master's counters have no storage-node label (S14)
                assert {item["metric"].get("master") for item in result} == {"store"}, title
                assert all(node not in item["metric"] for item in result), title
                continue
            if "node_disk_" in query.expr:
                assert {item["metric"][node] for item in result} == set(profile.node_names), title
                continue
            assert {item["metric"][node] for item in result} == set(profile.node_names), (title, query.ref_id)
            checked += 1
    assert checked >= 8, checked


def test_s27_pd_ladder_layers_are_split_per_pool_on_demo_data(victoriametrics, demo_windows):
    """pd-128: every per-node ladder panel is drawn once per pool (prefill, decode); each returns only series that
    carry that pool's engine_type, on that pool's nodes, and both pools' nodes are covered (issue 34)."""
    window = demo_windows[("pd-128", "healthy")]
    profile = window.profile
    (built,) = build_profile(profile)
    planned = plan([DashboardInput("pd", built.document, profile)], Window(window.end, window.hours * 3600))
    ds = Datasource(victoriametrics.url)
    node = profile.label("node")
    seen: dict[str, set[str]] = {"prefill": set(), "decode": set()}
    pooled = 0
    for panel in planned:
        title = panel.raw.get("title", "")
        if not title.startswith(LADDER):
            continue
        role = "prefill" if "(prefill pool)" in title else "decode" if "(decode pool)" in title else None
        assert role is not None, f"{title}: a per-node ladder panel of a PD profile names its pool"
        for query in panel.queries:
            result = ds.query(query.expr, window.end).result
            assert result, f"{title} {query.ref_id}: no series"
            assert {item["metric"].get("engine_type") for item in result} == {role}, (title, query.ref_id)
            seen[role] |= {item["metric"][node] for item in result}
        pooled += 1
    assert pooled >= 6, pooled
    assert seen["prefill"] and seen["decode"] and not seen["prefill"] & seen["decode"], seen
    assert seen["prefill"] | seen["decode"] == set(profile.node_names)
