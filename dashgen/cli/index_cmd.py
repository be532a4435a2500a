"""``dashgen index``: write the panel index docs/panels.md (key, title, module, queries, rules, tests, evidence)."""

from __future__ import annotations

from pathlib import Path

import click

from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, format_option
from dashgen.files import write_if_changed
from dashgen.panel_index import INDEX_PATH, build_index


@click.command("index")
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=INDEX_PATH,
    show_default=True,
    help="Where to write the index.",
)
@format_option("text", "json")
@click.pass_context
def index_command(ctx: click.Context, out_path: Path, output_format: str) -> None:
    """Write the panel index of every profile: what each panel proves, where it is defined and tested."""
    written = write_if_changed(out_path, build_index(selected_profiles(ctx, [])))
    if output_format == "json":
        emit_json(ctx, {"path": str(out_path), "written": written})
        return
    click.echo(f"{out_path}  {'written' if written else 'unchanged'}")
