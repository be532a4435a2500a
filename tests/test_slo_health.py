"""The SLO and health group: first in reading order, thresholds from the profile (mapped to histogram
bucket bounds), quantiles over ``sum by (le)``, burn rates over 1h / 6h / 3d, fixed ratio axes (S5),
no zero-fill (S7), per-stage gauges never summed across PP stages (S3), drill-down links that keep
time and variables, and zero validation problems for every profile."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from dashgen.build import build_profile
from dashgen.errors import ProfileError
from dashgen.profile import load_profiles
from dashgen.topology import Topology
from dashgen.validate import validate_dashboard, walk_panels
from panels import GROUPS, slo_health
from queries.slo import E2E_BUCKETS, TTFT_BUCKETS, le_matcher, slo_bucket

ROOT = Path(__file__).resolve().parent.parent
PROFILES = load_profiles(directory=ROOT / "profiles")
# Grafana's DashboardLink (panel links and data links share it in Grafana's schema).
LINK_KEYS = {"title", "type", "icon", "tooltip", "tags", "asDropdown", "targetBlank", "includeVars", "keepTime"}


def group(profile):
    return slo_health.build(profile, Topology(profile))


def panel(profile, key):
    return next(p for p in group(profile).panels if p.key == f"slo_health.{key}")


def exprs(spec) -> list[str]:
    return [target.expr for target in spec.targets]


def test_group_is_first_in_reading_order():
    assert GROUPS[0] is slo_health
    assert slo_health.TITLE == "SLO and health"
    for profile in PROFILES:
        document = build_profile(profile)[0].document
        first_row = next(p for p in document["panels"] if p["type"] == "row")
        assert first_row["title"] == "SLO and health", profile.name


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_group_renders_with_zero_validation_problems(profile):
    built = build_profile(profile, groups=(slo_health,))
    for dashboard in built:
        assert validate_dashboard(dashboard.document, profile.name) == []
        for _path, rendered in walk_panels(dashboard.document):
            links = list(rendered.get("links", [])) + list(rendered.get("fieldConfig", {}).get("defaults", {})
                                                          .get("links", []))
            for link in links:
                assert set(link) >= LINK_KEYS, (rendered["title"], link)


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
    before = exprs(panel(profile, "health"))[0]
    assert le_matcher(slo_bucket(profile.slo.ttft_seconds, TTFT_BUCKETS, profile.path, "x")) in before
    changed = dataclasses.replace(profile, slo=dataclasses.replace(profile.slo, ttft_seconds=0.4, objective=0.999))
    after = exprs(panel(changed, "health"))[0]
    assert after != before
    assert 'le="0.4"' in after
    assert "/ 0.001" in exprs(panel(changed, "burn_1h"))[0]
    assert dict(panel(changed, "health").thresholds)["green"] == 0.999
    assert "evaluated at the bucket bound le=6 s exactly" in panel(profile, "health").description
    off_bound = dataclasses.replace(profile, slo=dataclasses.replace(profile.slo, ttft_seconds=5.0))
    description = panel(off_bound, "health").description
    assert "5 s (slo.ttft_seconds) is not a bucket bound" in description and "le=6 s" in description


def test_unreachable_fast_burn_objective_is_an_error_naming_the_field():
    profile = PROFILES[0]
    loose = dataclasses.replace(profile, slo=dataclasses.replace(profile.slo, objective=0.9))
    with pytest.raises(ProfileError) as error:
        group(loose)
    assert error.value.field == "slo.objective"


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_quantiles_sum_by_le_and_never_average(profile):
    latency = exprs(panel(profile, "latency"))
    assert len(latency) == 6  # P50 and P99 of TTFT, TPOT, E2E on one axis
    for expr in latency:
        assert re.match(r"histogram_quantile\(0\.(5|99), sum by \(le\) \(rate\(", expr), expr
    assert panel(profile, "latency").unit == "s"
    for spec in group(profile).panels:
        for expr in exprs(spec):
            assert "avg(" not in expr and "avg by" not in expr, spec.key


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_burn_rate_panels_show_1h_6h_3d_side_by_side(profile):
    panels = [panel(profile, f"burn_{window}") for window in ("1h", "6h", "3d")]
    for window, spec in zip(("1h", "6h", "3d"), panels, strict=True):
        assert all(f"[{window}]" in expr for expr in exprs(spec))
        assert len(spec.targets) == 2  # TTFT and E2E
    keys = [p.key for p in group(profile).panels]
    start = keys.index("slo_health.burn_1h")
    assert keys[start:start + 3] == ["slo_health.burn_1h", "slo_health.burn_6h", "slo_health.burn_3d"]
    assert sum(p.width for p in panels) == 24
    budget = exprs(panel(profile, "budget"))
    assert all(f"[{profile.slo.window_days}d]" in expr for expr in budget)


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_ratio_axes_fixed_and_no_zero_fill(profile):
    document = build_profile(profile, groups=(slo_health,))[0].document
    percent = 0
    for _path, rendered in walk_panels(document):
        defaults = rendered.get("fieldConfig", {}).get("defaults", {})
        if defaults.get("unit") == "percentunit":
            percent += 1
            assert (defaults.get("min"), defaults.get("max")) == (0, 1), rendered["title"]
        for target in rendered.get("targets", []) or []:
            assert "vector(0)" not in target["expr"] and "or on" not in target["expr"]
        assert defaults.get("custom", {}).get("spanNulls") in (None, False)
    assert percent >= 4  # health, good share, budget, KV usage, prefix reuse, GPU memory


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_stage_panels_never_sum_across_pp_rank(profile):
    pp = profile.label("pp_rank")
    for key in ("running", "queue", "load_state", "kv_usage", "prefix_hit"):
        for expr in exprs(panel(profile, key)):
            for grouping in re.findall(r"sum by \(([^)]*)\)", expr):
                assert pp in grouping, (key, expr)
            assert "{{" + pp + "}}" in panel(profile, key).targets[0].legend


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_drill_down_links_keep_time_and_set_node_or_gpu(profile):
    node, gpu = profile.label("node"), profile.label("gpu")
    for key in ("running", "queue", "kv_usage", "prefix_hit", "gpu_memory_node"):
        url = panel(profile, key).data_links[0]["url"]
        assert f"var-node=${{__field.labels.{node}}}" in url and "${__url_time_range}" in url
        assert "${datasource:queryparam}" in url
    url = panel(profile, "gpu_memory_gpu").data_links[0]["url"]
    assert f"var-gpu=${{__field.labels.{gpu}}}" in url and "${__url_time_range}" in url
    assert "{{" + gpu + "}}" in panel(profile, "gpu_memory_gpu").targets[0].legend
