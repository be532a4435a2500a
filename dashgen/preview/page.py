"""The preview page: a dashboard's laid-out panels, each drawn from its data, in one self-contained HTML file.

Pure apart from reading the package's own assets: :func:`page` takes the layout, the drawn panels and the
window, and returns the HTML. uPlot (pinned, MIT, ``dashgen/data/uplot``), Grafana's ``@grafana/data``
(pinned, Apache-2.0, ``dashgen/data/grafana-data``), the page's stylesheet and its script are inlined, so the
file opens offline and a screenshot needs no network. The panels' requests travel as JSON in a
``<script type="application/json">`` block; the script draws from ``@grafana/data``'s answers with DOM text
(``textContent``), never markup built from data.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from dashgen.escape import html_text, script_json
from dashgen.preview.draw import Drawn
from dashgen.preview.layout import Placed, pixels

PAGE_WIDTH = 1600
UPLOT_VERSION = "1.6.32"
# The @grafana/data minors shipped (dashgen/data/grafana-data/<minor>/, pinned in bundles/grafana-data/<minor>/):
# the Grafana versions the profiles target
GRAFANA_DATA = ("11.6", "12.3")


def _minor_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


def grafana_minor(version: str | None) -> str:
    """The shipped @grafana/data for a profile's ``grafana_version``: that minor when shipped, else the newest
    older one (a Grafana newer than every bundle gets the newest), else the oldest; None: the newest."""
    if not version:
        return GRAFANA_DATA[-1]
    older = [minor for minor in GRAFANA_DATA if _minor_key(minor) <= _minor_key(version)]
    return older[-1] if older else GRAFANA_DATA[0]


@cache
def asset(name: str) -> str:
    """A file of ``dashgen/data`` (``uplot/uPlot.iife.min.js``, ``preview/preview.js``, ...) as text."""
    return resources.files("dashgen").joinpath("data", *name.split("/")).read_text(encoding="utf-8")


def _script(text: str) -> str:
    """The page's own code inside ``<script>``: no ``</script`` in any case can end the element early."""
    return re.sub(r"(?i)</(script)", r"<\\/\1", text)


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def policy(scripts: Sequence[str], styles: Sequence[str]) -> str:
    """The page's Content-Security-Policy: nothing by default; only the page's own scripts and stylesheets (by
    hash), style attributes (the layout's positions and validated colours), ``data:`` images. No request can
    leave the page: no connect, font, frame, form, base or media source is allowed."""
    return (
        "default-src 'none'; "
        f"script-src {' '.join(_hash(s) for s in scripts)}; "
        f"style-src-elem {' '.join(_hash(s) for s in styles)}; "
        "style-src-attr 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )


@dataclass(frozen=True)
class Shown:
    """One laid-out item with what it draws (None for a row header) and its stable key."""

    item: Placed
    key: str
    drawn: Drawn | None = None


def _box(shown: Shown, width: int) -> str:
    item = shown.item
    left, top, box_width, height = pixels(item, width)
    style = f"left:{left:.1f}px;top:{top:.1f}px;width:{box_width:.1f}px"
    title = html_text(item.raw.get("title") or "")
    if item.is_row:
        hidden = len(item.raw.get("panels") or []) if item.folded else 0
        count = f'<span class="count">({hidden} panels)</span>' if hidden else ""
        folded = " folded" if item.folded else ""
        return (
            f'<div class="row{folded}" data-panel-key="{html_text(shown.key)}" data-panel-type="row" '
            f'style="{style}">{title}{count}</div>'
        )
    drawn = shown.drawn or Drawn('<div class="nodata">No data</div>')
    attributes = {
        "data-panel-key": shown.key,
        "data-panel-type": str(item.raw.get("type") or ""),
        "data-row": item.row,
        **drawn.attributes,
    }
    attrs = " ".join(f'{name}="{html_text(value)}"' for name, value in attributes.items())
    error = '<span class="err" title="a query failed">!</span>' if "data-errors" in drawn.attributes else ""
    return (
        f'<div class="panel" {attrs} style="{style};height:{height:.1f}px">'
        f'<div class="title">{error}{title}</div><div class="body">{drawn.body}</div></div>'
    )


def page(
    title: str,
    uid: str,
    shown: Sequence[Shown],
    window: tuple[float, float],
    width: int = PAGE_WIDTH,
    note: str = "",
    grafana: str = GRAFANA_DATA[-1],
) -> str:
    """The whole HTML page; ``window`` is (start, end) in unix seconds, shown in the header; ``grafana`` the
    shipped @grafana/data minor that computes the panels (:func:`grafana_minor`)."""
    bottom = max((pixels(s.item, width)[1] + pixels(s.item, width)[3] for s in shown), default=0.0)
    specs = [s.drawn.spec for s in shown if s.drawn is not None and s.drawn.spec is not None]
    start, end = (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) for t in window)
    grafana_data = asset(f"grafana-data/{grafana}/VERSION").splitlines()[0]  # "@grafana/data 12.3.3"
    boxes = "\n".join(_box(s, width) for s in shown)
    scripts = [
        _script(asset("uplot/uPlot.iife.min.js")),
        _script(asset(f"grafana-data/{grafana}/grafana-data.iife.min.js")),
        _script(asset("preview/preview.js")),
    ]
    styles = [asset("uplot/uPlot.min.css"), asset("preview/preview.css")]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy(scripts, styles)}">\n'
        f"<title>{html_text(title)}</title>\n"
        f'<meta name="generator" content="dashgen preview; uPlot {UPLOT_VERSION} (MIT); '
        f'{html_text(grafana_data)} (Apache-2.0)">\n'
        + "".join(f"<style>{style}</style>\n" for style in styles)
        + f'</head><body data-uid="{html_text(uid)}" data-grafana-data="{html_text(grafana)}" '
        f'style="width:{width + 32}px">\n'
        f'<header><h1>{html_text(title)}</h1><span class="when">{start} to {end} UTC</span>'
        f'<span class="when">{html_text(note)}</span></header>\n'
        f'<div class="grid" style="width:{width}px;height:{bottom:.0f}px">\n{boxes}\n</div>\n'
        f'<script id="dg-panels" type="application/json">{script_json(specs)}</script>\n'
        + "".join(f"<script>{script}</script>\n" for script in scripts)
        + "</body></html>\n"
    )


def page_height(shown: Sequence[Shown], width: int = PAGE_WIDTH) -> int:
    """The page's height in CSS pixels (header and margins included), for a whole-page screenshot."""
    bottom = max((pixels(s.item, width)[1] + pixels(s.item, width)[3] for s in shown), default=0.0)
    return int(bottom) + 70


def keyed(item: Placed, keys: Mapping[int, str]) -> str:
    """The panel's stable key from the build, else ``panel:<id>`` (a dashboard read from JSON)."""
    panel_id = item.raw.get("id")
    if isinstance(panel_id, int) and panel_id in keys:
        return keys[panel_id]
    return f"panel:{panel_id}"
