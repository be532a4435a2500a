"""Python source for JSON-like values and calls, laid out the way ``ruff format`` (line length 120) leaves it.

The rule is ruff's own for a bracketed expression: one line when it fits, otherwise one element per line
with a trailing comma (a "magic" trailing comma, so ruff keeps it exploded). A string that does not fit
is wrapped in parentheses, alone on its line when it fits there, else split into parts that do (ruff
joins implicitly concatenated parts only when the joined string fits). Quotes are ruff's: double, unless
single ones need fewer escapes. A line that still cannot fit (a very long dict key) ends in ``# noqa: E501``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

LINE = 120
INDENT = 4


@dataclass(frozen=True)
class Raw:
    """Source text written as is (a name, a number)."""

    text: str


@dataclass(frozen=True)
class Str:
    value: str


@dataclass(frozen=True)
class Comment:
    """An own-line comment inside a bracketed expression (forces it to explode)."""

    text: str


@dataclass(frozen=True)
class Item:
    """One element: ``prefix`` is ``"key": `` in a dict, ``name=`` in a call, empty otherwise."""

    node: Any
    prefix: str = ""


@dataclass(frozen=True)
class Seq:
    open: str  # "(", "[", "{", or "name(" for a call
    close: str
    items: tuple[Item | Comment, ...]
    tuple_like: bool = False  # a one-element tuple keeps its comma


def quote(value: str) -> str:
    """The string literal ruff would write."""
    if "\\" not in value and value.isprintable():  # nothing to escape but a quote (most strings): no char loop
        return _quoted(value)
    body = []
    for ch in value:
        if ch == "\\":
            body.append("\\\\")
        elif ch == "\n":
            body.append("\\n")
        elif ch == "\r":
            body.append("\\r")
        elif ch == "\t":
            body.append("\\t")
        elif ch != " " and not ch.isprintable():  # controls, bidi, zero-width, separators, surrogates
            body.append(escaped(ch))
        else:
            body.append(ch)
    return _quoted("".join(body))


def _quoted(text: str) -> str:
    """``text`` (its other escapes done) between ruff's quotes: double, unless single ones need fewer escapes."""
    if text.count('"') > text.count("'"):
        return "'" + text.replace("'", "\\'") + "'"
    return '"' + text.replace('"', '\\"') + '"'


