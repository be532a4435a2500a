"""``dashgen lint`` command: output lines, JSON shape, rule selection and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dashgen.cli.lint_cmd import lint_command
from dashgen.render.impossible import impossible_mappings

DS = {"type": "prometheus", "uid": "${datasource}"}


def _dashboard(unit: str = "percent", maximum: float | None = None) -> dict[str, Any]:
    # S38's red mappings as dashgen renders them: the findings below are S5's alone
    defaults: dict[str, Any] = {"unit": unit, "min": 0, "mappings": list(impossible_mappings(unit, 0, maximum))}
    if maximum is not None:
        defaults["max"] = maximum
    return {
        "title": "Disks",
        "uid": "disks",
        "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
        "panels": [
            {
                "id": 7,
                "type": "timeseries",
                "title": "Disk busy",
                "description": "Share of time the cache disk was busy (node-exporter).",
                "datasource": DS,
                "fieldConfig": {"defaults": defaults, "overrides": []},
                "targets": [
                    {
                        "refId": "A",
                        "datasource": DS,
                        "expr": "100 * rate(node_disk_io_time_seconds_total[$__rate_interval])",
                        "legendFormat": "{{node}} {{device}}",
                    }
                ],
            }
        ],
    }


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_error_finding_prints_file_panel_rule_and_exits_1(tmp_path: Path) -> None:
    f = _write(tmp_path / "disks.json", _dashboard())
    result = CliRunner().invoke(lint_command, [str(f)])
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith(f'{f}: panel "Disk busy": S5: ')
    assert result.output.splitlines()[-1].startswith("1 finding(s) in 1 file(s): 1 error(s)")


def test_clean_folder_exits_0(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", _dashboard(maximum=100))
    result = CliRunner().invoke(lint_command, [str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "0 finding(s) in 1 file(s): 0 error(s), 0 warning(s), 0 info"


def test_dashboard_level_finding_names_the_dashboard(tmp_path: Path) -> None:
    doc = _dashboard(maximum=100)
    doc["templating"]["list"] = []
    for p in doc["panels"]:  # default data source everywhere: warnings only
        p.pop("datasource")
        for t in p["targets"]:
            t.pop("datasource")
    f = _write(tmp_path / "a.json", doc)
    result = CliRunner().invoke(lint_command, [str(f)])
    assert f'{f}: dashboard "Disks": datasource-variable: ' in result.output
    assert result.exit_code == 0  # a warning does not fail the run


def test_json_format_lists_finding_objects(tmp_path: Path) -> None:
    f = _write(tmp_path / "disks.json", _dashboard())
    result = CliRunner().invoke(lint_command, ["--format", "json", str(f)])
    assert result.exit_code == 1
    data = json.loads(result.output)["results"]["findings"]
    assert data == [
        {
            "file": str(f),
            "dashboard": "Disks",
            "panel": "Disk busy",
            "panel_id": 7,
            "rule": "S5",
            "severity": "error",
            "message": data[0]["message"],
        }
    ]
    assert "percent" in data[0]["message"]


def test_ignore_and_rule_options_select_rules(tmp_path: Path) -> None:
    f = _write(tmp_path / "disks.json", _dashboard())
    assert CliRunner().invoke(lint_command, ["--ignore", "S5", str(f)]).exit_code == 0
    only = CliRunner().invoke(lint_command, ["--rule", "panel-units", str(f)])
    assert only.exit_code == 0 and "S5" not in only.output
    bad = CliRunner().invoke(lint_command, ["--rule", "S99", str(f)])
    assert bad.exit_code == 2 and "S99" in bad.output


def test_unreadable_input_exits_2_naming_the_file(tmp_path: Path) -> None:
    f = tmp_path / "broken.json"
    f.write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(lint_command, [str(f)])
    assert result.exit_code == 2
    assert str(f) in result.output
    missing = CliRunner().invoke(lint_command, [str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "nope.json" in missing.output


def test_json_that_is_not_a_dashboard_exits_2(tmp_path: Path) -> None:
    f = _write(tmp_path / "list.json", [1, 2])
    result = CliRunner().invoke(lint_command, [str(f)])
    assert result.exit_code == 2 and "list.json" in result.output


HOSTILE = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \x1b[2J\x9b31m\u202egnp.exe\nall 0 finding(s)"


def _controls(text: str) -> list[str]:
    return sorted({repr(ch) for ch in text if (ch < " " and ch != "\n") or "\x7f" <= ch <= "\x9f" or ch == "\u202e"})


def test_a_dashboard_s_control_sequences_are_shown_as_text_one_line_per_finding(tmp_path: Path) -> None:
    document = _dashboard()
    document["title"] = HOSTILE
    document["panels"][0]["title"] = HOSTILE
    f = _write(tmp_path / "hostile.json", document)
    result = CliRunner().invoke(lint_command, [str(f)])
    findings = [line for line in result.output.splitlines() if line.startswith(str(f))]
    assert len(findings) >= 1 and result.output.count("\n") == len(findings) + 1, result.output
    assert all("\\x1b]8;;https://evil.example" in line for line in findings), result.output
    assert _controls(result.output) == [], result.output


def test_a_file_name_that_reads_as_a_workflow_command_starts_no_line_with_it(tmp_path: Path, monkeypatch) -> None:
    """A relative path ``::error::x.json`` begins each finding's line: its first colon is shown as ``\\x3a``, so a
    CI runner reads no command in lint's output (the one escape of a finding's line does this too)."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "::error::x.json", _dashboard())  # a percent axis without its max: S5's finding to print
    result = CliRunner().invoke(lint_command, ["::error::x.json"])
    findings = [line for line in result.output.splitlines() if "x.json" in line]
    assert findings and all(line.startswith("\\x3a:error::x.json: ") for line in findings), result.output
    assert [line for line in result.output.splitlines() if line.lstrip().startswith("::")] == [], result.output


