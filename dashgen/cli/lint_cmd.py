"""``dashgen lint``: lint dashboard files or folders; exit 1 on error findings, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dashgen.cli.output import emit_json, fail_input, format_option
from dashgen.errors import InputError
from dashgen.lint.exclusions import apply_exclusions, default_exclusions
from dashgen.lint.registry import UnknownRule, select_rules
from dashgen.lint.report import format_line, has_errors, render_json, render_text
from dashgen.lint.runner import UnreadableInput, discover_files, lint_paths


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@format_option("text", "json", name="fmt")
@click.option("--rule", "only", multiple=True, metavar="RULE", help="Run only this rule (repeatable).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Skip this rule (repeatable).")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Exclusions file (default: .dashgen-lint.toml when present).",
)
@click.pass_context
def lint_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    fmt: str,
    only: tuple[str, ...],
    ignore: tuple[str, ...],
    config: Path | None,
) -> None:
    """Lint Grafana dashboards (files or folders; default dashboards/)."""
    targets = list(paths) or ["dashboards/"]
    try:
        rules = select_rules(only, ignore)
        files = discover_files(targets)
        if not files:
            raise InputError(f"{', '.join(targets)}: no dashboard JSON files (*.json) to lint")
        findings = lint_paths(files, rules)
        exclusions, config_path = default_exclusions(config)
    except (UnknownRule, UnreadableInput, InputError) as exc:  # handled here: the command may run without the group
        fail_input(ctx, str(exc))
    findings, excluded = apply_exclusions(findings, exclusions)
    code = 1 if has_errors(findings) else 0
    if fmt == "json":
        emit_json(
            ctx,
            {"files": len(files), "excluded": len(excluded), "findings": json.loads(render_json(findings))},
            code,
            [format_line(f) for f in findings if f.severity == "error"],
        )
        raise SystemExit(code)
    # titles, messages and file names of someone else's dashboards: each line escaped once, by render_text
    click.echo(render_text(findings, len(files)), nl=False)
    if excluded and fmt == "text":
        click.echo(f"{len(excluded)} finding(s) excluded by {config_path} (each entry there gives its reason)")
    raise SystemExit(code)
