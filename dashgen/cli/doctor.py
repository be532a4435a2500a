"""``dashgen doctor``: what the store's series names say about the deployment's exporters (S35), beside what the
profile states.

Reads the metric names of the store (of the profile's deployment, when it has a deployment label) over
``--window``, infers per source of the exporter table whether it writes, the prefix of its scrape path, the
versions its names fit and the flags whose series are present (``dashgen.exporters.inference``), and prints the
differences from the profile's ``[sources.<name>]`` ``version`` / ``features`` / ``metric_prefix``. With
``--write`` the profile file is updated to state what the store shows (every other line kept). With a profile it
also checks that the profile describes the store at all (``dashgen.live.profile_fit``): the deployment's label and
value, each exported source's series, the label names the panels select by, the node names and GPU counts — each a named
difference with its likely fix; ``--write`` sets the label names found. It names two exporters claiming one port
(Mooncake's TENT metrics server and node_exporter both default to 9100: ``dashgen.exporters.ports``). Exit 0 when
the profile fits the store (or was written), 1 on a difference or a port clash, 2 on bad input.
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
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.edit import set_label_names, set_source_fields
from dashgen.deployment.label_roles import ALIASES
from dashgen.deployment.profile import Profile, profile_from_text
from dashgen.errors import InputError, redact
from dashgen.escape import inline_text, terminal_lines
from dashgen.exporters.availability import Stated
from dashgen.exporters.families import family_reports
from dashgen.exporters.inference import Inferred, differences, infer, proposed
from dashgen.exporters.ports import ScrapeTarget, port_clashes
from dashgen.exporters.table import SGLANG, SPECULATIVE, TENT_PORT
from dashgen.files import atomic_write, read_regular_text
from dashgen.live.datasource import Datasource
from dashgen.live.expand import parse_span
from dashgen.live.profile_fit import Difference, StoreView, profile_differences, proposable_aliases

CANDIDATES_ASKED = 40  # label names asked for the deployment's value when the stated label does not carry it


def store_names(datasource: Datasource, profile: Profile | None, window: float, now: float) -> list[str]:
    """The metric names in the store over the window; of the profile's deployment when it has a label for it."""
    matchers = [f'{{{profile.label("deployment")}="{profile.deployment}"}}'] if profile and profile.deployment else []
    return datasource.label_values("__name__", matchers, now - window, now)


def store_view(datasource: Datasource, profile: Profile, window: float, now: float) -> StoreView:
    """What :func:`profile_differences` compares the profile with, read from the store."""
    start = now - window
    label = profile.label("deployment")
    selector = [f'{{{label}="{profile.deployment}"}}'] if profile.deployment else []
    names = datasource.label_values("__name__", selector, start, now)
    matches = bool(names) or not profile.deployment
    present = frozenset(source for source, inferred in infer(names).items() if inferred.present)
    label_names = frozenset(datasource.label_names(selector if matches else [], start, now))
    if matches:
        node = profile.label("node")
        nodes = tuple(datasource.label_values(node, selector, start, now)) if node in label_names else ()
        carriers = alias_carriers(datasource, profile, label_names, start, now)
        gpus = gpus_by_node(datasource, profile, window, now) if {node, profile.label("gpu")} <= label_names else {}
        return StoreView(True, label_names, present, carriers=carriers, node_values=nodes, gpus_by_node=gpus)
    values = tuple(datasource.label_values(label, [], start, now)) if label in label_names else ()
    asked = [a for a in ALIASES["deployment"] if a in label_names and a != label]
    asked += sorted(label_names - {label, "__name__", *asked})[: max(0, CANDIDATES_ASKED - len(asked))]
    carrying = tuple(name for name in asked if profile.deployment in datasource.label_values(name, [], start, now))
    return StoreView(False, label_names, present, values, carrying)


def alias_carriers(
    datasource: Datasource, profile: Profile, label_names: frozenset[str], start: float, now: float
) -> dict[str, frozenset[str]]:
    """For each label name doctor may propose for a role, the sources of the deployment whose series carry it."""
    scope = f'{profile.label("deployment")}="{profile.deployment}", ' if profile.deployment else ""
    carriers = {}
    for alias in proposable_aliases(profile, label_names):
        names = datasource.label_values("__name__", [f'{{{scope}{alias}!=""}}'], start, now)
        carriers[alias] = frozenset(source for source, inferred in infer(names).items() if inferred.present)
    return carriers


def gpus_by_node(datasource: Datasource, profile: Profile, window: float, now: float) -> dict[str, int]:
    """Per node, the GPUs with any DCGM series over the window (none when DCGM writes nothing)."""
    node, gpu = profile.label("node"), profile.label("gpu")
    scope = f', {profile.label("deployment")}="{profile.deployment}"' if profile.deployment else ""
    seen = f'count_over_time({{__name__=~"DCGM_FI_.+"{scope}}}[{max(1, int(window))}s])'
    result = datasource.query(f"count by ({node}) (count by ({node}, {gpu}) ({seen}))", now).result
    return {str(item["metric"].get(node, "")): int(float(item["value"][1])) for item in result}


