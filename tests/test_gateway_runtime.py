"""The gateway's own health (smg 1.9: event loop, worker threads, overload vetoes, retry backoff, KV-event
subscriptions, the model-label cap) and PD transfer failures per pool of the prefill -> decode pair: in process
for the profiles, then on a real VictoriaMetrics holding pd-128's healthy demo window."""

from __future__ import annotations

import dataclasses

from dashgen_panels import gateway_runtime
from group_checks import PROFILES
from stated_profiles import restate

from dashgen.build import build_profile
from dashgen.demo.catalogue import CATALOGUE, capped_models
from dashgen.demo.wanted import Wanted, resolve
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels, unwrap
from dashgen.exporters.inference import infer
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
    # One served model, far below the 1,024-value cap: the gateway writes no model="other", so the share is a
    # real 0 at every step (not absent), though the panel's own matcher asks for "other".
    other = points('Gateway requests recorded under model="other" (past the label cap)')
    assert other and all(v == 0.0 for _, v in other)
    stalls = points("Gateway event loop: stalls per second and p99 wake delay")
    assert stalls and all(v >= 0 for _, v in stalls)


def test_the_gateway_writes_other_only_past_the_label_cap() -> None:
    assert capped_models(("a", "b")) == ("a", "b")
    many = tuple(f"m{i}" for i in range(1030))
    assert capped_models(many) == (*many[:1024], "other")
    assert capped_models(many[:1024]) == many[:1024]
    assert capped_models(("a", "b", "c"), cap=2) == ("a", "b", "other")


def test_a_matcher_on_model_other_does_not_make_the_demo_write_it() -> None:
    """The panel's matcher model="other" is no reason to write it (the demo serves one model); a matcher on any
    other value of the same label still is."""
    wanted = Wanted()
    wanted.add("smg_router_requests_total", "model", "other")
    wanted.add("smg_router_requests_total", "model", "second-model")
    ((model, extra),), unknown = resolve(wanted, set())
    assert model is CATALOGUE["smg_router_requests_total"] and not unknown
    assert "other" not in extra["model"] and "second-model" in extra["model"]
    assert "other" not in model.labels["model"]


def _built(profile) -> dict[str, dict]:
    (built,) = build_profile(profile)
    return {site.raw.get("title"): site.raw for site in iter_panels(unwrap(built.document))}


def test_an_older_smg_gets_the_reason_not_an_empty_chart(tmp_path) -> None:
    """pd-128 on smg 1.5.0: the runtime, KV-event and PD failure panels are texts naming the version that first
    writes their series; the label-cap panel says 1.5.0 has no cap. On 1.7.0 the runtime and PD charts are back,
    the overload vetoes (main's 1.9.0) are a text; the latest version keeps every chart."""
    old = _built(restate(tmp_path, "pd-smg-old", PD, {"gateway": {"version": "1.5.0"}}))
    for title in (
        "Gateway event loop: stalls per second and p99 wake delay",
        "Gateway runtime: busiest worker thread's busy share",
        "PD bootstrap and KV-transfer failures at the gateway, per second",
    ):
        content = old[title]["options"]["content"]
        assert old[title]["type"] == "text", title
        assert "first written by" in content and ("1.6.0" in content or "1.7.0" in content), content
    cap = old['Gateway requests recorded under model="other" (past the label cap)']
    assert cap["type"] == "text" and "smg 1.5.0" in cap["options"]["content"] and "1.9.0" in cap["options"]["content"]
    mid = _built(restate(tmp_path, "pd-smg-mid", PD, {"gateway": {"version": "1.7.0"}}))
    assert mid["Gateway event loop: stalls per second and p99 wake delay"]["type"] == "timeseries"
    assert mid["PD bootstrap and KV-transfer failures at the gateway, per second"]["type"] == "timeseries"
    overload = mid["Gateway overload protection: vetoed workers per model and sheds per second"]
    assert overload["type"] == "text" and "1.9.0" in overload["options"]["content"]
    latest = _built(PROFILES[PD])
    gated = [title for title, panel in old.items() if panel["type"] == "text" and title.startswith("Gateway")]
    assert len(gated) >= 6, gated
    assert all(latest[title]["type"] == "timeseries" for title in gated), gated


def test_doctor_reads_an_smg_older_than_its_runtime_series() -> None:
    before = infer({"smg_worker_health", "smg_router_requests_total"})["gateway"]
    assert before.before == "1.6.0" and before.fits("1.5.0", "1.9.0") and not before.fits("1.6.0", "1.9.0")
    after = infer({"smg_worker_health", "smg_tokio_worker_busy_ratio", "smg_pd_bootstrap_failures_total"})["gateway"]
    assert after.since == "1.7.0" and not after.before
