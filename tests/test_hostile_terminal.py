"""No control sequence of a server reaches the terminal: a data source that answers every request with an
error body full of escape sequences (OSC 52 clipboard write, screen clear, cursor home, a fake "all ok" line,
C1 CSI, bidi overrides) is queried by ``validate-queries``, ``cost``, ``doctor`` and ``preview``; what they print
holds no control character but the line breaks dashgen writes itself."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from hostile import serve

from dashgen.cli import main

BODY = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[1;1Hall 85 panels ok\r\n\x9b31m\u202egnp.exe\x1b[0m" * 3


def hostile_server(as_json: bool):
    """A data source whose every answer is an error body full of control sequences (text, or a JSON error)."""
    if as_json:
        body = json.dumps({"status": "error", "errorType": BODY, "error": BODY}, ensure_ascii=False).encode()
        return serve(lambda *_: (422, "application/json", body))
    return serve(lambda *_: (500, "text/plain", BODY.encode()))


def _controls(text: str) -> list[str]:
    return sorted(
        {
            repr(ch)
            for ch in text
            if (ch < " " and ch != "\n")
            or "\x7f" <= ch <= "\x9f"
            or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        }
    )


COMMANDS = {
    "validate-queries": ["validate-queries", "--profile", "h20-16", "--timeout", "5"],
    "cost": ["cost", "--profile", "h20-16", "--timeout", "5"],
    "doctor": ["doctor", "--profile", "h20-16", "--timeout", "5"],
    "preview": ["preview", "--profile", "h20-16", "--no-png", "--timeout", "5", "--workers", "2"],
}


@pytest.mark.parametrize("as_json", [False, True], ids=["text-body", "json-error"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_server_control_character_reaches_the_terminal(command, as_json, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with hostile_server(as_json) as url:
        args = [*COMMANDS[command], "--datasource-url", url]
        if command == "preview":
            args += ["--out", str(tmp_path / "out")]
        result = CliRunner().invoke(main, args)
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code in (1, 2), output
    assert "\\x1b" in output or "\\x9b" in output or "HTTP" in output, output  # the error is shown, as text
    assert _controls(output) == [], output[:2000]


@pytest.mark.parametrize("colour", ["always", "never"])
def test_a_diff_of_dashboards_carrying_control_sequences_shows_them_as_text(tmp_path, colour):
    """Titles, queries and descriptions (a live Grafana's too) reach the terminal as text; only the diff's own
    colours are control sequences."""

    def board(version: int) -> dict:
        panel = {
            "id": 1,
            "type": "timeseries",
            "title": f"{BODY} {version}",
            "description": BODY * version,
            "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
            "targets": [{"refId": "A", "expr": f'up{{pod="{BODY}"}} * {version}'}],
        }
        return {"uid": "u", "title": f"{BODY} {version}", "panels": [panel]}

    for version in (1, 2):
        (tmp_path / f"{version}.json").write_text(json.dumps(board(version)), encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "--color", colour])
    assert result.exit_code == 1, result.output
    own = re.sub(r"\x1b\[(?:31|32|0|7|27)m", "", result.output)
    assert _controls(own) == [] and "\\x1b]52" in own, own[:2000]


def test_a_diff_input_error_shows_the_file_s_name_as_text(tmp_path):
    """The error names the file: a name carrying control sequences is shown as text too."""
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "x\x1b]8;;https:evil\x07\u202e.json").write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "old"), str(tmp_path / "new")])
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code == 2 and "x\\x1b]8;;https:evil\\x07\\u202e.json" in output, output
    assert _controls(output) == [], output


def test_lint_shows_a_dashboards_titles_and_file_name_as_text(tmp_path):
    """``dashgen lint`` runs on anyone's dashboard (a pull request's, a peer's): its titles, and the file's own
    name, reach the terminal as text, in the findings and in an error line alike."""
    panel = {"id": 1, "type": "timeseries", "title": BODY, "targets": [{"refId": "A", "expr": "up"}]}
    name = "x\x1b]52;c;ZXZpbA==\x07\u202e.json"
    (tmp_path / name).write_text(json.dumps({"uid": "u", "title": BODY, "panels": [panel]}), encoding="utf-8")
    findings = CliRunner().invoke(main, ["lint", str(tmp_path / name)])
    assert findings.exit_code in (0, 1) and "dashboard" in findings.output, findings.output
    assert _controls(findings.output) == [] and "\\x1b]52" in findings.output, findings.output[:2000]
    (tmp_path / name).write_text("{", encoding="utf-8")
    for argv in (["lint", str(tmp_path / name)], ["diff", str(tmp_path / name), str(tmp_path / name)]):
        error = CliRunner().invoke(main, argv)
        output = error.output + (error.stderr if error.stderr_bytes is not None else "")
        assert error.exit_code == 2 and "not valid JSON" in output, output
        assert _controls(output) == [] and "\\x1b]52" in output, output
