"""The Mooncake transfer engine's metrics (TENT) as a profile source: a profile that leaves ``mooncake_tent`` out
still loads (not exported beside a deployed Store client, not deployed without one), its default scrape job is
its own (its own port), the panels where it is exported and the text naming the build flag where it is not, its
No-Data layer, and on a real VictoriaMetrics holding a demo window of long-context-64 with TENT exported the
failure share, failovers per request and the latency quantiles against hand computations on the same store."""

from __future__ import annotations

import dataclasses
import math
import time

import pytest
from dashgen_panels import store_tent
from dashgen_queries import nodata
from dashgen_queries import store_tent as tq
from group_checks import PROFILES

from dashgen.demo.run import demo_models, demo_plan, demo_series
from dashgen.deployment.profile import profile_from_dict
from dashgen.deployment.topology import Topology
from dashgen.errors import ProfileError
from dashgen.exporters.table import TENT_METRICS, TENT_PORT
from dashgen.live.datasource import Datasource
from dashgen.render.exporters import for_deployment, stated_sources

LC = "long-context-64"


def _with_tent(profile, status: str = "exported", deployment: str = ""):
    sources = dict(profile.sources)
    sources[tq.SOURCE] = dataclasses.replace(sources[tq.SOURCE], status=status)
    return dataclasses.replace(profile, sources=sources, deployment=deployment or profile.deployment)


def _raw(name: str) -> dict:
    import tomllib

    from dashgen.deployment.profile import profiles_dir

    return tomllib.loads((profiles_dir() / f"{name}.toml").read_text(encoding="utf-8"))


def test_a_profile_may_leave_tent_out_and_its_job_is_its_own() -> None:
    raw = _raw(LC)
    del raw["sources"]["mooncake_tent"]
    raw["sources"]["mooncake_client"]["job"] = "store-client"
    left_out = profile_from_dict(raw, "lc.toml", LC).source(tq.SOURCE)
    assert (left_out.status, left_out.job) == ("not-exported", "mooncake-tent")
    assert PROFILES["h20-16"].source(tq.SOURCE).status == "not-deployed"  # no Store client: no transfer engine
    assert PROFILES[LC].source(tq.SOURCE).status == "not-exported"  # stated where the deployment runs it
    # every other source must still be stated
    del raw["sources"]["gpm"]
    with pytest.raises(ProfileError, match="gpm"):
        profile_from_dict(raw, "lc.toml", LC)


def test_tent_cannot_be_exported_without_the_store_client() -> None:
    raw = _raw("pd-128")
    raw["sources"]["mooncake_tent"] = {"status": "exported"}
    with pytest.raises(ProfileError, match="mooncake_tent"):
        profile_from_dict(raw, "pd.toml", "pd-128")


def test_panels_where_exported_and_the_build_flag_where_not() -> None:
    shipped = store_tent.build(PROFILES[LC], Topology(PROFILES[LC])).panels
    assert [p.key for p in shipped] == ["store_tent.unavailable"]
    assert TENT_METRICS in shipped[0].content and TENT_PORT in shipped[0].content
    assert store_tent.build(PROFILES["h20-16"], Topology(PROFILES["h20-16"])).panels == ()
    exported = _with_tent(PROFILES[LC])
    panels = store_tent.build(exported, Topology(exported)).panels
    assert [p.key for p in panels] == [
        "store_tent.requests",
        "store_tent.failure_share",
        "store_tent.failovers_per_request",
        "store_tent.deadlines",
        "store_tent.latency",
        "store_tent.stages",
    ]
    exprs = [t.expr for p in panels for t in p.targets]
    assert exprs and all('job="mooncake-tent"' in e for e in exprs)


def test_the_stage_latency_needs_0_3_12_and_the_request_latency_does_not() -> None:
    """The stage histograms are first written by Mooncake 0.3.12: on a deployment stating 0.3.11 the stages panel
    is the text naming that version, the per-direction latency still a chart; each names TENT's build flag."""
    exported = _with_tent(PROFILES[LC])
    sources = dict(exported.sources)
    for name in ("mooncake_client", tq.SOURCE):
        sources[name] = dataclasses.replace(sources[name], version="0.3.11")
    older = dataclasses.replace(exported, sources=sources)
    for profile, stage_kind in ((exported, "timeseries"), (older, "text")):
        stated = stated_sources(profile.sources)
        shown = {p.key: for_deployment(p, stated) for p in store_tent.build(profile, Topology(profile)).panels}
        assert shown["store_tent.latency"].kind == "timeseries"
        assert shown["store_tent.stages"].kind == stage_kind, shown["store_tent.stages"]
        assert TENT_METRICS in shown["store_tent.latency"].evidence.describe()
    assert "0.3.12" in shown["store_tent.stages"].content


