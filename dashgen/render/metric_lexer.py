"""The metric names a PromQL expression selects, read by a lexer instead of the parser: what the rule files' links
need of every panel query and rule expression (``dashgen.render.scope.metric_names``), where the parser's CPU was a
tenth of an uncached ``check``.

Text in, names out, or None where the lexer does not judge (a character or a token sequence outside what it knows);
the caller then asks the parser. A name is an identifier in an operand's place (after an operator, ``(``, ``,`` or at
the start) that no ``(`` follows and that is not an aggregation followed by ``by`` / ``without`` — promql-parser
reads even ``sum``, ``and`` or ``offset`` standing alone there as metric names — or the first ``__name__="x"``
matcher of a selector that has no name before its braces. Label lists (``by``, ``without``, ``on``, ``ignoring``,
``group_left``, ``group_right``), ranges and subqueries (``[...]``), strings, numbers and durations name nothing.

The lexer does not check the grammar: on every expression the parser accepts it names what the parser's selectors
name (tests/test_metric_lexer.py holds it to the parser on every query and rule of every profile and on generated
and mutated expressions); an expression the parser refuses may still get names here, where the parser gives none.
"""

from __future__ import annotations

import re

# One token a match (blanks and comments match with the group empty): a string (escapes inside " and ' strings), a
# number or duration, an identifier, a two-character operator, or any other single character.
_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*'|`[^`]*`|(?:\d|\.\d)[0-9A-Za-z_.]*"""
    r"""|[A-Za-z_:][A-Za-z0-9_:]*|[=!<>]=|[=!]~|.)""",
    re.DOTALL,
)
_OPERATORS = frozenset(
    {"+", "-", "*", "/", "%", "^", "<", ">", "=", "(", ")", "{", "}", "[", "]", ",", "@"}
    | {"==", "!=", "<=", ">=", "=~", "!~"}
)
_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")
_STRING_START = frozenset("\"'`")
AGGREGATORS = frozenset(
    {"sum", "avg", "count", "min", "max", "group", "stddev", "stdvar", "topk", "bottomk", "count_values"}
    | {"quantile", "limitk", "limit_ratio"}
)
LABEL_LISTS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
BINARY_KEYWORDS = frozenset({"and", "or", "unless", "atan2"})
NUMBER_WORDS = frozenset({"inf", "nan"})
_COMPARISONS = frozenset({"==", "!=", "<=", ">=", "<", ">"})
_NEVER_NAMES = frozenset({"bool", "on", "ignoring", "group_left", "group_right", "atan2"})  # the parser refuses them


def _tokens(text: str) -> list[tuple[str, str]] | None:
    """``(kind, text)`` of every token but blanks and comments (kind "ident", "string", "number" or "op"); None at
    a character no token starts with (an unclosed string, a character PromQL has no use for)."""
    found = []
    for token in _TOKEN.findall(text):
        if not token:
            continue
        first = token[0]
        if first in _IDENT_START:
            found.append(("ident", token))
        elif first in _STRING_START:
            if len(token) < 2:
                return None
            found.append(("string", token))
        elif first in "0123456789" or (first == "." and len(token) > 1):
            found.append(("number", token))
        elif token in _OPERATORS:
            found.append(("op", token))
        else:
            return None
    return found


def _string_value(token: str) -> str | None:
    """The value of a string token without escapes (None for one with a backslash: left to the parser)."""
    if token[0] != "`" and "\\" in token:
        return None
    return token[1:-1]


def _block(tokens: list[tuple[str, str]], at: int, named: bool) -> tuple[int, str | None] | None:
    """The index after the matcher block opening at ``at`` and the name its first ``__name__="x"`` (or a lone
    quoted name) gives; None where the block is not a plain list of matchers, or names a selector that has a name."""
    name: str | None = None
    names = 0
    i = at + 1
    while i < len(tokens) and tokens[i][1] != "}":
        kind, text = tokens[i]
        label: str | None
        if kind == "string" and (i + 1 == len(tokens) or tokens[i + 1][1] in {",", "}"}):
            label, op, value, i = "__name__", "=", text, i + 1  # {"metric"}: the quoted metric name
        elif kind in {"ident", "string"} and i + 2 < len(tokens) and tokens[i + 2][0] == "string":
            label, op, value = text if kind == "ident" else _string_value(text), tokens[i + 1][1], tokens[i + 2][1]
            if op not in {"=", "!=", "=~", "!~"}:
                return None
            i += 3
        else:
            return None
        if label is None:
            return None
        if label == "__name__":
            names += 1
            if op == "=" and name is None:
                name = _string_value(value)
                if name is None:
                    return None
        if i < len(tokens) and tokens[i][1] == ",":
            i += 1
        elif i < len(tokens) and tokens[i][1] != "}":
            return None
    if i >= len(tokens) or (named and names) or names > 1:
        return None
    return i + 1, name


def _label_list(tokens: list[tuple[str, str]], at: int) -> int | None:
    """The index after the label list ``( a, b )`` opening at ``at``; None where it holds anything else."""
    i = at + 1
    while i < len(tokens) and tokens[i][1] != ")":
        if tokens[i][0] not in {"ident", "string"} and tokens[i][1] != ",":
            return None
        i += 1
    return i + 1 if i < len(tokens) else None


def lexed_names(text: str) -> frozenset[str] | None:
    """The metric names ``text`` selects (see the module docstring), or None where the lexer does not judge."""
    tokens = _tokens(text)
    if tokens is None:
        return None
    names: set[str] = set()
    operand = True  # whether an operand comes next (else an operator or a modifier)
    i, count = 0, len(tokens)
    while i < count:
        kind, token = tokens[i]
        after = tokens[i + 1][1] if i + 1 < count else ""
        if kind == "ident":
            word = token.lower()
            if word in LABEL_LISTS:
                if after == "(":
                    end = _label_list(tokens, i + 1)
                    if end is None:
                        return None
                    i, operand = end, word not in {"by", "without"} or (end < count and tokens[end][1] == "(")
                    continue
                if word in {"group_left", "group_right"}:
                    i += 1
                    continue
                return None
            if word == "bool" and i > 0 and tokens[i - 1][1] in _COMPARISONS:
                i += 1
                continue
            if after == "(":  # a function or an aggregation: its '(' follows
                i += 1
                continue
            if operand:
                if word in AGGREGATORS and after.lower() in {"by", "without"}:
                    i += 1  # its label list follows, then its '('
                    continue
                if word in NUMBER_WORDS:
                    i, operand = i + 1, False
                    continue
                if word in _NEVER_NAMES:
                    return None
                names.add(token)
                i, operand = i + 1, False
                if after == "{":
                    block = _block(tokens, i, named=True)
                    if block is None:
                        return None
                    i = block[0]
                continue
            if word in BINARY_KEYWORDS or word == "offset":
                i, operand = i + 1, True
                continue
            return None  # an identifier where an operator belongs
        if token == "{":
            if not operand:
                return None
            block = _block(tokens, i, named=False)
            if block is None:
                return None
            i, name = block
            if name is not None:
                names.add(name)
            operand = False
            continue
        if token == "[":
            while i < count and tokens[i][1] != "]":
                i += 1
            if i == count:
                return None
            i, operand = i + 1, False
            continue
        if kind in {"number", "string"} or token in {")", "]", "}"}:
            operand = False
        elif token == "=":
            return None  # a matcher's operator outside braces
        else:  # an operator, '(', ',' or '@'
            operand = True
        i += 1
    return frozenset(names)
