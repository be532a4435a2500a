"""Every command's ``--format json`` is one envelope, ``{"command", "ok", "exit_code", "results", "errors"}``,
valid against one JSON Schema (``dashgen/data/json-envelope.schema.json``, documented in docs/json-output.md),
on success, on a failed check and on an input error; and the exit code inside is the process's.

The commands that talk to Grafana run against the stand-in (tests/standin) on 127.0.0.1; the data-source
commands against 127.0.0.1 port 9 (refused at once)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from local_http import running
from publishing import TOKEN, UID, grafana12_standin, run, work_folder
from standin import GrafanaStandin

from dashgen.cli.app import COMMANDS, load_command, main
from dashgen.cli.output import ENVELOPE_KEYS

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads(files("dashgen").joinpath("data/json-envelope.schema.json").read_text(encoding="utf-8"))
DEAD = "http://127.0.0.1:9"


def json_commands() -> set[str]:
    """Every command whose --format accepts json."""
    found = set()
    for name in COMMANDS:
        for param in load_command(name).params:
            if "--format" in getattr(param, "opts", ()) and "json" in getattr(param.type, "choices", ()):
                found.add(name)
    return found


def assert_envelope(stdout: str, exit_code: int, command: str) -> dict:
    data = json.loads(stdout)
    jsonschema.validate(data, SCHEMA)
    assert tuple(sorted(data)) == tuple(sorted(ENVELOPE_KEYS))
    assert data["command"] == command and data["exit_code"] == exit_code and data["ok"] is (exit_code == 0)
    return data


grafana = pytest.fixture(scope="module")(grafana12_standin)


class _Sink(BaseHTTPRequestHandler):
    """Accepts every import (204), as VictoriaMetrics' /api/v1/import does."""

    def _ok(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(204)
        self.end_headers()

    do_POST = do_GET = _ok

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def sink():
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _Sink)) as url:
        yield url


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    return work_folder(tmp_path)


def _invoke(work: Path, *args: str) -> tuple[str, int]:
    result = CliRunner().invoke(
        main, ["--profiles-dir", str(work / "profiles"), *args], env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""}
    )
    assert "Traceback" not in result.output, result.output
    return result.stdout, result.exit_code


def local_cases(work: Path, sink: str) -> dict[str, list[list[str]]]:
    out = str(work / "out")
    dashboards = ROOT / "dashboards" / "h20-16" / "dg-h20-16-cluster.json"
    return {
        "init": [
            ["init", str(work / "team"), "--format", "json"],
            ["init", str(work / "team2"), "--from", "nope", "--format", "json"],
        ],
        "build": [["build", "--profile", "h20-16", "--out", out, "--format", "json"]],
        "profiles": [["profiles", "--format", "json"]],
        "rules": [
            ["rules", "--out", out, "--format", "json"],
            ["rules", "--out", out, "--format", "vmalert", "--format", "json"],
        ],
        "export": [["export", "--profile", "h20-16", "--out", out, "--format", "configmap", "--format", "json"]],
        "index": [["index", "--out", str(work / "panels.md"), "--format", "json"]],
        "lint": [["lint", str(dashboards), "--format", "json"], ["lint", str(work / "nothing"), "--format", "json"]],
        "diff": [
            ["diff", str(dashboards), str(dashboards), "--format", "json"],
            ["diff", str(dashboards), str(work / "missing.json"), "--format", "json"],
        ],
        "check": [["check", "--dashboards", str(work / "empty"), "--format", "json"]],
        "validate-queries": [
            ["validate-queries", "--datasource-url", DEAD, "--profile", "h20-16", "--timeout", "2", "--format", "json"]
        ],
        "preview": [
            [
                "preview",
                "--datasource-url",
                DEAD,
                "--profile",
                "h20-16",
                "--timeout",
                "2",
                "--no-png",
                "--format",
                "json",
            ],
            ["preview", "--datasource-url", DEAD, "--var", "no-equals-sign", "--format", "json"],
        ],
        "demo-data": [
            ["demo-data", "--profile", "h20-16", "--url", DEAD, "--timeout", "2", "--hours", "0.1", "--format", "json"],
            ["demo-data", "--profile", "h20-16", "--url", sink, "--hours", "0.05", "--no-record", "--format", "json"],
        ],
        "cost": [
            ["cost", "--datasource-url", DEAD, "--profile", "h20-16", "--timeout", "2", "--format", "json"],
            ["cost", "--datasource-url", DEAD, "--window", "soon", "--format", "json"],
        ],
        "doctor": [
            ["doctor", "--datasource-url", DEAD, "--profile", "h20-16", "--timeout", "2", "--format", "json"],
            ["doctor", "--datasource-url", DEAD, "--write", "--format", "json"],
        ],
        "import": [
            [
                "import",
                str(ROOT / "tests" / "fixtures" / "dashboards" / "etcd__etcd-2020.json"),
                "-o",
                str(work / "m.py"),
                "--format",
                "json",
            ]
        ],
    }


