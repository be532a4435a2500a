"""The request-rates and stage-reuse recording rules (``queries.request_rates``, ``queries.stage_rates``: the
per-stage reuse and retraction rates): the
graphs that read them draw what they drew from the raw series. On the session's demo store, the records written by
the real evaluator (vmalert -replay of the groups, as ``recorder.replay_for_dashboards`` does for every demo
window), each recorded panel query against the raw expression it replaced, point by point; and, for every
profile, the rule file writes exactly the records the dashboards read, each a rate over one rule interval."""

from __future__ import annotations

import math
import re

import pytest
from dashgen_panels import engine_load, first_screen, requests_gateway, slo_health
from dashgen_queries import request_rates, serving, stage_bands, stage_rates
from dashgen_queries import sglang as sg
from dashgen_queries.promql import WINDOW, band, in_deployment
from dashgen_queries.sglang_slo import burn_rate, latency_quantile, prefix_hit_ratio, slis
from scaled_profiles import at_size

from dashgen.build import build_profile
from dashgen.dashboard import dashboard_specs
from dashgen.demo import recorder
from dashgen.deployment.profile import TEXT, load_profiles
from dashgen.document import iter_panels
from dashgen.live.datasource import Datasource
from dashgen.rules.render import rule_groups_data

PROFILES = {p.name: p for p in load_profiles()}
RATE_INTERVAL = 120  # Grafana's $__rate_interval at the default 1 h range on the store's 30 s resolution
STEP = 60
RECORDED = re.compile(r"[a-z_]+:dashgen_sglang_[a-z0-9_]+:rate\w+")
RECORD = re.compile(r"pool:dashgen_[a-z0-9_]+:band")


def _all(expr: str) -> str:
    """The query with every variable at All and Grafana's rate interval of the default range."""
    for variable in ("${replica:pipe}", "$node", "$stage"):
        expr = expr.replace(variable, ".+")
    return expr.replace("$__rate_interval", f"{RATE_INTERVAL}s")


def _points(ds: Datasource, expr: str, start: float, end: float, step: float = STEP) -> dict[tuple, dict[float, float]]:
    result = ds.query_range(_all(expr), start, end, step).result
    return {
        tuple(sorted((k, v) for k, v in item["metric"].items() if k != "__name__")): {
            float(t): float(v) for t, v in item["values"]
        }
        for item in result
    }


def _pairs(profile) -> list[tuple[str, str, str]]:
    """(what, recorded query, the raw query it replaced) of every panel reading the records."""
    found = []
    latency = slo_health.latency_panel(profile)
    raw_latency = [
        latency_quantile(profile, metric, q)
        for _, metric in request_rates.latency_metrics(profile)
        for q in (0.5, 0.99)
    ]
    found += [(t.legend, t.expr, raw) for t, raw in zip(latency.targets, raw_latency, strict=True)]
    burn = slo_health.burn_panel(profile, "1h")
    found += [
        (t.legend, t.expr, burn_rate(profile, sli, "1h")) for t, sli in zip(burn.targets, slis(profile), strict=True)
    ]
    # the first screen's SLO: the whole deployment's lowest good share over the dashboard's default hour
    (slo,) = first_screen.slo_panel(profile).targets
    recorded_engine, raw_engine = (
        serving.slo_health(profile, WINDOW, r) for r in (request_rates.reader(profile), None)
    )
    assert recorded_engine in slo.expr
    hour = (slo.expr, slo.expr.replace(recorded_engine, raw_engine))
    found.append(("first-screen SLO health", *(expr.replace(WINDOW, "3600s") for expr in hour)))
    for role in engine_load.pd_roles(profile):
        (target,) = engine_load.prefix_hit_panel(profile, role).targets
        found.append((f"prefix reuse {role or 'unified'}", target.expr, prefix_hit_ratio(profile, role=role)))
    for panel in requests_gateway.engine_queue_panels(profile):
        if panel.key.split(".")[-1].startswith("retractions"):
            (target,) = panel.targets
            pool = engine_load.pool_matchers(panel.fan_out.role if panel.fan_out else "")
            raw = sg.named_stage(profile, sg.per_stage_rate(profile, stage_rates.RETRACTED_COUNTER, *pool))
            found.append((panel.title, target.expr, raw))
    return found


