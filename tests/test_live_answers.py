"""What a data source answers is checked before it is believed: sample values that are not numbers are a query
error (never "ok"); an answer of a million series is refused by its count before it is decoded (bounded memory);
``cost`` against a store that returns no statistics says the budget was not checked (never "within budget")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from child_memory import PRINT_OWN_PEAK_KIB, own_peak_mib
from click.testing import CliRunner
from datasource_stubs import folder, hostile, json_answer  # noqa: F401 - fixtures

from dashgen.cli import main
from dashgen.live.datasource import MAX_SERIES


def _validate(url: str, path) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(
        main, ["validate-queries", "--datasource-url", url, "--format", "json", "--dashboards", str(path)]
    )
    targets = [t for p in json.loads(result.output)["results"]["panels"] for t in p["targets"]]
    return result.exit_code, targets


@pytest.mark.parametrize(
    "data",
    [
        {"resultType": "vector", "result": [{"metric": {"a": "b"}, "value": [1, "abc"]}]},
        {"resultType": "vector", "result": [{"metric": {"a": "b"}, "value": [1, None]}]},
        {"resultType": "matrix", "result": [{"metric": {"a": "b"}, "values": [[1, "x"], [2, {"v": 1}]]}]},
        {"resultType": "scalar", "result": [1, "many"]},
    ],
    ids=["word", "null", "matrix-of-words", "scalar-word"],
)
def test_sample_values_that_are_not_numbers_are_a_query_error(hostile, folder, data):  # noqa: F811
    server = hostile(lambda path: json_answer(data))
    code, targets = _validate(server.url, folder("up"))
    assert code == 1 and [t["status"] for t in targets] == ["error"], targets
    assert "numeric sample value" in targets[0]["error_message"]


def test_numbers_nan_and_infinities_are_values(hostile, folder):  # noqa: F811
    data = {
        "resultType": "vector",
        "result": [{"metric": {"a": str(i)}, "value": [1, v]} for i, v in enumerate(("NaN", "+Inf", "1.5"))],
    }
    server = hostile(lambda path: json_answer(data))
    code, targets = _validate(server.url, folder("up"))
    assert code == 0 and [t["status"] for t in targets] == ["ok"] and targets[0]["series"] == 3


def test_an_answer_of_a_million_series_is_refused_by_count_in_bounded_memory(hostile, folder):  # noqa: F811
    item = b'{"metric":{"pod":"p%07d"},"value":[1,"1"]}'
    body = (
        b'{"status":"success","data":{"resultType":"vector","result":['
        + b",".join(item % i for i in range(1_000_000))
        + b"]}}"
    )
    server = hostile(lambda path: (200, body))
    script = (
        "import sys\n"
        "from dashgen.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n" + PRINT_OWN_PEAK_KIB + "sys.exit(code)\n"
    )
    path = folder("up")
    run = subprocess.run(
        [sys.executable, "-c", script, "validate-queries", "--datasource-url", server.url, "--dashboards", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"1,000,000 series, over the limit of {MAX_SERIES:,}" in run.stdout + run.stderr
    rss_mib = own_peak_mib(run.stderr)
    assert rss_mib < 400, rss_mib  # decoded, this answer took 660 MiB (2.1 GiB with real labels)


def test_cost_without_statistics_never_says_within_budget(hostile):  # noqa: F811
    data = {"resultType": "vector", "result": [{"metric": {"a": "b"}, "value": [1, "1"]}]}
    server = hostile(lambda path: json_answer(data))
    args = ["cost", "--datasource-url", server.url, "--profile", "h20-16", "--timeout", "5"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 1, text.output
    assert "within budget" not in text.output and "budget not checked" in text.output, text.output[-1500:]
    envelope = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    assert envelope["exit_code"] == 1 and envelope["results"][0]["unmeasured"]
    assert any("budget not checked" in e["message"] for e in envelope["errors"])
