"""``dashgen build`` and ``dashgen profiles``: render the selected profiles' dashboards, list the profiles."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import click

from dashgen.build import build_all, prune_removed_profiles, write_dashboards
from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, format_option, print_table
from dashgen.deployment.sizes import format_binary
from dashgen.deployment.topology import topology_of


def installed_panels_note() -> str | None:
    """A warning when the current folder is a clone of dashgen whose ``panels/`` is not the one installed (a
    ``pip install .`` copy in site-packages): edits to ``./panels`` would be silently ignored by this build."""
    import dashgen_panels

    local = Path.cwd() / "panels" / "__init__.py"
    try:
        is_clone = local.is_file() and "GROUPS" in local.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    installed = Path(dashgen_panels.__file__ or "").resolve().parent
    if not is_clone or installed == local.parent.resolve():
        return None
    return (
        f"dashgen's panels are imported from {installed}, not from ./panels: edits there are not used by this "
        "build; install the clone editable (pip install -e .) to build from it"
    )


@click.command("build")
@click.option("--profile", "profile_names", multiple=True, help="Profile to build (repeatable; default: all).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dashboards"),
    show_default=True,
    help="Output folder.",
)
@click.option(
    "--schema",
    type=click.Choice(["v1", "v2"]),
    default=None,
    help="Dashboard model to write, overriding the profiles' [dashboard] schema: v1 (classic JSON) or v2 "
    "(the dashboard.grafana.app v2 resource: v2beta1 for Grafana 12.2+, v2 for 13; refused below 12.2).",
)
@format_option("text", "json")
@click.pass_context
def build(
    ctx: click.Context, profile_names: tuple[str, ...], out_dir: Path, schema: str | None, output_format: str
) -> None:
    """Render every dashboard of the selected profiles into OUT/<profile>/<uid>.json.

    Everything is rendered and validated first; a bad profile or an invalid dashboard writes nothing. Without
    --profile (every profile built), the dashboards dashgen wrote for a profile that no longer exists are removed.
    With v2 (--schema v2 or [dashboard] schema = "v2") the file is the v2 resource, validated against Grafana's
    v2 schema, its panels laid out in tabs by question.
    """
    profiles = selected_profiles(ctx, profile_names)
    if (note := installed_panels_note()) is not None:
        click.echo(f"warning: {note}", err=True)
    built = build_all(profiles, schema)
    written = write_dashboards(built, out_dir)
    removed = [] if profile_names else prune_removed_profiles(out_dir, {p.name for p in profiles})
    if output_format == "json":
        emit_json(
            ctx,
            [
                *(
                    {
                        "profile": b.profile,
                        "uid": b.uid,
                        "path": str(out_dir / b.relative_path()),
                        "sha256": b.sha256,
                        "schema": b.schema,
                        "panels": len(b.spec.panels()),
                        "written": out_dir / b.relative_path() in written,
                    }
                    for b in built
                ),
                *({"profile": path.parent.name, "path": str(path), "removed": True} for path in removed),
            ],
        )
        return
    for dashboard in built:
        path = out_dir / dashboard.relative_path()
        state = "written" if path in written else "unchanged"
        schema = "" if dashboard.schema == "v1" else f"  {dashboard.document.get('apiVersion')}"
        click.echo(f"{path}  {len(dashboard.spec.panels())} panels  sha256 {dashboard.sha256[:12]}  {state}{schema}")
    for path in removed:
        click.echo(f"{path}  removed (profile {path.parent.name} no longer exists)")


class _ProfileRow(TypedDict):
    """One row of ``dashgen profiles`` (also its JSON answer)."""

    name: str
    nodes: int
    gpus: int
    pools: list[str]
    exported: list[str]
    not_exported: list[str]
    not_deployed: list[str]
    store_per_node: int | None
    host_cache_per_node: int | None
    grafana: str


@click.command("profiles")
@format_option("text", "json")
@click.option("--wide", is_flag=True, help="Do not wrap long cells to the terminal's width.")
@click.pass_context
def profiles_command(ctx: click.Context, output_format: str, wide: bool) -> None:
    """List the deployment profiles with their sizes, topology, sources and capacities.

    The table fits the terminal (long cells wrap inside their column; COLUMNS is honoured); --wide keeps
    every row on one line."""
    rows: list[_ProfileRow] = []
    for profile in selected_profiles(ctx, ()):
        capacity = topology_of(profile).capacity
        rows.append(
            {
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
            }
        )
    if output_format == "json":
        emit_json(ctx, rows)
        return
    table = []
    for row in rows:
        store = format_binary(row["store_per_node"]) if row["store_per_node"] else "-"
        host = format_binary(row["host_cache_per_node"]) if row["host_cache_per_node"] else "-"
        sources = ", ".join(row["exported"])
        if row["not_exported"]:
            sources += ("; " if wide else "\n") + "not exported: " + ", ".join(row["not_exported"])
        table.append(
            [
                row["name"],
                str(row["nodes"]),
                str(row["gpus"]),
                ("; " if wide else "\n").join(row["pools"]),
                store,
                host,
                sources,
            ]
        )
    print_table(
        [
            ("profile", "left"),
            ("nodes", "right"),
            ("GPUs", "right"),
            ("pools", "left", 23),
            ("Store/node", "right"),
            ("Host/node", "right"),
            ("sources", "left"),
        ],
        table,
        wide=wide,
    )
