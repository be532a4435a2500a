"""Energy and cost per token (the efficiency group): the profile's ``[cost]`` is validated, the row is a text
where DCGM's energy counter cannot exist, and on a real VictoriaMetrics holding the demo windows the energy per
token of each pool matches a hand computation from the raw samples within 1 % (pd-128: prefill GPUs per input
token, decode GPUs per output token; h20-16: all GPUs per token), and the dollars follow from it."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import pytest
from dashgen_panels import efficiency
from dashgen_queries import energy as en
from dashgen_queries.promql import job
from group_checks import PROFILES

from dashgen.build import build_profile
from dashgen.deployment.profile import Profile, profile_from_dict
from dashgen.deployment.topology import Topology
from dashgen.errors import ProfileError
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan

TITLE = "Energy and cost per token over the window"


def _profile_dict(name: str, cost: dict) -> dict:
    import tomllib

    from dashgen.deployment.profile import profiles_dir

    raw = tomllib.loads((profiles_dir() / f"{name}.toml").read_text())
    raw["cost"] = cost
    return raw


@pytest.mark.parametrize(
    ("cost", "field"),
    [
        ({"usd_per_kwh": 12.0}, "usd_per_kwh"),  # cents written as dollars
        ({"usd_per_kwh": -0.1}, "usd_per_kwh"),
        ({"usd_per_gpu_hour": 2.0}, "usd_per_gpu_hour"),  # no energy price
        ({"usd_per_kwh": 0.1, "usd_per_mwh": 100.0}, "usd_per_mwh"),
    ],
)
def test_cost_section_is_validated(cost: dict, field: str) -> None:
    with pytest.raises(ProfileError) as error:
        profile_from_dict(_profile_dict("pd-128", cost), "profiles/pd-128.toml", "pd-128")
    assert field in str(error.value)


def test_cost_section_is_read() -> None:
    profile = profile_from_dict(_profile_dict("pd-128", {"usd_per_kwh": 0.2}), "p.toml", "pd-128")
    assert profile.cost.usd_per_kwh == 0.2 and profile.cost.usd_per_gpu_hour is None


def _keys(profile: Profile) -> list[str]:
    return [panel.key for panel in efficiency.energy_panels(profile)]


def test_energy_row_is_a_text_where_the_counter_cannot_exist() -> None:
    profile = PROFILES["pd-128"]
    assert _keys(profile) == ["efficiency.totals", "efficiency.power"]
    dcgm = profile.sources["dcgm"]
    unexported = dataclasses.replace(
        profile, sources={**profile.sources, "dcgm": dataclasses.replace(dcgm, status="not-exported")}
    )
    assert _keys(unexported) == ["efficiency.energy_unavailable"]
    power_only = dataclasses.replace(
        profile, sources={**profile.sources, "dcgm": dataclasses.replace(dcgm, fields=("DCGM_FI_DEV_POWER_USAGE",))}
    )
    (panel,) = efficiency.energy_panels(power_only)
    assert panel.kind == "text" and en.ENERGY in panel.content and "not collected" in panel.content


def test_dollars_only_with_a_price() -> None:
    def columns(profile: Profile) -> list[str]:
        return [str(target.expr) for target in efficiency.totals_table(profile).targets]

    profile = PROFILES["pd-128"]
    assert any("3600 * 2" in expr for expr in columns(profile)), "GPU-hour price in the cost column"
    unpriced = dataclasses.replace(
        profile, cost=dataclasses.replace(profile.cost, usd_per_kwh=None, usd_per_gpu_hour=None)
    )
    assert len(columns(unpriced)) == len(columns(profile)) - 1


# --- on a real VictoriaMetrics ---------------------------------------------------------------------------


def _raw(ds: Datasource, selector: str, end: float, seconds: float) -> list[dict]:
    """Every raw sample of ``selector`` in the window and its lookbehind (a range-vector instant query)."""
    return ds.query(f"{selector}[{int(seconds)}s]", end).result


def _increase(values: list, start: float) -> float:
    """A counter's increase after ``start``: last value minus the last value at or before ``start`` (the first
    value when none), resets added back."""
    points = [(float(t), float(v)) for t, v in values]
    before = [v for t, v in points if t <= start]
    inside = [v for t, v in points if t > start]
    if not inside:
        return 0.0
    series = ([before[-1]] if before else []) + inside
    total = 0.0
    for previous, current in zip(series, series[1:], strict=False):
        total += current - previous if current >= previous else current
    return total


def _hand_joules_per_token(ds: Datasource, profile: Profile, end: float, seconds: float) -> dict[str, float]:
    """Energy per token per pool from raw samples, computed here without the dashboard's query."""
    pools = {
        item["metric"]["node"]: item["metric"]["engine_type"]
        for item in ds.query(f"sglang:num_running_reqs{{{job(profile, 'sglang')}}}", end).result
    }
    joules: dict[str, float] = defaultdict(float)
    for item in _raw(ds, f"{en.ENERGY}{{{job(profile, 'dcgm')}}}", end, seconds * 2):
        pool = pools.get(item["metric"]["node"])
        if pool is not None:
            joules[pool] += _increase(item["values"], end - seconds) / 1000.0
    per_stage: dict[tuple, float] = defaultdict(float)
    for item in _raw(ds, f'{en.TOKENS}{{{job(profile, "sglang")}, pp_rank="0"}}', end, seconds * 2):
        labels = item["metric"]
        pool = labels["engine_type"]
        wanted = en.modes(profile, pool if en.pools(profile) != ("",) else "").split("|")
        if labels["mode"] not in wanted:
            continue
        key = (pool, labels["node"], labels.get("dp_rank"), labels["mode"])
        per_stage[key] = max(per_stage[key], _increase(item["values"], end - seconds))
    tokens: dict[str, float] = defaultdict(float)
    for (pool, *_), value in per_stage.items():
        tokens[pool] += value
    return {pool: joules[pool] / tokens[pool] for pool in tokens if tokens[pool] > 0}


