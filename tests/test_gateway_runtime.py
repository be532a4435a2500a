"""The gateway's own health (smg 1.9: event loop, worker threads, overload vetoes, retry backoff, KV-event
subscriptions, the model-label cap) and PD transfer failures per pool of the prefill -> decode pair: in process
for the profiles, then on a real VictoriaMetrics holding pd-128's healthy demo window."""

from __future__ import annotations

import dataclasses

from dashgen_panels import gateway_runtime
from group_checks import PROFILES

from dashgen.build import build_profile
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan

PD = "pd-128"


def _keys(profile) -> list[str]:
    return [panel.key for panel in gateway_runtime.build(profile, Topology(profile)).panels]


def test_runtime_panels_where_the_gateway_is_exported_and_a_text_where_it_is_not() -> None:
    profile = PROFILES[PD]
    assert "gateway_runtime.event_loop" in _keys(profile) and "gateway_runtime.pd_failures_engine" in _keys(profile)
    sources = {**profile.sources, "gateway": dataclasses.replace(profile.sources["gateway"], status="not-exported")}
    keys = _keys(dataclasses.replace(profile, sources=sources))
    assert keys[0] == "gateway_runtime.gateway_unavailable"
    assert "gateway_runtime.pd_failures_gateway" not in keys and "gateway_runtime.pd_failures_engine" in keys


def test_pd_failures_only_where_prefill_and_decode_run_apart() -> None:
    assert len(PROFILES) >= 4
    for name, profile in PROFILES.items():
        pd = any(pool.role in ("prefill", "decode") for pool in profile.pools)
        assert any("pd_failures" in key for key in _keys(profile)) == (pd and profile.exported("sglang")), name


def test_per_model_panels_name_the_label_cap() -> None:
    per_model = [
        panel
        for panel in gateway_runtime.runtime_panels(PROFILES[PD])
        if any("model" in target.legend for target in panel.targets)
    ]
    assert per_model
    for panel in per_model:
        assert 'model="other"' in panel.description and "1,024" in panel.description, panel.title


def _values(ds: Datasource, planned, end: float, seconds: float) -> list[list[dict]]:
    return [ds.query_range(q.expr, end - seconds, end, 300).result for q in planned.queries]


def test_runtime_and_failure_shares_on_demo_data(victoriametrics, demo_windows) -> None:
    """pd-128: busy share and PD failure shares within [0, 1] at every step, each pool of the pair present with
    its pool_pair label; the share under model="other" is a share of the routed requests."""
    window = demo_windows[(PD, "healthy")]
    seconds = window.hours * 3600
    ds = Datasource(victoriametrics.url)
    (built,) = build_profile(window.profile)
    planned = {
        p.raw.get("title"): p
        for p in plan([DashboardInput(PD, built.document, window.profile)], Window(window.end, seconds))
    }

    def points(title: str, index: int = 0) -> list[tuple[dict, float]]:
        result = _values(ds, planned[title], window.end, seconds)[index]
        return [(item["metric"], float(v)) for item in result for _, v in item["values"]]

    busy = points("Gateway runtime: busiest worker thread's busy share")
    assert busy and all(0.0 <= v <= 1.0 for _, v in busy)
    title = "PD bootstrap and KV-transfer failures, share of each pool's requests (engines)"
    for index in (0, 1):
        shares = points(title, index)
        assert shares and all(0.0 <= v <= 1.0 for _, v in shares), index
        assert {m["engine_type"] for m, _ in shares} == {"prefill", "decode"}
        assert {m["pool_pair"] for m, _ in shares} == {"prefill → decode"}
    # The demo writes a model="other" series beside its model (the panel's matcher asks for one): a share of
    # the routed requests, never all of them and never above 100 %.
    other = points('Gateway requests recorded under model="other" (past the label cap)')
    assert other and all(0.0 < v < 1.0 for _, v in other)
    stalls = points("Gateway event loop: stalls per second and p99 wake delay")
    assert stalls and all(v >= 0 for _, v in stalls)
