"""The SLO and health group: first in reading order, thresholds from the profile (mapped to histogram
bucket bounds), quantiles over ``sum by (le)``, burn rates over 1h / 6h / 3d (recording rule first,
raw fallback; 3d instant), TTFT / TPOT / E2E SLIs with aborted requests as bad events, request-level
panels scoped so that a non-entry node never reads "no requests", a stalled stage shown as such,
fixed ratio axes (S5), no zero-fill (S7), per-stage gauges never summed across PP stages (S3),
drill-down links that keep time and variables, and zero validation problems for every profile.

Expressions are evaluated by the real promtool (``promql_expr_test``) where behaviour matters."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest
from dashgen_panels import GROUPS, slo_health
from dashgen_queries import request_rates
from dashgen_queries.sglang_slo import (
    E2E_BUCKETS,
    RECORDED_WINDOWS,
    STALLED_VALUE,
    TTFT_BUCKETS,
    error_ratio,
    le_matcher,
    request_scope_variable,
    slis,
    slo_bucket,
    slo_error_ratio_name,
)

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels
from dashgen.errors import ProfileError
from dashgen.render.validate import validate_dashboard
from dashgen.rules import rule_groups

ROOT = Path(__file__).resolve().parent.parent
# S25: the SLO and health group is text-generation only; a video pool gets the Job SLO row (test_workload_kinds.py).
ALL_PROFILES = load_profiles(directory=ROOT / "profiles")
PROFILES = [profile for profile in ALL_PROFILES if profile.has_kind("text-generation")]
# Grafana's DashboardLink (panel links and data links share it in Grafana's schema).
LINK_KEYS = {"title", "type", "icon", "tooltip", "tags", "asDropdown", "targetBlank", "includeVars", "keepTime"}


def group(profile):
    return slo_health.build(profile, Topology(profile))


def panel(profile, key):
    return next(p for p in group(profile).panels if p.key == key)


def stage_panels(profile, key):
    """The engine-load panel ``key``: one, or one per pool in a PD deployment (S27)."""
    found = [p for p in group(profile).panels if p.key in (key, f"{key}_prefill", f"{key}_decode")]
    assert found, key
    return found


def exprs(spec) -> list[str]:
    return [target.expr for target in spec.targets]


def test_group_is_first_in_reading_order():
    """First after the incident screen (the Now row, S26), and open."""
    assert GROUPS[1] is slo_health
    assert slo_health.TITLE == "SLO and health"
    for profile in ALL_PROFILES:
        document = build_profile(profile)[0].document
        rows = [p for p in document["panels"] if p["type"] == "row"]
        want = "SLO and health" if profile in PROFILES else "Job SLO and health (video generation)"
        assert [r["title"] for r in rows[:2]] == ["Now", want], profile.name
        assert not rows[1].get("collapsed"), profile.name


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_group_renders_with_zero_validation_problems(profile):
    built = build_profile(profile, groups=(slo_health,))
    assert len(built) == 1, profile.name
    checked = 0
    for dashboard in built:
        assert validate_dashboard(dashboard.document, profile.name) == []
        for _path, rendered in ((s.path, s.raw) for s in iter_panels(dashboard.document)):
            links = list(rendered.get("links", [])) + list(
                rendered.get("fieldConfig", {}).get("defaults", {}).get("links", [])
            )
            for link in links:
                assert set(link) >= LINK_KEYS, (rendered["title"], link)
                checked += 1
    assert checked >= 9, f"{profile.name}: {checked} links checked"


def test_slo_bucket_is_the_bound_at_or_just_above_the_threshold():
    assert slo_bucket(2.0, TTFT_BUCKETS, "p.toml", "slo.ttft_seconds") == 2.0
    assert slo_bucket(5.0, TTFT_BUCKETS, "p.toml", "slo.ttft_seconds") == 6.0
    assert slo_bucket(120.0, E2E_BUCKETS, "p.toml", "slo.e2e_seconds") == 200.0
    with pytest.raises(ProfileError) as error:
        slo_bucket(500.0, TTFT_BUCKETS, "p.toml", "slo.ttft_seconds")
    assert error.value.field == "slo.ttft_seconds"


def test_le_matcher_accepts_both_float_spellings():
    assert le_matcher(6) == 'le=~"6|6\\\\.0"'
    assert le_matcher(0.1) == 'le="0.1"'


def test_thresholds_come_from_the_profile():
    profile = next(p for p in PROFILES if p.name == "long-context-64")
    before = exprs(panel(profile, "slo_health.health"))[0]
    assert le_matcher(slo_bucket(profile.slo.ttft_seconds, TTFT_BUCKETS, profile.path, "x")) in before
    changed = dataclasses.replace(profile, slo=dataclasses.replace(profile.slo, ttft_seconds=0.4, objective=0.999))
    after = exprs(panel(changed, "slo_health.health"))[0]
    assert after != before
    assert 'le="0.4"' in after
    assert "/ 0.001" in exprs(panel(changed, "slo_health.burn_1h"))[0]
    assert dict(panel(changed, "slo_health.health").thresholds)["green"] == 0.999
    assert "evaluated at the bucket bound le=6 s exactly" in panel(profile, "slo_health.health").description
    off_bound = dataclasses.replace(profile, slo=dataclasses.replace(profile.slo, ttft_seconds=5.0))
    description = panel(off_bound, "slo_health.health").description
    assert "5 s (slo.ttft_seconds) is not a bucket bound" in description and "le=6 s" in description


def test_unreachable_fast_burn_objective_is_an_error_naming_the_field():
    profile = PROFILES[0]
    loose = dataclasses.replace(profile, slo=dataclasses.replace(profile.slo, objective=0.9))
    with pytest.raises(ProfileError) as error:
        group(loose)
    assert error.value.field == "slo.objective"


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_quantiles_sum_by_le_and_never_average(profile):
    latency = exprs(panel(profile, "slo_health.latency"))
    assert len(latency) == 6  # P50 and P99 of TTFT, TPOT, E2E on one axis
    for expr in latency:
        # the bucket rates recorded for the whole deployment (queries.request_rates), summed by le before the quantile
        assert re.match(r"histogram_quantile\(0\.(5|99), sum by \(le\) \(avg_over_time\(deployment:dashgen_", expr), (
            expr
        )
    assert panel(profile, "slo_health.latency").unit == "s"
    for spec in group(profile).panels:
        for expr in exprs(spec):
            assert "avg(" not in expr and "avg by" not in expr, spec.key


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_burn_rate_panels_show_1h_6h_3d_side_by_side(profile):
    panels = [panel(profile, f"slo_health.burn_{window}") for window in ("1h", "6h", "3d")]
    for window, spec in zip(("1h", "6h", "3d"), panels, strict=True):
        assert all(f"[{window}]" in expr for expr in exprs(spec))
        assert len(spec.targets) == 3  # TTFT, TPOT and E2E
    keys = [p.key for p in group(profile).panels]
    start = keys.index("slo_health.burn_1h")
    assert keys[start : start + 3] == ["slo_health.burn_1h", "slo_health.burn_6h", "slo_health.burn_3d"]
    assert sum(p.width for p in panels) == 24
    budget = exprs(panel(profile, "slo_health.budget"))
    assert all(f"[{profile.slo.window_days}d]" in expr for expr in budget)


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_ratio_axes_fixed_and_no_zero_fill(profile):
    document = build_profile(profile, groups=(slo_health,))[0].document
    percent = 0
    for _path, rendered in ((s.path, s.raw) for s in iter_panels(document)):
        defaults = rendered.get("fieldConfig", {}).get("defaults", {})
        if defaults.get("unit") == "percentunit":
            percent += 1
            assert (defaults.get("min"), defaults.get("max")) == (0, 1), rendered["title"]
        for target in rendered.get("targets", []) or []:
            # No alternative that is a constant (zero-fill); ``or`` between two measured expressions is allowed.
            assert "vector(" not in target["expr"], rendered["title"]
            assert not re.search(r"\bor\s+(on\s*\([^)]*\)\s*)?\(*\s*-?[0-9]", target["expr"]), rendered["title"]
        assert defaults.get("custom", {}).get("spanNulls") in (None, False)
    assert percent >= 4  # health, good share, budget, KV usage, prefix reuse, GPU memory


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_stage_panels_never_sum_across_pp_rank(profile):
    pp = profile.label("pp_rank")
    keys = (
        "slo_health.running",
        "slo_health.queue",
        "slo_health.load_state",
        "slo_health.kv_usage",
        "slo_health.prefix_hit",
    )
    pools = 2 if profile.has_pools else 1  # one panel per pool in a PD deployment (S27)
    assert sum(len(stage_panels(profile, key)) for key in keys) == len(keys) * pools
    sums = 0
    for key in keys:
        for spec in stage_panels(profile, key):
            for expr in exprs(spec):
                for grouping in re.findall(r"sum by \(([^)]*)\)", expr):
                    assert pp in grouping, (key, expr)
                    sums += 1
            assert ("{{" + pp + "}}" in spec.targets[0].legend) == profile.has_pp, spec.title
    assert sums >= 8 * pools, f"{profile.name}: {sums} sums checked"


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_drill_down_links_keep_time_and_set_node_or_gpu(profile):
    node, gpu = profile.label("node"), profile.label("gpu")
    staged = [
        spec
        for key in ("slo_health.running", "slo_health.queue", "slo_health.kv_usage", "slo_health.prefix_hit")
        for spec in stage_panels(profile, key)
    ]
    for spec in [*staged, panel(profile, "slo_health.gpu_memory_node")]:
        url = spec.data_links[0]["url"]
        assert f"var-node=${{__field.labels.{node}}}" in url and "${__url_time_range}" in url
        assert "${datasource:queryparam}" in url
    url = panel(profile, "slo_health.gpu_memory_gpu").data_links[0]["url"]
    assert f"var-gpu=${{__field.labels.{gpu}}}" in url and "${__url_time_range}" in url
    assert "{{" + gpu + "}}" in panel(profile, "slo_health.gpu_memory_gpu").targets[0].legend


# --- SLO coverage (#7): TTFT, TPOT and E2E; aborted requests are bad events everywhere ----------------


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_health_burn_budget_and_rules_share_one_error_ratio_per_sli(profile):
    keys = [sli.key for sli in slis(profile)]
    assert keys == ["ttft", "tpot", "e2e"]
    assert slis(profile)[1].threshold == profile.slo.tpot_seconds
    records = {
        (rule.record, dict(rule.labels)["slo"]): rule.expr
        for group in rule_groups(profile)
        for rule in group.rules
        if getattr(rule, "record", "").startswith("model_name:sglang_slo")
    }
    for index, sli in enumerate(slis(profile)):
        for window in RECORDED_WINDOWS:
            assert records[(slo_error_ratio_name(window), sli.key)] == error_ratio(profile, sli, window)
        for window in ("1h", "6h", "3d"):
            # the 1h sparkline reads the same ratio's rates recorded (queries.request_rates), the instants the raw ones
            reader = request_rates.reader(profile) if window == "1h" else None
            expected = error_ratio(profile, sli, window, reader=reader)
            assert expected in exprs(panel(profile, f"slo_health.burn_{window}"))[index]
        assert (
            error_ratio(profile, sli, f"{profile.slo.window_days}d")
            in exprs(panel(profile, "slo_health.budget"))[index]
        )
        assert "sglang:num_aborted_requests_total" in exprs(panel(profile, "slo_health.health"))[0]
    for key in ("slo_health.health", "slo_health.health_trend", "slo_health.budget", "slo_health.burn_1h"):
        description = panel(profile, key).description
        assert "aborted requests" in description and "TPOT" in description, key


# --- promtool evaluation of dashboard expressions --------------------------------------------------------


def series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    """A promtool input series of long-context-64's deployment (S21: every query is scoped to it)."""
    inner = ", ".join(f'{key}="{value}"' for key, value in {"cluster": "long-context-64", **labels}.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def expand(expr: str, **variables: str) -> str:
    """Grafana's variables as a dashboard with everything selected would send them (or as given)."""
    values = {"node": ".+", "stage": ".+", "gpu": ".+", "replica": ".+", **variables}
    for name, value in values.items():
        expr = expr.replace(f"${{{name}:pipe}}", value).replace(f"${name}", value)
    return expr.replace("$__rate_interval", "5m").replace("$__range", "10m")


def evaluate(promtool: str, tmp_path: Path, input_series: list[dict], checks: list[dict]) -> None:
    document = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": input_series, "promql_expr_test": checks}],
    }
    test_file = tmp_path / "expr.yml"
    test_file.write_text(json.dumps(document, indent=1), encoding="utf-8")
    result = subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def sample(labels: dict[str, str], value: float) -> dict:
    return {"labels": "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}", "value": value}


