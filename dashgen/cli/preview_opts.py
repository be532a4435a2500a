"""``--preview-dir DIR --datasource-url URL [--preview-at TIME] [--preview-url URL]`` of ``dashgen check --base``
and ``dashgen diff``: before/after PNGs of every changed panel (``DIR/<profile>/<panel-key>.before.png`` /
``.after.png``), drawn on the same data and window in one headless Chromium, and the comment lines
linking them."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dashgen.cli.options import HTTP_URL, selected_profiles
from dashgen.errors import InputError

if TYPE_CHECKING:
    from dashgen.diff.render import FileDiff
    from dashgen.preview.changed import Picture

PREVIEW_PARAMS = ("preview_dir", "datasource_url", "preview_at", "preview_url")


def preview_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options, outermost last (click applies decorators bottom-up)."""
    for option in reversed(
        (
            click.option(
                "--preview-dir",
                type=click.Path(file_okay=False, path_type=Path),
                help="Write before/after PNGs of each changed panel here (needs --datasource-url).",
            ),
            click.option(
                "--datasource-url", type=HTTP_URL, help="Data source the changed panels are drawn from (demo data)."
            ),
            click.option(
                "--preview-at",
                default="now",
                show_default=True,
                help="Window end of the pictures: now, unix s, RFC 3339.",
            ),
            click.option(
                "--preview-url",
                metavar="URL",
                help="Where readers find --preview-dir (the CI artifact); for the links.",
            ),
        )
    ):
        function = option(function)
    return function


def _keys(ctx: click.Context) -> Callable[[str, str], Mapping[int, str]]:
    """profile, uid -> panel id -> stable key, from the working tree's profiles (empty for an unknown one)."""
    from dashgen.dashboard import dashboard_specs
    from dashgen.render.ids import panel_id

    cache: dict[str, list[Any]] = {}

    def keys(profile: str, uid: str) -> Mapping[int, str]:
        if profile not in cache:
            try:
                (found,) = selected_profiles(ctx, [profile])
                cache[profile] = list(dashboard_specs(found))
            except (InputError, ValueError):
                cache[profile] = []
        spec = next((s for s in cache[profile] if s.uid == uid), None)
        return {} if spec is None else {panel_id(p.key): p.key for p in spec.panels()}

    return keys


def changed_pictures(
    ctx: click.Context,
    files: Sequence[FileDiff],
    old_docs: Mapping[str, Any],
    new_docs: Mapping[str, Any],
    options: Mapping[str, Any],
) -> tuple[list[Picture], list[str]]:
    """The pictures of the changed panels and the comment lines linking them (nothing without --preview-dir)."""
    folder: Path | None = options.get("preview_dir")
    if folder is None:
        return [], []
    # imported here: check and diff without --preview-dir do not pay for the data source client and the browser
    from dashgen.live.datasource import Datasource
    from dashgen.live.expand import Window, parse_time
    from dashgen.preview.browser import Browser, require_browser
    from dashgen.preview.changed import changed_panels, draw_pairs, markdown_lines
    from dashgen.preview.run import Settings

    if not options.get("datasource_url"):
        raise click.UsageError("--preview-dir needs --datasource-url (the data the panels are drawn from)")
    require_browser()
    try:
        at = parse_time(str(options.get("preview_at") or "now"), time.time())
    except ValueError as exc:
        raise InputError(str(exc)) from None
    pairs = changed_panels(files, old_docs, new_docs, _keys(ctx))
    profiles = {}
    for name in sorted({p.profile for p in pairs if p.profile}):
        try:
            profiles.update({p.name: p for p in selected_profiles(ctx, [name])})
        except (InputError, ValueError):
            continue  # a folder name that is no profile: the panels are drawn without one
    datasource = Datasource(str(options["datasource_url"]))
    settings = Settings(Window(end=at, length=3600.0))
    with Browser() as browser:
        pictures = draw_pairs(datasource, pairs, folder, settings, profiles, browser)
    return pictures, markdown_lines(pictures, str(options.get("preview_url") or folder))


def pictures_json(pictures: Sequence[Picture]) -> list[dict[str, Any]]:
    return [
        {"profile": p.pair.profile, "key": p.pair.key, "title": p.pair.title, "before": p.before, "after": p.after}
        for p in pictures
    ]