@pytest.mark.parametrize("name", ["pd-128", "h20-16"])
def test_energy_per_token_matches_a_hand_computation(victoriametrics, demo_windows, name: str) -> None:
    window = demo_windows[(name, "healthy")]
    seconds = window.hours * 3600
    ds = Datasource(victoriametrics.url)
    (built,) = build_profile(window.profile)
    planned = {
        p.raw.get("title"): p
        for p in plan([DashboardInput(name, built.document, window.profile)], Window(window.end, seconds))
    }[TITLE]
    columns = [ds.query(query.expr, window.end).result for query in planned.queries]
    per_token = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[3]}
    hand = _hand_joules_per_token(ds, window.profile, window.end, seconds)
    assert set(per_token) == set(hand) and hand, (per_token, hand)
    for pool, value in hand.items():
        assert per_token[pool] == pytest.approx(value, rel=0.01), (pool, per_token[pool], value)
    price = window.profile.cost
    assert price.usd_per_kwh is not None
    dollars = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[5]}
    energy_only = {pool: value * price.usd_per_kwh / en.J_PER_KWH * 1e6 for pool, value in hand.items()}
    for pool, value in energy_only.items():
        if price.usd_per_gpu_hour is None:
            assert dollars[pool] == pytest.approx(value, rel=0.01), pool
        else:
            assert dollars[pool] > value * 1.01, "GPU time is added to the energy's dollars"
    idle = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[4]}
    energy = {item["metric"]["engine_type"]: float(item["value"][1]) for item in columns[1]}
    assert all(0 <= idle.get(pool, 0.0) <= energy[pool] for pool in energy), (idle, energy)


# --- speculative decoding ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("speculative", "field"),
    [
        ({"algorithm": "MEDUSA"}, "algorithm"),
        ({"draft_tokens": 4}, "draft_tokens"),
        ({"algorithm": "EAGLE", "draft": 4}, "draft"),
    ],
)
def test_speculative_section_is_validated(speculative: dict, field: str) -> None:
    raw = _profile_dict("long-context-64", {})
    del raw["cost"]
    raw["speculative"] = speculative
    with pytest.raises(ProfileError) as error:
        profile_from_dict(raw, "profiles/long-context-64.toml", "long-context-64")
    assert field in str(error.value)


def test_speculative_algorithm_must_agree_with_the_stated_flags() -> None:
    raw = _profile_dict("long-context-64", {})
    del raw["cost"]
    raw["speculative"] = {"algorithm": "EAGLE3"}
    raw["sources"]["sglang"]["features"] = ["--enable-metrics-for-all-schedulers"]
    with pytest.raises(ProfileError) as error:
        profile_from_dict(raw, "profiles/long-context-64.toml", "long-context-64")
    assert "--speculative-algorithm" in str(error.value)