def test_a_file_name_s_control_sequences_are_shown_as_text_in_an_error(tmp_path: Path) -> None:
    f = tmp_path / "a\x1b]8;;https:evil\x07\u202e.json"
    f.write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(lint_command, [str(f)])
    assert result.exit_code == 2 and "\\x1b]8;;https:evil\\x07" in result.output, result.output
    assert _controls(result.output) == [], result.output


def test_json_output_is_valid_utf8_json_whatever_the_file_name_and_titles_hold(tmp_path: Path) -> None:
    import os

    document = _dashboard()
    document["panels"][0]["title"] = HOSTILE
    name = os.fsdecode(b"bad\xff\x9b.json")  # a name that is not UTF-8, as Python reads it from the folder
    f = _write(tmp_path / name, document)
    result = CliRunner().invoke(lint_command, ["--format", "json", str(f)])
    assert result.exit_code == 1
    data = json.loads(result.stdout_bytes.decode("utf-8"))  # strict UTF-8: a raw 0xff byte fails here
    messages = [error["message"] if isinstance(error, dict) else error for error in data["errors"]]
    assert len(messages) >= 1 and all(message.startswith(str(f)) and HOSTILE in message for message in messages)
    assert _controls(result.stdout_bytes.decode("utf-8").replace("\n", "")) == []


MALFORMED = {
    "panels-a-string": ({"panels": "x"}, "panels: expected a list, found a string"),
    "panel-a-number": ({"panels": [1]}, "panels[0]: expected an object, found int"),
    "targets-a-string": ({"panels": [{"type": "stat", "targets": "up"}]}, "panels[0].targets: expected a list"),
    "grid-off-the-grid": (
        {"panels": [{"type": "stat", "gridPos": {"x": 0, "y": 0, "w": 30, "h": 4}}]},
        "panels[0].gridPos.w: 30 is outside Grafana's 24-column grid",
    ),
    "templating-list-a-string": ({"templating": {"list": "x"}}, "templating.list: expected a list"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_dashboard_of_a_shape_grafana_would_refuse_is_an_input_error_naming_the_field(name, tmp_path):
    """Lint read ``"panels": "x"``, a panel that is a number or queries given as a string as no panels or no
    queries, and passed (exit 0); the import's shape check now runs first: exit 2, the file and field named."""
    document, message = MALFORMED[name]
    (tmp_path / f"{name}.json").write_text(json.dumps(document))
    result = CliRunner().invoke(lint_command, [str(tmp_path / f"{name}.json"), "--format", "json"])
    assert result.exit_code == 2, result.output
    (error,) = json.loads(result.stdout)["errors"]
    assert error["message"].startswith(f"{tmp_path / name}.json: {message}"), error
