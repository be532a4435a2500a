"""One panel's box before the page draws it: text panels' markdown here, data panels' request for the page.

Pure: panel JSON + its :class:`~dashgen.preview.frames.Answer` list -> :class:`Drawn`. A text panel is drawn
here (markdown). A data panel (time series, stat, table, bar gauge, state timeline) gets an empty body and a
``spec``: the request the page's script hands to Grafana's ``@grafana/data`` (``DashgenGrafana.applyPanels``),
whose frames, display names, cell text, colours and units the script then draws (tables, stats, bars,
timelines and legends as DOM text, charts with uPlot). "No data" (the panel's ``noValue``) or the first query
error is drawn by the script too, from the same answers.

The box carries what a test reads: ``data-panel-key``, ``data-panel-type``, ``data-series`` (series the
queries returned); the page's script adds ``data-points`` (non-null points or table rows drawn),
``data-columns`` (table columns), ``data-y-min`` / ``data-y-max`` / ``data-y-ticks`` (the axis drawn) and
``data-legend-more`` (legend rows that did not fit), and for tables ``data-clipped-columns`` / ``data-clipped``
(the columns past the panel's edge on a 1920 px screen, :mod:`dashgen.render.clipping`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashgen.escape import html_text
from dashgen.preview import markdown
from dashgen.preview.frames import Answer, request, returned
from dashgen.render.clipping import clip_rule

DATA_TYPES = ("timeseries", "stat", "table", "bargauge", "state-timeline")


@dataclass
class Drawn:
    """A panel's inner HTML, its box attributes and, for a data panel, the request the page's script draws."""

    body: str
    attributes: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] | None = None


def draw(panel: Mapping[str, Any], answers: Sequence[Answer] | None, body_id: str, now: float) -> Drawn:
    """The panel's body; ``answers`` is None for a panel without queries (text) or not queried (folded)."""
    kind = str(panel.get("type") or "")
    if kind == "text":
        options = panel.get("options") or {}
        content = str(options.get("content") or "")
        if options.get("mode") == "html":
            body = f'<div class="text"><pre>{html_text(content)}</pre></div>'
        else:
            body = f'<div class="text markdown">{markdown.render(content)}</div>'
        return Drawn(body)
    if answers is None:
        return Drawn('<div class="nodata">not queried</div>')
    if kind not in DATA_TYPES:
        return Drawn(f'<div class="nodata">panel type {html_text(kind)} is not previewed</div>')
    errors = [a.error for a in answers if a.error]
    attributes = {"data-series": str(returned(answers))}
    if errors:
        attributes["data-errors"] = str(len(errors))
    if answers and len(errors) == len(answers):
        # nothing for @grafana/data to compute: the panel is its first error, as Grafana's panel shows it
        text = errors[0]
        body = f'<div class="nodata error" title="{html_text(text)}">{html_text(text[:300])}</div>'
        clipped = {"data-clipped-columns": "0"} if kind == "table" else {}  # an error, no column drawn
        return Drawn(body, {**attributes, "data-points": "0", **clipped})
    spec = {"id": body_id, "request": request(panel, answers, now)}
    if kind == "table":  # the columns past the edge at 1920 px, by render.clipping's rule, on the page's columns
        spec["clip"] = clip_rule(panel)
    return Drawn(f'<div class="dg-draw" id="{html_text(body_id)}"></div>', attributes, spec)