GRAFANA_COMMANDS = {"publish", "rollback", "history", "drift"}


def test_every_local_command_json_is_the_one_envelope(work, sink):
    cases = local_cases(work, sink)
    missing = json_commands() - set(cases) - GRAFANA_COMMANDS
    assert not missing, f"give these commands a case here: {sorted(missing)}"
    codes, seen = set(), set()
    for command, invocations in cases.items():
        for args in invocations:
            stdout, code = _invoke(work, *args)
            data = assert_envelope(stdout, code, command)
            codes.add(code)
            seen.add((command, code))
            if command == "demo-data" and code == 0:
                assert data["results"]["series"] > 0 and data["results"]["profile"] == "h20-16"
            if code:
                assert data["errors"], (command, args, data)
    assert codes == {0, 1, 2}, "the cases cover success, a failed check and an input error"
    assert {("demo-data", 0), ("demo-data", 1), ("lint", 2), ("diff", 2)} <= seen, seen


def _grafana(work: Path, grafana: GrafanaStandin, *args: str) -> tuple[str, int, str]:
    result = CliRunner().invoke(
        main,
        [*args, "--grafana-url", grafana.url, "--ledger", str(work / "ledger.jsonl"), "--timeout", "2"],
        env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""},
    )
    assert "Traceback" not in result.output, result.output
    return result.stdout, result.exit_code, result.stderr


def test_grafana_commands_json_is_the_one_envelope(work, grafana):
    for args in (["--dry-run"], []):
        result = run(work, grafana, *args, "--format", "json")
        assert_envelope(result.stdout, result.exit_code, "publish")
    stdout, code, _ = _grafana(work, grafana, "history", UID, "--format", "json")
    assert assert_envelope(stdout, code, "history")["results"]["versions"]
    stdout, code, _ = _grafana(work, grafana, "drift", "--format", "json")
    assert assert_envelope(stdout, code, "drift")["results"]["drift"] is False
    stdout, code, _ = _grafana(
        work, grafana, "rollback", UID, "--to", "feedbeef", "--format", "json", "--backup-dir", str(work / "backups")
    )
    data = assert_envelope(stdout, code, "rollback")
    assert code == 2 and "feedbeef" in data["errors"][0]["message"]


def test_an_input_error_under_json_is_an_envelope_on_stdout_and_one_line_on_stderr(work):
    (work / "profiles" / "h20-16.toml").write_text("name = 3\n")
    result = CliRunner().invoke(main, ["--profiles-dir", str(work / "profiles"), "build", "--format", "json"])
    data = assert_envelope(result.stdout, 2, "build")
    assert "h20-16.toml" in data["errors"][0]["message"]
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output


def test_a_usage_error_under_json_is_an_envelope_too(work):
    stdout, code = _invoke(work, "rules", "--format", "json", "--label", "novalue")
    data = assert_envelope(stdout, 2, "rules")
    assert code == 2 and "--label" in data["errors"][0]["message"]


