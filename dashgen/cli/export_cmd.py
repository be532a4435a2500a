"""``dashgen export``: the built dashboards as the files a deployment loads: grafana-operator ``GrafanaDashboard``
resources, ConfigMaps for the kube-prometheus-stack Grafana sidecar, or Grafana file provisioning (provider
YAML and the JSON). Everything is built and validated first; a bad profile writes nothing."""

from __future__ import annotations

from pathlib import Path

import click

from dashgen.build import build_all
from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, key_values, kind_format_option, split_kinds
from dashgen.errors import InputError
from dashgen.files import write_if_changed
from dashgen.manifests import FORMATS, ExportOptions, export_files

# Which of these loaders accept a v2 dashboard (issue 30): none yet, so a v2 profile is exported as the v1 rendering
# of the same panels. grafana-operator v5's GrafanaDashboard takes classic dashboard JSON (grafana-operator #2760
# asks for v2); the sidecar's files and file provisioning are loaded by Grafana's file provisioning, which refuses
# raw v2 JSON in Grafana 13.0 (grafana/grafana#122663).
V2_NOT_LOADED = (
    '[dashboard] schema = "v2", but grafana-operator, the provisioning sidecar and file provisioning load v1 '
    "dashboards only (grafana-operator #2760, grafana/grafana#122663): the v1 rendering of the same panels is "
    "written; publish the v2 dashboard through Grafana's /apis (dashgen publish)"
)


@click.command("export")
@click.option("--profile", "profile_names", multiple=True, help="Profile to export (repeatable; default: all).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("deploy"),
    show_default=True,
    help="Output folder: OUT/<format>/<profile>.yaml.",
)
@kind_format_option(FORMATS, "grafana-operator, configmap or provisioning (default: all three)")
@click.option("--namespace", help="metadata.namespace of the Kubernetes resources.")
@click.option(
    "--folder",
    help="Grafana folder title (grafana-operator: a GrafanaFolder the dashboards name in "
    "spec.folderRef; the sidecar's folder annotation; the provider's folder).",
)
@click.option(
    "--folder-uid",
    help="Grafana folder uid (the GrafanaFolder's uid with --folder, else GrafanaDashboard "
    "spec.folderUID; the provider's folderUid).",
)
@click.option(
    "--gzip",
    "gzip_json",
    is_flag=True,
    help="grafana-operator: the dashboard JSON gzipped in spec.gzipJson instead of spec.json.",
)
@click.option(
    "--instance-label",
    "instance_labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="spec.instanceSelector.matchLabels of the GrafanaDashboard (default dashboards=grafana).",
)
@click.option(
    "--datasource",
    metavar="NAME",
    help="Map the dashboards' ${datasource} to this data source (GrafanaDashboard spec.datasources).",
)
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE", help="An extra label of every resource.")
@click.option(
    "--folder-annotation",
    default="grafana_folder",
    show_default=True,
    help="The sidecar's folderAnnotation (kube-prometheus-stack: grafana.sidecar.dashboards.folderAnnotation).",
)
@click.option(
    "--provisioning-path",
    default="/var/lib/grafana/dashboards/dashgen",
    show_default=True,
    help="Where the JSON lives on the Grafana host (the provider's options.path, + /<profile>).",
)
@click.pass_context
def export_command(
    ctx: click.Context,
    profile_names: tuple[str, ...],
    out_dir: Path,
    formats: tuple[str, ...],
    namespace: str | None,
    folder: str | None,
    folder_uid: str | None,
    instance_labels: tuple[str, ...],
    datasource: str | None,
    labels: tuple[str, ...],
    folder_annotation: str,
    provisioning_path: str,
    gzip_json: bool,
) -> None:
    """Write the dashboards of the selected profiles for grafana-operator, the sidecar, or file provisioning."""
    kinds, report = split_kinds(formats, FORMATS)
    instances = key_values(instance_labels, "--instance-label") or {"dashboards": "grafana"}
    options = ExportOptions(
        namespace=namespace,
        folder=folder,
        folder_uid=folder_uid,
        instance_labels=instances,
        datasource=datasource,
        labels=key_values(labels, "--label"),
        folder_annotation=folder_annotation,
        provisioning_path=provisioning_path,
        gzip=gzip_json,
    )
    profiles = selected_profiles(ctx, profile_names)
    for profile in profiles:
        if profile.dashboard.schema == "v2":
            click.echo(f"note: {profile.name}: {V2_NOT_LOADED}", err=True)
    built = build_all(profiles, schema="v1")  # none of these loaders takes a v2 resource (V2_NOT_LOADED)
    try:
        files = {out_dir / name: data for kind in kinds for name, data in export_files(built, kind, options).items()}
    except ValueError as exc:
        raise InputError(str(exc)) from None
    results = [
        {
            "path": str(path),
            "format": path.relative_to(out_dir).parts[0],
            "bytes": len(data),
            "written": write_if_changed(path, data),
        }
        for path, data in sorted(files.items())
    ]
    if report == "json":
        emit_json(ctx, results)
        return
    for row in results:
        click.echo(f"{row['path']}  {row['bytes']:,} bytes  {'written' if row['written'] else 'unchanged'}")
