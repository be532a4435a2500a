"""``dashgen diff OLD NEW`` / ``dashgen diff --base REF``: semantic dashboard diff.

Exit 0 when nothing semantic changed (and says so), 1 when something did, 2 on bad input.
"""

from __future__ import annotations

import click

from dashgen.cli.diff_sources import DiffInputError, read_git_side, read_side
from dashgen.diff.engine import diff_dashboards
from dashgen.diff.pairing import pair_documents
from dashgen.diff.render import FileDiff, has_changes, render_json, render_markdown, render_text

RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}


def compare(old_docs: dict, new_docs: dict) -> list[FileDiff]:
    files: list[FileDiff] = []
    for name, old, new in pair_documents(old_docs, new_docs):
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


@click.command("diff")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True)
@click.option(
    "--base", "base_ref", metavar="GIT_REF", help="Compare dashboards/ committed at GIT_REF with the working tree."
)
def diff_command(paths: tuple[str, ...], fmt: str, base_ref: str | None) -> None:
    """Semantic diff of OLD and NEW dashboards (files or folders), or of --base REF vs the working tree."""
    try:
        if base_ref is not None:
            if len(paths) > 1:
                raise click.UsageError("with --base give at most one folder (default dashboards/)")
            folder = paths[0] if paths else "dashboards"
            old_docs, new_docs = read_git_side(base_ref, folder), read_side(folder)
        else:
            if len(paths) != 2:
                raise click.UsageError("give OLD and NEW (files or folders), or --base GIT_REF")
            old_docs, new_docs = read_side(paths[0]), read_side(paths[1])
        files = compare(old_docs, new_docs)
    except DiffInputError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from exc
    click.echo(RENDERERS[fmt](files), nl=False)
    raise SystemExit(1 if has_changes(files) else 0)