@pytest.mark.parametrize(
    "words",
    [
        ["lint", "--bogus", "--format", "json"],
        ["lint", "--format=json", "--bogus"],
        ["publish", "--format", "json", "--jobs", "many"],
        ["build", "--format", "json", "a", "b"],
    ],
)
def test_a_parse_time_usage_error_under_json_is_an_envelope_too(work, words):
    """An unknown option or a bad value fails before the command reads --format: the typed words still ask for
    JSON, so a CI parsing stdout gets the envelope with exit 2, not click's usage text alone."""
    stdout, code = _invoke(work, *words)
    data = assert_envelope(stdout, 2, words[0])
    assert code == 2 and data["errors"]


def test_a_usage_error_without_json_prints_no_envelope(work):
    stdout, code = _invoke(work, "lint", "--bogus")
    assert code == 2 and "{" not in stdout


def test_unreachable_data_source_is_summarised_by_cause_not_one_line_per_query(work):
    result = CliRunner().invoke(
        main, ["--profiles-dir", str(work / "profiles"), "validate-queries", "--datasource-url", DEAD, "--timeout", "2"]
    )
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) < 12, result.stdout
    assert any("x cannot connect" in line for line in lines) and any("x not run" in line for line in lines)


def test_insecure_warns_once(work, grafana):
    assert run(work, grafana).exit_code == 0
    _stdout, code, stderr = _grafana(work, grafana, "history", UID, "--insecure")
    assert code == 0, stderr
    assert stderr.count("verification is OFF") == 1, stderr


def test_insecure_silences_the_library_for_that_command_only(work, grafana, caplog):
    """A program that runs the CLI in-process and then uses the client itself still hears its own warning."""
    import logging

    from dashgen.grafana.client import GrafanaClient
    from dashgen.net.http import InsecureTLSWarning

    _stdout, code, stderr = _grafana(work, grafana, "history", UID, "--insecure")
    assert code in (0, 1), stderr
    assert not [f for name in ("dashgen.net", "dashgen.grafana") for f in logging.getLogger(name).filters]
    with pytest.warns(InsecureTLSWarning, match="verification is OFF"):
        GrafanaClient("https://grafana.example.com", token=TOKEN, insecure=True).close()
    assert "verification is OFF" in caplog.text


def test_a_data_source_s_infinity_leaves_the_envelope_valid_json(work):
    """Python's JSON reader takes a server's ``Infinity`` and ``NaN``; JSON has neither: written as null."""
    from hostile import serve

    answer = (
        b'{"status":"success","data":{"resultType":"vector","result":[]},'
        b'"trace":{"duration_msec":Infinity,"message":"fetch unique series=3, samples=7"}}'
    )
    with serve(lambda *_: (200, "application/json", answer)) as url:
        stdout, code = _invoke(
            work, "cost", "--profile", "h20-16", "--datasource-url", url, "--timeout", "5", "--format", "json"
        )

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    data = json.loads(stdout, parse_constant=refuse)
    assert code == data["exit_code"]
    assert_envelope(stdout, code, "cost")


# an input error raised through the group's boundary (import) and one a command reports itself (lint)
ERROR_PATHS = {
    "boundary": lambda path: ["import", path, "-o", "out.py", "--format", "json"],
    "fail_input": lambda path: ["lint", path, "--format", "json"],
}


@pytest.mark.parametrize("where", sorted(ERROR_PATHS))
def test_an_error_has_one_json_form_raw_text_redacted_and_stderr_shown_as_text(where, tmp_path, monkeypatch):
    """The boundary put terminal-escaped text (``\\x1b``) into the envelope while ``fail_input`` put the raw
    message there, unredacted: both now carry the message itself as a JSON string, credentials redacted; stderr
    shows it as text."""
    monkeypatch.chdir(tmp_path)
    path = "board\x1b[2J?token=hunter2&.json"
    result = CliRunner().invoke(main, ERROR_PATHS[where](path))
    assert result.exit_code == 2, result.output
    (error,) = json.loads(result.stdout)["errors"]
    assert error["message"].startswith("board\x1b[2J?token=***&.json: "), error
    assert "\x1b" not in result.stdout and "hunter2" not in result.stdout  # the escape is JSON's own: \u001b
    assert result.stderr.startswith("error: board\\x1b[2J?token=***&.json: "), result.stderr
    assert "\x1b" not in result.stderr and "hunter2" not in result.stderr
