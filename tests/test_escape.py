"""The escaping functions, one per output context (dashgen.escape): each payload comes out inert for its
context, and ordinary text comes out readable."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from dashgen.escape import (
    NEUTRAL,
    css_colour,
    html_text,
    markdown_code,
    markdown_html,
    markdown_text,
    report_json,
    safe_href,
    script_json,
    terminal_lines,
    terminal_text,
)

PAYLOADS = [
    "</SCRIPT><img src=x onerror=alert(1)>",
    "</script ><script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "' onmouseover='alert(1)",
    "javascript:alert(1)",
    "[click](javascript:alert(1))",
    "![x](https://evil.example/x.png)",
    "<!-- x",
    "# dashgen check: all clear",
    "</details></summary><b>x</b>",
    "@octocat please",
    "line\n\n# heading\n<img src=x>",
    "a\u202eevil\u2066b",
    "\x1b]52;c;ZXZpbA==\x07\x1b[2J",
    "https://evil.example/ www.evil.example",
    "`code` | pipe",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_html_text_leaves_no_tag_no_quote_and_no_bidi(payload):
    out = html_text(payload)
    assert not {"<", ">", '"', "'"} & set(out)
    assert "\u202e" not in out and "\u2066" not in out


def test_html_text_keeps_ordinary_text():
    assert html_text("p99 latency (s) & TTFT") == "p99 latency (s) &amp; TTFT"


@pytest.mark.parametrize(
    "value",
    ["#73bf69", "#fff", "#ff000080", "rgb(1, 2, 3)", "rgba(255,0,0,0.5)", "hsl(120, 50%, 40%)", "semi-dark-red", "red"],
)
def test_a_colour_of_the_grammar_is_kept(value):
    assert css_colour(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "red;background:url(https://x)",
        "red}body{display:none",
        'red" onmouseover="x',
        "expression(alert(1))",
        "url(javascript:alert(1))",
        "rgb(1,2,3) url(x)",
        "#12345",
        "var(--x)",
        "",
        None,
        42,
        {"color": "red"},
    ],
)
def test_anything_else_is_the_neutral_colour(value):
    assert css_colour(value) == NEUTRAL


@pytest.mark.parametrize("url", ["https://grafana.example/d/x?a=1&b=2", "http://x", "/d/abc", "runbooks/gpu.md"])
def test_http_and_relative_links_are_kept(url):
    assert safe_href(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "https:evil",
        'https://x/"onmouseover=alert(1)',
        "https://x/<b>",
        "",
        None,
    ],
)
def test_other_links_are_refused(url):
    assert safe_href(url) is None


@pytest.mark.parametrize("payload", PAYLOADS)
def test_script_json_has_no_markup_characters_and_round_trips(payload):
    value = {"name": payload, "sep": "\u2028\u2029"}
    out = script_json(value)
    assert not {"<", ">", "&", "\u2028", "\u2029"} & set(out)
    assert json.loads(out) == value


def _html_of(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).render(markdown)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_text_renders_no_element_link_heading_or_mention(payload):
    rendered = _html_of(f"before {markdown_text(payload)} after")
    assert rendered.startswith("<p>before ") and rendered.count("<p>") == 1
    for tag in ("<img", "<script", "<svg", "<a ", "<h1", "<details", "<summary", "<b>", "<code>", "<em>"):
        assert tag not in rendered.lower(), (payload, rendered)
    assert "@octocat" not in rendered  # a zero-width space after the @


def test_markdown_text_reads_as_the_text():
    rendered = _html_of(markdown_text("p99 (TTFT) - #2 [a]"))
    assert rendered == "<p>p99 (TTFT) - #2 [a]</p>\n"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_html_inside_summary_cannot_leave_it(payload):
    rendered = _html_of(f"<details>\n<summary>{markdown_html(payload)}</summary>\n\nbody\n\n</details>\n")
    assert rendered.count("<summary>") == 1 and rendered.count("</details>") == 1
    assert rendered.index("</summary>") < rendered.index("body")
    for tag in ("<img", "<script", "<svg", "<a ", "<h1", "<b>"):
        assert tag not in rendered.lower(), (payload, rendered)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_code_is_one_code_span_even_in_a_table(payload):
    rendered = _html_of(f"x {markdown_code(payload)} y")
    assert rendered.count("<code>") == 1 and rendered.count("<p>") == 1
    assert "<img" not in rendered and "<script" not in rendered.lower()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_terminal_text_has_no_control_and_no_bidi_character(payload):
    out = terminal_text(payload)
    assert all(ch >= " " and ch != "\x7f" and not "\x80" <= ch <= "\x9f" for ch in out)
    assert "\u202e" not in out and "\u2066" not in out


def test_terminal_text_shows_controls_as_escapes_and_is_bounded():
    assert terminal_text("a\x1b[2Jb\x9bc\u202ed") == "a\\x1b[2Jb\\x9bc\\u202ed"
    long = terminal_text("x" * 10_000, limit=100)
    assert len(long) <= 101 and long.endswith("…")
    assert terminal_text("\x07" * 1000, limit=10) == "\\x07\\x07…"


def test_terminal_text_shows_a_file_name_s_undecodable_byte_as_text():
    name = b"x\x9b2J\xff.json".decode("utf-8", "surrogateescape")  # how Python reads such a name from a folder
    out = terminal_text(name)
    assert out == "x\\udc9b2J\\udcff.json"
    assert out.encode("utf-8", "surrogateescape") == out.encode("utf-8")  # no raw byte left to write


def test_report_json_is_the_same_value_with_nothing_raw_a_terminal_acts_on():
    value = {"name": b"x\xff\x9b.json".decode("utf-8", "surrogateescape"), "t": "\x1b[2J\x9b31m\u202e\u2028é ü 名"}
    text = report_json(value, indent=2)
    assert json.loads(text) == value and text.encode("utf-8").decode("utf-8") == text
    assert not any("\x7f" <= ch <= "\x9f" or ch in "\u202e\u2028" or "\ud800" <= ch <= "\udfff" for ch in text)
    assert "é ü 名" in text  # readable text stays as written


def test_report_json_writes_a_nan_or_an_infinity_as_null():
    value = {"seconds": float("inf"), "rows": [1.5, float("nan"), (float("-inf"),)], "ok": 2.0}
    assert json.loads(report_json(value)) == {"seconds": None, "rows": [1.5, None, [None]], "ok": 2.0}


def test_terminal_lines_keeps_line_breaks_and_only_the_given_sequences():
    text = "a\x1b[31mred\x1b[0m\n\x1b]52;c;eA==\x07 \x1b[8mhidden\r\n"
    assert terminal_lines(text, keep=("\x1b[31m", "\x1b[0m")) == (
        "a\x1b[31mred\x1b[0m\n\\x1b]52;c;eA==\\x07 \\x1b[8mhidden\\x0d\n"
    )
    assert terminal_lines(text) == "a\\x1b[31mred\\x1b[0m\n\\x1b]52;c;eA==\\x07 \\x1b[8mhidden\\x0d\n"


@pytest.mark.parametrize("text", ["- nested", "+ nested", "1. nested", "# heading", "> quote", "=== rule", "    code"])
def test_markdown_text_opens_no_block_where_a_list_item_begins(text):
    rendered = _html_of(f"- {markdown_text(text)}: detail")
    assert rendered.count("<li>") == 1 and "<ul>" in rendered and rendered.count("<ul>") == 1, rendered
    assert not any(tag in rendered for tag in ("<ol", "<h1", "<blockquote", "<pre", "<hr")), rendered


def test_markdown_text_leaves_ordinary_names_as_written():
    assert markdown_text("h20-16") == "h20-16" and markdown_text("p99.9 latency") == "p99.9 latency"