def scrape_targets(datasource: Datasource, profile: Profile | None, now: float) -> list[ScrapeTarget]:
    """Each target on TENT's default port with what it delivered (``tent_*``, ``node_*`` series) at ``now``."""
    job = profile.label("job") if profile else "job"
    instance = profile.label("instance") if profile else "instance"
    scope = f'{profile.label("deployment")}="{profile.deployment}", ' if profile and profile.deployment else ""
    port = f'{instance}=~".*:{TENT_PORT}"'

    def keys(selector: str) -> set[tuple[str, str]]:
        result = datasource.query(f"group by ({job}, {instance}) ({selector})", now).result
        return {(item["metric"].get(job, ""), item["metric"].get(instance, "")) for item in result}

    tent = keys(f'{{__name__=~"tent_.+", {scope}{port}}}')
    node = keys(f'{{__name__=~"node_.+", {scope}{port}}}')
    up = keys(f"up{{{scope}{port}}}")
    return [ScrapeTarget(j, i, (j, i) in tent, (j, i) in node) for j, i in sorted(up | tent | node)]


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
        line = (
            f"family {inline_text(family['title'])}: {family['state']} "
            f"({inline_text(family['version'])}; needs {inline_text(family['needs'])})"
        )
        lines.append(line)
        if family["state"] == "partly present":
            lines.append(f"    absent: {inline_text(', '.join(family['absent']))}")
    return lines


def render_text(
    reports: list[dict[str, Any]],
    profile: Profile | None,
    fit: list[Difference] | None = None,
    families: Sequence[Mapping[str, Any]] = (),
    unscoped: Sequence[str] = (),
) -> str:
    fit = fit or []
    lines = [f"DIFFERENCE {inline_text(d.line())}" for d in fit]
    for report in reports:
        if not report["present"]:
            continue
        parts = [f"versions {report['version_range']}"] if report["version_range"] else []
        parts += [f"prefix {inline_text(report['metric_prefix'])}"] if report["metric_prefix"] else []
        parts += [f"{flag} on" for flag in report["features_on"]] + [f"{flag} off" for flag in report["features_off"]]
        lines.append(f"{report['source']}: {'; '.join(parts) or 'present'}")
        lines += [f"    {inline_text(line)}" for line in report["evidence"]]
        lines += [f"  DIFFERENCE {inline_text(line)}" for line in report.get("differences", ())]
    absent = [r["source"] for r in reports if not r["present"]]
    if absent:
        lines.append(f"no series of: {', '.join(absent)}")
    lines += render_families(families)
    lines += [f"UNSCOPED {inline_text(note)}" for note in unscoped]
    if profile is not None and not fit and not unscoped and not any(r.get("differences") for r in reports):
        lines.append(f"profile {inline_text(profile.name)} states what the store shows")
    return "\n".join(lines) + "\n"


def imported_unscoped(profile: Profile | None) -> list[str]:
    """The profile's imported (team) queries that read every deployment of its shared store or select by label
    names it does not use, each with the reason it could not be rewritten (none without ``extra_modules``)."""
    if profile is None or not profile.dashboard.extra_modules:
        return []
    return [note for spec in dashboard_specs(profile) for note in spec.unscoped]


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
        length = parse_span(window)
    except ValueError as exc:
        raise InputError(f"--window: {exc}") from None
    profile = selected_profiles(ctx, [profile_name])[0] if profile_name else None
    datasource = Datasource(datasource_url, timeout=timeout)
    now = time.time()
    fit: list[Difference] = []
    if profile is not None:
        known = set(infer([]))
        fit = profile_differences(profile, store_view(datasource, profile, length, now), known)
    # a deployment no series carries leaves nothing to infer from: the deployment difference says why
    wrong_deployment = any(d.field in ("deployment", "labels.deployment") for d in fit)
    names = [] if wrong_deployment else store_names(datasource, profile, length, now)
    reports = [source_report(inferred, profile) for inferred in infer(names).values()]
    families = family_reports(names)
    clashes = [] if wrong_deployment else port_clashes(scrape_targets(datasource, profile, now))
    unscoped = imported_unscoped(profile)
    differing = [r for r in reports if r.get("differences")]
    code = 1 if differing or fit or clashes or unscoped else 0
    if write and profile is not None and (differing or fit):
        text = read_regular_text(Path(profile.path))
        for report in differing:
            if report["proposed"]:
                text = set_source_fields(text, profile.path, report["source"], report["proposed"])
        labels = {role: name for d in fit for role, name in d.proposed.items()}
        if labels:
            text = set_label_names(text, profile.path, labels)
        # what the store named must make a valid profile before the team's file is touched (a label name read
        # from the store is foreign text)
        profile_from_text(text, profile.path, expected_name=Path(profile.path).stem)
        try:
            atomic_write(Path(profile.path), text.encode("utf-8"))
        except OSError as exc:
            raise InputError(f"{profile.path}: cannot write ({exc.strerror})") from None
        unfixed = [d for d in fit if not d.proposed]
        code = 1 if unfixed or clashes or unscoped else 0
    if output_format == "json":
        meta = {"datasource": redact(datasource_url), "profile": profile.name if profile else None, "written": write}
        problems = [d.line() for d in fit] + [d for r in differing for d in r["differences"]] + clashes + unscoped
        fitted = [{"field": d.field, "message": d.message, "fix": d.fix, "proposed": dict(d.proposed)} for d in fit]
        emit_json(
            ctx,
            {
                **meta,
                "profile_fit": fitted,
                "sources": reports,
                "families": families,
                "port_clashes": clashes,
                "imported_unscoped": unscoped,
            },
            code,
            problems if code else [],
        )
    else:
        text_out = render_text(reports, profile, fit, families, unscoped)
        text_out += "".join(f"PORT CLASH {inline_text(clash)}\n" for clash in clashes)
        click.echo(terminal_lines(text_out), nl=False)
        if write and differing:
            click.echo(f"wrote {inline_text(profile.path if profile else '')}")
    ctx.exit(code)
