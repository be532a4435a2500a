"""How often and how soon a command sends a failed request to Grafana again: ``--retries`` and ``--retry-backoff``
(or ``DASHGEN_HTTP_RETRIES`` / ``DASHGEN_HTTP_BACKOFF``) on every command with the Grafana connection options,
validated at the command line (a bad value is exit 2 naming the option and its variable), and by default the
client's own policy: three retries, the first after 0.25-0.5 s, each next wait doubled up to 8 s."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import click
import pytest
from click.testing import CliRunner
from grafana_commands import grafana_commands
from local_http import running

from dashgen.cli.app import main
from dashgen.cli.connection import BACKOFF_ENV, RETRIES_ENV
from dashgen.cli.grafana_opts import grafana_client
from dashgen.net.retry import RetryPolicy
from dashgen.publish.contexts import Context

TOKEN = "glsa_retry_test_token_0123456789"


def test_the_default_policy_is_three_retries_from_half_a_second_doubling_up_to_eight():
    """What a command without the options does, held here: a change of the default fails this test."""
    policy = RetryPolicy()
    assert (policy.retries, policy.backoff, policy.backoff_max) == (3, 0.5, 8.0)
    waits = {attempt: [policy.delay(attempt) for _ in range(200)] for attempt in (1, 2, 3, 4, 5, 9)}
    for attempt, drawn in waits.items():  # jittered between half and all of the doubled wait, capped at 8 s
        base = min(0.5 * 2 ** (attempt - 1), 8.0)
        assert base / 2 <= min(drawn) and max(drawn) <= base and max(drawn) - min(drawn) > base / 10, attempt
    assert len(waits) == 6


def test_every_grafana_command_takes_the_retry_options_with_the_client_s_defaults():
    commands = grafana_commands()
    for name, command in commands.items():
        options = {o.opts[0]: o for o in command.params if isinstance(o, click.Option)}
        retries, backoff = options["--retries"], options["--retry-backoff"]
        assert (retries.default, retries.envvar) == (RetryPolicy().retries, RETRIES_ENV), name
        assert (backoff.default, backoff.envvar) == (RetryPolicy().backoff, BACKOFF_ENV), name
    assert {"publish", "drift", "diff", "import"} <= set(commands), sorted(commands)


def test_a_client_made_without_the_options_has_the_default_policy():
    target = Context("", "http://127.0.0.1:9", None)
    with grafana_client(target, {"timeout": 5.0}, env={"GRAFANA_TOKEN": TOKEN}) as client:
        assert client._http.retry == RetryPolicy()
    with grafana_client(
        target, {"timeout": 5.0, "retries": 0, "retry_backoff": 0.0}, env={"GRAFANA_TOKEN": TOKEN}
    ) as client:
        assert (client._http.retry.retries, client._http.retry.backoff) == (0, 0.0)


class _Dropping(BaseHTTPRequestHandler):
    """Closes every connection without an answer (a proxy restarting, say): a GET that is retried."""

    arrived: list[float] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        type(self).arrived.append(time.monotonic())
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def dropping() -> Iterator[str]:
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _Dropping)) as url:
        yield url


# history reaches Grafana through a resolved target (as publish, rollback and drift do); import --live through the
# plain connection options (as diff --live does)
COMMAND_LINES = {"history": ["history", "dg-x"], "import": ["import", "--live", "dg-x", "-o", "-"]}


@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
@pytest.mark.parametrize(
    ("args", "env", "attempts", "backoff"),
    [
        (["--retries", "2", "--retry-backoff", "0.05"], {}, 3, 0.05),
        ([], {RETRIES_ENV: "0"}, 1, None),
        # a backoff above the default's: its one wait (0.75 s at least) is longer than any first wait of the default's
        ([], {RETRIES_ENV: "1", BACKOFF_ENV: "1.5"}, 2, 1.5),
        (["--retries", "2"], {RETRIES_ENV: "0", BACKOFF_ENV: "0"}, 3, 0.0),  # the option ranks above the variable
    ],
)
def test_the_retry_options_set_how_often_and_how_soon_a_failed_get_is_sent_again(
    dropping, command, args, env, attempts, backoff
):
    _Dropping.arrived = []
    result = CliRunner().invoke(
        main, [*COMMAND_LINES[command], "--grafana-url", dropping, *args], env={"GRAFANA_TOKEN": TOKEN, **env}
    )
    assert result.exit_code == 2 and "did not answer" in result.output, result.output  # no answer: an input error
    assert len(_Dropping.arrived) == attempts, result.output
    assert attempts == 1 or f"({attempts} attempts)" in result.output, result.output
    if backoff is not None:
        # each wait between half and all of its doubled backoff (plus a second for a loaded machine: the lower
        # bounds and the zero-backoff sum below tell the settings from the default's)
        gaps = [later - earlier for earlier, later in zip(_Dropping.arrived, _Dropping.arrived[1:], strict=False)]
        for number, gap in enumerate(gaps):
            assert backoff * 2**number / 2 <= gap <= backoff * 2**number + 1.0, (gaps, backoff)
        assert len(gaps) == attempts - 1
        if backoff == 0:  # not the default's waits either: those two take 0.25 + 0.5 s at least
            assert sum(gaps) < 0.75, gaps


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--retries", "-1"], {}, "'--retries'"),
        (["--retries", "11"], {}, "'--retries'"),
        (["--retry-backoff", "nan"], {}, "'--retry-backoff'"),
        (["--retry-backoff", "-0.5"], {}, "'--retry-backoff'"),
        (["--retry-backoff", "9"], {}, "'--retry-backoff'"),
        ([], {RETRIES_ENV: "lots"}, RETRIES_ENV),
        ([], {RETRIES_ENV: "2.5"}, RETRIES_ENV),
        ([], {BACKOFF_ENV: "inf"}, BACKOFF_ENV),
        ([], {BACKOFF_ENV: "half a second"}, BACKOFF_ENV),
    ],
)
def test_a_bad_retry_setting_is_a_usage_error_naming_it_before_anything_is_sent(dropping, args, env, named):
    _Dropping.arrived = []
    result = CliRunner().invoke(
        main, [*COMMAND_LINES["history"], "--grafana-url", dropping, *args], env={"GRAFANA_TOKEN": TOKEN, **env}
    )
    assert result.exit_code == 2 and named in result.output and "Traceback" not in result.output, result.output
    assert _Dropping.arrived == []
