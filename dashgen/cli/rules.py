"""``dashgen rules``: render the rule files of the selected profiles: Prometheus / vmalert rule files
(``rules/<profile>.yml``, the default), prometheus-operator ``PrometheusRule`` resources, or vmalert groups files."""

from __future__ import annotations

from pathlib import Path

import click

from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, key_values, kind_format_option, split_kinds
from dashgen.files import write_if_changed
from dashgen.rules import render_rule_files
from dashgen.rules.render import FORMATS


def write_rule_files(files: dict[Path, bytes]) -> list[Path]:
    """Write the files whose bytes changed; returns the written paths."""
    return [path for path, data in sorted(files.items()) if write_if_changed(path, data)]


@click.command("rules")
@click.option("--profile", "profile_names", multiple=True, help="Profile to render (repeatable; default: all).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("rules"),
              show_default=True, help="Output folder.")
@kind_format_option(FORMATS, "prometheus (default: <profile>.yml), prometheus-operator "
                             "(<profile>.prometheusrule.yaml) or vmalert (<profile>.vmalert.yml)")
@click.option("--namespace", help="metadata.namespace of the PrometheusRule.")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
              help="A label of the PrometheusRule, e.g. release=kube-prometheus-stack for its ruleSelector.")
@click.pass_context
def rules_command(ctx: click.Context, profile_names: tuple[str, ...], out_dir: Path, formats: tuple[str, ...],
                  namespace: str | None, labels: tuple[str, ...]) -> None:
    """Render alerting and recording rules into OUT (Prometheus rule_files / vmalert -rule, or PrometheusRule)."""
    kinds, report = split_kinds(formats, ["prometheus"])
    profiles = selected_profiles(ctx, profile_names)
    extra = key_values(labels, "--label")
    results = []
    for kind in kinds:
        files = render_rule_files(profiles, out_dir, kind, namespace, extra)
        written = set(write_rule_files(files))
        for path, data in sorted(files.items()):
            results.append({"path": str(path), "format": kind, "alerts": data.count(b"- alert: "),
                            "recording_rules": data.count(b"- record: "), "written": path in written})
    if report == "json":
        emit_json(ctx, results)
        return
    for row in results:
        state = "written" if row["written"] else "unchanged"
        click.echo(f"{row['path']}  {row['alerts']} alerts  {row['recording_rules']} recording rules  {state}")