@pytest.mark.parametrize("name", ["pd-128", "h20-16"])
def test_speculative_is_a_text_where_the_engines_run_none(name: str) -> None:
    panels = efficiency.build(PROFILES[name], Topology(PROFILES[name])).panels
    spec = [panel for panel in panels if "spec" in panel.key]
    assert [panel.kind for panel in spec] == ["text"] and "no speculative decoding" in spec[0].content


def test_speculative_panels_state_the_draft_algorithm() -> None:
    profile = PROFILES["long-context-64"]
    panels = [p for p in efficiency.build(profile, Topology(profile)).panels if "spec" in p.key]
    assert len(panels) == 3 and all(p.kind == "timeseries" for p in panels)
    assert all("EAGLE3, 4 draft tokens per step" in p.description for p in panels[:2])


def test_acceptance_on_demo_data_is_a_rate_and_a_gain(victoriametrics, demo_windows) -> None:
    """long-context-64 runs EAGLE3: per instance the acceptance rate is within [0, 1], the acceptance length at
    least 1 (the bonus token) and decode tokens per verify forward positive, over the whole window."""
    window = demo_windows[("long-context-64", "healthy")]
    seconds = window.hours * 3600
    ds = Datasource(victoriametrics.url)
    (built,) = build_profile(window.profile)
    planned = {
        p.raw.get("title"): p
        for p in plan([DashboardInput("lc", built.document, window.profile)], Window(window.end, seconds))
    }

    def values(title: str) -> list[float]:
        (query,) = planned[title].queries
        answer = ds.query_range(query.expr, window.end - seconds, window.end, 300).result
        return [float(v) for item in answer for _, v in item["values"]]

    rate = values("Speculative decoding: draft acceptance rate (EAGLE3)")
    length = values("Speculative decoding: accepted tokens per verify step (EAGLE3)")
    forward = values("Speculative decoding: decode tokens per verify forward (batch)")
    assert rate and length and forward
    assert all(0.0 <= value <= 1.0 for value in rate), (min(rate), max(rate))
    assert all(value >= 1.0 for value in length), min(length)
    assert all(value > 0 for value in forward), min(forward)


# --- SLO attainment ------------------------------------------------------------------------------------------

ATTAINMENT = "SLO attainment over the window per model: per SLI, and the bounds on all at once"


def test_attainment_says_what_joint_attainment_would_need() -> None:
    panel = efficiency.attainment_panel(PROFILES["pd-128"])
    assert "exact only with a per-request record" in panel.description
    assert "goodput in tokens per second is not derivable" in panel.description
    assert "bucket edge" in panel.description


@pytest.mark.parametrize("name", ["long-context-64", "pd-128"])
def test_attainment_on_demo_data_is_a_share_and_its_bounds_hold(victoriametrics, demo_windows, name: str) -> None:
    """Per model: every SLI share within [0, 1] (never above 100 %), the joint lower bound <= the joint upper
    bound = the lowest SLI share, and goodput at least 0 and at most the window's request rate."""
    window = demo_windows[(name, "healthy")]
    seconds = window.hours * 3600
    ds = Datasource(victoriametrics.url)
    (built,) = build_profile(window.profile)
    planned = {
        p.raw.get("title"): p
        for p in plan([DashboardInput(name, built.document, window.profile)], Window(window.end, seconds))
    }[ATTAINMENT]
    columns = [
        {item["metric"]["model_name"]: float(item["value"][1]) for item in ds.query(q.expr, window.end).result}
        for q in planned.queries
    ]
    *per_sli, upper, lower, goodput = columns
    assert per_sli and all(per_sli) and upper and lower and goodput, columns
    for model, top in upper.items():
        shares = [column[model] for column in per_sli]
        assert all(0.0 <= share <= 1.0 for share in shares), shares
        assert top == pytest.approx(min(shares))
        assert 0.0 <= lower[model] <= top
        assert lower[model] == pytest.approx(max(0.0, 1 - sum(1 - s for s in shares)), abs=1e-9)
        assert goodput[model] >= 0
