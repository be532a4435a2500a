"""Lint exclusions: an accepted finding needs a rule, a scope and a reason, and is counted, not hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dashgen.cli.lint_cmd import lint_command

DASHBOARD = {
    "title": "Hand-made",
    "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
    "panels": [
        {
            "id": 1,
            "type": "timeseries",
            "title": "Burn rate over 1h",
            "description": "d",
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "fieldConfig": {"defaults": {"unit": "short"}, "overrides": []},
            "targets": [{"refId": "A", "expr": "sum(rate(up[1h]))"}],
        },
        {
            "id": 2,
            "type": "timeseries",
            "title": "Another panel",
            "description": "d",
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "fieldConfig": {"defaults": {"unit": "short"}, "overrides": []},
            "targets": [{"refId": "A", "expr": "sum(rate(up[1h]))"}],
        },
    ],
}


@pytest.fixture
def dashboard(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)  # away from the project's own .dashgen-lint.toml
    path = tmp_path / "d.json"
    path.write_text(json.dumps(DASHBOARD))
    return path


def run(dashboard: Path, config: Path | None, *extra: str):
    args = [str(dashboard), *extra] + (["--config", str(config)] if config else [])
    return CliRunner().invoke(lint_command, args)


def test_without_exclusions_both_fixed_windows_are_reported(dashboard):
    result = run(dashboard, None)
    assert result.output.count("rate-interval") == 2 and "excluded" not in result.output


def test_the_default_config_is_read_from_the_working_directory(dashboard, tmp_path):
    (tmp_path / ".dashgen-lint.toml").write_text('[[exclude]]\nrule = "*"\nreason = "accept all, for the test"\n')
    result = run(dashboard, None)
    assert "rate-interval" not in result.output and "2 finding(s) excluded by .dashgen-lint.toml" in result.output


def test_an_exclusion_hides_only_its_panel_and_is_counted(dashboard, tmp_path):
    config = tmp_path / "lint.toml"
    config.write_text(
        '[[exclude]]\nrule = "rate-interval"\npanel = "Burn rate over *"\nreason = "fixed by definition"\n'
    )
    result = run(dashboard, config)
    assert result.output.count("rate-interval") == 1 and '"Another panel"' in result.output
    assert "1 finding(s) excluded by" in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[exclude]]\nrule = "rate-interval"\n', "exclude[0].reason: required"),
        ('[[exclude]]\nreason = "x"\n', "exclude[0].rule: required"),
        ('[[exclude]]\nrule = "x"\nreason = "y"\ntitle = "z"\n', "exclude[0].title: unknown field"),
        ("[rules]\n", "rules: unknown table"),
        ("exclude = [", "not valid TOML"),
    ],
)
def test_a_bad_exclusions_file_is_an_input_error_naming_file_and_field(dashboard, tmp_path, text, message):
    config = tmp_path / "lint.toml"
    config.write_text(text)
    result = run(dashboard, config)
    assert result.exit_code == 2
    assert str(config) in result.output and message in result.output
