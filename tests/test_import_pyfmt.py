"""The source layout of ``dashgen import`` (``dashgen.importer.pyfmt``) held to its plain definitions: the one-line
form that stops once it is too long is the whole one-line form wherever that fits, and the cut of a long string
found without a per-character loop is the per-character loop's; and the work they save stays saved."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dashgen.importer import pyfmt
from dashgen.importer.pyfmt import Comment, Item, Raw, Seq, Str


def _whole_flat(node: Any) -> str | None:
    """The one-line form of the whole node, however long (the definition), or None when it holds a comment."""
    if isinstance(node, Raw):
        return node.text
    if isinstance(node, Str):
        return pyfmt.quote(node.value)
    parts = []
    for item in node.items:
        if isinstance(item, Comment):
            return None
        inner = _whole_flat(item.node)
        if inner is None:
            return None
        parts.append(item.prefix + inner)
    comma = "," if node.tuple_like and len(parts) == 1 else ""
    return node.open + ", ".join(parts) + comma + node.close


def _char_split(value: str, width: int) -> list[str]:
    """The parts of ``value`` as the per-character count cuts them (the definition)."""
    parts, rest = [], value
    while rest:
        if len(rest) + 2 <= width and len(pyfmt.quote(rest)) <= width:
            parts.append(rest)
            break
        total, cut = 2, 0
        for ch in rest[:width]:
            total += pyfmt._escaped_length(ch)
            if total > width:
                break
            cut += 1
        cut = max(cut, 1)
        while cut > 1 and len(pyfmt.quote(rest[:cut])) > width:
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


ALPHABET = "ab c,()'\"\\\n\t\x00\u202eé=+" + "x" * 20


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.choice((0, 1, 3, 10, 40, 130, 300))))


def _node(rng: random.Random, depth: int) -> Any:
    pick = rng.random()
    if depth == 0 or pick < 0.3:
        return Raw(rng.choice(("None", "1", "2.5e-09", "x" * rng.randrange(0, 130))))
    if pick < 0.55:
        return Str(_text(rng))
    items: list[Item | Comment] = []
    for _ in range(rng.choice((0, 1, 2, 3, 6))):
        if rng.random() < 0.03:
            items.append(Comment("why"))
        else:
            items.append(Item(_node(rng, depth - 1), rng.choice(("", "key=", '"k": '))))
    shape = rng.choice((("[", "]", False), ("(", ")", True), ("{", "}", False), ("call(", ")", False)))
    return Seq(shape[0], shape[1], tuple(items), tuple_like=shape[2])


def test_the_one_line_form_within_its_room_is_the_whole_one_line_form_where_that_fits() -> None:
    rng = random.Random(42)
    nodes = [_node(rng, 5) for _ in range(600)]
    checked = fitted = 0
    for node in nodes:
        whole = _whole_flat(node)
        for room in (-1, 0, 1, 2, 10, 40, 80, 117, 120, 400):
            expected = whole if whole is not None and len(whole) <= room else None
            assert pyfmt.flat(node, room) == expected, (node, room)
            checked += 1
            fitted += expected is not None
    assert checked == 6000 and 500 < fitted < checked - 500, fitted


@pytest.mark.parametrize("width", [-3, 1, 2, 3, 5, 20, 116])
def test_a_long_string_is_cut_where_the_per_character_count_cuts_it(width: int) -> None:
    """The cut taken from the head's length when every character of it is its own literal, the count otherwise:
    the same parts."""
    rng = random.Random(width)
    strings = [_text(rng)[: max(width, 4) * 4] for _ in range(150)] + ["plain words, (brackets) and more " * 9]
    split = 0
    for value in strings:
        parts = pyfmt._split(value, width)
        assert parts == _char_split(value, width), (value, width)
        assert "".join(parts) == value
        split += len(parts) - 1
    assert split > 50


def test_a_string_deep_in_a_nest_is_quoted_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """``render`` asks for the one-line form of every node it lays out: a long string at the bottom of a nest 20
    deep was quoted once per enclosing node (the work grew with the depth); the form now stops where the line is
    full, and the string is quoted where it is written."""
    quoted: list[str] = []
    real = pyfmt.quote

    def counting(value: str) -> str:
        quoted.append(value)
        return real(value)

    monkeypatch.setattr(pyfmt, "quote", counting)
    long = "word " * 40
    node: Any = Str(long)
    for _ in range(20):
        node = Seq("[", "]", (Item(node),))
    lines = pyfmt.render(node)
    assert len(lines) > 20 and any(long.strip()[:20] in line for line in lines)
    assert quoted.count(long) <= 2, quoted.count(long)


def test_plain_text_is_cut_without_counting_its_characters() -> None:
    """A description of printable text without backslashes (most of them) is cut at the head's length: the
    per-character count, a Python loop over every character, is not asked."""
    before = pyfmt._escaped_length.cache_info()
    parts = pyfmt._split("plain words, (brackets) and more " * 300, 100)
    after = pyfmt._escaped_length.cache_info()
    assert len(parts) > 90
    assert (after.hits + after.misses) == (before.hits + before.misses)