@pytest.mark.parametrize("window_key", [("long-context-64", "healthy"), ("pd-128", "healthy")], ids=lambda k: k[0])
def test_each_recorded_panel_query_draws_what_the_raw_query_drew(victoriametrics, demo_windows, window_key):
    """Issue 42: every point of the recorded queries equals the raw one's (same series, same value to 1e-6), over
    the last 40 minutes of the demo window at the rule interval's step: a record summing the wrong labels, reading
    another deployment (the long-context window holds a second deployment on the same nodes), missing the prefill
    exclusion, or a rate window that is not the panel's own would differ."""
    window = demo_windows[window_key]
    profile = window.profile
    ds = Datasource(victoriametrics.url)
    end = window.end
    start = end - 40 * 60
    compared = 0
    drawn = set()
    for what, recorded, raw in _pairs(profile):
        assert RECORDED.search(recorded), (what, recorded)
        got, want = _points(ds, recorded, start, end), _points(ds, raw, start, end)
        assert set(got) == set(want), (what, sorted(got), sorted(want))
        for labels, points in want.items():
            assert set(got[labels]) == set(points), (what, labels)
            for at, value in points.items():
                assert math.isclose(got[labels][at], value, rel_tol=1e-6, abs_tol=1e-9), (what, labels, at)
                compared += 1
                drawn.add(what)
    assert compared >= 100, compared
    assert any(what.startswith("Retracted") for what in drawn), sorted(drawn)  # the store retracts: compared
    assert "first-screen SLO health" in drawn, sorted(drawn)


@pytest.mark.parametrize("profile", [p for p in load_profiles() if p.has_kind(TEXT)], ids=lambda p: p.name)
def test_the_rule_file_records_exactly_what_the_dashboards_read_each_over_one_rule_interval(profile):
    """Issue 42: the request-rates and stage-reuse groups write every recorded rate a built dashboard reads and no
    other, each group states the rule interval, and each rule rates its raw series over exactly one interval (the
    panels average the intervals within their own window, so a longer rule window would count an increase twice)."""
    if not profile.exported("sglang"):
        pytest.skip("no engine: no SLO group")
    groups = {g["name"]: g for g in rule_groups_data(profile)}
    interval = f"{request_rates.INTERVAL_SECONDS:g}s"
    written = set()
    for name in (request_rates.GROUP, stage_rates.GROUP):
        group = groups[f"dashgen-{profile.name}-{name}"]
        assert group["interval"] == interval
        for rule in group["rules"]:
            windows = re.findall(r"\[([^\]]+)\]", rule["expr"])
            assert windows and set(windows) == {interval}, rule
            assert "$" not in rule["expr"], rule
            assert request_rates.is_rate_record(rule["record"]), rule  # the demo leaves it to the evaluator
            written.add(rule["record"])
    read = set()
    for built in build_profile(profile):
        for site in iter_panels(built.document):
            for target in site.raw.get("targets") or []:
                read.update(RECORDED.findall(target.get("expr", "")))
    assert read == written, (sorted(read ^ written), profile.name)


def _pool(role: str) -> tuple[str, ...]:
    return (f'{stage_bands.POOL}="{role}"',) if role else ()


def _replay_every_band(url: str, profile, start: float, end: float) -> None:
    """The demo profiles draw every stage (no band is written for them): every band rule of the profile, as the
    rule file would write it at a larger size, replayed by vmalert at the engine's sample interval."""
    label, value = profile.label("deployment"), profile.deployment
    rules = [
        {"record": r.record, "expr": r.rule, "labels": {**dict(r.labels), label: value}}
        for r in stage_bands.records(profile, every=True)
    ]
    seconds = stage_bands.interval_seconds(profile)
    group = {"name": f"bands-{profile.name}", "interval": f"{seconds:g}s", "rules": rules}
    found = recorder.find_vmalert()
    if found is None:
        pytest.skip("vmalert not found")
    recorder.replay_groups(url, [group], start, end, seconds)  # one pass: no band reads another's record
    Datasource(url).flush()


