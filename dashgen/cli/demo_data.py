"""``dashgen demo-data``: import realistic synthetic series for a profile's dashboards into VictoriaMetrics."""

from __future__ import annotations

import time

import click

from dashgen.cli.options import HOURS, HTTP_URL, SECONDS, selected_profiles
from dashgen.cli.output import emit_json, format_option, progress, warn_once
from dashgen.demo import recorder
from dashgen.demo.run import import_demo
from dashgen.demo.scenarios import SCENARIOS, assignments
from dashgen.deployment.profile import Profile
from dashgen.errors import InputError
from dashgen.live.datasource import Datasource
from dashgen.live.expand import parse_duration, parse_time


@click.command("demo-data")
@click.option("--profile", "profile_name", required=True, help="Profile whose dashboards the data feeds.")
@click.option("--url", required=True, type=HTTP_URL, help="VictoriaMetrics base URL, e.g. http://127.0.0.1:8428.")
@click.option(
    "--import-url",
    default=None,
    help="Where /api/v1/import lives when it differs (VictoriaMetrics cluster: vminsert's "
    "http://vminsert:8480/insert/0/prometheus).",
)
@click.option("--hours", type=HOURS, default=2.0, show_default=True, help="Window length ending at --end.")
@click.option("--scenario", type=click.Choice(SCENARIOS), default="healthy", show_default=True)
@click.option(
    "--step",
    default="0s",
    show_default=True,
    help="Coarsest sample spacing (e.g. 15s to thin 1 s GPM data); 0s keeps each source's scrape interval.",
)
@click.option("--end", "end_text", default="now", show_default=True, help="Window end: now, now-2h, unix or RFC 3339.")
@click.option(
    "--timeout", type=SECONDS, default=120.0, show_default=True, help="Total deadline of each request, seconds."
)
@click.option(
    "--record/--no-record",
    "record",
    default=None,
    help="Replay the Now row's recording rules (rules/<profile>.yml, layer-health group) over the window's "
    "last minutes and the per-GPU table's (gpu-window group) over the whole window with vmalert -replay, so the "
    "node x layer matrix has its recorded codes and the per-GPU table its statistics. "
    "Default: when vmalert is installed.",
)
@format_option("text", "json")
@click.pass_context
def demo_data(
    ctx: click.Context,
    profile_name: str,
    url: str,
    import_url: str | None,
    hours: float,
    scenario: str,
    step: str,
    end_text: str,
    timeout: float,
    record: bool | None,
    output_format: str,
) -> None:
    """Generate and import demo series (healthy, or five-reasons: each No Data reason on its own node)."""
    (profile,) = selected_profiles(ctx, [profile_name])
    try:
        end = parse_time(end_text, time.time())
        step_seconds = 0.0 if step.strip() in ("0", "0s") else parse_duration(step)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if hours <= 0:
        raise InputError(f"--hours must be positive, got {hours:g}")
    rows = assignments(profile, scenario)
    datasource = Datasource(url, import_url=import_url, timeout=timeout)
    with progress(f"importing {profile.name} {scenario}", None) as advance:
        summary = import_demo(datasource, profile, scenario, end, hours, step_seconds, warn=warn_once, progress=advance)
    recorded = _record(datasource, url, import_url, profile, summary.end, hours, record)
    if output_format == "json":
        emit_json(
            ctx,
            {
                "profile": profile.name,
                "scenario": scenario,
                "series": summary.series,
                "samples": summary.samples,
                "start": summary.start,
                "end": summary.end,
                "seconds": round(summary.seconds, 3),
                "unknown_metrics": list(summary.unknown),
                "recorded_rules": recorded,
                "faults": [
                    {"node": r.node, "reason": r.reason, "reason_name": r.reason_name, "detail": r.detail} for r in rows
                ],
            },
        )
        return
    click.echo(
        f"{profile.name} {scenario}: {summary.series} series, {summary.samples} samples, "
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(summary.start))} .. "
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(summary.end))}, {summary.seconds:.1f}s"
    )
    for row in rows:
        click.echo(f"  {row.node}: {row.reason_name} ({row.reason}) - {row.detail}")
    if recorded:
        click.echo(
            f"  recorded the layer-health rules over the last {recorder.REPLAY_SECONDS / 60:g} min and the per-GPU "
            "statistics over the window (vmalert -replay)"
        )


def _record(
    datasource: Datasource,
    url: str,
    import_url: str | None,
    profile: Profile,
    end: float,
    hours: float,
    record: bool | None,
) -> bool:
    """Replay the layer-health rules into the store; False when not asked or (by default) vmalert is missing."""
    if record is False:
        return False
    if recorder.find_vmalert() is None:
        if record:
            raise InputError("--record needs vmalert (Debian package 'victoria-metrics', or set VMALERT_BIN)")
        warn_once(
            "vmalert not found: the Now row's node x layer matrix stays empty until a rule evaluator "
            f"loads rules/{profile.name}.yml (or install vmalert and rerun with --record)"
        )
        return False
    datasource.flush()
    try:
        recorder.replay_for_dashboards(url, [profile], end - hours * 3600, end, write_url=import_url)
    except recorder.ReplayError as exc:
        if record:  # asked for: the command fails; by default the import stands and the matrix stays empty
            raise InputError(f"recording the layer-health rules failed: {exc}") from None
        warn_once(
            f"the import is done, but recording the layer-health rules failed ({exc}); the Now row's matrix "
            "stays empty until a rule evaluator loads the rule file"
        )
        return False
    datasource.flush()
    return True
