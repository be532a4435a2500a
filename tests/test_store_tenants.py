"""The Mooncake Store's tenant quotas and L2 -> L1 promotion (Mooncake 0.3.12): the exporter rows with the version
and flag behind them, the panels where the master is exported (a text where it is not, or where the profile
states an older Mooncake or multi-tenancy off), and on a real VictoriaMetrics holding long-context-64's healthy
demo window the values against hand computations on the same store."""

from __future__ import annotations

import dataclasses

from dashgen_panels import store_tenants
from group_checks import PROFILES
from stated_profiles import restate

from dashgen.build import build_profile
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels, unwrap
from dashgen.exporters.inference import infer
from dashgen.exporters.table import MOONCAKE_MASTER, MULTI_TENANTS, TABLES
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan

LC = "long-context-64"
TENANT_BYTES = "Store tenant quota: committed and reserved bytes against the effective quota"
UNSUCCESSFUL = "Store L2 -> L1 promotion: share of ended tasks that failed or expired (window)"


def _keys(profile) -> list[str]:
    return [panel.key for panel in store_tenants.build(profile, Topology(profile)).panels]


def _built(profile) -> dict[str, dict]:
    (built,) = build_profile(profile)
    return {site.raw.get("title"): site.raw for site in iter_panels(unwrap(built.document))}


def test_the_rows_name_version_0_3_12_and_the_multi_tenant_flag() -> None:
    rows = {series.name: series for series in MOONCAKE_MASTER.series}
    tenant = [name for name in rows if name.startswith("mooncake_tenant_")]
    promotion = [name for name in rows if name.startswith("master_promotion_")]
    assert len(tenant) >= 7 and len(promotion) >= 13
    assert all(rows[name].since == "0.3.12" for name in (*tenant, *promotion))
    assert all(MULTI_TENANTS in rows[name].needs for name in tenant if "allocatable" not in name)
    assert all("--promotion_on_hit" in rows[name].role for name in promotion)
    tent = TABLES["mooncake_tent"]
    assert tent.switch == "-DTENT_METRICS_ENABLED=ON" and "9100" in tent.exporter
    assert {s.name for s in tent.series if s.since == "0.3.12"} >= {"tent_deadline_infeasible_total"}


def test_panels_where_the_master_is_exported_and_a_text_or_nothing_elsewhere() -> None:
    assert len(PROFILES) >= 4
    for name, profile in PROFILES.items():
        keys = _keys(profile)
        if profile.exported("mooncake_master"):
            assert "store_tenants.tenant_bytes" in keys and "store_tenants.promotion_outcomes" in keys, name
        elif profile.source("mooncake_master").deployed:
            assert keys == ["store_tenants.unavailable"], name
        else:
            assert keys == [], name
    profile = PROFILES[LC]
    sources = {
        **profile.sources,
        "mooncake_master": dataclasses.replace(profile.sources["mooncake_master"], status="not-exported"),
    }
    assert _keys(dataclasses.replace(profile, sources=sources)) == ["store_tenants.unavailable"]


def test_an_older_mooncake_or_multi_tenancy_off_gets_the_reason(tmp_path) -> None:
    """Mooncake 0.3.11 writes none of these series: every panel of the group is a text naming 0.3.12. A 0.3.12
    master without --enable_multi_tenants in its stated features keeps the promotion charts, the tenant panels
    become texts naming the flag."""
    old = _built(restate(tmp_path, "lc-mc-old", LC, {"mooncake_master": {"version": "0.3.11"}}))
    group = [spec.title for spec in store_tenants.build(PROFILES[LC], Topology(PROFILES[LC])).panels]
    assert len(group) == 6
    for title in group:
        assert old[title]["type"] == "text", title
        assert "0.3.12" in old[title]["options"]["content"], title
    single = _built(restate(tmp_path, "lc-mc-single", LC, {"mooncake_master": {"features": []}}))
    assert single[TENANT_BYTES]["type"] == "text" and MULTI_TENANTS in single[TENANT_BYTES]["options"]["content"]
    assert single[UNSUCCESSFUL]["type"] == "stat"
    latest = _built(PROFILES[LC])
    assert all(latest[title]["type"] != "text" for title in group)


def test_doctor_reads_a_mooncake_older_than_0_3_12() -> None:
    older = infer({"master_key_count", "segment_total_capacity_bytes"})["mooncake_master"]
    assert older.before == "0.3.12" and older.fits("0.3.11", "0.3.12")
    newer = infer({"master_key_count", "master_promotion_in_flight", "mooncake_tenant_quota_used_bytes"})
    assert newer["mooncake_master"].since == "0.3.12" and newer["mooncake_master"].flags_on == (MULTI_TENANTS,)


def test_values_on_the_demo_store(victoriametrics, demo_windows) -> None:
    """long-context-64: per tenant committed + reserved below the effective quota, as the master's own gauges
    say at each step; the unsuccessful share equals (failed + expired) / every ended task, computed by hand from
    the four counters' increases over the same window, within 1 %; within [0, 1]."""
    window = demo_windows[(LC, "healthy")]
    seconds = window.hours * 3600
    ds = Datasource(victoriametrics.url)
    (built,) = build_profile(window.profile)
    planned = {
        p.raw.get("title"): p
        for p in plan([DashboardInput(LC, built.document, window.profile)], Window(window.end, seconds))
    }

    def series(title: str, index: int) -> dict[tuple, list[float]]:
        query = planned[title].queries[index].expr
        result = ds.query_range(query, window.end - seconds, window.end, 300).result
        return {tuple(sorted(item["metric"].items())): [float(v) for _, v in item["values"]] for item in result}

    committed, reserved, effective = (series(TENANT_BYTES, i) for i in range(3))
    assert len(committed) == 2, committed.keys()  # two tenants, one master
    for key, used in committed.items():
        for u, r, e in zip(used, reserved[key], effective[key], strict=False):
            assert 0 < u + r < e
    (share,) = series(UNSUCCESSFUL, 0).values()
    assert share and all(0.0 <= v <= 1.0 for v in share)

    def increase(metric: str) -> float:
        selector = f'{metric}{{cluster="{LC}", job="mooncake-master"}}'
        result = ds.query(f"sum(increase({selector}[{int(seconds)}s]))", window.end).result
        return float(result[0]["value"][1])

    failed, expired = increase("master_promotion_failed_total"), increase("master_promotion_expired_total")
    ended = (
        failed + expired + increase("master_promotion_completed_total") + increase("master_promotion_cancelled_total")
    )
    instant = ds.query(planned[UNSUCCESSFUL].queries[0].expr.replace("$__range", f"{int(seconds)}s"), window.end)
    (value,) = [float(item["value"][1]) for item in instant.result]
    assert abs(value - (failed + expired) / ended) <= 0.01 * value