@pytest.mark.parametrize("window_key", [("long-context-64", "healthy"), ("pd-128", "healthy")], ids=lambda k: k[0])
def test_each_recorded_band_draws_the_band_of_the_raw_gauges(victoriametrics, demo_windows, window_key):
    """Issue 42: the stage-bands records (``queries.stage_bands``, replayed at the engine's sample interval as the
    rule file states) draw, point by point, the min / median / max band the narrowed graphs computed from the raw
    gauges, per pool: a band of another pool, a record evaluated at a coarser interval (a gauge's step would be
    lost), missing the ``priority=""`` total or summing TP copies would differ."""
    window = demo_windows[window_key]
    profile = window.profile
    ds = Datasource(victoriametrics.url)
    end = window.end
    start = end - 40 * 60
    _replay_every_band(victoriametrics.url, profile, start - 600, end)
    compared = 0
    keys = set()
    for key, spec in stage_bands.BANDS.items():
        for role in stage_bands.roles(profile):
            assert not stage_bands.read(profile, key, role)  # below a screenful: no band drawn, none written
            recorded = in_deployment(profile, stage_bands.record_name(key), *(_pool(role)))
            raw = band(stage_bands.expression(profile, key, role), spec.labels(profile))
            step = stage_bands.interval_seconds(profile)  # every stored sample: a coarser record would differ
            got = {
                tuple(kv for kv in k if kv[0] not in ("cluster", stage_bands.POOL)): v
                for k, v in _points(ds, recorded, start, end, step).items()
            }
            want = _points(ds, raw, start, end, step)
            assert set(got) == set(want) and len(want) == 3, (key, role, sorted(got), sorted(want))
            for labels, points in want.items():
                assert set(got[labels]) == set(points), (key, role, labels)
                for at, value in points.items():
                    assert math.isclose(got[labels][at], value, rel_tol=1e-9, abs_tol=1e-12), (key, role, labels, at)
                    compared += 1
            keys.add(key)
    assert keys == set(stage_bands.BANDS) and compared >= 3 * 60 * len(keys), compared


@pytest.mark.parametrize("name", ["long-context-64", "pd-128"])
def test_the_band_group_records_what_the_narrowed_graphs_read_at_the_engines_sample_interval(name):
    """Issue 42: at 4,096 GPUs the stage-bands group is evaluated every stored sample of the engine job (a longer
    interval would draw a gauge's band at a coarser step than the raw band), and writes every band a narrowed graph
    reads, once per pool, and no other; the shipped sizes (every stage drawn) write none."""
    assert not any(g["name"].endswith(stage_bands.GROUP) for g in rule_groups_data(PROFILES[name]))
    profile = at_size(name)
    groups = {g["name"]: g for g in rule_groups_data(profile)}
    group = groups[f"dashgen-{profile.name}-{stage_bands.GROUP}"]
    assert group["interval"] == f"{profile.source('sglang').sample_interval_seconds:g}s"
    written = {(r["record"], r.get("labels", {}).get(stage_bands.POOL, "")) for r in group["rules"]}
    (spec,) = dashboard_specs(profile)
    read = {(m.group(0), p.fan_out.role) for p in spec.panels() if p.fan_out and (m := RECORD.search(p.fan_out.band))}
    drawn = {m.group(0) for p in spec.panels() for t in p.targets if (m := RECORD.search(t.expr))}
    assert read == written and {r for r, _ in read} == drawn, sorted(read ^ written)
    # the engine-load graphs' three bands open everywhere; the per-DP-group queues' two where the pool has PP stages
    keys = len(stage_bands.BANDS) if profile.has_pp else 3
    assert len(read) == keys * len(stage_bands.roles(profile)), sorted(read)
