"""One escaping discipline per output context, each a small pure function: whatever text came from a
dashboard, a data source or a Grafana server is passed through the one for the place it lands in, so what
people open (the preview page, the pull-request comment, the terminal) carries no one else's markup,
script, link, mention or control sequence.

- :func:`html_text` — HTML text and double-quoted attribute values (``& < > " '`` as entities).
- :func:`css_colour` — a colour for ``style`` / ``stroke``: only hex, numeric ``rgb[a]()`` / ``hsl[a]()`` and
  Grafana's colour names (dashed shades included); anything else is :data:`NEUTRAL`.
- :func:`safe_href` — a link target: ``http(s)://`` or a relative path, else None (not a link).
- :func:`script_json` — JSON inside ``<script>``: ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u`` escapes, so
  no ``</script>`` in any case and no ``<!--`` can end or bend the element.
- :func:`markdown_text` / :func:`markdown_html` / :func:`markdown_code` — text in markdown, in raw HTML inside
  markdown (``<summary>``), and in a code span: one line, HTML-escaped, punctuation escaped (markdown text),
  ``@`` and ``://`` / ``www.`` broken by a zero-width space so no mention or autolink forms.
- :func:`markdown_fenced` — one line inside a fenced code block: no fence of its own, controls and bidi shown as
  escapes (as :func:`terminal_text`), no leading ``::`` (as :func:`terminal_lines`), not bounded (the caller
  cuts the block).
- :func:`report_json` — a JSON report for a terminal or a pipe: DEL, C1 and bidi controls, the line separators
  and lone surrogates written as ``\\uNNNN`` (the same JSON value, valid UTF-8 whatever a file name held); a
  NaN or infinity as null.
- :func:`terminal_text` — server text for a terminal: C0 / C1 controls, ESC, DEL, the bidi controls and lone
  surrogates (a file name's undecodable bytes) shown as ``\\xNN`` / ``\\uNNNN``, bounded length.
- :func:`inline_text` — one foreign value inside a line of a multi-line report: :func:`terminal_text`, one line.
- :func:`terminal_lines` — a multi-line report of dashgen's: each line through :func:`terminal_text`, and a line
  that would read as a CI workflow command (``::error::``) shown with its first colon escaped.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

NEUTRAL = "#8e8e8e"  # the colour shown instead of a value outside the colour grammar (Grafana's axis grey)

# Grafana's named colours: the base hues and their shades (dark-, semi-dark-, light-, super-light-).
_HUES = ("red", "orange", "yellow", "green", "blue", "purple")
_SHADES = ("", "dark-", "semi-dark-", "light-", "super-light-")
GRAFANA_COLOUR_NAMES = frozenset(
    {f"{shade}{hue}" for shade in _SHADES for hue in _HUES} | {"transparent", "text", "white", "black"}
)
_NUMBER = r"\s*[+-]?(?:\d{1,4}(?:\.\d{1,6})?|\.\d{1,6})%?\s*"
_COLOUR_RE = re.compile(
    rf"#(?:[0-9a-fA-F]{{3,4}}|[0-9a-fA-F]{{6}}|[0-9a-fA-F]{{8}})"
    rf"|(?:rgba?|hsla?)\({_NUMBER}(?:,{_NUMBER}){{2,3}}\)",
)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_UNSAFE_URL_RE = re.compile(r"[\x00-\x20\x7f-\x9f\"'<>\\`]")

# bidi embeddings, overrides and isolates, the marks, and the line / paragraph separators
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LINE_BREAKS_RE = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_ZWSP = "&#8203;"
_MARKDOWN_PUNCTUATION_RE = re.compile(r"([\\`*_{}\[\]()#!|~])")
_BLOCK_START_RE = re.compile(r"^(\s*)([-+=]|\d+\.(?=\s|$))")  # what would open a list, a heading or a rule


def html_text(text: object) -> str:
    """``text`` for HTML text or a double-quoted attribute value; bidi controls dropped."""
    return html.escape(_no_bidi(str(text)), quote=True)


def css_colour(value: object, fallback: str = NEUTRAL) -> str:
    """``value`` when it is a colour of the strict grammar (a Grafana name resolved by the caller is also fine),
    else ``fallback``: nothing but a colour reaches a ``style`` or ``stroke`` attribute."""
    if not isinstance(value, str):
        return fallback
    text = value.strip()
    if text.lower() in GRAFANA_COLOUR_NAMES or _COLOUR_RE.fullmatch(text):
        return text
    return fallback


def safe_href(url: object) -> str | None:
    """``url`` when it is an ``http(s)://`` address or a relative path without a scheme; None otherwise."""
    if not isinstance(url, str) or not url or _UNSAFE_URL_RE.search(url):
        return None
    scheme = _SCHEME_RE.match(url)
    if scheme is None:
        return url
    if scheme.group(0).lower() in ("http:", "https:") and url[scheme.end() :].startswith("//"):
        return url
    return None


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside a ``<script>`` element (and as a JS literal): no ``<``, ``>``, ``&``,
    U+2028 or U+2029 left raw; NaN and infinities refused (they are not JSON)."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(raw, escaped)
    return text.replace("\u2029", "\\u2029")


