"""``dashgen validate-queries``: run every target of every dashboard against a real data source.

Exit 0 when every query executed (empty results are reported with their reason, not failed),
1 when any query errored, 2 on usage or input errors.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from dashgen.build import build_all
from dashgen.cli.options import SECONDS, datasource_url_option, max_data_points_option, selected_profiles
from dashgen.cli.output import emit_json, format_option, progress, summarise_causes
from dashgen.document.budget import MAX_FILE_BYTES, file_over_budget, panels_over_budget
from dashgen.errors import InputError, redact
from dashgen.escape import terminal_lines, terminal_text
from dashgen.files import read_regular_text
from dashgen.files.parsers import parse_json
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, parse_span, parse_time
from dashgen.live.query_check import DashboardInput, exit_code, plan, render_json, render_text, run_checks
from dashgen.live.report import mostly_empty


def _from_folder(folder: Path) -> list[DashboardInput]:
    files = sorted(folder.rglob("*.json"))
    if not files:
        raise InputError(f"{folder}: no dashboard JSON files")
    inputs = []
    for path in files:
        try:
            too_large = file_over_budget(path.stat().st_size)
            document = parse_json(read_regular_text(path, MAX_FILE_BYTES)) if too_large is None else None
        except (OSError, ValueError) as exc:  # nesting too deep is a ValueError of parse_json
            raise InputError(f"{path}: not readable JSON: {str(exc)[:200]}") from None
        too_large = too_large or panels_over_budget(document)
        if too_large is not None:
            raise InputError(f"{path}: {too_large}")
        if not isinstance(document, dict):
            raise InputError(f"{path}: not a dashboard object")
        inputs.append(DashboardInput(str(path), document))
    return inputs


@click.command("validate-queries")
@datasource_url_option
@click.option(
    "--profile", "profile_names", multiple=True, help="Profile to render and check (repeatable; default all)."
)
@click.option(
    "--dashboards",
    "dashboards_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Check the dashboard JSON files in this folder instead of rendering from profiles.",
)
@click.option("--window", default="1h", show_default=True, help="Dashboard time range ($__range).")
@click.option(
    "--at",
    "at_text",
    default="now",
    show_default=True,
    help="Window end / instant query time: now, now-2h, unix seconds or RFC 3339.",
)
@format_option("text", "json")
@click.option(
    "--timeout",
    type=SECONDS,
    default=30.0,
    show_default=True,
    help="Total deadline of each query, seconds (not only per socket read).",
)
@click.option(
    "--deadline",
    type=SECONDS,
    default=1800.0,
    show_default=True,
    help="Total deadline of the command, seconds: queries not started by then are reported as errors.",
)
@click.option(
    "--max-connection-failures",
    type=click.IntRange(0, 10000),
    default=5,
    show_default=True,
    help="Stop after this many consecutive queries without an answer (0: never stop early).",
)
@click.option("--workers", type=click.IntRange(1, 32), default=4, show_default=True, help="Concurrent queries.")
@max_data_points_option
@click.option(
    "--scrape-interval",
    default="15s",
    show_default=True,
    help="Scrape interval for $__rate_interval when a query's source is unknown (JSON input).",
)
@click.pass_context
def validate_queries(
    ctx: click.Context,
    datasource_url: str,
    profile_names: tuple[str, ...],
    dashboards_dir: Path | None,
    window: str,
    at_text: str,
    output_format: str,
    timeout: float,
    deadline: float,
    max_connection_failures: int,
    workers: int,
    max_data_points: int,
    scrape_interval: str,
) -> None:
    """Run every panel query against a data source; report data, empty-with-reason, or error per panel."""
    try:
        length = parse_span(window)
        at = parse_time(at_text, time.time())
        scrape = parse_span(scrape_interval)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if dashboards_dir is not None:
        if profile_names:
            raise InputError("--dashboards and --profile are exclusive: JSON files carry no profile")
        if not dashboards_dir.is_dir():
            raise InputError(f"{dashboards_dir}: no such folder")
        inputs = _from_folder(dashboards_dir)
    else:
        profiles = selected_profiles(ctx, list(profile_names))
        by_name = {p.name: p for p in profiles}
        inputs = [DashboardInput(f"{b.profile}/{b.uid}", b.document, by_name[b.profile]) for b in build_all(profiles)]
    datasource = Datasource(datasource_url, timeout=timeout)
    span = Window(end=at, length=length)

    def label_values(match: str, label: str) -> list[str]:
        return datasource.label_values(label, [match], span.start, span.end)

    planned = plan(inputs, span, max_data_points, scrape, label_values)
    if not any(panel.queries for panel in planned):
        raise InputError("no queries to validate: the dashboards have no PromQL targets")
    total = sum(len(panel.queries) for panel in planned)
    with progress("validating queries", total) as advance:
        checks = run_checks(
            datasource,
            planned,
            span,
            workers=workers,
            timeout=timeout,
            deadline=deadline,
            max_connection_failures=max_connection_failures,
            progress=advance,
        )
    meta = {
        "datasource": redact(datasource.base_url),
        "window": window,
        "at": at,
        "at_text": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at)),
    }
    code = exit_code(checks)
    if output_format == "json":
        failures = [
            f"{t.error_status if t.error_status is not None else 'no answer'}: {t.error_message}"
            for c in checks
            for t in c.targets
            if t.status == "error"
        ]
        empty = mostly_empty(checks)
        emit_json(
            ctx, json.loads(render_json(checks, meta)), code, summarise_causes(failures) + ([empty] if empty else [])
        )
    else:
        click.echo(terminal_lines(render_text(checks, meta)), nl=False)
        if (empty := mostly_empty(checks)) is not None:
            click.echo(f"FAILED: {terminal_text(empty)}")
    ctx.exit(code)
