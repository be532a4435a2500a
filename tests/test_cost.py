"""``dashgen cost`` (issue 19) on a real VictoriaMetrics holding the demo data: the figures are the data
source's own statistics, the total on open leaves collapsed rows out, and the budget gate exits 1 when a
panel or the dashboard is over budget (2 on a usage error). The Prometheus side is in
tests/test_prometheus_queries.py (its module's Prometheus)."""

from __future__ import annotations

import functools
import json

import pytest
from click.testing import CliRunner

from dashgen.cli.app import main
from dashgen.deployment.profile import load_profiles
from dashgen.live.cost import Budget, PanelCost, QueryCost, stats_from_answer, totals, violations
from dashgen.live.datasource import Datasource

PROFILE = "long-context-64"


def run_cost(url: str, end: float, *extra: str, profile: str = PROFILE) -> tuple[int, dict | str]:
    args = ["cost", "--datasource-url", url, "--profile", profile, "--at", str(end), *extra]
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    if result.exit_code == 2:
        return 2, result.output
    return result.exit_code, json.loads(result.output)["results"][0]


@functools.cache
def healthy_cost(url: str, name: str, end: float) -> tuple[int, dict]:
    """``dashgen cost --format json`` of a profile's healthy demo hour, run once per session (tests only read it)."""
    args = ["cost", "--datasource-url", url, "--profile", name, "--at", str(end), "--format", "json"]
    result = CliRunner().invoke(main, args)
    (data,) = json.loads(result.output)["results"]
    return result.exit_code, data


# The budget gate's tests cost the smallest demo profile: the gate compares each figure with a budget each test sets
# one below the figure it read from the same store, so what it proves does not depend on the deployment's size, and
# h20-16 (16 GPUs) costs about a third of long-context-64 (64) per run.
GATE_PROFILE = "h20-16"


def _healthy(server, demo_windows, name: str):
    """The profile's healthy hour and its cost, the session's one run of it (``healthy_cost``)."""
    window = demo_windows[(name, "healthy")]
    code, data = healthy_cost(server.url, name, window.end)
    return server, window, code, data


@pytest.fixture(scope="module")
def healthy(victoriametrics, demo_windows):
    return _healthy(victoriametrics, demo_windows, PROFILE)


@pytest.fixture(scope="module")
def gate(victoriametrics, demo_windows):
    return _healthy(victoriametrics, demo_windows, GATE_PROFILE)


def test_cost_figures_are_victoriametrics_own_statistics(victoriametrics, demo_windows):
    """series fetched = the series a window count returns (one per stored series); samples scanned at
    least the samples counted."""
    (profile,) = load_profiles([PROFILE])
    window = demo_windows[(PROFILE, "healthy")]
    ds = Datasource(victoriametrics.url)
    expr = f'count_over_time(up{{cluster="{profile.deployment}"}}[1h])'
    result, answer = ds.query_with_stats(expr, window.end - 3600, window.end)
    stats = stats_from_answer(answer)
    assert stats.origin.startswith("victoriametrics")
    assert stats.series_fetched == len(result.result) > 0
    counted = sum(float(item["value"][1]) for item in result.result)
    assert stats.samples_scanned >= counted
    assert stats.seconds is not None and stats.seconds >= 0


@pytest.mark.parametrize("name", ["long-context-64", "h20-16"])
def test_cost_of_the_healthy_dashboard_is_within_the_profile_budget(victoriametrics, demo_windows, name):
    """The shipped defaults (1 h range, the per-GPU window table collapsed) keep the open cost of the demo's
    healthy hour within the profile's budgets."""
    window = demo_windows[(name, "healthy")]
    code, data = healthy_cost(victoriametrics.url, name, window.end)
    assert code == 0, data["over_budget"] + data["errors"]
    (total,) = data["dashboards"]
    assert total["series_fetched"] > 0 and total["samples_scanned"] > 0
    assert total["panels_on_open"] < total["panels"]  # the collapsed rows are not paid for on open
    budget = data["budget"]
    assert total["samples_scanned"] <= budget["dashboard_samples"]
    assert all(p["samples_scanned"] <= budget["panel_samples"] for p in data["panels"])


