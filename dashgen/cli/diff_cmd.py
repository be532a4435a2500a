"""``dashgen diff OLD NEW`` / ``dashgen diff --base REF`` / ``dashgen diff --live UID``: semantic dashboard diff.

``--live UID`` compares what Grafana stores now (``dashgen publish``'s connection options) with the
current build of that dashboard. ``--format markdown`` is bounded like the pull-request comment;
``--report FILE`` writes the full markdown report, every change with its details.
Exit 0 when nothing semantic changed (and says so), 1 when something did, 2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dashgen.cli.diff_sources import DiffInputError, live_options, read_git_side, read_side
from dashgen.cli.output import emit_json, fail_input, format_option
from dashgen.cli.output import use_color as use_color
from dashgen.cli.preview_opts import PREVIEW_PARAMS, changed_pictures, pictures_json, preview_options
from dashgen.diff import library
from dashgen.diff.comment import render_markdown
from dashgen.diff.engine import diff_dashboards
from dashgen.diff.pairing import pair_documents
from dashgen.diff.render import FileDiff, has_changes, render_json, render_text
from dashgen.diff.values import COLOURS
from dashgen.errors import InputError
from dashgen.escape import inline_text, markdown_text, terminal_lines
from dashgen.files import NotARegularFile, atomic_write, refuse_special

FORMATS = ("json", "markdown", "text")


def compare(old_docs: dict, new_docs: dict) -> list[FileDiff]:
    files: list[FileDiff] = []
    for path, old_doc, new_doc in pair_documents(old_docs, new_docs):
        name = library.label(path, old_doc, new_doc)
        old, new = library.as_dashboard(old_doc), library.as_dashboard(new_doc)
        if old is None:
            files.append(FileDiff(name, status="added"))
        elif new is None:
            files.append(FileDiff(name, status="removed"))
        else:
            try:
                files.append(FileDiff(name, diff_dashboards(old, new)))
            except ValueError as exc:
                raise DiffInputError(f"{name}: {exc}") from exc
    return files


def refuse_report_path(path: Path | None) -> None:
    """A ``--report`` path that is not a regular file (a symlink, FIFO, device) refused before the comparison runs,
    in the words the write would refuse it with."""
    if path is None or str(path) == "-":
        return
    try:
        refuse_special(path)
    except NotARegularFile as exc:
        raise InputError(f"{path}: cannot write the report ({exc.strerror})") from None


def write_report(path: Path, text: str) -> None:
    """The full report into ``path`` (a regular file, replaced atomically), or standard output for ``-``."""
    if str(path) == "-":
        click.echo(text, nl=False)
        return
    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot write the report ({exc.strerror})") from None


def render(files: list[FileDiff], fmt: str, color: bool, full_report: str) -> str:
    if fmt == "json":
        return render_json(files)
    if fmt == "markdown":
        return render_markdown(files, full_report=full_report)
    return render_text(files, color=color)


def _live_sides(ctx: click.Context, uid: str, connection: dict[str, Any]) -> tuple[dict, dict]:
    from dashgen.cli.diff_sources import built_dashboard, read_live_dashboard
    from dashgen.cli.options import selected_profiles

    profile, document = built_dashboard(selected_profiles(ctx, []), uid)
    name = f"{profile}/{uid}.json"
    live = read_live_dashboard(uid, connection)
    return ({} if live is None else {name: live}), {name: document}


@click.command("diff")
@click.argument("paths", nargs=-1, type=click.Path())
@format_option(*FORMATS, name="fmt")
@click.option(
    "--base", "base_ref", metavar="GIT_REF", help="Compare dashboards/ committed at GIT_REF with the working tree."
)
@click.option("--live", "live_uid", metavar="UID", help="Compare the dashboard UID in Grafana with the current build.")
@live_options
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the full markdown report (every change, all details) to this file.",
)
@click.option(
    "--rules-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("rules"),
    show_default=True,
    help="With --base: the rule files whose alert changes are listed too.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="With --base: the dashgen.toml whose folder-permission changes are listed (default ./dashgen.toml).",
)
@click.option(
    "--color",
    "color_choice",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text diff (auto: when writing to a terminal).",
)
@preview_options
@click.pass_context
def diff_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    fmt: str,
    base_ref: str | None,
    live_uid: str | None,
    report_path: Path | None,
    rules_dir: Path,
    config_path: Path | None,
    color_choice: str,
    **connection: Any,
) -> None:
    """Semantic diff of OLD and NEW dashboards (files or folders), of --base REF vs the working tree, or of
    --live UID (Grafana) vs the current build. With --preview-dir: before/after PNGs of each changed panel."""
    preview = {name: connection.pop(name, None) for name in PREVIEW_PARAMS}
    refuse_report_path(report_path)
    try:
        if live_uid is not None:
            if paths or base_ref:
                raise click.UsageError("--live compares Grafana with the build: give no paths and no --base")
            old_docs, new_docs = _live_sides(ctx, live_uid, connection)
        elif base_ref is not None:
            if len(paths) > 1:
                raise click.UsageError("with --base give at most one folder (default dashboards/)")
            folder = paths[0] if paths else "dashboards"
            old_docs, new_docs = read_git_side(base_ref, folder), read_side(folder)
        else:
            if len(paths) != 2:
                raise click.UsageError("give OLD and NEW (files or folders), --base GIT_REF, or --live UID")
            old_docs, new_docs = read_side(paths[0]), read_side(paths[1])
        files = compare(old_docs, new_docs)
        others = _other_changes(base_ref, rules_dir, config_path) if base_ref is not None else {}
    except DiffInputError as exc:  # handled here: tests and scripts may invoke the command without the group
        fail_input(ctx, str(exc))
    pictures, picture_lines = changed_pictures(ctx, files, old_docs, new_docs, preview)
    where = f"the full report (`{report_path}`)" if report_path else "the full report (`--report FILE`)"
    extra = [f"{KINDS[kind]}: {line}" for kind, lines in others.items() for line in lines]
    listed = [f"- {markdown_text(line)}" for line in extra]
    if report_path is not None:
        write_report(report_path, _with_pictures(render_markdown(files, limit=None), picture_lines + listed))
    code = 1 if has_changes(files) or extra else 0
    if fmt == "json":
        results = {**json.loads(render_json(files)), **others}
        if preview["preview_dir"] is not None:
            results["previews"] = pictures_json(pictures)
        emit_json(ctx, results, code)
        raise SystemExit(code)
    color = fmt == "text" and use_color(color_choice)
    text = render(files, fmt, color, where)
    if fmt == "text":  # titles and queries of a live Grafana too: no control sequence but the diff's own colours
        text = terminal_lines(text, keep=COLOURS)
    if fmt == "markdown":
        text = _with_pictures(text, picture_lines + listed)
    elif extra:
        text = text.rstrip("\n") + "\n" + terminal_lines("\n".join(inline_text(line) for line in extra)) + "\n"
    click.echo(text, nl=False, color=color)
    if fmt == "text" and pictures:
        click.echo(f"before/after pictures of {len(pictures)} changed panels in {preview['preview_dir']}")
    raise SystemExit(code)


KINDS = {"rule_changes": "alert rules", "permission_changes": "folder permissions"}


def _other_changes(base_ref: str, rules_dir: Path, config_path: Path | None) -> dict[str, list[str]]:
    """What the change does besides the dashboards: ``rule_changes`` and ``permission_changes`` lines."""
    from dashgen.cli.resource_changes import resource_changes

    changes = resource_changes(base_ref, rules_dir, config_path, [])
    return {kind: changes[kind] for kind in KINDS}


def _with_pictures(markdown: str, lines: list[str]) -> str:
    """The comment with the changed panels' picture links after it (nothing to add without pictures)."""
    return markdown if not lines else markdown.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
