"""``dashgen cost``: what opening each dashboard costs the data source, before it is published.

Renders the selected profiles' dashboards, runs every target once as Grafana would at the dashboard's
default time range (``time.from``; ``--window`` overrides) with the data source's statistics on, and
reports per panel the series fetched, samples scanned and the data source's own time, plus each
dashboard's total on open (``dashgen.live.cost``). Budgets come from the profile's ``[dashboard]``
``cost_*`` keys; a ``--budget-*`` flag overrides them for every selected profile.

Exit 0 within budget, 1 when a panel or a dashboard is over budget (or a query failed), 2 on usage or
input errors. ``--format json`` prints the one envelope of every command (``docs/json-output.md``), its
``results`` one report per dashboard.
"""

from __future__ import annotations

import time

import click

from dashgen.build import build_all
from dashgen.cli.options import SECONDS, datasource_url_option, max_data_points_option, selected_profiles
from dashgen.cli.output import emit_json, format_option
from dashgen.document import unwrap
from dashgen.errors import InputError, redact
from dashgen.escape import terminal_lines
from dashgen.live.cost import Budget, exit_code, measure, render_text, report, unchecked
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, parse_duration, parse_span, parse_time
from dashgen.live.query_check import DashboardInput, plan

COUNT = click.IntRange(0, 10**12)


def _default_window(document: dict, where: str) -> float:
    """The length of the dashboard's default time range (``time.from`` = ``now-<duration>``, to ``now``)."""
    frame = document.get("time") or {}
    start, end = str(frame.get("from", "now-1h")), str(frame.get("to", "now"))
    if not start.startswith("now-") or end != "now":
        raise InputError(f"{where}: time range {start!r}..{end!r} is not 'now-<duration>'..'now'; pass --window")
    try:
        return parse_duration(start[4:])
    except ValueError as exc:
        raise InputError(f"{where}: time.from: {exc}") from None


def _budget(profile_budget: Budget, flags: dict[str, int | None]) -> Budget:
    values = {
        key: (flags[key] if flags.get(key) is not None else getattr(profile_budget, key))
        for key in ("panel_series", "panel_samples", "dashboard_series", "dashboard_samples")
    }
    return Budget(**values)


@click.command("cost")
@datasource_url_option
@click.option("--profile", "profile_names", multiple=True, help="Profile to render and cost (repeatable; default all).")
@click.option("--window", default=None, help="Time range ($__range); default: each dashboard's own (time.from).")
@click.option(
    "--at", "at_text", default="now", show_default=True, help="Window end: now, now-2h, unix seconds or RFC 3339."
)
@click.option(
    "--budget-series",
    type=COUNT,
    default=None,
    help="Series fetched per panel (default: the profile's dashboard.cost_panel_series).",
)
@click.option(
    "--budget-samples",
    type=COUNT,
    default=None,
    help="Samples scanned per panel (default: the profile's dashboard.cost_panel_samples).",
)
@click.option(
    "--budget-dashboard-series",
    type=COUNT,
    default=None,
    help="Series fetched by a dashboard on open (default: dashboard.cost_dashboard_series).",
)
@click.option(
    "--budget-dashboard-samples",
    type=COUNT,
    default=None,
    help="Samples scanned by a dashboard on open (default: dashboard.cost_dashboard_samples).",
)
@format_option("text", "json")
@click.option("--timeout", type=SECONDS, default=60.0, show_default=True, help="Total deadline of each query, seconds.")
@max_data_points_option
@click.option(
    "--top",
    type=click.IntRange(0, 10000),
    default=15,
    show_default=True,
    help="Text output: the most expensive panels listed per dashboard.",
)
@click.pass_context
def cost_command(
    ctx: click.Context,
    datasource_url: str,
    profile_names: tuple[str, ...],
    window: str | None,
    at_text: str,
    budget_series: int | None,
    budget_samples: int | None,
    budget_dashboard_series: int | None,
    budget_dashboard_samples: int | None,
    output_format: str,
    timeout: float,
    max_data_points: int,
    top: int,
) -> None:
    """Report what each dashboard's queries cost the data source on open; exit 1 over budget."""
    try:
        at = parse_time(at_text, time.time())
        length = parse_span(window) if window is not None else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    flags = {
        "panel_series": budget_series,
        "panel_samples": budget_samples,
        "dashboard_series": budget_dashboard_series,
        "dashboard_samples": budget_dashboard_samples,
    }
    profiles = selected_profiles(ctx, list(profile_names))
    by_name = {p.name: p for p in profiles}
    datasource = Datasource(datasource_url, timeout=timeout)
    panels, budgets, windows = [], {}, {}
    for built in build_all(profiles):
        profile = by_name[built.profile]
        name = f"{built.profile}/{built.uid}"
        span = Window(end=at, length=length if length is not None else _default_window(built.document, name))
        windows[name] = {"window_seconds": span.length, "refresh": built.document.get("refresh", "")}
        body = unwrap(built.document)
        top_level = {id(raw) for raw in body.get("panels") or [] if isinstance(raw, dict)}
        planned = plan([DashboardInput(name, built.document, profile)], span, max_data_points)
        panels += measure(datasource, planned, top_level, timeout)
        settings = profile.dashboard
        budgets[name] = _budget(
            Budget(
                settings.cost_panel_series,
                settings.cost_panel_samples,
                settings.cost_dashboard_series,
                settings.cost_dashboard_samples,
            ),
            flags,
        )
    if not panels:
        raise InputError("no queries to cost: the dashboards have no PromQL targets")
    # one budget per dashboard (its profile's): the report carries each, the verdict applies each
    results = []
    for name, budget in budgets.items():
        meta = {
            "datasource": redact(datasource.base_url),
            "at": at,
            "at_text": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at)),
            "window": f"{windows[name]['window_seconds']:g}s",
            **windows[name],
        }
        results.append(report([p for p in panels if p.dashboard == name], budget, meta))
    code = max(exit_code(result) for result in results)
    if output_format == "json":
        problems = [*(str(v) for r in results for v in r["over_budget"]), *(e for r in results for e in r["errors"])]
        problems += [
            f"budget not checked: the data source returned no statistics for {' or '.join(r['unmeasured'])}"
            for r in results
            if unchecked(r)
        ]
        emit_json(ctx, results, code, problems)
    else:
        click.echo(terminal_lines("".join(render_text(result, top) for result in results)), nl=False)
    ctx.exit(code)