# what a JSON report may not carry raw: DEL and C1 controls and the bidi controls (a terminal acts on them), the
# line separators, and lone surrogates (a file name's undecodable bytes: written raw, no UTF-8 reader takes the
# document); json.dumps escapes the C0 controls itself
_JSON_RAW_RE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff" + "".join(sorted(BIDI)) + "]")


def report_json(value: Any, **options: Any) -> str:
    """``value`` as JSON (``json.dumps`` with ``options``; non-ASCII text kept readable) with every character of
    :data:`_JSON_RAW_RE` as its ``\\u`` escape: the same value, nothing a terminal acts on, valid UTF-8. A NaN or
    an infinity (a server may answer ``Infinity``: Python's JSON reader takes it) is written as null: JSON has
    no such number, and a strict reader refuses the whole document for one."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    except ValueError:
        text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, **options)
    return _JSON_RAW_RE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _finite(value: Any) -> Any:
    """``value`` with every NaN and infinity as None (a copy of its dicts, lists and tuples)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _no_bidi(text: str) -> str:
    return "".join(ch for ch in text if ch not in BIDI) if any(ch in BIDI for ch in text) else text


def one_line(text: object) -> str:
    """``text`` on one line: line breaks of any kind folded to one space, other controls and bidi dropped."""
    folded = _LINE_BREAKS_RE.sub(" ", str(text))
    return "".join(ch for ch in folded if ch >= " " and ch != "\x7f" and not "\x80" <= ch <= "\x9f" and ch not in BIDI)


def _unlinked(escaped: str) -> str:
    """No mention, no autolink: a zero-width space after ``@``, inside ``://`` and ``www.``."""
    text = escaped.replace("@", "@" + _ZWSP)
    text = re.sub(r"(?i):(\\?/\\?/)", ":" + _ZWSP + r"\1", text)
    return re.sub(r"(?i)\b(www)(\\?\.)", r"\1" + _ZWSP + r"\2", text)


def _block_start(match: re.Match[str]) -> str:
    mark = match.group(2)
    return match.group(1) + (mark[:-1] + "\\." if mark.endswith(".") else "\\" + mark)


def markdown_text(text: object) -> str:
    """``text`` as inert inline markdown: one line, ``& < > " '`` as entities, the inline punctuation
    backslash-escaped (and a leading ``-``, ``+``, ``=`` or ``1.`` that would open a block), no mention and no
    autolink; ordinary text (``h20-16``, ``p99.9``) stays as written."""
    escaped = _BLOCK_START_RE.sub(_block_start, _MARKDOWN_PUNCTUATION_RE.sub(r"\\\1", one_line(text).strip()))
    return _unlinked(html.escape(escaped, quote=True))


def markdown_html(text: object) -> str:
    """``text`` inside raw HTML of a markdown document (``<summary>…</summary>``, where markdown is not parsed):
    one line (a blank line would end the HTML block), HTML-escaped, no mention and no autolink."""
    return _unlinked(html.escape(one_line(text), quote=True))