def test_queue_pressure_shows_stalled_when_requests_wait_and_none_runs(promtool, tmp_path):
    """#8: waiting and none running -> the stalled value (mapped to red text); both 0 -> 0; both absent -> nothing."""
    profile = next(p for p in PROFILES if p.name == "long-context-64")
    spec = panel(profile, "slo_health.load_state")
    mapping = spec.mappings[0]["options"][f"{STALLED_VALUE:.0f}"]
    assert mapping["color"] == "red" and "stalled" in mapping["text"]
    assert "No running requests -> No data" not in spec.description and "stalled" in spec.description

    def gauges(node: str, waiting: str, running: str) -> list[dict]:
        labels = {"job": "sglang", "node": node, "pp_rank": "0", "tp_rank": "0", "dp_rank": "", "model_name": "m"}
        return [series("sglang:num_queue_reqs", labels, waiting), series("sglang:num_running_reqs", labels, running)]

    inputs = gauges("busy", "4x10", "8x10") + gauges("stalled", "5x10", "0x10") + gauges("idle", "0x10", "0x10")
    evaluate(
        promtool,
        tmp_path,
        inputs,
        [
            {
                "expr": expand(spec.targets[0].expr),
                "eval_time": "5m",
                "exp_samples": [
                    sample({"node": "busy", "pp_rank": "0"}, 0.5),
                    sample({"node": "stalled", "pp_rank": "0"}, STALLED_VALUE),
                    sample({"node": "idle", "pp_rank": "0"}, 0),
                ],
            }
        ],
    )


