"""S27, prefill apart from decode: the P:D balance row of a PD profile (pd-128), its pool membership from the
engine's own engine_type label, and every per-stage panel drawn once per pool. In process for every profile,
then on a real VictoriaMetrics holding pd-128's healthy demo window."""

from __future__ import annotations

import re

import pytest
from dashgen_panels import pd_balance
from group_checks import PROFILE_NAMES, PROFILES, TEXT_PROFILE_NAMES, document, group_panels

from dashgen.build import build_profile
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan

PD = "pd-128"
ROLES = ("prefill", "decode")


def _roles(expr: str) -> set[str]:
    return set(re.findall(r'engine_type="(\w+)"', expr))


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s27_balance_row_only_where_prefill_and_decode_run_apart(name: str) -> None:
    rows = [p["title"] for p in document(name)["panels"] if p["type"] == "row"]
    assert (pd_balance.TITLE in rows) == PROFILES[name].has_pools, rows


def test_s27_balance_panels_select_one_pool_or_keep_the_pool_label() -> None:
    """A per-pool panel selects exactly its pool by engine_type; the table keeps engine_type as its row key and
    never adds the pools (every outer aggregation is by engine_type)."""
    spec = pd_balance.build(PROFILES[PD], Topology(PROFILES[PD]))
    keys = {p.key for p in spec.panels}
    assert {
        "pd_balance.pools",
        "pd_balance.tokens_prefill",
        "pd_balance.tokens_decode",
        "pd_balance.gpu_busy_prefill",
        "pd_balance.gpu_busy_decode",
        "pd_balance.decode_running",
        "pd_balance.decode_kv_headroom",
        "pd_balance.ttft_parts_prefill",
        "pd_balance.ttft_parts_decode",
        "pd_balance.gateway_pd_legs",
    } == keys
    for panel in spec.panels:
        role = next((r for r in ROLES if panel.key.endswith(f"_{r}") or panel.key.startswith(f"pd_balance.{r}")), None)
        for target in panel.targets:
            if role is not None:
                assert _roles(target.expr) == {role}, (panel.key, target.expr)
            elif panel.key == "pd_balance.pools":
                assert target.expr.startswith(
                    (
                        "sum by (engine_type)",
                        "count by (engine_type)",
                        "avg by (engine_type)",
                        "min by (engine_type)",
                        "100 * ",
                    )
                ), target.expr
                assert not _roles(target.expr), target.expr
    (table,) = [p for p in spec.panels if p.key == "pd_balance.pools"]
    assert "engine_type" in str(table.transformations)


def test_s27_ttft_split_says_what_it_cannot_split() -> None:
    spec = pd_balance.build(PROFILES[PD], Topology(PROFILES[PD]))
    for key in ("pd_balance.ttft_parts_prefill", "pd_balance.ttft_parts_decode"):
        (panel,) = [p for p in spec.panels if p.key == key]
        assert "what cannot be split: the first decode step has no series of its own" in panel.description
        assert "a p95 of TTFT is not the sum" in panel.description


def test_s15_gateway_legs_are_a_text_where_the_gateway_is_not_exported() -> None:
    from dataclasses import replace

    profile = PROFILES[PD]
    sources = {**profile.sources, "gateway": replace(profile.sources["gateway"], status="not-exported")}
    spec = pd_balance.build(replace(profile, sources=sources), Topology(profile))
    (legs,) = [p for p in spec.panels if "gateway" in p.key]
    assert legs.kind == "text" and legs.title == "Gateway PD legs (smg_pd_*): not available"
    assert "not exported by the client" in legs.content


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # a video pool has no per-stage engine panels (S25)
def test_s27_every_per_stage_panel_of_a_pd_profile_selects_one_pool(name: str) -> None:
    """Requests, engine load and KV cache: in a PD profile each per-stage panel exists once per pool (key ending
    _prefill / _decode) and each of its targets selects that pool; titles say 'instance', never 'stage'."""
    profile = PROFILES[name]
    panels = [
        p
        for title in ("Requests and gateway", "KV cache and NVMe", "SLO and health")
        for p in group_panels(name, title)
    ]
    staged = [
        p
        for p in panels
        if re.search(r"(per (PP )?stage|per instance)", p["title"]) and p["type"] in ("timeseries", "stat")
    ]
    assert staged
    for panel in staged:
        roles = set().union(*(_roles(t["expr"]) for t in panel.get("targets", [])))
        if profile.has_pools:
            assert "stage" not in panel["title"], panel["title"]
            assert len(roles) == 1 and next(iter(roles)) in panel["title"], (panel["title"], roles)
        else:
            assert not roles, panel["title"]


# --- on a real VictoriaMetrics ---------------------------------------------------------------------------


def _planned(window):
    (built,) = build_profile(window.profile)
    return {
        planned.raw.get("title"): planned
        for planned in plan(
            [DashboardInput("pd", built.document, window.profile)], Window(window.end, window.hours * 3600)
        )
    }


def _results(ds: Datasource, planned, end: float) -> list[list[dict]]:
    return [ds.query(query.expr, end).result for query in planned.queries]


def test_s27_balance_table_has_one_row_per_pool_with_the_engines_own_counts(victoriametrics, demo_windows):
    """pd-128 (12P4D, one instance per node): 12 prefill and 4 decode nodes, 96 and 32 GPUs, from the engines'
    own engine_type label; no row adds the two pools."""
    window = demo_windows[(PD, "healthy")]
    ds = Datasource(victoriametrics.url)
    planned = _planned(window)["P:D balance per pool at the window end"]
    columns = _results(ds, planned, window.end)
    assert all({item["metric"].get("engine_type") for item in column} == set(ROLES) for column in columns), columns
    nodes = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[0]}
    gpus = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[1]}
    assert nodes == {"prefill": 12.0, "decode": 4.0}
    assert gpus == {"prefill": 96.0, "decode": 32.0}
    busy = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[2]}
    assert all(0 < value <= 100 for value in busy.values()), busy


def test_s27_per_pool_panels_return_only_their_pool_on_demo_data(victoriametrics, demo_windows):
    """Every panel of pd-128 whose title names a pool returns series of that pool only, and some series."""
    window = demo_windows[(PD, "healthy")]
    ds = Datasource(victoriametrics.url)
    checked = 0
    for title, planned in _planned(window).items():
        match = re.search(r"\((prefill|decode)[ ,]", title or "") or re.search(r"\((prefill|decode) pool", title or "")
        if not match:
            continue
        role = match.group(1)
        series = [item for result in _results(ds, planned, window.end) for item in result]
        assert series, f"{title}: no series on healthy demo data"
        types = {item["metric"].get("engine_type") for item in series} - {None}
        assert types <= {role}, (title, types)
        checked += 1
    assert checked >= 30, checked


def test_s27_ttft_parts_and_gateway_legs_have_demo_series(victoriametrics, demo_windows):
    window = demo_windows[(PD, "healthy")]
    ds = Datasource(victoriametrics.url)
    planned = _planned(window)
    for title in (
        "TTFT parts measured by the prefill pool, mean per request (s)",
        "TTFT parts measured by the decode pool, mean per request (s)",
        "Gateway PD legs p95: prefill, KV transfer, TTFT (s)",
    ):
        results = _results(ds, planned[title], window.end)
        assert all(results), (title, [len(r) for r in results])
        assert all(float(item["value"][1]) > 0 for result in results for item in result), title
