"""Every command that talks to Grafana exits alike for the same condition, decided once by the command line's
error boundary: no answer (connection refused, DNS, TLS, a timeout) or an answer that is not Grafana's is an
input error (exit 2, one line naming GRAFANA_URL); a Grafana that answers and refuses (here: a token it does not
know) is exit 1. ``--format json`` carries the same exit code in its envelope."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from grafana_commands import grafana_commands
from local_http import running
from publishing import TOKEN, UID
from standin import GrafanaStandin, free_port

from dashgen.cli.app import main

ROOT = Path(__file__).resolve().parent.parent

# the words of each command that talks to Grafana, up to the point where it must ask Grafana
COMMAND_LINES = {
    "publish": ["publish", "--dry-run", "--profile", "h20-16"],
    "history": ["history", UID],
    "rollback": ["rollback", UID, "--to", "1"],
    "drift": ["drift"],
    "diff": ["diff", "--live", UID],
    "import": ["import", "--live", UID, "-o", "-"],
}


class _NotGrafana(BaseHTTPRequestHandler):
    """A web server that is not Grafana (a login page, a proxy's default site): HTML to every request."""

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        body = b"<html><body>Welcome to nginx!</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET  # noqa: N815 - the http.server API

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def not_grafana() -> Iterator[str]:
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _NotGrafana)) as url:
        yield url


@pytest.fixture(scope="module")
def grafana() -> Iterator[GrafanaStandin]:
    with GrafanaStandin(mode="grafana12", token=TOKEN) as standin:
        yield standin


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def invoke(work: Path, command: str, url: str, *extra: str, token: str = TOKEN):
    argv = ["--profiles-dir", str(work / "profiles"), *COMMAND_LINES[command], "--timeout", "2", *extra]
    if command in ("publish", "rollback", "history", "drift"):
        argv += ["--ledger", str(work / "ledger.jsonl")]
    # the URL from the environment, as a CI job gives it; no retries: each condition is the same on the first try
    env = {"GRAFANA_URL": url, "GRAFANA_TOKEN": token, "DASHGEN_HTTP_RETRIES": "0"}
    return CliRunner().invoke(main, argv, env=env)


def test_the_table_holds_every_command_that_talks_to_grafana():
    assert set(COMMAND_LINES) == set(grafana_commands())


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error: ")]


@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
def test_an_unreachable_grafana_is_an_input_error_naming_grafana_url(work, command):
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    result = invoke(work, command, url)
    assert result.exit_code == 2, result.output
    errors = _error_lines(result.output)
    assert len(errors) == 1 and "did not answer" in errors[0] and "GRAFANA_URL" in errors[0], result.output
    assert "Traceback" not in result.output
    as_json = invoke(work, command, url, "--format", "json")
    envelope = json.loads(as_json.stdout)
    assert as_json.exit_code == 2 and envelope["exit_code"] == 2 and envelope["ok"] is False, as_json.output
    assert "GRAFANA_URL" in envelope["errors"][0]["message"]


@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
def test_an_answer_that_is_not_grafana_s_is_an_input_error_naming_grafana_url(work, not_grafana, command):
    result = invoke(work, command, not_grafana)
    assert result.exit_code == 2, result.output
    errors = _error_lines(result.output)
    assert len(errors) == 1 and "GRAFANA_URL" in errors[0], result.output


# Where exit 1 is what the command found (drift: edited in Grafana; diff: the dashboards differ), a read Grafana
# refused is exit 2 like any other read that failed: a nightly drift job must not page for an expired token.
FINDS_WITH_EXIT_1 = {"drift", "diff"}


@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
def test_a_grafana_that_answers_and_refuses_is_exit_1(work, grafana, command):
    """Exit 1 (a refusal), but 2 for the commands whose 1 is a finding."""
    expected = 2 if command in FINDS_WITH_EXIT_1 else 1
    if command == "drift":  # drift asks Grafana only about what the ledger says was released to it
        published = CliRunner().invoke(
            main,
            ["--profiles-dir", str(work / "profiles"), "publish", "--profile", "h20-16", "--grafana-url", grafana.url]
            + ["--ledger", str(work / "ledger.jsonl"), "--backup-dir", str(work / "backups")],
            env={"GRAFANA_TOKEN": TOKEN},
        )
        assert published.exit_code == 0, published.output
    result = invoke(work, command, grafana.url, token="glsa_not_the_token_of_this_grafana_0123")
    assert result.exit_code == expected, result.output
    errors = _error_lines(result.output)
    assert len(errors) == 1 and "401" in errors[0] and "GRAFANA_URL" not in errors[0], result.output
    as_json = invoke(work, command, grafana.url, "--format", "json", token="glsa_not_the_token_of_this_grafana_0123")
    assert as_json.exit_code == expected and json.loads(as_json.stdout)["exit_code"] == expected, as_json.output


def test_the_grafana_url_hint_follows_what_answered_not_the_exit_code():
    """A drift or diff --live read gives every Grafana error exit 2; the hint to check GRAFANA_URL is for no answer
    of Grafana's only, not for Grafana's own JSON answer cut short (it did answer)."""
    from dashgen.cli.app import _message
    from dashgen.grafana.errors import BadResponse, BrokenAnswer, GrafanaUnreachable

    cut = BrokenAnswer("Grafana answered GET /api/search with 200 but the body is not valid JSON").as_input_error()
    assert cut.exit_code == 2 and "GRAFANA_URL" not in _message(cut)
    assert "GRAFANA_URL" in _message(GrafanaUnreachable("connection refused"))
    assert "GRAFANA_URL" in _message(BadResponse("a redirect to https://sso.example/"))