def _tokenizer(node: str, good: str, total: str) -> list[dict]:
    base = {"job": "sglang", "model_name": "m", "engine_type": "unified", "is_streaming": "true", "node": node}
    out = []
    for metric, le in (
        ("sglang:time_to_first_token_seconds", "6.0"),
        ("sglang:request_time_per_output_token_seconds", "0.1"),
        ("sglang:e2e_request_latency_seconds", "200.0"),
    ):
        out += [series(f"{metric}_bucket", {**base, "le": le}, good), series(f"{metric}_count", base, total)]
    return out


def test_request_panels_on_a_non_entry_node_still_read_the_replicas_requests(promtool, tmp_path):
    """#9: the tokenizer runs on each replica's entry node only; narrowing $node to a non-entry node (the drill-down
    does that) must not empty the SLO panels. long-context-64 scopes by the replica variable instead."""
    profile = next(p for p in PROFILES if p.name == "long-context-64")
    topology = Topology(profile)
    replica = topology.replicas[1]
    entry, other = replica.nodes[0], replica.nodes[-1]
    assert request_scope_variable(profile) == "replica"
    health = exprs(panel(profile, "slo_health.health"))[0]
    assert "$node" not in health and "${replica:pipe}" in health
    assert "${replica:queryparam}" in panel(profile, "slo_health.running").data_links[0]["url"]
    inputs = _tokenizer(entry, "0+9x20", "0+10x20") + _tokenizer(topology.replicas[0].nodes[0], "0+1x20", "0+10x20")
    evaluate(
        promtool,
        tmp_path,
        inputs,
        [
            {
                # $node narrowed to a non-entry node of replica 1 (what the drill-down sets), replica 1 selected.
                "expr": expand(health, node=other, replica="|".join(replica.nodes)),
                "eval_time": "10m",
                "exp_samples": [sample({"model_name": "m"}, 0.9)],
            }
        ],
    )


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_request_scope_matches_where_the_tokenizer_runs(profile):
    """One-node engines: $node is exact; replicas over several nodes: the replica variable; PD pools or a single
    multi-node replica: not narrowed. The descriptions say which."""
    topology = Topology(profile)
    variable = request_scope_variable(profile)
    one_node = all(len(r.nodes) == 1 for r in topology.replicas)
    assert variable == (
        "" if profile.has_pools else "node" if one_node else "replica" if len(topology.replicas) > 1 else ""
    )
    for key in ("slo_health.health", "slo_health.health_trend"):
        for expr in exprs(panel(profile, key)):
            assert ("$node" in expr) == (variable == "node"), (key, expr)
            assert ("${replica:pipe}" in expr) == (variable == "replica"), (key, expr)
        assert ("does not narrow" in panel(profile, key).description) == (variable != "node"), key
    # the latency quantiles are the whole deployment's, as the SLO counts it (read from deployment-wide records)
    whole = (
        "slo_health.budget",
        "slo_health.burn_1h",
        "slo_health.burn_6h",
        "slo_health.burn_3d",
        "slo_health.latency",
    )
    for key in whole:
        for expr in exprs(panel(profile, key)):
            assert "$node" not in expr and "$replica" not in expr and "${replica" not in expr
        assert "whole deployment" in panel(profile, key).description


