"""What the pull-request comment shows a reviewer: alert-rule changes (added / removed / expression, threshold,
``for``, severity), an added panel's unit, description and queries, and the lint findings listed (bounded)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from gitrepo import commit_all, git

from dashgen.cli.app import main
from dashgen.diff.rule_changes import rule_changes

RULES = """groups:
- name: slo
  rules:
  - alert: TTFTBurn
    expr: rate(x[5m]) > 0.9 * 14.4
    for: 2m
    labels: {severity: critical}
  - alert: Old
    expr: up == 0
    for: 5m
    labels: {severity: warning}
"""


def test_rule_changes_name_each_kind_of_change():
    new = (
        RULES.replace("0.9 * 14.4", "0.95 * 14.4")
        .replace("for: 2m", "for: 5m")
        .replace("critical", "warning")
        .replace("alert: Old", "alert: New")
    )
    lines = [c.line() for c in rule_changes({"a.yml": RULES}, {"a.yml": new})]
    assert lines == [
        "alert New (a.yml) added: severity warning, for 5m; expression up == 0",
        "alert Old (a.yml) removed",
        "alert TTFTBurn (a.yml) changed: threshold 0.9 → 0.95; for 2m → 5m; severity critical → warning",
    ]
    rewritten = RULES.replace("rate(x[5m])", "rate(y[5m])")
    (change,) = rule_changes({"a.yml": RULES}, {"a.yml": rewritten})
    assert change.details == ("expression rate(x[5m]) > 0.9 * 14.4 → rate(y[5m]) > 0.9 * 14.4",)
    assert rule_changes({"a.yml": RULES}, {"a.yml": RULES}) == []
    assert [c.kind for c in rule_changes({}, {"a.yml": RULES})] == ["added", "added"]


def dashgen(cwd: Path, *args: str):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), env={"GRAFANA_URL": ""})
    finally:
        os.chdir(old)


@pytest.fixture()
def team(tmp_path: Path) -> Path:
    assert dashgen(tmp_path, "init", "team", "--from", "h20-16").exit_code == 0
    repo = tmp_path / "team"
    git(repo, "init", "-q")
    commit_all(repo, "dashboards as code")
    return repo


def test_the_comment_shows_rule_changes_and_an_added_panel_s_detail(team):
    profile = team / "profiles" / "h20-16.toml"
    text = profile.read_text(encoding="utf-8").replace("objective = 0.95", "objective = 0.99")
    text = text.replace("[dashboard]\n", '[dashboard]\nextra_modules = ["example_panels"]\n', 1)
    if "extra_modules" not in text:
        text += '\n[dashboard]\nextra_modules = ["example_panels"]\n'
    profile.write_text(text, encoding="utf-8")
    assert dashgen(team, "build").exit_code == 0 and dashgen(team, "rules").exit_code == 0
    result = dashgen(team, "check", "--base", "HEAD", "--format", "markdown")
    assert result.exit_code == 0, result.output[-3000:]
    comment = result.output
    assert "**Alert rules changed against `HEAD`:" in comment
    rule_lines = [line for line in comment.splitlines() if line.startswith("- `alert ") and "h20-16.yml" in line]
    assert rule_lines and any(
        "changed:" in line and ("threshold" in line or "expression" in line) for line in rule_lines
    )
    added = comment[comment.index("panel added") :]
    assert "- query `" in added, added[:3000]  # the added panel's queries, each a code span
    assert "type `" in added


def test_lint_findings_are_listed_bounded_each_an_inert_code_span():
    from dashgen.cli import check

    lines = check._listed("Lint findings (not errors): 30", [f"warning {i} `x`" for i in range(30)], bounded=True)
    assert lines[1] == "**Lint findings (not errors): 30**"
    assert sum(line.startswith("- `warning") for line in lines) == check.PROBLEMS_SHOWN
    assert lines[-1] == f"- … {30 - check.PROBLEMS_SHOWN} more in the full report"
    assert "- `warning 0 'x'`" in lines  # a backtick cannot end the code span
    assert len(check._listed("all", [f"w{i}" for i in range(30)], bounded=False)) == 3 + 30
    assert check._listed("none", [], bounded=True) == []


def test_a_mistyped_command_or_profile_field_gets_a_did_you_mean(tmp_path):
    result = CliRunner().invoke(main, ["publsh"])
    assert result.exit_code == 2 and "Did you mean 'publish'?" in result.output
    assert "Did you mean" not in CliRunner().invoke(main, ["zzzzzz"]).output  # nothing close: no guess
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    text = (Path(__file__).resolve().parent.parent / "profiles" / "h20-16.toml").read_text(encoding="utf-8")
    (profiles / "h20-16.toml").write_text(text.replace("node_name_format", "node_name_fromat"), encoding="utf-8")
    result = CliRunner().invoke(main, ["--profiles-dir", str(profiles), "build", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "cluster.node_name_fromat: unknown field (did you mean 'node_name_format'?" in result.output


def test_a_whole_file_problem_names_the_file_and_no_placeholder_field(tmp_path):
    (tmp_path / "broken.toml").write_text("name = \n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--profiles-dir", str(tmp_path), "build", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'broken.toml'}: not valid TOML" in result.output
    missing = CliRunner().invoke(main, ["--profiles-dir", str(tmp_path), "build", "--profile", "nope"])
    assert missing.exit_code == 2 and "nope.toml: no such profile" in missing.output
    assert "<file>" not in result.output + missing.output and "<toml>" not in result.output


def test_the_profile_reference_lists_every_label_role_a_profile_can_set():
    from dashgen.deployment.model import DEFAULT_LABELS

    readme = (Path(__file__).resolve().parent.parent / "docs" / "profiles.md").read_text(encoding="utf-8")
    assert DEFAULT_LABELS
    for role, default in DEFAULT_LABELS.items():
        assert f"`{role}` (`{default}`)" in readme, role


def test_the_demo_s_progress_prints_lines_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    from dashgen.demo import server

    monkeypatch.setattr(server, "LINE_EVERY", 0.0)
    with server._progress("healthy: series") as advance:
        advance(3)
        advance(2)
    err = capsys.readouterr().err
    assert "healthy: series: 3 so far" in err and "healthy: series: 5 done" in err