SCALE_GPUS = 1024


@pytest.mark.parametrize("name", ["long-context-64", "h20-16", "pd-128"])
def test_every_panel_collapsed_rows_included_is_within_the_panel_budget_at_1024_gpus(
    victoriametrics, demo_windows, name
):
    """Issue 42: what each panel fetches grows with the deployment (per GPU, per node, per rank), so the demo's
    healthy hour at the profile's own size, scaled linearly to 1,024 GPUs, must stay within the profile's panel
    budgets, for every panel, those of collapsed rows included (the per-GPU window table fetched 36,864 series at
    1,024 GPUs reading its quantities raw). A per-deployment series scales too: the check errs on the strict side."""
    window = demo_windows[(name, "healthy")]
    _code, data = healthy_cost(victoriametrics.url, name, window.end)
    assert not data["errors"]
    factor = SCALE_GPUS / window.profile.total_gpus
    budget = data["budget"]
    over = [
        f"{p['title']}: {p[figure] * factor:,.0f} {figure} at {SCALE_GPUS} GPUs"
        for p in data["panels"]
        for figure, limit in (("series_fetched", budget["panel_series"]), ("samples_scanned", budget["panel_samples"]))
        if (p[figure] or 0) * factor > limit
    ]
    assert over == []
    table = [p for p in data["panels"] if p["title"].startswith("Window mean and peak per GPU")]
    assert table and table[0]["series_fetched"] >= window.profile.total_gpus  # the recorded statistics were read


def test_cost_total_on_open_leaves_out_the_panels_of_collapsed_rows(healthy):
    _, _, _, data = healthy
    (total,) = data["dashboards"]
    opened = [p for p in data["panels"] if p["on_open"]]
    assert total["samples_scanned"] == sum(p["samples_scanned"] or 0 for p in opened)
    assert {p["row"] for p in data["panels"] if not p["on_open"]} - {""}


def test_cost_gate_exits_1_when_a_panel_is_over_its_budget(gate):
    server, window, _, data = gate
    heaviest = max(data["panels"], key=lambda p: p["samples_scanned"] or 0)
    budget = str(heaviest["samples_scanned"] - 1)
    code, gated = run_cost(server.url, window.end, "--budget-samples", budget, profile=GATE_PROFILE)
    assert code == 1
    assert any(f"panel {heaviest['title']!r}: samples scanned" in m for m in gated["over_budget"])
    assert not [m for m in gated["over_budget"] if "dashboard on open" in m]


def test_cost_gate_exits_1_when_the_dashboard_is_over_its_budget(gate):
    server, window, _, data = gate
    (total,) = data["dashboards"]
    budget = str(total["series_fetched"] - 1)
    code, gated = run_cost(server.url, window.end, "--budget-dashboard-series", budget, profile=GATE_PROFILE)
    assert code == 1
    assert [m for m in gated["over_budget"] if "dashboard on open: series fetched" in m]


def test_cost_usage_error_exits_2_naming_the_option(victoriametrics):
    result = CliRunner().invoke(
        main, ["cost", "--datasource-url", victoriametrics.url, "--profile", PROFILE, "--window", "soon"]
    )
    assert result.exit_code == 2
    assert "'soon'" in result.output and "Traceback" not in result.output


def test_cost_budget_counts_unknown_figures_as_within():
    """A figure the data source does not report (Prometheus has no series count) is never over budget."""
    panel = PanelCost("d", "p", "", 1, True, [QueryCost("A", "instant", "up", samples_scanned=10)])
    assert violations([panel], Budget(panel_series=0, panel_samples=10)) == []
    assert violations([panel], Budget(panel_samples=9)) == ["d: panel 'p': samples scanned 10 over the panel budget 9"]
    assert totals([panel])[0].series_fetched is None


def test_cost_of_an_unreachable_data_source_is_one_error_not_a_traceback():
    from dashgen.demo.vmlauncher import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = CliRunner().invoke(main, ["cost", "--datasource-url", url, "--profile", PROFILE, "--timeout", "2"])
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "cannot connect" in result.output
    assert "Traceback" not in result.output