def test_long_window_burn_rates_and_budget_are_instant_and_need_no_recording_rule(promtool, tmp_path):
    """#14: a stat needs one value: the 6h / 3d burn rates and the budget are instant queries, evaluated from the
    raw histograms (no recorded series needed); the 1h burn keeps its sparkline."""
    profile = next(p for p in PROFILES if p.name == "long-context-64")
    specs = {window: panel(profile, f"slo_health.burn_{window}") for window in ("1h", "6h", "3d")}
    assert all(t.instant for w in ("6h", "3d") for t in specs[w].targets)
    assert not any(t.instant for t in specs["1h"].targets)
    assert all(t.instant for t in panel(profile, "slo_health.budget").targets)
    for spec in (*specs.values(), panel(profile, "slo_health.budget")):
        assert "sglang_slo_errors_per_request" not in "".join(exprs(spec))
    raw = _tokenizer("lc-node-00", "0+5x400", "0+10x400")  # error ratio 0.5 -> burn 50 with budget 0.01
    evaluate(
        promtool,
        tmp_path,
        raw,
        [
            {
                "expr": expand(specs["6h"].targets[0].expr),
                "eval_time": "6h",
                "exp_samples": [sample({"model_name": "m"}, 50)],
            }
        ],
    )


def test_aborted_requests_are_bad_events_and_an_sli_without_histogram_has_no_sample(promtool, tmp_path):
    profile = next(p for p in PROFILES if p.name == "long-context-64")
    health = expand(exprs(panel(profile, "slo_health.health"))[0])
    aborted = series(
        "sglang:num_aborted_requests_total",
        {"job": "sglang", "model_name": "m", "engine_type": "unified", "node": "lc-node-00"},
        "0+10x20",
    )
    all_good = _tokenizer("lc-node-00", "0+10x20", "0+10x20")
    evaluate(
        promtool,
        tmp_path,
        all_good,
        [{"expr": health, "eval_time": "10m", "exp_samples": [sample({"model_name": "m"}, 1)]}],
    )
    # As many aborts as finished requests: half of all requests are bad, whatever their latency.
    evaluate(
        promtool,
        tmp_path,
        [*all_good, aborted],
        [{"expr": health, "eval_time": "10m", "exp_samples": [sample({"model_name": "m"}, 0.5)]}],
    )
    # Aborts only, and no histogram at all: no SLI sample (not a false 0 %).
    evaluate(promtool, tmp_path, [aborted], [{"expr": health, "eval_time": "10m", "exp_samples": []}])


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_prefix_reuse_panel_agrees_with_the_cache_evidence_table(profile):
    """#6: the same counter is final reuse at prefill (S9) in both places; not a request hit rate."""
    specs = stage_panels(profile, "slo_health.prefix_hit")
    assert len(specs) == (2 if profile.has_pools else 1), "one panel per pool in a PD deployment (S27)"
    for spec in specs:
        description = spec.description
        assert "final reuse at prefill" in description and "not a request hit rate" in description
        assert "not final reuse" not in description


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_budget_window_ends_at_the_end_of_the_dashboard_range(profile):
    description = panel(profile, "slo_health.budget").description
    assert "ending at the end of the dashboard range" in description and "ending now" not in description


