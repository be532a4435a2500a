"""``dashgen export``: the built dashboards as the files a deployment loads: grafana-operator ``GrafanaDashboard``
resources, ConfigMaps for the kube-prometheus-stack Grafana sidecar, or Grafana file provisioning (provider
YAML and the JSON). Everything is built and validated first; a bad profile writes nothing."""

from __future__ import annotations

from pathlib import Path

import click

from dashgen.build import build_all
from dashgen.cli.options import kubernetes_labels_option, selected_profiles
from dashgen.cli.output import emit_json, key_values, kind_format_option, split_kinds
from dashgen.cli.paramtypes import KUBERNETES_NAMESPACE
from dashgen.errors import InputError
from dashgen.files import write_files_if_changed
from dashgen.manifests import FORMATS, ExportOptions, export_files
from dashgen.manifests.v2_files import export_v2_files, v2_dashboards

# What a v2 profile's grafana-operator resources cannot carry: GrafanaManifest has no datasources mapping, no
# gzipJson, and names its folder by uid only (the grafana.app/folder annotation of its template).
V2_OPERATOR_NOTES = {
    "datasource": "--datasource is not applied to its GrafanaManifests (no spec.datasources): the dashboards' "
    "own datasource variable picks the data source",
    "gzip": "--gzip does not apply to its GrafanaManifests (the template is inline JSON)",
    "folder": "its GrafanaManifests name no folder: a v2 dashboard is placed by the folder's uid (give --folder-uid)",
}


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
@click.option("--namespace", type=KUBERNETES_NAMESPACE, help="metadata.namespace of the Kubernetes resources.")
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
@kubernetes_labels_option(
    "--instance-label",
    "instance_labels",
    "spec.instanceSelector.matchLabels of the GrafanaDashboard (default dashboards=grafana).",
)
@click.option(
    "--datasource",
    metavar="NAME",
    help="Map the dashboards' ${datasource} to this data source (GrafanaDashboard spec.datasources).",
)
@kubernetes_labels_option("--label", "labels", "An extra label of every resource.")
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
    v2 = {p.name: p.dashboard.v2_api_version for p in profiles if p.dashboard.schema == "v2"}
    if v2 and "grafana-operator" in kinds:
        given = {"datasource": datasource, "gzip": gzip_json, "folder": folder and not folder_uid}
        for name in sorted(v2):
            for key, note in V2_OPERATOR_NOTES.items():
                if given[key]:
                    click.echo(f"note: {name}: {note}", err=True)
    built = build_all(profiles, schema="v1")  # a v2 profile's resources are rendered from its v1 build below
    v2_built = v2_dashboards([b for b in built if b.profile in v2], v2)
    try:
        files = {
            out_dir / name: data
            for kind in kinds
            for name, data in [
                *export_files([b for b in built if b.profile not in v2], kind, options).items(),
                *export_v2_files(v2_built, kind, options).items(),
            ]
        }
    except ValueError as exc:
        raise InputError(str(exc)) from None
    written = set(write_files_if_changed(sorted(files.items())))
    results = [
        {
            "path": str(path),
            "format": path.relative_to(out_dir).parts[0],
            "bytes": len(data),
            "written": path in written,
        }
        for path, data in sorted(files.items())
    ]
    if report == "json":
        emit_json(ctx, results)
        return
    for row in results:
        click.echo(f"{row['path']}  {row['bytes']:,} bytes  {'written' if row['written'] else 'unchanged'}")
