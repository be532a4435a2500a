"""PromQL as a reviewer reads it: one clause per line, Grafana's variables kept as written.

:func:`format_promql` parses a query with promql-parser and prints it with the parser's own
prettifier (Prometheus' rules: an expression that fits in 100 columns stays on one line, otherwise
each operand, argument and aggregation body goes on its own, indented, line). Grafana's variable
references are not PromQL, so before parsing each one outside a string is replaced by a placeholder
that is valid where it stands, and put back afterwards:

* inside ``[...]`` (a range or subquery) or after ``offset``: a unique duration (``9001y``, …);
* a ``*_s`` / ``*_ms`` built-in (``$__range_s``): a unique number;
* anywhere else (a metric, label or function position): a unique identifier (``__dgv0__``).

Inside quotes a reference is left alone (it is just string text). A query that still does not parse, a
text that is not PromQL at all, or a query over the parse budget (``queries.promql.query_size``: the parser
recurses on the native stack, and a chain of 8,000 operators crashed the process), gives ``None``; the caller
then diffs the text as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

from dashgen_queries.promql import query_size

from dashgen.document import REFERENCE_RE

_OFFSET_BEFORE = re.compile(r"offset\s*$", re.IGNORECASE)
_NUMERIC_SUFFIXES = ("_s", "_ms")


# What the scan stops at: a quoted string (skipped whole), a bracket, or a variable reference.
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|(?P<ref>' + REFERENCE_RE.pattern + r")|[\[\]]")
_PLACEHOLDER = re.compile(r"(?<![\w.])(?:__dgv\d+__|9\d{3,}y|777\d{4,})(?![\w.])")


def with_placeholders(expr: str) -> tuple[str, dict[str, str]]:
    """``expr`` with every variable reference outside quotes replaced; returns it and placeholder → reference."""
    out: list[str] = []
    subs: dict[str, str] = {}
    depth = 0
    kept = 0
    for match in _SCAN.finditer(expr):
        token = match.group(0)
        if match.group("ref") is None:
            if token == "[":
                depth += 1
            elif token == "]":
                depth = max(0, depth - 1)
            continue
        name = (match.group(2) or match.group(3) or match.group(4)).split(":", 1)[0]
        n = len(subs)
        if depth > 0 or _OFFSET_BEFORE.search(expr, max(0, match.start() - 12), match.start()):
            placeholder = f"{9001 + n}y"
        elif name.endswith(_NUMERIC_SUFFIXES):
            placeholder = str(7770001 + n)
        else:
            placeholder = f"__dgv{n}__"
        if placeholder in expr:
            return expr, {}
        subs[placeholder] = token
        out += [expr[kept : match.start()], placeholder]
        kept = match.end()
    out.append(expr[kept:])
    return "".join(out), subs


def _restore(text: str, subs: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: subs.get(m.group(0), m.group(0)), text) if subs else text


@lru_cache(maxsize=4096)
def _format(expr: str) -> tuple[str, ...] | None:
    try:
        import promql_parser
    except ImportError:  # pragma: no cover - a dependency of dashgen; the diff still works without it
        return None
    if query_size(expr).over_budget() is not None:  # the parser recurses natively: a deep query would crash it
        return None
    text, subs = with_placeholders(expr)
    try:
        pretty = promql_parser.parse(text).prettify()
    except BaseException as exc:  # noqa: BLE001 - the Rust parser raises ValueError, or a PanicException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return None
    lines = _restore(pretty, subs).splitlines()
    return tuple(lines) if lines else None


def format_promql(expr: str) -> list[str] | None:
    """The query one clause per line (promql-parser's prettifier), or None when it is not PromQL."""
    if not expr.strip():
        return None
    formatted = _format(expr)
    return list(formatted) if formatted is not None else None


def clear_cache() -> None:
    """Forget formatted queries (a benchmark measures a cold process this way)."""
    _format.cache_clear()