def markdown_code(text: object) -> str:
    """``text`` as a code span (also inside a table cell): one line, no backtick, ``|`` escaped."""
    content = one_line(text).replace("`", "'").replace("|", "\\|")
    return f"`{content}`" if content.strip() else "` `"


def markdown_fenced(line: object) -> str:
    """One line of a fenced code block (a value's diff): a fence in it as three quotes; C0 / C1 controls, DEL,
    bidi controls and lone surrogates as escapes, as :func:`terminal_text` shows them, and a leading ``::`` as
    :func:`terminal_lines` shows it (``diff --format markdown`` may print to a CI log); any length."""
    text = str(line).replace("```", "'''")
    return _no_command(terminal_text(text, len(text) * 10 + 1))  # an escape is at most 10 characters: none cut


def terminal_text(text: object, limit: int = 500) -> str:
    """Server text fit for a terminal: C0 controls (newline and tab too), DEL and C1 controls as ``\\xNN``,
    bidi controls and lone surrogates as ``\\uNNNN``, at most ``limit`` characters (then ``…``)."""
    out: list[str] = []
    size = 0
    for ch in str(text):
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            piece = f"\\x{code:02x}"
        elif ch in BIDI or ch in "\u2028\u2029" or 0xD800 <= code <= 0xDFFF:
            # a lone surrogate is a byte of a file name that is not UTF-8 (surrogateescape): written out it
            # would be that raw byte, a C1 control (0x9b: CSI) on a terminal that reads 8-bit controls
            piece = f"\\u{code:04x}"
        else:
            piece = ch
        if size + len(piece) > limit:
            out.append("…")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


LINE_LIMIT = 2000  # the most characters of one report line shown (a longer line ends in …)


def inline_text(text: object) -> str:
    """One foreign value (a title, a query, a server's message, a file name) put inside a line of a multi-line
    report: :func:`terminal_text` up to :data:`LINE_LIMIT`, so a line break in it is shown as ``\\x0a`` and
    cannot start a line of its own (a forged report line, a CI workflow command)."""
    return terminal_text(text, LINE_LIMIT)


def report_line(text: object) -> str:
    """One whole line of a text report made of foreign text (a lint finding, a line of ``check``'s report):
    :func:`inline_text`, and a leading ``::`` shown as :func:`terminal_lines` shows it (a file name given as
    ``::error::x.json`` starts no CI workflow command)."""
    return _no_command(inline_text(text))


def terminal_lines(text: str, limit: int = LINE_LIMIT, keep: tuple[str, ...] = ()) -> str:
    """A report of many lines for a terminal: each line through :func:`terminal_text` (line breaks kept).
    ``keep``: exact sequences of dashgen's own let through (its diff colours, ``ESC[31m`` and the like); any
    other control sequence, a server's or a dashboard's, is shown as text. A line that begins (after blanks and
    a kept colour) with ``::`` has that first colon as ``\\x3a``: a second line of defence, should a renderer let
    a foreign line break through, against a forged CI workflow command (dashgen writes none itself)."""
    ends = text.endswith("\n")
    lines = text.split("\n")[:-1] if ends else text.split("\n")
    if not keep:
        return "\n".join(_no_command(terminal_text(line, limit)) for line in lines) + ("\n" if ends else "")
    kept = re.compile("(" + "|".join(re.escape(k) for k in keep) + ")")
    shown = [
        "".join(part if part in keep else terminal_text(part, limit) for part in kept.split(line)) for line in lines
    ]
    return "\n".join(_no_command(line) for line in shown) + ("\n" if ends else "")


# a GitHub Actions workflow command: a log line that begins with "::" after blanks (and after a colour of
# dashgen's own); dashgen writes none itself
_COMMAND_RE = re.compile(r"^((?:\x1b\[[0-9;]*m)*[ \t]*)::")


def _no_command(line: str) -> str:
    """``line`` with the first colon of a leading ``::`` as ``\\x3a``, so a CI runner reads no command in it."""
    return _COMMAND_RE.sub(r"\1\\x3a:", line, count=1)
