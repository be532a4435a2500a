"""The ``dashgen`` command group: one explicit command table, and the one exception boundary that
turns dashgen's errors into a message and the exit code of the contract (0 ok, 1 a check failed
or a publish was refused, 2 usage or input error).

Each command family is one module of ``dashgen.cli``; a module is imported only when its command
runs (or ``--help`` lists them all), so ``dashgen diff`` does not pay for the publish machinery.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from dashgen import __version__
from dashgen.errors import DashgenError

# command name -> "module:attribute" of dashgen.cli, in the order ``--help`` lists them
COMMANDS: dict[str, str] = {
    "build": "build_cmd:build",
    "profiles": "build_cmd:profiles_command",
    "rules": "rules:rules_command",
    "index": "index_cmd:index_command",
    "lint": "lint_cmd:lint_command",
    "diff": "diff_cmd:diff_command",
    "check": "check:check_command",
    "validate-queries": "validate_queries:validate_queries",
    "demo-data": "demo_data:demo_data",
    "publish": "publish:publish",
    "rollback": "publish:rollback",
    "history": "publish:history",
}


def load_command(name: str) -> click.Command:
    module, attribute = COMMANDS[name].split(":")
    return getattr(importlib.import_module(f"dashgen.cli.{module}"), attribute)


class DashgenGroup(click.Group):
    """Commands from the table, loaded on use; DashgenError becomes one clear line and its exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except DashgenError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=DashgenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dashgen")
@click.option(
    "--profiles-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of deployment profiles (default: ./profiles).",
)
@click.pass_context
def main(ctx: click.Context, profiles_dir: Path | None) -> None:
    """dashgen: Grafana dashboards as code for LLM inference clusters."""
    ctx.ensure_object(dict)
    ctx.obj["profiles_dir"] = profiles_dir