def test_s27_pd_stage_panels_draw_prefill_and_decode_apart_and_say_instance():
    """pd-128: every per-stage panel of the SLO group exists once per pool and selects that pool by the
    engine's own engine_type label; with no PP the titles say 'instance', never 'stage'."""
    profile = next(p for p in PROFILES if p.name == "pd-128")
    group = slo_health.build(profile, Topology(profile))
    staged = [p for p in group.panels if p.key.rsplit("_", 1)[-1] in ("prefill", "decode")]
    assert len(staged) == 10
    for panel in staged:
        role = panel.key.rsplit("_", 1)[-1]
        assert f"({role}" in panel.title and "stage" not in panel.title, panel.title
        for target in panel.targets:
            roles = set(re.findall(r'engine_type="(\w+)"', target.expr))
            assert roles == {role}, (panel.title, roles)
    (built,) = build_profile(profile)
    pool = next(v for v in built.document["templating"]["list"] if v["name"] == "pool")
    assert pool["type"] == "query" and "engine_type)" in pool["query"]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_the_1h_burn_sparkline_steps_coarser_than_its_sources_and_every_other_target_keeps_theirs(profile):
    """Issue 42: each point of the 1h burn's sparkline rereads the whole hour, so the built dashboard steps it at
    ``SPARKLINE_STEP`` (5m: 12 rereads per hour drawn, not 120); the Min step never goes below the sources'
    stored interval, and no other target of the dashboard is stepped coarser than its sources."""
    from dashgen_queries.promql import coarser_step, min_step

    from dashgen.live.expand import Window, expand_target, parse_duration

    assert coarser_step("5m", "30s") == "5m" and coarser_step("1s", "30s") == "30s" and coarser_step("", "1s") == "1s"
    document = build_profile(profile)[0].document
    titles = {slo_health.BURN_TITLES["1h"]}
    seen = 0
    for site in iter_panels(document):
        raw = site.raw
        for target in raw.get("targets") or []:
            # a read of recorded request rates keeps the raw tokenizer query's Min step (queries.request_rates)
            recorded = ":dashgen_sglang_" in target["expr"]
            expected = request_rates.min_step_of(profile) if recorded else min_step(profile, target["expr"])
            if raw.get("title") in titles:
                seen += 1
                assert target["interval"] == coarser_step(slo_health.SPARKLINE_STEP, expected)
                (query,) = expand_target(raw, target, {}, Window(end=3600 * 1000, length=3600))
                assert query.kind == "range" and query.step == parse_duration(slo_health.SPARKLINE_STEP)
            else:
                assert target.get("interval", "") == expected, (raw.get("title"), target["expr"][:80])
    assert seen == len(slis(profile))
    assert f"every {slo_health.SPARKLINE_STEP} at least" in panel(profile, "slo_health.burn_1h").description


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_each_slo_query_reads_each_of_its_series_once(profile):
    """Issue 42: an SLI's good share and error ratio read the good bucket, the count and the abort counter once each
    (the count was read four times, the good bucket and the abort counter twice: most of what the SLO stats and the
    good share over time scanned on open)."""
    import promql_parser as pp

    from dashgen.lint.promql import expand_variables, walk

    keys = ["slo_health.health", "slo_health.health_trend", "slo_health.budget"]
    keys += [f"slo_health.burn_{window}" for window in ("1h", "6h", "3d")]
    checked = 0
    for key in keys:
        for expr in exprs(panel(profile, key)):
            tree = pp.parse(expand_variables(expr, {}))
            read = [str(node) for node, _ in walk(tree) if isinstance(node, pp.VectorSelector)]
            histograms = [r for r in read if "num_aborted_requests" not in r]
            # per SLI its good bucket, its count and the abort counter (the health stat takes the lowest SLI)
            assert len(histograms) == len(set(histograms)) == 2 * (len(read) - len(histograms)) >= 2, (key, read)
            checked += 1
    assert checked == 1 + 5 * len(slis(profile))  # the health stat's one query, one per SLI on the others
