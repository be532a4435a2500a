"""Every command (and subcommand) that talks to Grafana: those that take ``--grafana-url``, found from the command
table, so a new one is in every test that walks them."""

from __future__ import annotations

import click

from dashgen.cli.app import COMMANDS, load_command


def grafana_commands() -> dict[str, click.Command]:
    """Every command (and subcommand) that takes ``--grafana-url``, by its words (``"publish"``)."""
    found: dict[str, click.Command] = {}
    for name in COMMANDS:
        command = load_command(name)
        subcommands = command.commands if isinstance(command, click.Group) else {}
        for full, each in [(name, command), *((f"{name} {n}", c) for n, c in subcommands.items())]:
            if any("--grafana-url" in p.opts for p in each.params if isinstance(p, click.Option)):
                found[full] = each
    return found
