"""The Grafana connection options every command that talks to Grafana declares (publish, rollback, history,
drift, ``diff --live``, ``import --live``), in one place; importing it loads click and the retry policy's record
only, so ``dashgen diff`` does not pay for the publish machinery.

The retry options (``--retries``, ``--retry-backoff``, or ``DASHGEN_HTTP_RETRIES`` / ``DASHGEN_HTTP_BACKOFF``)
set how a request is sent again after a 429, and a GET or HEAD after no answer or a 5xx; their defaults are
``RetryPolicy``'s, so a command without them retries as the client always did. A CI that would rather fail at
once sets 0 retries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dashgen.cli.paramtypes import TIMEOUT, PositiveSeconds
from dashgen.net.retry import RetryPolicy

GRAFANA_OPTION_NAMES = (
    "--grafana-url",
    "--token-file",
    "--org-id",
    "--ca-bundle",
    "--insecure",
    "--timeout",
    "--retries",
    "--retry-backoff",
)
CONNECTION_PARAMS = (
    "grafana_url",
    "token_file",
    "org_id",
    "ca_bundle",
    "insecure",
    "timeout",
    "retries",
    "retry_backoff",
)
DEFAULT_RETRY = RetryPolicy()
MAX_RETRIES = 10  # more than this only prolongs an outage's failure: each wait doubles up to backoff_max
RETRIES_ENV, BACKOFF_ENV = "DASHGEN_HTTP_RETRIES", "DASHGEN_HTTP_BACKOFF"


def retry_policy(retries: int | None, backoff: float | None) -> RetryPolicy:
    """The policy of the retry options; a value not given (a caller without the options) is the default's."""
    return RetryPolicy(
        retries=DEFAULT_RETRY.retries if retries is None else retries,
        backoff=DEFAULT_RETRY.backoff if backoff is None else backoff,
    )


def connection_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The Grafana connection options every command that talks to Grafana shares (``drift`` and ``diff --live``
    too: a test keeps theirs equal). ``--grafana-url`` falls back to ``GRAFANA_URL``, below a ``--context``."""
    options = [
        click.option(
            "--grafana-url", envvar="GRAFANA_URL", help="Grafana base URL (default: the context's, else GRAFANA_URL)."
        ),
        click.option(
            "--token-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="File holding a service-account token (else the context's token_env or GRAFANA_TOKEN, "
            "else GRAFANA_USER/PASSWORD).",
        ),
        click.option("--org-id", type=int, help="Sends X-Grafana-Org-Id."),
        click.option("--ca-bundle", type=click.Path(dir_okay=False, exists=True), help="CA bundle for TLS."),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (loudly warned)."),
        click.option(
            "--timeout",
            type=TIMEOUT,
            default=30.0,
            show_default=True,
            help="Read timeout in seconds (positive, at most 3600).",
        ),
        click.option(
            "--retries",
            type=click.IntRange(0, MAX_RETRIES),
            default=DEFAULT_RETRY.retries,
            show_default=True,
            envvar=RETRIES_ENV,
            show_envvar=True,
            help="Times a request is sent again after a 429, and a GET/HEAD after no answer or a 5xx (a write "
            "never is); 0: fail at the first.",
        ),
        click.option(
            "--retry-backoff",
            type=PositiveSeconds(maximum=DEFAULT_RETRY.backoff_max, zero=True),
            default=DEFAULT_RETRY.backoff,
            show_default=True,
            envvar=BACKOFF_ENV,
            show_envvar=True,
            metavar="SECONDS",
            help=f"Wait before the first retry, doubled before each next one up to {DEFAULT_RETRY.backoff_max:g} s, "
            "jittered; a 429's Retry-After is waited instead.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function
