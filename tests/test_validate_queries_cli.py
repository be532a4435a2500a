"""``dashgen validate-queries``: Grafana's expansion of a target, the exit-code contract (0 ok or
empty, 1 a query failed, 2 usage/input) and the report naming the data source's status and message."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from datasource_stubs import VARIABLES, folder, hostile, json_answer  # noqa: F401 - fixtures

from dashgen.cli.app import main
from dashgen.live.expand import (
    Window,
    calculate_interval,
    expand_target,
    format_duration,
    rate_interval,
    variable_values,
)

WINDOW = Window(end=1_790_000_000.0, length=3600.0)


def test_variables_expand_to_all_value_option_join_and_selection():
    values = variable_values(VARIABLES)
    assert values["node"] == ".+"  # allValue
    assert values["replica"] == r"(a\\|b|c\\|d)"  # no allValue: regex join of the custom options' values
    assert values["stage"] == "(0|1)"  # the default selection, multi
    assert values["one"] == "x.y"  # single value: not regex-escaped
    assert "datasource" not in values


def test_grafana_intervals_rate_interval_formula_and_range():
    assert calculate_interval(3600, 1000, 15) == 15  # 3.6 s rounds to 5 s, below the scrape interval
    assert calculate_interval(6 * 3600, 1000, 1) == 20  # 21.6 s rounds to 20 s
    assert rate_interval(15, 15) == 60  # 4 x scrape wins
    assert rate_interval(60, 15) == 75  # interval + scrape wins
    panel = {"maxDataPoints": 100}
    target = {
        "expr": 'rate(x{node=~"$node"}[$__rate_interval]) / $__range_s + $__range_ms * 0 + '
        "count_over_time(x[$__range]) + $__interval_ms",
        "refId": "A",
    }
    (query,) = expand_target(panel, target, variable_values(VARIABLES), WINDOW, scrape_seconds=15)
    assert query.kind == "range" and query.step == 30  # 3600 / 100 = 36 s -> 30 s
    assert query.expr == ('rate(x{node=~".+"}[1m]) / 3600 + 3600000 * 0 + count_over_time(x[3600s]) + 30000')
    assert format_duration(75) == "75s" and format_duration(0.25) == "250ms"


def test_instant_and_range_flags_choose_the_queries():
    panel = {}
    instant = expand_target(panel, {"expr": "up", "instant": True, "range": False}, {}, WINDOW)
    assert [(q.kind, q.end) for q in instant] == [("instant", WINDOW.end)]
    both = expand_target(panel, {"expr": "up", "instant": True, "range": True}, {}, WINDOW)
    assert [q.kind for q in both] == ["instant", "range"]
    assert expand_target(panel, {"expr": "up", "hide": True}, {}, WINDOW) == []


def test_a_failing_query_exits_1_and_names_status_and_message(victoriametrics, folder):  # noqa: F811
    path = folder('up{node=~"$node"}', "sum(rate(up[5m])) by (", "no_such_metric_xyz")
    result = CliRunner().invoke(
        main,
        ["validate-queries", "--datasource-url", victoriametrics.url, "--dashboards", str(path), "--format", "json"],
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)["results"]
    states = {p["title"]: p for p in report["panels"]}
    assert states["p1"]["status"] == "error"
    target = states["p1"]["targets"][0]
    assert target["error_status"] in (400, 422), target
    assert "sum(rate(up" in target["error_message"] or "cannot parse" in target["error_message"], target
    assert states["p2"]["status"] == "empty"
    reason = states["p2"]["targets"][0]["reasons"][0]
    assert reason["code"] == 4 and "no known scrape job" in reason["text"]


def test_an_empty_recorded_series_is_explained_by_the_rule_file_not_a_scrape_job(victoriametrics, folder):  # noqa: F811
    """The per-GPU table and the Now row read dashgen's recorded series: on a store without the rule evaluator their
    reason names the rule file to load, not a failed collection."""
    path = folder('max by (node, gpu) (max_over_time(node_gpu:dashgen_gpu_window_power:max{cluster="nowhere"}[1h]))')
    result = CliRunner().invoke(
        main,
        ["validate-queries", "--datasource-url", victoriametrics.url, "--dashboards", str(path), "--format", "json"],
    )
    report = json.loads(result.output)["results"]
    (reason,) = report["panels"][0]["targets"][0]["reasons"]
    assert reason["code"] == 4 and "dashgen's recording rule" in reason["text"] and "rule evaluator" in reason["text"]
    assert "no known scrape job" not in reason["text"]


def test_empty_results_exit_0_with_text_report(victoriametrics, folder):  # noqa: F811
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            victoriametrics.url,
            "--dashboards",
            str(folder("no_such_metric_xyz")),
            "--window",
            "30m",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "empty" in result.output and "1 empty" in result.output


def test_unreachable_datasource_is_a_query_error(folder):  # noqa: F811
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            "http://127.0.0.1:9",
            "--dashboards",
            str(folder("up")),
            "--timeout",
            "2",
        ],
    )
    assert result.exit_code == 1
    assert "no answer" in result.output or "HTTP None" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["--window", "an hour"],
        ["--at", "yesterday-ish"],
        ["--profile", "no-such-profile"],
        ["--dashboards", "/nonexistent-folder"],
    ],
)
def test_usage_and_input_errors_exit_2(args):
    result = CliRunner().invoke(main, ["validate-queries", "--datasource-url", "http://127.0.0.1:9", *args])
    assert result.exit_code == 2, result.output


def test_a_url_without_scheme_is_an_input_error():
    result = CliRunner().invoke(main, ["validate-queries", "--datasource-url", "vm:8428", "--profile", "h20-16"])
    assert result.exit_code == 2


# -- hostile data sources on loopback (issue 18) ------------------------------------------------------


def test_credentials_in_the_datasource_url_never_reach_text_or_json_output(hostile, folder):  # noqa: F811
    server = hostile(lambda path: (500, b'{"status":"error","error":"boom for http://user:s3cret@x/"}'))
    url = server.url.replace("http://", "http://user:s3cret@")
    for fmt in ("text", "json"):
        result = CliRunner().invoke(
            main, ["validate-queries", "--datasource-url", url, "--format", fmt, "--dashboards", str(folder("up"))]
        )
        assert result.exit_code == 1, result.output
        assert "s3cret" not in result.output and "user:" not in result.output, result.output


def test_a_server_dripping_one_byte_a_second_is_cut_off_by_the_total_deadline_per_request(hostile, folder):  # noqa: F811
    import time

    server = hostile(drip=1.0)
    began = time.monotonic()
    result = CliRunner().invoke(
        main,
        ["validate-queries", "--datasource-url", server.url, "--timeout", "1.5", "--dashboards", str(folder("up"))],
    )
    assert result.exit_code == 1, result.output
    assert time.monotonic() - began < 10
    assert "total deadline" in result.output or "timed out" in result.output, result.output


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"resultType": "vector", "result": "72 series"}, "not a list"),
        ({"resultType": "seven", "result": []}, "resultType"),
        ("not an object", "data is str"),
        ({"resultType": "vector", "result": [1, 2]}, "result[0]"),
        ({"resultType": "scalar", "result": {"a": 1}}, "pair"),
    ],
)
def test_a_malformed_answer_is_a_query_error_not_ok_and_not_a_traceback(hostile, folder, data, expected):  # noqa: F811
    server = hostile(lambda path: json_answer(data))
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            server.url,
            "--format",
            "json",
            "--dashboards",
            str(folder("up", "up")),
        ],
    )
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    report = json.loads(result.output)["results"]
    messages = [t["error_message"] for p in report["panels"] for t in p["targets"]]
    assert all(expected in m for m in messages), messages


def test_a_dead_datasource_stops_after_n_consecutive_connection_failures(folder):  # noqa: F811
    exprs = [f'up{{i="{i}"}}' for i in range(40)]
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            "http://127.0.0.1:9",
            "--workers",
            "1",
            "--max-connection-failures",
            "3",
            "--timeout",
            "2",
            "--format",
            "json",
            "--dashboards",
            str(folder(*exprs)),
        ],
    )
    assert result.exit_code == 1
    messages = [t["error_message"] for p in json.loads(result.output)["results"]["panels"] for t in p["targets"]]
    assert sum("cannot connect" in m for m in messages) == 3
    assert sum("fail fast" in m for m in messages) == 37


def test_the_command_deadline_bounds_the_whole_run(hostile, folder):  # noqa: F811
    import time

    server = hostile(drip=1.0)
    began = time.monotonic()
    result = CliRunner().invoke(
        main,
        [
            "validate-queries",
            "--datasource-url",
            server.url,
            "--timeout",
            "1",
            "--deadline",
            "2",
            "--workers",
            "1",
            "--max-connection-failures",
            "0",
            "--format",
            "json",
            "--dashboards",
            str(folder(*["up"] * 30)),
        ],
    )
    assert result.exit_code == 1
    assert time.monotonic() - began < 15
    messages = [t["error_message"] for p in json.loads(result.output)["results"]["panels"] for t in p["targets"]]
    assert any("deadline" in m for m in messages)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e400", "soon"])
def test_timeout_and_deadline_must_be_positive_finite_seconds(value):
    for option in ("--timeout", "--deadline"):
        result = CliRunner().invoke(main, ["validate-queries", "--datasource-url", "http://127.0.0.1:9", option, value])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
