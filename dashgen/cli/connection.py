"""The Grafana connection options every command that talks to Grafana declares (publish, rollback, history,
drift, ``diff --live``, ``import --live``), in one place; importing it loads click only, so ``dashgen diff`` does
not pay for the publish machinery."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dashgen.cli.paramtypes import TIMEOUT

GRAFANA_OPTION_NAMES = ("--grafana-url", "--token-file", "--org-id", "--ca-bundle", "--insecure", "--timeout")
CONNECTION_PARAMS = ("grafana_url", "token_file", "org_id", "ca_bundle", "insecure", "timeout")


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
    ]
    for option in reversed(options):
        function = option(function)
    return function
