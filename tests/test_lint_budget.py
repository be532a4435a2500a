"""Lint of hostile and huge dashboards (issue 18): every document gets a result or one clear error line,
in bounded time and memory; no expression over the parse budget reaches promql-parser (5,000 ``+ up``
terms crashed the process with SIGSEGV), and walks are iterative."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from child_memory import PRINT_OWN_PEAK_KIB, own_peak_mib
from click.testing import CliRunner

from dashgen.cli.app import main
from dashgen.lint.promql import OverBudget, parse, walk
from dashgen.lint.runner import lint_dashboard

ROOT = Path(__file__).resolve().parent.parent


def _panel_doc(expr: str) -> dict:
    return {
        "title": "t",
        "panels": [{"type": "timeseries", "title": "p", "id": 1, "targets": [{"refId": "A", "expr": expr}]}],
    }


def test_5000_plus_up_terms_never_reach_the_parser_and_become_a_warning_in_a_child_process(tmp_path):
    path = tmp_path / "plus.json"
    path.write_text(json.dumps(_panel_doc("up" + " + up" * 5000)))
    # a child process, so a crash of the parser would show as a signal instead of killing the test run
    run = subprocess.run(
        [sys.executable, "-m", "dashgen", "lint", str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-500:])
    assert "too large to lint" in run.stdout and "5000 terms" in run.stdout


def test_parse_refuses_over_budget_expressions_without_calling_the_parser():
    with pytest.raises(OverBudget):
        parse("(" * 500 + "up" + ")" * 500)
    with pytest.raises(OverBudget):
        parse('up{a="' + "x" * 2_000_000 + '"}')


def test_walk_is_iterative_on_the_deepest_expression_the_budget_allows():
    ast = parse("up" + " + up" * 900)
    assert sum(1 for _ in walk(ast)) == 1801
    order = [type(node).__name__ for node, _ in walk(parse("sum by (a) (rate(x[5m])) / 2"))]
    assert order[0] == "BinaryExpr" and order[1] == "AggregateExpr"


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"panels": [NaN]}', "NaN is not JSON"),
        ('"a string"', "not an object"),
        ("\xff\xfe", "cannot read"),
        ("{" + '"a":' * 70 + "1" + "}" * 70, "not valid JSON"),
    ],
)
def test_a_hostile_file_is_one_clear_error_line_exit_2(tmp_path, text, message):
    path = tmp_path / "d.json"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code == 2, result.output
    assert message in result.output and str(path) in result.output
    assert "Traceback" not in result.output


def test_a_document_over_the_depth_budget_names_the_path():
    doc = {"panels": []}
    node = doc
    for _ in range(80):
        node["x"] = {}
        node = node["x"]
    from dashgen.document import NotADashboard

    with pytest.raises(NotADashboard, match=r"\$\.x\.x.*depth budget"):
        lint_dashboard(doc)


def _spelled_path_problem(doc, max_depth=64):
    """The depth check with every value's path spelled as it is reached (the message the runner must give)."""
    stack = [(doc, "$", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > max_depth:
            return f"{path}: nested more than {max_depth} deep, over the depth budget"
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if len(path) < 200 else path, depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]" if len(path) < 200 else path, depth + 1) for i, v in enumerate(value))
    return None


@pytest.mark.parametrize("seed", range(12))
def test_the_depth_error_names_the_path_however_the_document_nests(seed):
    """Keys of every length (the path stops growing at 200 characters), list indexes, a dict key that is a number
    (an in-memory document): the path is only spelled once a value is over, and must read as if spelled all along."""
    import random

    from dashgen.document import NotADashboard

    chance = random.Random(seed)
    doc: dict = {"panels": []}
    node = doc
    for _ in range(chance.randint(66, 90)):
        key = chance.choice(["x", "panels", "k" * chance.randint(1, 40), 7])
        if chance.random() < 0.4:
            items: list = [None] * chance.randint(1, 3)
            child: dict = {}
            items[chance.randrange(len(items))] = child
            node[key] = items
        else:
            child = node[key] = {}
        node = child
    expected = _spelled_path_problem(doc)
    assert expected is not None
    with pytest.raises(NotADashboard) as raised:
        lint_dashboard(doc)
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    "doc",
    [
        {"panels": {"a": 1}},
        {"panels": [{"type": 1, "targets": "x", "gridPos": "a"}]},
        {"panels": [{"targets": [{"expr": 5}, None, {"expr": ["up"]}]}], "templating": {"list": [1, None]}},
        {"templating": "x", "panels": [None, [], "s"]},
        {"rows": [{"panels": [{"targets": [{"expr": "up"}]}]}]},
    ],
)
def test_wrong_types_get_findings_or_a_clear_error_never_a_traceback(doc):
    from dashgen.document import NotADashboard

    try:
        lint_dashboard(doc)
    except NotADashboard as exc:
        assert str(exc)


def test_lint_of_a_1000_node_profiles_dashboards_is_bounded(tmp_path):
    import re

    text = (ROOT / "profiles" / "video-200.toml").read_text()
    text = re.sub(r"(?m)^name = .*", 'name = "scale-1000"', text, count=1)
    text = re.sub(r"(?m)^nodes = \d+", "nodes = 1000", re.sub(r"(?m)^replicas = \d+", "replicas = 1000", text))
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "scale-1000.toml").write_text(text.replace("{index:02d}", "{index:04d}"))
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["--profiles-dir", str(profiles), "build", "--out", str(out)]).exit_code == 0
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            (f"from dashgen.lint.runner import lint_paths\nlint_paths([{str(out)!r}])\n" + PRINT_OWN_PEAK_KIB),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-500:]
    assert own_peak_mib(run.stderr) < 1024  # under 1 GB (it was 2.9 GB); time: make bench


def test_a_folder_without_dashboards_is_exit_2_not_a_silent_pass(tmp_path):
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert str(tmp_path) in result.output and "no dashboard JSON files" in result.output


@pytest.mark.slow  # 2 s: lints a dashboard of 10x the panels to compare
def test_lint_grows_linearly_with_panels_not_panels_times_queries():
    """A same-run ratio, not a timed test: 10x the panels may cost at most ~20x (linear is 10x; the old
    per-panel scan of every query was 100x)."""

    def seconds(count: int) -> float:
        doc = {
            "title": "t",
            "panels": [{"type": "stat", "title": str(i), "id": i, "targets": [{"expr": "up"}]} for i in range(count)],
        }
        began = time.process_time()
        lint_dashboard(doc)
        return time.process_time() - began

    small, large = min(seconds(2_000) for _ in range(2)), seconds(20_000)
    assert large < 25 * max(small, 0.01)


def test_an_expression_over_budget_is_refused_before_variable_expansion():
    (finding,) = [f for f in lint_dashboard(_panel_doc("${" * 50_000)) if f.rule == "promql-parse"]
    assert "too large to lint" in finding.message
