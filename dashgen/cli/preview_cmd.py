"""``dashgen preview``: every dashboard drawn on real data, as ``DIR/<uid>.html`` and ``DIR/<uid>.png``.

Each profile's dashboards are built in memory, their queries run against ``--datasource-url`` as Grafana
would (bounded concurrency), the panels drawn by the grid (uPlot for time series, shipped in the package),
and one headless Chromium per run takes the screenshots. Exit 0 when every query answered, 1 when any
query failed (the panel shows the error), 2 on usage or input errors (no Chromium: the package to install).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from dashgen.build import build_all
from dashgen.cli.options import HTTP_URL, SECONDS, selected_profiles
from dashgen.cli.output import emit_json, format_option, key_values, progress
from dashgen.errors import InputError, redact
from dashgen.escape import terminal_text
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, parse_duration, parse_span, parse_time
from dashgen.preview.browser import Browser, require_browser
from dashgen.preview.run import Settings, Source, draw_dashboard, screenshot, write_drawing
from dashgen.preview.run import first_screen as first_screen_png
from dashgen.render.ids import panel_id


def profile_sources(ctx: click.Context, names: tuple[str, ...]) -> list[Source]:
    """The dashboards of the named profiles (all when none), with their panels' stable keys."""
    profiles = selected_profiles(ctx, list(names))
    by_name = {p.name: p for p in profiles}
    return [
        Source(
            f"{b.profile}/{b.uid}", b.document, by_name[b.profile], {panel_id(p.key): p.key for p in b.spec.panels()}
        )
        for b in build_all(profiles)
    ]


def window_of(window: str | None, at_text: str, document: Mapping[str, Any] | None = None) -> Window:
    """``--window`` / ``--at`` as a :class:`Window`; without ``--window`` the dashboard's own range (``now-1h``)."""
    try:
        at = parse_time(at_text, time.time())
        if window is None:
            start = str(((document or {}).get("time") or {}).get("from") or "now-1h")
            length = parse_duration(start[4:]) if start.startswith("now-") else 3600.0
        else:
            length = parse_span(window)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return Window(end=at, length=length)


def check_datasource(datasource: Datasource, at: float) -> None:
    """One cheap query first: a data source that does not answer is one clear error, not a page of them."""
    datasource.query("1", at, timeout=min(datasource.timeout, 10.0))


def label_values_in(datasource: Datasource, settings: Settings) -> Callable[[str, str], list[str]]:
    """Grafana's ``label_values(match, label)`` for a query variable at All without an ``allValue``."""
    window = settings.window
    return lambda match, label: datasource.label_values(label, [match], window.start, window.end)


@click.command("preview")
@click.option("--profile", "profile_names", multiple=True, help="Profile to preview (repeatable; default all).")
@click.option("--datasource-url", required=True, type=HTTP_URL, help="Prometheus-compatible base URL to query.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("preview"),
    show_default=True,
    help="Folder for <uid>.html and <uid>.png.",
)
@click.option("--at", "at_text", default="now", show_default=True, help="Window end: now, now-2h, unix s, RFC 3339.")
@click.option("--window", default=None, help="Time range drawn (default: the dashboard's own, e.g. now-1h).")
@click.option("--var", "var_values", multiple=True, metavar="NAME=VALUE", help="A variable's value (default: All).")
@click.option(
    "--expand-rows",
    is_flag=True,
    help="Draw (and query) the panels of collapsed rows and of every tab of a v2 dashboard too.",
)
@click.option("--workers", type=click.IntRange(1, 32), default=4, show_default=True, help="Concurrent queries.")
@click.option("--timeout", type=SECONDS, default=30.0, show_default=True, help="Deadline of each query, seconds.")
@click.option("--no-png", is_flag=True, help="Write the HTML only (no browser needed).")
@click.option("--first-screen", is_flag=True, help="Also write <uid>.first.png: only what shows on open.")
@format_option("text", "json")
@click.pass_context
def preview_command(
    ctx: click.Context,
    profile_names: tuple[str, ...],
    datasource_url: str,
    out_dir: Path,
    at_text: str,
    window: str | None,
    var_values: tuple[str, ...],
    expand_rows: bool,
    workers: int,
    timeout: float,
    no_png: bool,
    first_screen: bool,
    output_format: str,
) -> None:
    """Draw every dashboard on real data: DIR/<uid>.html (uPlot, offline) and DIR/<uid>.png (headless Chromium)."""
    variables = key_values(var_values, "--var")
    if not no_png:
        require_browser()  # before any query: a missing browser is a quick, clear error
    sources = profile_sources(ctx, profile_names)
    datasource = Datasource(datasource_url, timeout=timeout)
    first = window_of(window, at_text, sources[0].document if sources else None)
    check_datasource(datasource, first.end)
    results: list[dict[str, Any]] = []
    browser = None if no_png else Browser()
    try:
        for source in sources:
            settings = Settings(
                window_of(window, at_text, dict(source.document)), variables, expand_rows, workers, timeout
            )
            with progress(f"preview {source.name}", None) as advance:
                drawing = draw_dashboard(datasource, source, settings, advance, label_values_in(datasource, settings))
            html_path = write_drawing(drawing, out_dir)
            png_path = None if browser is None else html_path.with_suffix(".png")
            if browser is not None:
                screenshot(browser, html_path, png_path, drawing.height)
                if first_screen:
                    first_screen_png(browser, html_path, html_path.with_suffix(".first.png"))
            results.append(
                {
                    "dashboard": source.name,
                    "uid": drawing.uid,
                    "html": str(html_path),
                    "png": str(png_path) if png_path else None,
                    "panels": drawing.panels,
                    "queries": drawing.queries,
                    "query_errors": drawing.errors,
                    "no_data": drawing.empty,
                }
            )
    finally:
        if browser is not None:
            browser.close()
    code = 1 if any(r["query_errors"] for r in results) else 0
    if output_format == "json":
        meta = {"datasource": redact(datasource.base_url), "expand_rows": expand_rows, "dashboards": results}
        errors = [f"{r['dashboard']}: {r['query_errors']} queries failed" for r in results if r["query_errors"]]
        emit_json(ctx, meta, code, errors)
    else:
        for r in results:
            made = ", ".join(p for p in (r["html"], r["png"]) if p)
            click.echo(
                f"{terminal_text(r['dashboard'])}: {r['panels']} panels, {r['queries']} queries, "
                f"{r['query_errors']} failed, "
                f"{len(r['no_data'])} with no data -> {made}"
            )
    ctx.exit(code)