def escaped(ch: str) -> str:
    """A character as its escape sequence (``\\x00``, ``\\u202e``, ``\\U000e0001``)."""
    code = ord(ch)
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` for a comment or a docstring of generated code: every character that does not show as itself
    (a control, a bidi override or isolate, a zero-width or line separator: "Trojan Source") as its escape."""
    return "".join(escaped(ch) if ch != " " and not ch.isprintable() else ch for ch in text)


def number(value: int | float) -> str:
    text = repr(value)
    return text.replace("e+", "e") if isinstance(value, float) else text


def literal(value: Any) -> Any:
    """A JSON-like value (dict, list, tuple, str, number, bool, None) as a node."""
    if isinstance(value, Raw | Str | Seq):
        return value
    if value is None or isinstance(value, bool):
        return Raw(repr(value))
    if isinstance(value, int | float):
        return Raw(number(value))
    if isinstance(value, str):
        return Str(value)
    if isinstance(value, Mapping):
        return Seq("{", "}", tuple(Item(literal(v), quote(str(k)) + ": ") for k, v in value.items()))
    if isinstance(value, tuple):
        return Seq("(", ")", tuple(Item(literal(v)) for v in value), tuple_like=True)
    if isinstance(value, list):
        return Seq("[", "]", tuple(Item(literal(v)) for v in value))
    raise TypeError(f"no literal for {type(value).__name__}")


def call(name: str, *args: Any, **kwargs: Any) -> Seq:
    """``name(args..., key=value...)``; a kwarg value None is left out (pass Raw("None") to write it)."""
    items = [Item(literal(a)) for a in args]
    items += [Item(literal(v), f"{k}=") for k, v in kwargs.items() if v is not None]
    return Seq(f"{name}(", ")", tuple(items))


def flat(node: Any, room: int) -> str | None:
    """The one-line form when it is at most ``room`` characters long, else None (or when the node holds a comment,
    which cannot be one line). It stops as soon as the line is too long: :func:`render` asks it of every node and
    then of each child of a node that did not fit, so forming whole subtrees made the work grow with the depth
    (about a fifth of an import's CPU)."""
    if isinstance(node, Raw):
        return node.text if len(node.text) <= room else None
    if isinstance(node, Str):
        if len(node.value) + 2 > room:  # a literal is never shorter than its text + 2
            return None
        text = quote(node.value)
        return text if len(text) <= room else None
    comma = "," if node.tuple_like and len(node.items) == 1 else ""
    used = len(node.open) + len(comma) + len(node.close)
    if used > room:
        return None
    parts: list[str] = []
    for item in node.items:
        if isinstance(item, Comment):
            return None
        used += len(item.prefix) + (2 if parts else 0)
        inner = flat(item.node, room - used)
        if inner is None:
            return None
        used += len(inner)
        parts.append(item.prefix + inner)
    return node.open + ", ".join(parts) + comma + node.close


@cache
def _escaped_length(ch: str) -> int:
    return len(quote(ch)) - 2


def _split(value: str, width: int) -> list[str]:
    """Parts of ``value`` whose literals fit ``width``: cut after a newline, a space, a comma, an operator or
    bracket (in the second half of the part), else anywhere."""
    parts = []
    rest = value
    while rest:
        if len(rest) + 2 <= width and len(quote(rest)) <= width:  # a literal is never shorter than its text + 2
            parts.append(rest)
            break
        # the longest head whose literal fits, counted char by char over at most ``width`` characters (linear in
        # the string, where quoting every longer head was quadratic: a 100 KB description took 20 s)
        head = rest[: max(width - 2, 0)]
        if "\\" not in head and head.isprintable():  # every character its own literal (most text): no char loop
            cut = len(head)
        else:
            total, cut = 2, 0
            for ch in rest[:width]:
                total += _escaped_length(ch)
                if total > width:
                    break
                cut += 1
        cut = max(cut, 1)
        while cut > 1 and len(quote(rest[:cut])) > width:  # the quote style chosen may escape a quote
            cut -= 1
        head = rest[:cut]
        for marks in ("\n", " ", ",", "()[]{}|+-*/=<>!~"):
            at = max(head.rfind(mark) for mark in marks)
            if at >= cut // 2:
                cut = at + 1
                break
        parts.append(rest[:cut])
        rest = rest[cut:]
    return parts


def _fits(line: str) -> bool:
    return len(line) <= LINE


def _noqa(line: str) -> str:
    return line if _fits(line) else line + "  # noqa: E501"


def _comment_lines(text: str, indent: int) -> list[str]:
    pad = " " * indent
    chunks = textwrap.wrap(visible(text), LINE - indent - 2, break_long_words=False)
    return [f"{pad}# {chunk}" for chunk in chunks] or [pad + "#"]


def render(node: Any, indent: int = 0, prefix: str = "", suffix: str = "") -> list[str]:
    """Lines of ``prefix + node + suffix`` at ``indent``."""
    pad = " " * indent
    one = flat(node, LINE - len(pad) - len(prefix) - len(suffix))
    if one is not None:
        return [pad + prefix + one + suffix]
    inner = " " * (indent + INDENT)
    if isinstance(node, Raw):
        return [_noqa(pad + prefix + node.text + suffix)]
    if isinstance(node, Str):
        alone = quote(node.value)
        if prefix and _fits(inner + alone):
            return [pad + prefix + "(", inner + alone, pad + ")" + suffix]
        parts = [quote(p) for p in _split(node.value, LINE - indent - INDENT)]
        if len(parts) == 1:
            return [_noqa(pad + prefix + parts[0] + suffix)]
        return [pad + prefix + "(", *[inner + p for p in parts], pad + ")" + suffix]
    lines = [_noqa(pad + prefix + node.open)]
    for item in node.items:
        if isinstance(item, Comment):
            lines += _comment_lines(item.text, indent + INDENT)
        else:
            lines += render(item.node, indent + INDENT, item.prefix, ",")
    lines.append(pad + node.close + suffix)
    return lines
