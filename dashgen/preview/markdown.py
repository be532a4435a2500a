"""The markdown of a text panel as HTML: the subset dashgen's text panels write (paragraphs, ``#`` headings,
``-`` / ``*`` / ``1.`` lists, ``**bold**``, ``*emphasis*``, `` `code` ``, ``[links](url)``). Pure; every
piece of text is escaped first, so a panel cannot inject markup into the preview."""

from __future__ import annotations

import html
import re

from dashgen.escape import html_text, safe_href

_INLINE = (
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), lambda m: _link(m.group(1), m.group(2))),
)


def _link(text: str, escaped_url: str) -> str:
    """A link only to ``http(s)://`` or a relative path (``javascript:`` and the like stay text); the target
    is unescaped and escaped again as an attribute value, so a quote in it cannot end the attribute."""
    href = safe_href(html.unescape(escaped_url))
    if href is None:
        return text
    return f'<a href="{html_text(href)}" rel="noopener noreferrer">{text}</a>'


_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+(.*)$")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")


def inline(text: str) -> str:
    """Escape ``text``, then apply the inline marks (code spans first: their content stays literal)."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for part in parts:
        escaped = html_text(part)
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{escaped[1:-1]}</code>")
            continue
        for pattern, replacement in _INLINE[1:]:
            escaped = pattern.sub(replacement, escaped)
        out.append(escaped)
    return "".join(out)


def render(text: str) -> str:
    """Block structure: blank lines separate paragraphs; list items and headings are their own blocks."""
    blocks: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    ordered = False

    def flush() -> None:
        nonlocal items
        if paragraph:
            blocks.append(f"<p>{inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if items:
            tag = "ol" if ordered else "ul"
            blocks.append(f"<{tag}>" + "".join(f"<li>{inline(i)}</li>" for i in items) + f"</{tag}>")
            items = []

    for line in text.splitlines():
        if not line.strip():
            flush()
            continue
        heading = _HEADING_RE.match(line)
        listed = _LIST_RE.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            blocks.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif listed:
            if paragraph:
                flush()
            ordered = line.strip()[0].isdigit()
            items.append(listed.group(1))
        elif items:
            items[-1] += " " + line.strip()
        else:
            paragraph.append(line.strip())
    flush()
    return "\n".join(blocks)
