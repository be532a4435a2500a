"""``dashgen rules``: render the Prometheus / vmalert rule files of the selected profiles."""

from __future__ import annotations

from pathlib import Path

import click

from dashgen.cli.options import selected_profiles
from dashgen.files import write_if_changed
from dashgen.rules import render_rule_files


def write_rule_files(files: dict[Path, bytes]) -> list[Path]:
    """Write the files whose bytes changed; returns the written paths."""
    return [path for path, data in sorted(files.items()) if write_if_changed(path, data)]


@click.command("rules")
@click.option("--profile", "profile_names", multiple=True, help="Profile to render (repeatable; default: all).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("rules"),
              show_default=True, help="Output folder for <profile>.yml.")
@click.pass_context
def rules_command(ctx: click.Context, profile_names: tuple[str, ...], out_dir: Path) -> None:
    """Render alerting and recording rules into OUT/<profile>.yml (Prometheus rule_files / vmalert -rule)."""
    profiles = selected_profiles(ctx, profile_names)
    files = render_rule_files(profiles, out_dir)
    written = set(write_rule_files(files))
    for path, data in sorted(files.items()):
        count = data.count(b"\n      - alert: ")
        records = data.count(b"\n      - record: ")
        state = "written" if path in written else "unchanged"
        click.echo(f"{path}  {count} alerts  {records} recording rules  {state}")


