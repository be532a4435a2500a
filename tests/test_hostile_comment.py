"""The pull-request comment is inert: a diff between hostile dashboards (titles, panel types, variable names,
descriptions, queries, file and profile names carrying payloads) renders, with a CommonMark renderer with raw
HTML on, to no element, link, image or mention of a payload's, and keeps its own structure (one heading,
every ``<details>`` closed where dashgen closed it)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hostile import payloads
from markdown_it import MarkdownIt

from dashgen.cli.check import _preface
from dashgen.diff import diff_dashboards
from dashgen.diff.comment import Section, render_comment
from dashgen.diff.render import FileDiff

BEACON = "https://evil.example"
PAYLOADS = [
    *payloads(BEACON),
    "x\n# dashgen check: all clear",
    "a`b\n`</code><img src=x>",
    "| col | \n|---|",
    "[link](https://evil.example)",
    "<https://evil.example/auto>",
]
# the elements dashgen's own comment uses; anything else came from a payload
OWN = {"h2", "h3", "p", "strong", "em", "b", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}
OWN |= {"details", "summary", "br", "hr"}


def _dashboard(text: str, version: int) -> dict:
    panels = [
        {
            "id": 1,
            "type": "timeseries",
            "title": f"{text} moved",
            "gridPos": {"x": 0, "y": version, "w": 12, "h": 8},
            "description": f"{text} {version}",
            "targets": [{"refId": "A", "expr": f'up{{pod="{text}"}} * {version}', "legendFormat": text}],
        },
        {
            "id": 2 + version,
            "type": text,
            "title": f"{text} panel {version}",
            "gridPos": {"x": 12, "y": 0, "w": 6, "h": 4},
        },
    ]
    variables = [
        {"name": f"{text}{version}", "type": "custom", "query": text, "label": text},
        {"name": "pod", "type": "query", "query": f"label_values({text}{version})", "label": text},
    ]
    return {"uid": "u", "title": f"{text} {version}", "panels": panels, "templating": {"list": variables}}


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def _rendered(text: str) -> tuple[str, list[tuple[str, dict]]]:
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    parser = Elements()
    parser.feed(html)
    return html, parser.tags


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_the_comment_of_a_hostile_diff_holds_no_live_markup(payload):
    old, new = _dashboard(payload, 1), _dashboard(payload, 2)
    files = [
        FileDiff(f"{payload}/dg-x.json", diff_dashboards(old, new)),
        FileDiff(f"h20-16/{payload}.json", status="added"),
        FileDiff(f"h20-16/{payload}-gone.json", status="removed"),
    ]
    preface = _preface("2 dashboards built", True, [("lint error", payload), (payload, f"`x` {payload}")], bounded=True)
    for limit in (None, 60_000, 3_000):
        text = render_comment([Section("Changes", files)], limit=limit, preface=preface)
        html, tags = _rendered(text)
        foreign = [(tag, attrs) for tag, attrs in tags if tag not in OWN]
        assert not foreign, (foreign, text)
        # no href, src, on*, style: dashgen's own only attribute is the diff fence's language
        assert not [attrs for _tag, attrs in tags if attrs and attrs != {"class": "language-diff"}], html
        assert [tag for tag, _ in tags].count("h2") == 1 and "<h1>" not in html
        assert [tag for tag, _ in tags].count("details") == html.count("</details>")
        prose = re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S)  # GitHub links no mention inside code
        assert "@octocat" not in prose  # a zero-width space after every @
        assert "&lt;code&gt;" not in html  # a file name in <code>, not escaped twice
