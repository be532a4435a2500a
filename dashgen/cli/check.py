"""``dashgen check``: what CI runs on every pull request.

Rebuild every profile in memory (which validates each document against the project schema and
the structural checks), fail with the semantic diff when the committed ``dashboards/`` is stale,
then lint the fresh build; the rule files and the panel index (docs/panels.md) are checked for
staleness too. Exit 0 all good, 1 any check failed, 2 bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dashgen.build import build_all
from dashgen.cli.diff_cmd import compare
from dashgen.cli.options import selected_profiles
from dashgen.diff.render import render_text
from dashgen.errors import BuildValidationError
from dashgen.lint.exclusions import apply_exclusions, default_exclusions
from dashgen.lint.report import format_line
from dashgen.lint.runner import lint_dashboard
from dashgen.panel_index import INDEX_PATH, index_problem
from dashgen.rules.render import render_rule_files


def stale_files(built_files: dict[str, bytes], committed_dir: Path) -> tuple[list[str], list[str], list[str]]:
    """(changed, missing, extra) relative paths between a fresh build and the committed folder."""
    on_disk = {p.relative_to(committed_dir).as_posix(): p for p in committed_dir.glob("*/*.json")}
    changed = sorted(name for name, data in built_files.items()
                     if name in on_disk and on_disk[name].read_bytes() != data)
    missing = sorted(set(built_files) - set(on_disk))
    extra = sorted(set(on_disk) - set(built_files))
    return changed, missing, extra


def _rules_staleness(profiles: list[Any], rules_dir: Path) -> list[str]:
    problems = []
    for path, data in render_rule_files(profiles).items():
        committed = rules_dir / Path(path).name
        if not committed.exists():
            problems.append(f"{committed}: missing; run make dashboards and commit it")
        elif committed.read_bytes() != data:
            problems.append(f"{committed}: stale; run make dashboards and commit it")
    return problems


@click.command("check")
@click.option("--dashboards", "dashboards_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("dashboards"), show_default=True, help="The committed dashboards folder.")
@click.option("--rules-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("rules"),
              show_default=True, help="The committed rule files folder.")
@click.option("--index", "index_path", type=click.Path(dir_okay=False, path_type=Path), default=INDEX_PATH,
              show_default=True, help="The committed panel index.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def check_command(ctx: click.Context, dashboards_dir: Path, rules_dir: Path, index_path: Path,
                  output_format: str) -> None:
    """Rebuild in memory; fail when dashboards/ is stale, a document is invalid, or lint finds an error."""
    profiles = selected_profiles(ctx, [])
    report: dict[str, Any] = {"validation": [], "stale": [], "missing": [], "extra": [], "lint": [], "rules": [],
                              "index": []}
    try:
        built = build_all(profiles)
    except BuildValidationError as exc:
        report["validation"] = exc.problems
        built = []
    files = {b.relative_path().as_posix(): b.data for b in built}
    changed, missing, extra = stale_files(files, dashboards_dir)
    report.update(stale=changed, missing=missing, extra=extra)
    diff_text = ""
    if changed:
        old = {name: json.loads((dashboards_dir / name).read_text(encoding="utf-8")) for name in changed}
        new = {b.relative_path().as_posix(): b.document for b in built if b.relative_path().as_posix() in changed}
        diff_text = render_text(compare(old, new))
    findings = [f for b in built for f in lint_dashboard(b.document, str(dashboards_dir / b.relative_path()))]
    exclusions, _config = default_exclusions(None)
    findings, excluded = apply_exclusions(findings, exclusions)
    report["lint_excluded"] = len(excluded)
    errors = [f for f in findings if f.severity == "error"]
    report["lint"] = [f.__dict__ for f in findings]
    report["rules"] = _rules_staleness(profiles, rules_dir)
    report["index"] = [problem] if (problem := index_problem(profiles, index_path)) else []
    failed = bool(report["validation"] or changed or missing or extra or errors or report["rules"] or report["index"])
    report["ok"] = not failed
    if output_format == "json":
        click.echo(json.dumps(report, indent=2, sort_keys=True, default=str))
    else:
        for problem in report["validation"]:
            click.echo(f"invalid: {problem}")
        for name in changed:
            click.echo(f"stale: {dashboards_dir / name} differs from a fresh build (run make dashboards)")
        if diff_text:
            click.echo(diff_text, nl=False)
        for name in missing:
            click.echo(f"missing: {dashboards_dir / name} (run make dashboards and commit it)")
        for name in extra:
            click.echo(f"extra: {dashboards_dir / name} is not produced by any profile (remove it)")
        for finding in findings:
            click.echo(format_line(finding))
        for problem in report["rules"]:
            click.echo(f"rules: {problem}")
        for problem in report["index"]:
            click.echo(f"index: {problem}")
        click.echo(f"check: {len(built)} dashboards built, {len(changed) + len(missing) + len(extra)} stale, "
                   f"{len(errors)} lint errors, {len(findings) - len(errors)} other findings, "
                   f"{len(report['validation'])} validation problems: {'FAILED' if failed else 'ok'}")
    raise SystemExit(1 if failed else 0)


