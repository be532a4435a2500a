"""``dashgen check``: what CI runs on every pull request.

Rebuild every profile in memory (which validates each document against the project schema and
the structural checks), fail with the semantic diff when the committed ``dashboards/`` is stale,
then lint the fresh build; the rule files and the panel index (docs/panels.md) are checked for
staleness too. Exit 0 all good, 1 any check failed, 2 bad input.

``--base REF`` adds the pull request's own change: the committed dashboards at REF against the
working tree. ``--format markdown`` is the pull-request comment, at most 60,000 characters whatever
the change (``dashgen.diff.comment``); ``--report FILE`` writes the same report whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from dashgen.build import build_all, committed_files, output_files
from dashgen.cli.diff_cmd import compare, use_color, write_report
from dashgen.cli.diff_sources import DiffInputError, read_git_side, read_side
from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, format_option
from dashgen.cli.preview_opts import changed_pictures, pictures_json, preview_options
from dashgen.cli.rule_files import grafana_rule_problems
from dashgen.cli.rules import removed_rule_files
from dashgen.dashboard import specs_reused
from dashgen.diff.comment import COMMENT_LIMIT, Section, render_comment
from dashgen.diff.render import FileDiff, diff_to_json, render_text
from dashgen.diff.values import COLOURS
from dashgen.errors import BuildValidationError, InputError
from dashgen.escape import markdown_code, markdown_text, report_line, terminal_lines
from dashgen.files import atomic_write, read_regular_bytes
from dashgen.lint.exclusions import apply_exclusions, default_exclusions
from dashgen.lint.report import format_line, text_line
from dashgen.lint.runner import lint_dashboard
from dashgen.panel_index import INDEX_PATH, index_problem
from dashgen.render.collector import heap_frozen
from dashgen.rules.docs import ALERT_DOCS, render_alert_docs
from dashgen.rules.render import SUFFIX, render_rule_file


def stale_files(built_files: dict[str, bytes], committed_dir: Path) -> tuple[list[str], list[str], list[str]]:
    """(changed, missing, extra) relative paths between a fresh build and the committed folder (dashboards and
    library-panel element files)."""
    on_disk = {p.relative_to(committed_dir).as_posix(): p for p in committed_files(committed_dir)}
    changed = sorted(
        name for name, data in built_files.items() if name in on_disk and read_regular_bytes(on_disk[name]) != data
    )
    missing = sorted(set(built_files) - set(on_disk))
    extra = sorted(set(on_disk) - set(built_files))
    return changed, missing, extra


def _rules_staleness(profiles: list[Any], rules_dir: Path) -> list[str]:
    problems = []
    for profile in profiles:
        committed = rules_dir / f"{profile.name}{SUFFIX['prometheus']}"
        # not read back when equal to the committed file: dashgen rules read these bytes back before writing them
        data = render_rule_file(profile, read_back=False)
        if committed.exists() and committed.read_bytes() == data:
            continue
        render_rule_file(profile)  # read back: a text that does not read back is refused as dashgen rules refuses it
        problems.append(f"{committed}: {'stale' if committed.exists() else 'missing'}; run dashgen rules and commit it")
    names = {p.name for p in profiles}
    for kind in ("prometheus", "grafana"):  # what dashgen rules (no --profile) removes, as build a profile's folder
        problems += [
            f"{path}: its profile no longer exists; run dashgen rules (removes it)"
            for path in removed_rule_files(rules_dir, SUFFIX[kind], names)
        ]
    for profile in profiles:  # dashgen rules writes a Grafana-ruled profile's Grafana rule file beside its .yml
        grafana = rules_dir / f"{profile.name}{SUFFIX['grafana']}"
        if profile.dashboard.ruler != "prometheus" and not grafana.exists():
            problems.append(f"{grafana}: missing; run dashgen rules and commit it")
    docs = rules_dir.parent / ALERT_DOCS
    if docs.exists() and docs.read_bytes() != render_alert_docs(profiles):
        problems.append(f"{docs}: stale; run dashgen rules and commit it")
    return problems


PROBLEMS_SHOWN = 25  # problem lines of each kind in the bounded comment; the report has them all


def _problems(report: dict[str, Any], dashboards_dir: Path, errors: list[Any]) -> list[tuple[str, str]]:
    """``(kind, line)`` for every failed check, in the order the text output prints them."""
    found = [("invalid", p) for p in report["validation"]]
    found += [
        ("stale", f"`{dashboards_dir / n}` differs from a fresh build (run `dashgen build`)") for n in report["stale"]
    ]
    found += [("missing", f"`{dashboards_dir / n}` (run `dashgen build` and commit it)") for n in report["missing"]]
    found += [("extra", f"`{dashboards_dir / n}` is not produced by any profile (remove it)") for n in report["extra"]]
    found += [("lint error", format_line(f)) for f in errors]
    found += [("rules", p) for p in report["rules"]]
    found += [("index", p) for p in report["index"]]
    return found


def _preface(summary: str, failed: bool, problems: list[tuple[str, str]], bounded: bool) -> list[str]:
    lines = [f"**dashgen check: {'FAILED' if failed else 'ok'}** — {summary}", ""]
    shown = problems[:PROBLEMS_SHOWN] if bounded else problems
    lines += [f"- {markdown_text(kind)}: {markdown_text(text[: 500 if bounded else None])}" for kind, text in shown]
    if len(shown) < len(problems):
        lines.append(f"- … {len(problems) - len(shown)} more problem(s) in the full report")
    return lines


def _listed(heading: str, entries: list[str], bounded: bool) -> list[str]:
    """A titled list for the comment (each entry a code span: inert; at most ``PROBLEMS_SHOWN`` when bounded)."""
    if not entries:
        return []
    shown = entries[:PROBLEMS_SHOWN] if bounded else entries
    lines = ["", f"**{heading}**", ""]
    lines += ["- " + markdown_code(e[: 500 if bounded else None]) for e in shown]
    if len(shown) < len(entries):
        lines.append(f"- … {len(entries) - len(shown)} more in the full report")
    return lines


@click.command("check")
@click.option(
    "--dashboards",
    "dashboards_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dashboards"),
    show_default=True,
    help="The committed dashboards folder.",
)
@click.option(
    "--rules-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("rules"),
    show_default=True,
    help="The committed rule files folder.",
)
@click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=INDEX_PATH,
    show_default=True,
    help="The committed panel index, checked when it exists or this option is given.",
)
@format_option(
    "text", "json", "markdown", help=f"markdown: the pull-request comment, at most {COMMENT_LIMIT:,} characters."
)
@click.option(
    "--base",
    "base_ref",
    metavar="GIT_REF",
    help="Also diff the dashboards committed at GIT_REF with the working tree (the pull request's change).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the full markdown report (every problem and change, all details) to this file.",
)
@click.option(
    "--full-report-at",
    "report_where",
    metavar="TEXT",
    help="Where readers find the full report (for example the CI run's artifact URL).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The dashgen.toml whose folder permissions --base compares (default ./dashgen.toml when there is one).",
)
@click.option(
    "--bundle",
    "bundle_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="When the check passes, write the checked build as a release bundle (dashgen publish --bundle) here.",
)
@preview_options
@click.pass_context
def check_command(
    ctx: click.Context,
    dashboards_dir: Path,
    rules_dir: Path,
    index_path: Path,
    output_format: str,
    base_ref: str | None,
    report_path: Path | None,
    report_where: str | None,
    config_path: Path | None,
    bundle_path: Path | None,
    **preview: Any,
) -> None:
    """Rebuild in memory; fail when dashboards/ is stale, a document is invalid, or lint finds an error.
    With --base and --preview-dir: before/after PNGs of each panel the change touches."""
    if preview.get("preview_dir") is not None and base_ref is None:
        raise click.UsageError("--preview-dir draws the panels changed against --base GIT_REF: give --base")
    profiles = selected_profiles(ctx, [])
    # the build, the rule files' dashboard links and the panel index each read every profile's dashboards
    ctx.with_resource(specs_reused())
    report: dict[str, Any] = {
        "validation": [],
        "stale": [],
        "missing": [],
        "extra": [],
        "lint": [],
        "rules": [],
        "index": [],
    }
    try:
        built = build_all(profiles)
    except BuildValidationError as exc:
        report["validation"] = exc.problems
        built = []
    # the builds stay alive until the command ends: the diff, lint, rule files and index after them allocate
    # millions of objects, and each full collection they trigger walked both builds again (a fifth of a check)
    ctx.with_resource(heap_frozen())
    outputs = {path.as_posix(): (data, document) for path, data, document in output_files(built)}
    files = {name: data for name, (data, _) in outputs.items()}
    changed, missing, extra = stale_files(files, dashboards_dir)
    report.update(stale=changed, missing=missing, extra=extra)
    stale_diff: list[FileDiff] = []
    base_diff: list[FileDiff] = []
    try:
        if changed:
            old = read_side(dashboards_dir)
            old = {name: old[name] for name in changed}
            new = {name: outputs[name][1] for name in changed}
            stale_diff = compare(old, new)
        if base_ref is not None:
            base_docs, head_docs = read_git_side(base_ref, dashboards_dir), read_side(dashboards_dir)
            base_diff = compare(base_docs, head_docs)
    except (DiffInputError, json.JSONDecodeError) as exc:
        raise InputError(str(exc)) from None
    pictures, picture_lines = (
        ([], []) if base_ref is None else changed_pictures(ctx, base_diff, base_docs, head_docs, preview)
    )
    findings = [f for b in built for f in lint_dashboard(b.document, str(dashboards_dir / b.relative_path()))]
    exclusions, _config = default_exclusions(None)
    findings, excluded = apply_exclusions(findings, exclusions)
    report["lint_excluded"] = len(excluded)
    errors = [f for f in findings if f.severity == "error"]
    report["lint"] = [f.__dict__ for f in findings]
    report["rules"] = _rules_staleness(profiles, rules_dir) + grafana_rule_problems(profiles, rules_dir)
    # an imported query that reads every deployment of a shared store, or by label names the profile does not use:
    # reported, not failed (the module's author decides; the note says why it could not be rewritten)
    report["imported_unscoped"] = [note for b in built for note in b.spec.unscoped]
    wants_index = index_path.exists() or ctx.get_parameter_source("index_path") != ParameterSource.DEFAULT
    report["index"] = [problem] if wants_index and (problem := index_problem(profiles, index_path)) else []
    failed = bool(report["validation"] or changed or missing or extra or errors or report["rules"] or report["index"])
    report["ok"] = not failed
    if bundle_path is not None and not failed:
        _write_bundle(bundle_path, profiles, built)
    summary = (
        f"{len(built)} dashboards built, {len(changed) + len(missing) + len(extra)} stale, "
        f"{len(errors)} lint errors, {len(findings) - len(errors)} other findings, "
        f"{len(report['validation'])} validation problems"
    )
    problems = _problems(report, dashboards_dir, errors)
    changes: dict[str, Any] = {}
    if base_ref is not None:  # what a pull request changes besides dashboards: its imports are for --base only
        from dashgen.cli.resource_changes import resource_changes

        changes = resource_changes(base_ref, rules_dir, config_path, profiles)
    alert_lines, access_lines = changes.get("rule_changes", []), changes.get("permission_changes", [])
    unshown = changes.get("rules_not_shown", [])
    report.update(rule_changes=alert_lines, permission_changes=access_lines, rules_not_shown=unshown)
    others = [format_line(f) for f in findings if f.severity != "error"]

    def listed(bounded: bool) -> list[str]:
        against = markdown_code(base_ref)
        return (
            _listed(f"Alert rules changed against {against}: {len(alert_lines)}", alert_lines, bounded)
            + _listed(f"Alert rules this comment cannot show: {len(unshown)}", unshown, bounded)
            + _listed(f"Folder permissions changed against {against}: {len(access_lines)}", access_lines, bounded)
            + _listed(f"Lint findings (not errors): {len(others)}", others, bounded)
            + _listed(
                f"Imported queries not fitted to the deployment: {len(report['imported_unscoped'])}",
                report["imported_unscoped"],
                bounded,
            )
        )

    sections = [Section(f"Changes against {markdown_code(base_ref)}", base_diff)] if base_ref is not None else []
    if stale_diff:
        sections.append(Section(f"Stale: committed `{dashboards_dir}` vs a fresh build", stale_diff))
    if report_path is not None:
        write_report(
            report_path,
            render_comment(
                sections,
                limit=None,
                title="dashgen check: full report",
                preface=_preface(summary, failed, problems, bounded=False) + listed(False) + picture_lines,
            ),
        )
    if output_format == "json":
        if base_ref is not None:
            report["base_diff"] = [
                {"name": f.name, "status": f.status, **({"diff": diff_to_json(f.diff)} if f.diff else {})}
                for f in base_diff
            ]
        if preview.get("preview_dir") is not None:
            report["previews"] = pictures_json(pictures)
        emit_json(
            ctx,
            json.loads(json.dumps(report, default=str)),
            1 if failed else 0,
            [f"{kind}: {text}" for kind, text in problems],
        )
    elif output_format == "markdown":
        where = report_where or (
            f"the full report (`{report_path}`)" if report_path else "the full report (`dashgen check --report FILE`)"
        )
        click.echo(
            render_comment(
                sections,
                title="dashgen check",
                full_report=where,
                preface=_preface(summary, failed, problems, bounded=True) + listed(True) + picture_lines,
            ),
            nl=False,
        )
    else:
        _text(report, dashboards_dir, stale_diff, base_ref, base_diff, findings, summary, failed)
        for line in report["rules_not_shown"]:
            _say(f"alert rules not shown: {line}")
        for line in report["rule_changes"]:
            _say(f"alert rules: {line}")
        for line in report["permission_changes"]:
            _say(f"folder permissions: {line}")
        if pictures:
            _say(f"before/after pictures of {len(pictures)} changed panels in {preview['preview_dir']}")
    raise SystemExit(1 if failed else 0)


def _write_bundle(path: Path, profiles: list[Any], built: list[Any]) -> None:
    from dashgen.cli.publish import bundle_of
    from dashgen.publish.bundle import encode
    from dashgen.publish.gitinfo import current_commit

    folder = Path(profiles[0].path).parent if profiles else None
    try:
        atomic_write(path, encode(bundle_of(profiles, built, current_commit(folder))))
    except OSError as exc:
        raise InputError(f"{path}: cannot write the release bundle ({exc.strerror})") from None


def _say(line: str) -> None:
    """One line of the text report: the file names, titles and messages in it shown as text (no control
    sequence, no line break of theirs, no leading ``::``)."""
    click.echo(report_line(line))


def _text(
    report: dict[str, Any],
    dashboards_dir: Path,
    stale_diff: list[FileDiff],
    base_ref: str | None,
    base_diff: list[FileDiff],
    findings: list[Any],
    summary: str,
    failed: bool,
) -> None:
    color = use_color("auto")
    for problem in report["validation"]:
        _say(f"invalid: {problem}")
    for name in report["stale"]:
        _say(f"stale: {dashboards_dir / name} differs from a fresh build (run dashgen build)")
    if stale_diff:
        click.echo(terminal_lines(render_text(stale_diff, color=color), keep=COLOURS), nl=False, color=color)
    for name in report["missing"]:
        _say(f"missing: {dashboards_dir / name} (run dashgen build and commit it)")
    for name in report["extra"]:
        _say(f"extra: {dashboards_dir / name} is not produced by any profile (remove it)")
    for finding in findings:
        click.echo(text_line(finding))
    for note in report["imported_unscoped"]:
        _say(f"[warning] imported query: {note}")
    for problem in report["rules"]:
        _say(f"rules: {problem}")
    for problem in report["index"]:
        _say(f"index: {problem}")
    if base_ref is not None:
        _say(f"changes against {base_ref}:")
        click.echo(terminal_lines(render_text(base_diff, color=color), keep=COLOURS), nl=False, color=color)
    click.echo(f"check: {summary}: {'FAILED' if failed else 'ok'}")
