"""``dashgen doctor``: what the store's series names say about the deployment's exporters (S35), beside what the
profile states.

Reads the metric names of the store (of the profile's deployment, when it has a deployment label) over
``--window``, infers per source of the exporter table whether it writes, the prefix of its scrape path, the
versions its names fit and the flags whose series are present (``dashgen.exporters.inference``), and prints the
differences from the profile's ``[sources.<name>]`` ``version`` / ``features`` / ``metric_prefix``. With
``--write`` the profile file is updated to state what the store shows (every other line kept). Exit 0 when the
profile fits the store (or was written), 1 on a difference, 2 on bad input.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from dashgen.cli.options import HTTP_URL, SECONDS, selected_profiles
from dashgen.cli.output import emit_json, format_option
from dashgen.deployment.edit import set_source_fields
from dashgen.deployment.profile import Profile, load_profile
from dashgen.errors import InputError, redact
from dashgen.exporters.availability import Stated
from dashgen.exporters.families import family_reports
from dashgen.exporters.inference import Inferred, differences, infer, proposed
from dashgen.exporters.table import SGLANG, SPECULATIVE
from dashgen.live.datasource import Datasource
from dashgen.live.expand import parse_duration


def store_names(datasource: Datasource, profile: Profile | None, window: float, now: float) -> list[str]:
    """The metric names in the store over the window; of the profile's deployment when it has a label for it."""
    matchers = [f'{{{profile.label("deployment")}="{profile.deployment}"}}'] if profile and profile.deployment else []
    return datasource.label_values("__name__", matchers, now - window, now)


def stated_of(profile: Profile | None, source: str) -> Stated:
    """What the profile states about one source. SGLang's draft flag is stated by ``[speculative]`` too: a profile
    whose features are not listed but that states no draft algorithm runs none (every other flag assumed on)."""
    if profile is None or source not in profile.sources:
        return Stated()
    stated = profile.source(source).stated
    if source == SGLANG.source and stated.features is None and not profile.speculative.algorithm:
        return dataclasses.replace(stated, features=tuple(f.name for f in SGLANG.flags if f.name != SPECULATIVE))
    return stated


def source_report(inferred: Inferred, profile: Profile | None) -> dict[str, Any]:
    """One source's inference, and with a profile its differences and the fields ``--write`` would set."""
    stated = stated_of(profile, inferred.source)
    report: dict[str, Any] = {
        "source": inferred.source,
        "present": inferred.present,
        "metric_prefix": inferred.prefix,
        "version_range": inferred.version_range() if inferred.present else "",
        "features_on": list(inferred.flags_on),
        "features_off": list(inferred.flags_off),
        "evidence": list(inferred.evidence),
    }
    if profile is not None:
        report["differences"] = differences(inferred, stated)
        report["proposed"] = proposed(inferred, stated) if report["differences"] else {}
    return report


def render_families(families: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per panel family: its state in the store, the version behind it and what it needs."""
    lines = []
    for family in families:
        line = f"family {family['title']}: {family['state']} ({family['version']}; needs {family['needs']})"
        lines.append(line)
        if family["state"] == "partly present":
            lines.append(f"    absent: {', '.join(family['absent'])}")
    return lines


def render_text(
    reports: list[dict[str, Any]], profile: Profile | None, families: Sequence[Mapping[str, Any]] = ()
) -> str:
    lines = []
    for report in reports:
        if not report["present"]:
            continue
        parts = [f"versions {report['version_range']}"] if report["version_range"] else []
        parts += [f"prefix {report['metric_prefix']}"] if report["metric_prefix"] else []
        parts += [f"{flag} on" for flag in report["features_on"]] + [f"{flag} off" for flag in report["features_off"]]
        lines.append(f"{report['source']}: {'; '.join(parts) or 'present'}")
        lines += [f"    {line}" for line in report["evidence"]]
        lines += [f"  DIFFERENCE {line}" for line in report.get("differences", ())]
    absent = [r["source"] for r in reports if not r["present"]]
    if absent:
        lines.append(f"no series of: {', '.join(absent)}")
    lines += render_families(families)
    if profile is not None and not any(r.get("differences") for r in reports):
        lines.append(f"profile {profile.name} states what the store shows")
    return "\n".join(lines) + "\n"


@click.command("doctor")
@click.option("--datasource-url", required=True, type=HTTP_URL, help="Prometheus-compatible base URL to probe.")
@click.option("--profile", "profile_name", default=None, help="Profile to compare with (and --write to).")
@click.option("--window", default="1h", show_default=True, help="How far back to read the store's metric names.")
@click.option("--write", is_flag=True, help="Update the profile's [sources.*] version / features / metric_prefix.")
@click.option("--timeout", type=SECONDS, default=30.0, show_default=True, help="Deadline of each request, seconds.")
@format_option("text", "json")
@click.pass_context
def doctor_command(
    ctx: click.Context,
    datasource_url: str,
    profile_name: str | None,
    window: str,
    write: bool,
    timeout: float,
    output_format: str,
) -> None:
    """Infer each exporter's version range, flags and prefix from the store; show the profile's differences."""
    if write and profile_name is None:
        raise InputError("--write needs --profile: the profile file to update")
    try:
        length = parse_duration(window)
    except ValueError as exc:
        raise InputError(f"--window: {exc}") from None
    profile = selected_profiles(ctx, [profile_name])[0] if profile_name else None
    names = store_names(Datasource(datasource_url, timeout=timeout), profile, length, time.time())
    reports = [source_report(inferred, profile) for inferred in infer(names).values()]
    families = family_reports(names)
    differing = [r for r in reports if r.get("differences")]
    code = 1 if differing else 0
    if write and profile is not None and differing:
        text = Path(profile.path).read_text(encoding="utf-8")
        for report in differing:
            if report["proposed"]:
                text = set_source_fields(text, profile.path, report["source"], report["proposed"])
        Path(profile.path).write_text(text, encoding="utf-8")
        load_profile(profile.path)  # what was written reads back as a valid profile
        code = 0
    if output_format == "json":
        meta = {"datasource": redact(datasource_url), "profile": profile.name if profile else None, "written": write}
        emit_json(
            ctx,
            {**meta, "sources": reports, "families": families},
            code,
            [d for r in differing for d in r["differences"]] if code else [],
        )
    else:
        click.echo(render_text(reports, profile, families), nl=False)
        if write and differing:
            click.echo(f"wrote {profile.path if profile else ''}")
    ctx.exit(code)
