"""Before/after pictures of the panels a change touches: the old and the new definition of each changed panel
drawn on the same data and the same window, wherever the panel sits (collapsed rows included).

:func:`changed_panels` is pure (a semantic diff + both sides' documents -> :class:`PanelPair` list);
:func:`draw_pairs` queries and draws each side as a one-panel page and writes
``DIR/<profile>/<panel-key>.before.png`` / ``.after.png`` (and their ``.html``) in the run's one browser;
:func:`markdown_lines` links them from the pull-request comment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dashgen.diff.render import FileDiff
from dashgen.document import iter_panels, unwrap
from dashgen.escape import markdown_code, markdown_text, safe_href
from dashgen.live.datasource import Datasource
from dashgen.preview.browser import Browser
from dashgen.preview.layout import COLUMNS, mapping_at, single
from dashgen.preview.page import PAGE_WIDTH
from dashgen.preview.run import Settings, Source, draw_dashboard, screenshot, write_drawing

MIN_WIDTH = 480  # CSS pixels: a narrow panel's picture still has room for its header
MAX_LINKED = 40  # pictures linked in the bounded comment; the folder has them all


@dataclass(frozen=True)
class PanelPair:
    """One changed panel: where it lives, its key, and its old and new JSON (None: added or removed)."""

    profile: str
    uid: str
    key: str
    title: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    templating: Mapping[str, Any] | None = None  # the new side's variables (the old side's when removed)


@dataclass(frozen=True)
class Picture:
    """The pictures of one pair, paths relative to the preview folder (None: that side has no panel)."""

    pair: PanelPair
    before: str | None
    after: str | None


def _by_id(document: Mapping[str, Any] | None) -> dict[int, Mapping[str, Any]]:
    if document is None:
        return {}
    return {site.raw["id"]: site.raw for site in iter_panels(unwrap(document)) if isinstance(site.raw.get("id"), int)}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._:-]+", "_", name).replace(":", "-") or "panel"


def changed_panels(
    files: Sequence[FileDiff],
    old_docs: Mapping[str, Any],
    new_docs: Mapping[str, Any],
    keys: Callable[[str, str], Mapping[int, str]],
) -> list[PanelPair]:
    """Every changed, added or removed panel (not rows) of the compared files; ``keys(profile, uid)`` gives
    panel id -> stable key (``panel:<id>`` when it has none). A file named ``<profile>/<uid>.json`` gives both."""
    pairs = []
    for item in files:
        if item.diff is None:
            continue
        profile = item.name.split("/")[0] if "/" in item.name else ""
        old, new = _by_id(old_docs.get(item.name)), _by_id(new_docs.get(item.name))
        body = unwrap(new_docs.get(item.name) or old_docs.get(item.name) or {})
        uid = str(body.get("uid") or item.name)
        known = keys(profile, uid)
        ids = [c.id for c in item.diff.changed_panels] + [p.id for p in item.diff.added_panels]
        ids += [p.id for p in item.diff.removed_panels]
        for panel_id in dict.fromkeys(i for i in ids if i is not None):
            before, after = old.get(panel_id), new.get(panel_id)
            if (before or after or {}).get("type") == "row":
                continue
            title = str((after or before or {}).get("title") or "")
            key = known.get(panel_id, f"panel:{panel_id}")
            pairs.append(PanelPair(profile, uid, key, title, before, after, body.get("templating")))
    return pairs


def _width(panel: Mapping[str, Any]) -> int:
    pos = mapping_at(panel, "gridPos")
    return int(pos.get("w") or 12)


def draw_pairs(
    datasource: Datasource,
    pairs: Sequence[PanelPair],
    folder: Path,
    settings: Settings,
    profiles: Mapping[str, Any],
    browser: Browser,
) -> list[Picture]:
    """Draw both sides of each pair on the same data and window; write the PNGs (and HTML) under ``folder``."""
    pictures = []
    for pair in pairs:
        paths: dict[str, str | None] = {}
        for side, panel in (("before", pair.before), ("after", pair.after)):
            if panel is None:
                paths[side] = None
                continue
            # the dashboard's variables, so both sides expand the same way on the same data
            document = {"uid": pair.uid, "title": f"{pair.title} ({side})", "templating": pair.templating or {}}
            document.update(single(panel))
            source = Source(pair.key, document, profiles.get(pair.profile), {})
            width = max(MIN_WIDTH, round(PAGE_WIDTH * min(24, _width(panel)) / COLUMNS))
            drawing = draw_dashboard(datasource, source, replace(settings, width=width))
            name = f"{_safe(pair.key)}.{side}"
            html_path = write_drawing(drawing, folder / (pair.profile or "_"), name)
            screenshot(browser, html_path, html_path.with_suffix(".png"), drawing.height, drawing.width)
            paths[side] = html_path.with_suffix(".png").relative_to(folder).as_posix()
        pictures.append(Picture(pair, paths["before"], paths["after"]))
    return pictures


def markdown_lines(pictures: Sequence[Picture], where: str) -> list[str]:
    """The comment's lines: a heading and, per changed panel, links to its before / after PNGs under ``where``
    (the preview folder, or the URL it is published at)."""
    if not pictures:
        return []
    base = where.rstrip("/")
    linked = base.startswith(("http://", "https://"))
    lines = [
        f"**Changed panels, before / after** ({len(pictures)}, drawn on the same data; pictures in "
        f"{markdown_code(where)}):"
    ]
    for picture in pictures[:MAX_LINKED]:
        links = [
            f"[{side}](<{base}/{path}>)"
            if linked and safe_href(f"{base}/{path}")
            else f"{side} {markdown_code(f'{base}/{path}')}"
            for side, path in (("before", picture.before), ("after", picture.after))
            if path is not None
        ]
        pair = picture.pair
        lines.append(
            f"- {markdown_text(pair.title)} ({markdown_code(pair.profile)} {markdown_code(pair.key)}): "
            f"{' · '.join(links)}"
        )
    if len(pictures) > MAX_LINKED:
        lines.append(f"- … {len(pictures) - MAX_LINKED} more in {markdown_code(where)}")
    return lines
