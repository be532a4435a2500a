"""``dashgen build`` and ``dashgen profiles``: render the selected profiles' dashboards, list the profiles."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dashgen.build import build_all, write_dashboards
from dashgen.cli.options import selected_profiles
from dashgen.deployment.sizes import format_binary
from dashgen.deployment.topology import Topology


@click.command("build")
@click.option("--profile", "profile_names", multiple=True, help="Profile to build (repeatable; default: all).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("dashboards"),
              show_default=True, help="Output folder.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def build(ctx: click.Context, profile_names: tuple[str, ...], out_dir: Path, output_format: str) -> None:
    """Render every dashboard of the selected profiles into OUT/<profile>/<uid>.json.

    Everything is rendered and validated first; a bad profile or an invalid dashboard writes nothing.
    """
    profiles = selected_profiles(ctx, profile_names)
    built = build_all(profiles)
    written = write_dashboards(built, out_dir)
    if output_format == "json":
        click.echo(json.dumps(
            [{"profile": b.profile, "uid": b.uid, "path": str(out_dir / b.relative_path()), "sha256": b.sha256,
              "panels": len(b.spec.panels())} for b in built], indent=2))
        return
    for dashboard in built:
        path = out_dir / dashboard.relative_path()
        state = "written" if path in written else "unchanged"
        click.echo(f"{path}  {len(dashboard.spec.panels())} panels  sha256 {dashboard.sha256[:12]}  {state}")


@click.command("profiles")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def profiles_command(ctx: click.Context, output_format: str) -> None:
    """List the deployment profiles with their sizes, topology, sources and capacities."""
    rows = []
    for profile in selected_profiles(ctx, ()):
        capacity = Topology(profile).capacity
        rows.append({
            "name": profile.name,
            "nodes": profile.nodes,
            "gpus": profile.total_gpus,
            "pools": [f"{p.name}: {p.replicas} x TP{p.tp} x PP{p.pp}" for p in profile.pools],
            "exported": [s.name for s in profile.sources.values() if s.exported],
            "not_exported": [s.name for s in profile.sources.values() if s.status == "not-exported"],
            "not_deployed": [s.name for s in profile.sources.values() if not s.deployed],
            "store_per_node": capacity.store_per_node,
            "host_cache_per_node": capacity.host_per_node,
            "grafana": profile.dashboard.grafana_version,
        })
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    header = f"{'profile':<18}{'nodes':>6}{'GPUs':>6}  {'pools':<34}{'Store/node':>11}{'Host/node':>11}  sources"
    click.echo(header)
    for row in rows:
        store = format_binary(row["store_per_node"]) if row["store_per_node"] else "-"
        host = format_binary(row["host_cache_per_node"]) if row["host_cache_per_node"] else "-"
        sources = ", ".join(row["exported"])
        if row["not_exported"]:
            sources += "; not exported: " + ", ".join(row["not_exported"])
        click.echo(f"{row['name']:<18}{row['nodes']:>6}{row['gpus']:>6}  {'; '.join(row['pools']):<34}"
                   f"{store:>11}{host:>11}  {sources}")
