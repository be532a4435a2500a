"""``dashgen lint``: lint dashboard files or folders; exit 1 on error findings, 2 on bad input."""

from __future__ import annotations

import click

from dashgen.lint.registry import UnknownRule, select_rules
from dashgen.lint.report import has_errors, render_json, render_text
from dashgen.lint.runner import UnreadableInput, discover_files, lint_paths


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--rule", "only", multiple=True, metavar="RULE", help="Run only this rule (repeatable).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Skip this rule (repeatable).")
def lint_command(paths: tuple[str, ...], fmt: str, only: tuple[str, ...], ignore: tuple[str, ...]) -> None:
    """Lint Grafana dashboards (files or folders; default dashboards/)."""
    targets = list(paths) or ["dashboards/"]
    try:
        rules = select_rules(only, ignore)
        files = discover_files(targets)
        findings = lint_paths(files, rules)
    except UnknownRule as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from exc
    except UnreadableInput as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from exc
    click.echo(render_json(findings) if fmt == "json" else render_text(findings, len(files)), nl=False)
    raise SystemExit(1 if has_errors(findings) else 0)

COMMANDS = [lint_command]
