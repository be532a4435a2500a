"""Tie the preview together: dashboard -> layout -> queries (concurrent, bounded) -> drawn panels -> HTML,
and HTML -> PNG in the run's one browser.

:func:`draw_dashboard` is the whole path for one dashboard up to the HTML text; :func:`write_previews`
writes ``<uid>.html`` and ``<uid>.png`` for many, sharing one thread pool's worth of queries per dashboard
and one Chromium. Panels inside collapsed rows are neither drawn nor queried unless ``expand_rows``; a v2
dashboard in tabs is drawn on the tab Grafana opens it on, its first (every tab with ``expand_rows``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashgen.deployment.profile import Profile
from dashgen.document import unwrap
from dashgen.document.v2view import is_v2, opened_tab
from dashgen.files import atomic_write
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import expand_panel
from dashgen.preview.browser import Browser
from dashgen.preview.draw import DATA_TYPES, Drawn, draw
from dashgen.preview.frames import empty
from dashgen.preview.layout import layout
from dashgen.preview.page import PAGE_WIDTH, Shown, grafana_minor, keyed, page, page_height
from dashgen.preview.queries import dashboard_values, run_panels


@dataclass(frozen=True)
class Source:
    """A dashboard to preview: its document, its profile (when built from one) and panel id -> stable key."""

    name: str
    document: Mapping[str, Any]
    profile: Profile | None = None
    keys: Mapping[int, str] = field(default_factory=dict)


@dataclass
class Settings:
    """How to query: the window, ``--var`` values, rows, concurrency and per-query timeout."""

    window: Window
    variables: Mapping[str, str] = field(default_factory=dict)
    expand_rows: bool = False
    workers: int = 4
    timeout: float = 30.0
    width: int = PAGE_WIDTH  # CSS pixels of the grid (a changed-panel picture: the panel's own width)


@dataclass
class Drawing:
    """One dashboard drawn: the page's HTML and height, and counts for the report."""

    uid: str
    title: str
    html: str
    height: int
    width: int = PAGE_WIDTH
    panels: int = 0
    queries: int = 0
    errors: int = 0
    empty: list[str] = field(default_factory=list)


def draw_dashboard(
    datasource: Datasource,
    source: Source,
    settings: Settings,
    progress: Callable[[int], None] | None = None,
    label_values: Callable[[str, str], list[str]] | None = None,
) -> Drawing:
    """Query and draw every shown panel of one dashboard."""
    body, tab = opened(source.document, settings.expand_rows)
    items = layout(body, settings.expand_rows)
    values = dashboard_values(body, settings.variables, label_values)
    to_query = [i for i, item in enumerate(items) if not item.is_row and item.raw.get("type") in DATA_TYPES]
    expanded = [expand_panel(items[i].raw, values, settings.window, source.profile) for i in to_query]
    answered = run_panels(datasource, expanded, settings.workers, settings.timeout, progress)
    by_item = dict(zip(to_query, answered, strict=True))
    shown: list[Shown] = []
    drawing = Drawing(str(body.get("uid") or source.name), str(body.get("title") or source.name), "", 0)
    for index, item in enumerate(items):
        key = keyed(item, source.keys)
        if item.is_row:
            shown.append(Shown(item, key))
            continue
        answers = by_item.get(index)
        drawn: Drawn = draw(item.raw, answers, f"panel-{index}", settings.window.end)
        shown.append(Shown(item, key, drawn))
        drawing.panels += 1
        if answers is not None:
            drawing.queries += len(answers)
            drawing.errors += sum(1 for a in answers if a.error)
            if empty(answers):
                drawing.empty.append(key)
    window = (settings.window.start, settings.window.end)
    rows = _note(settings) if any(item.is_row for item in items) else ""  # the rows' state, when there are rows
    note = "; ".join(part for part in (tab, rows) if part)
    grafana = grafana_minor(source.profile.dashboard.grafana_version if source.profile else None)
    drawing.html = page(drawing.title, drawing.uid, shown, window, settings.width, note, grafana)
    drawing.height = page_height(shown, settings.width)
    drawing.width = settings.width
    return drawing


def opened(document: Mapping[str, Any], expand_rows: bool) -> tuple[Mapping[str, Any], str]:
    """The dashboard body the page draws and a note on its tabs: a v2 dashboard in tabs opens on its first tab
    in Grafana, so that tab is drawn (every tab with ``expand_rows``, as every collapsed row is)."""
    first = None if expand_rows or not is_v2(document) else opened_tab(document)
    if first is None:
        return unwrap(document), ""
    resource, title, count = first
    return unwrap(resource), f"tab '{title}' of {count} (--expand-rows: every tab)"


def _note(settings: Settings) -> str:
    parts = ["collapsed rows expanded" if settings.expand_rows else "collapsed rows folded (--expand-rows)"]
    parts += [f"{name}={value}" for name, value in settings.variables.items()]
    return "; ".join(parts)


def screenshot(browser: Browser, html_path: Path, png_path: Path | None, height: int, width: int = PAGE_WIDTH) -> str:
    """The PNG of a written page (whole page) and the DOM as drawn."""
    return browser.render(html_path, png_path, width + 32, max(height, 200))


FIRST_SCREEN_HEIGHT = 1000  # CSS pixels: what a 1080p browser window shows of a dashboard on open


def first_screen(browser: Browser, html_path: Path, png_path: Path) -> None:
    """The PNG of what the page shows on open, without scrolling (the README's picture)."""
    browser.render(html_path, png_path, PAGE_WIDTH + 32, FIRST_SCREEN_HEIGHT, viewport_only=True)


def write_drawing(drawing: Drawing, folder: Path, name: str | None = None) -> Path:
    """``folder/<name or uid>.html``, written atomically; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name or drawing.uid}.html"
    atomic_write(path, drawing.html.encode("utf-8"))
    return path