def _quantile_by_hand(buckets: dict[float, float], q: float) -> float:
    """Prometheus' histogram_quantile over cumulative ``buckets`` (upper bound -> count): the rank's bucket,
    linear inside it from the bound below (0 below the first); the top finite bound past it."""
    bounds = sorted(buckets)
    total = buckets[math.inf]
    rank = q * total
    below, count_below = 0.0, 0.0
    for bound in bounds:
        if buckets[bound] >= rank:
            if math.isinf(bound):
                return below
            return below + (bound - below) * (rank - count_below) / (buckets[bound] - count_below)
        below, count_below = bound, buckets[bound]
    return below


def test_the_no_data_layer_exists_only_where_exported() -> None:
    assert "tent" not in [layer.key for layer in nodata.layers(PROFILES[LC])]
    (layer,) = [layer for layer in nodata.layers(_with_tent(PROFILES[LC])) if layer.key == "tent"]
    assert layer.job == "mooncake-tent" and TENT_METRICS in layer.switch and layer.idle_code == nodata.NO_IO


def test_values_on_a_demo_store(victoriametrics) -> None:
    """Per node, the failure share and failovers per request equal the counters' increases divided by hand,
    within 1 %; the share within [0, 1] and not 0 (the demo fails 0.1-0.2 % of transfers)."""
    profile = _with_tent(PROFILES[LC], deployment="lc-tent")
    end = (time.time() // 3600) * 3600 - 7 * 3600
    seconds = 3600
    ds = Datasource(victoriametrics.url, timeout=120)
    # Every query here, by hand or the panels', reads the transfer engine's own series (job mooncake-tent): the
    # window holds those (each the very series the whole demo writes, seeded by its name and labels) and the
    # targets' ``up``, not the hour of 1 s GPU and engine series no query of this test reads (~20 s of CPU).
    models, unknown = demo_models(profile)
    tent = [(model, extra) for model, extra in models if model.source == tq.SOURCE]
    assert not unknown and len(tent) >= len(tq.REQUESTS) + len(tq.FAILURES) + 1 + len(tq.LATENCY) + len(tq.STAGES)
    ds.import_series(demo_series(demo_plan(profile, "healthy", end, seconds / 3600), tent, ("healthy",)))
    ds.flush()

    def instant(expr: str) -> dict[str, float]:
        expr = expr.replace("$node", ".+").replace("$__range", f"{seconds}s")
        return {r["metric"]["node"]: float(r["value"][1]) for r in ds.query(expr, end).result}

    def by_hand(metrics: tuple[str, ...]) -> dict[str, float]:
        totals: dict[str, float] = {}
        for metric in metrics:
            selector = f'{metric}{{cluster="lc-tent", job="mooncake-tent"}}'
            for node, value in instant(f"sum by (node) (increase({selector}[{seconds}s]))").items():
                totals[node] = totals.get(node, 0.0) + value
        return totals

    requests = by_hand(tuple(tq.REQUESTS.values()))
    failures = by_hand(tuple(tq.FAILURES.values()))
    failovers = by_hand((tq.FAILOVER,))
    share, per_request = instant(tq.failure_share(profile)), instant(tq.failovers_per_request(profile))
    assert set(share) == set(profile.node_names) == set(per_request)
    for node, value in share.items():
        assert 0.0 < value <= 1.0
        assert abs(value - failures[node] / requests[node]) <= 0.01 * value
        assert abs(per_request[node] - failovers[node] / requests[node]) <= 0.01 * per_request[node]
    # the latency quantiles: histogram_quantile of the node's summed buckets equals the interpolation by hand
    checked = 0
    for histogram in (*tq.LATENCY.values(), *tq.STAGES.values()):
        raw = ds.query(
            f'sum by (node, le) (increase({histogram}_bucket{{cluster="lc-tent", job="mooncake-tent"}}[5m]))', end
        ).result
        per_node: dict[str, dict[float, float]] = {}
        for row in raw:
            per_node.setdefault(row["metric"]["node"], {})[float(row["metric"]["le"])] = float(row["value"][1])
        for q in (0.5, 0.99):
            got = instant(tq.latency_quantile(profile, histogram, q).replace("$__rate_interval", "5m"))
            assert set(got) == set(profile.node_names) == set(per_node), histogram
            for node, value in got.items():
                want = _quantile_by_hand(per_node[node], q)
                assert abs(value - want) <= 0.01 * want, (histogram, q, node, value, want)
                assert 0 < value <= max(b for b in per_node[node] if not math.isinf(b))
                checked += 1
    assert checked == 4 * 2 * len(profile.node_names)
