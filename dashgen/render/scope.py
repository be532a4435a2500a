"""Scope a PromQL expression written by someone else to one deployment: every vector selector gets the
deployment's matcher (``cluster="prod-a"``), so an imported dashboard reads its own deployment's series on a
store that several deployments share (S21), as dashgen's own queries do.

Text in, text out, the expression kept as written but for the added matchers: a lexer walks the PromQL (and the
Grafana variables inside it) and knows where a selector is. Every ``{...}`` outside a string is a selector's
matcher block (PromQL uses braces for nothing else; Grafana's ``${var}`` is lexed as a variable); an identifier
that is not a keyword, a function or aggregation (followed by ``(``), a label in a ``by`` / ``without`` / ``on``
/ ``ignoring`` / ``group_left`` / ``group_right`` list, a number (``Inf``, ``NaN``) or a duration is a metric
name. What the lexer cannot judge (a metric name that is a Grafana variable, MetricsQL's ``WITH``) is returned
as a reason, and the caller says it per query instead of guessing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import promql_parser as pp

from dashgen.files import CACHE_READ_ERRORS, atomic_write, cache_dir, read_cache_json
from dashgen.render import metric_lexer, promql_trees

KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "atan2"}
    | {"keep_metric_names", "limit", "if", "ifnot", "default"}  # MetricsQL modifiers and operators
)
LABEL_LISTS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
NUMBERS = frozenset({"inf", "nan"})
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z0-9_]+|\[\[[A-Za-z0-9_:]+\]\]")
AGGREGATION_CLAUSE = re.compile(r"(?:by|without)\s*\(", re.IGNORECASE)  # sum by (a) (...): sum is no metric
NUMBER = re.compile(r"(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)[A-Za-z0-9_]*")


@dataclass(frozen=True)
class Scoped:
    """The expression with the matcher in every selector, how many selectors got it, and why not where one
    could not be scoped ("" when every one was)."""

    expr: str
    selectors: int
    reason: str = ""


def string_end(text: str, start: int) -> int:
    """The index after the string literal opening at ``start`` (``"``, ``'`` or a backtick)."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\" and quote != "`":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def block_end(text: str, start: int) -> int:
    """The index after the ``{...}`` matcher block opening at ``start`` (strings inside skipped)."""
    i = start + 1
    while i < len(text):
        if text[i] in "\"'`":
            i = string_end(text, i)
            continue
        if text[i] == "}":
            return i + 1
        i += 1
    return len(text)


def _with_matcher(block: str, matcher: str) -> str:
    """``{a="1"}`` -> ``{a="1", <matcher>}``; ``{}`` -> ``{<matcher>}``; a block holding it already is kept."""
    inner = block[1:-1].strip().rstrip(",").strip()
    if matcher in (part.strip() for part in inner.split(",")):
        return block
    return "{" + (f"{inner}, {matcher}" if inner else matcher) + "}"


def inert_end(expr: str, i: int) -> int | None:
    """The index after the range or subquery step (``[5m]``, ``[$__range:1m]``) or the number starting at ``i``:
    text that holds no selector and no label name; None when neither starts there."""
    if expr[i] == "[":
        end = expr.find("]", i)
        return len(expr) if end < 0 else end + 1
    if expr[i].isdigit() or (expr[i] == "." and expr[i + 1 : i + 2].isdigit()):
        number = NUMBER.match(expr, i)
        return number.end() if number else i + 1
    return None


@lru_cache(maxsize=8192)
def scope_expr(expr: str, matcher: str) -> Scoped:
    """``expr`` with ``matcher`` added to every vector selector (see the module docstring). Remembered by text, as
    :func:`relabel_expr <dashgen.render.relabel.relabel_expr>`: each build of a team's imported queries asks again."""
    if not matcher:
        return Scoped(expr, 0)
    if re.match(r"\s*WITH\s*\(", expr, re.IGNORECASE):
        return Scoped(expr, 0, "a MetricsQL WITH template: its selectors are not plain PromQL")
    out: list[str] = []
    count, i, after_list_keyword = 0, 0, False
    while i < len(expr):
        char = expr[i]
        if char in "\"'`":
            end = string_end(expr, i)
            out.append(expr[i:end])
            i = end
            continue
        variable = VARIABLE.match(expr, i)
        if variable:
            end = variable.end()
            if end < len(expr) and expr[end] == "{":
                return Scoped(expr, 0, f"the metric name is the Grafana variable {variable.group(0)}")
            out.append(variable.group(0))
            i = end
            continue
        if char == "{":
            end = block_end(expr, i)
            out.append(_with_matcher(expr[i:end], matcher))
            count += 1
            i = end
            continue
        skipped = inert_end(expr, i)
        if skipped is not None:
            out.append(expr[i:skipped])
            i = skipped
            continue
        ident = IDENT.match(expr, i)
        if ident:
            word, end = ident.group(0), ident.end()
            rest = expr[end:].lstrip()
            lowered = word.lower()
            if lowered in LABEL_LISTS:
                after_list_keyword = True
                out.append(word)
            elif lowered in KEYWORDS or lowered in NUMBERS or rest.startswith("(") or AGGREGATION_CLAUSE.match(rest):
                out.append(word)
            elif rest.startswith("{"):
                out.append(word)  # the block that follows gets the matcher
            else:
                out.append(f"{word}{{{matcher}}}")
                count += 1
            i = end
            if after_list_keyword and lowered not in LABEL_LISTS:
                after_list_keyword = False
            continue
        if char == "(" and after_list_keyword:  # by (a, b): labels, not selectors
            end = expr.find(")", i)
            end = len(expr) if end < 0 else end + 1
            out.append(expr[i:end])
            i = end
            after_list_keyword = False
            continue
        if not char.isspace():
            after_list_keyword = False
        out.append(char)
        i += 1
    return Scoped("".join(out), count)


def filled(expr: str) -> str:
    """``expr`` with its Grafana variables holding sample values: a duration in a range, ``1`` elsewhere."""
    text = re.sub(r"\[\s*(?:" + VARIABLE.pattern + ")", "[5m", expr)
    text = re.sub(r":\s*(?:" + VARIABLE.pattern + r")\s*\]", ":1m]", text)
    return VARIABLE.sub("1", text)


def _tree(expr: str) -> Any | None:
    try:
        return promql_trees.parse(filled(expr))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # promql-parser raises ValueError; pyo3 panics are BaseException
        return None


def parses(expr: str) -> bool:
    """Whether ``expr`` parses as PromQL once its Grafana variables hold sample values: how a rewrite is
    checked before it replaces what the author wrote."""
    return _tree(expr) is not None


class _KnownNames:
    """:func:`metric_names` remembered across runs in the cache folder, by the sha256 of the query text, in a
    file named after this module's and the lexer's bytes and the parser's version (a change to any starts a new
    file): the rule files' links read every panel query of a profile on each ``check`` and ``rules`` run (955 texts
    for the two scale profiles). Read on first use; written by :func:`save_known_names`."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] | None = None
        self.added = False

    @staticmethod
    def file() -> Path | None:
        folder = cache_dir()
        if folder is None:
            return None
        sources = Path(__file__).read_bytes() + Path(metric_lexer.__file__ or "").read_bytes()
        me = hashlib.sha256(sources + version("promql-parser").encode()).hexdigest()[:16]
        return folder / f"metric-names-{me}.json"

    def known(self) -> dict[str, list[str]]:
        if self.names is None:
            data: Any = {}
            with contextlib.suppress(*CACHE_READ_ERRORS):
                path = self.file()
                data = read_cache_json(path) if path is not None else {}
            valid = isinstance(data, dict) and all(
                isinstance(names, list) and all(isinstance(n, str) for n in names) for names in data.values()
            )
            self.names = data if valid else {}
        return self.names

    def save(self) -> None:
        if not self.added:
            return
        with contextlib.suppress(OSError):  # no cache is only slower
            path = self.file()
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                kept = dict(list(self.known().items())[-NAMES_KEPT:])
                atomic_write(path, json.dumps(kept, separators=(",", ":")).encode())
                self.added = False


NAMES_KEPT = 20_000  # texts in the cache file (the four shipped and two scale profiles have about 3,000)
_KNOWN = _KnownNames()


def save_known_names() -> None:
    """Write the metric names found in this run to the cache folder (see ``_KnownNames``)."""
    _KNOWN.save()


@lru_cache(maxsize=8192)
def metric_names(expr: str) -> frozenset[str]:
    """The metric names ``expr`` selects (by name or ``__name__=``), its Grafana variables holding sample values:
    per ``metric_lexer`` (equal to the parser's on every expression the parser accepts, at about a third of its
    CPU), per the parser where the lexer does not judge (none when it does not parse). Remembered by text: the rule
    files' links ask it of every panel query and of each recording rule's expression once per alert that reads the
    recorded series; across runs in the cache folder."""
    key = hashlib.sha256(expr.encode()).hexdigest()
    known = _KNOWN.known()
    if key not in known:
        lexed = metric_lexer.lexed_names(filled(expr))
        known[key] = sorted(_parsed_names(expr) if lexed is None else lexed)
        _KNOWN.added = True
    return frozenset(known[key])


def _parsed_names(expr: str) -> frozenset[str]:
    return tree_names(_tree(expr))


def tree_names(tree: Any | None) -> frozenset[str]:
    """The metric names of a parse tree's selectors (by name, else by their first ``__name__=`` matcher)."""
    names = (
        node.name
        or next(
            (m.value for m in node.matchers.matchers or () if m.name == "__name__" and m.op == pp.MatchOp.Equal), None
        )
        for node in tree_selectors(tree)
    )
    return frozenset(str(name) for name in names if name)


def selectors(expr: str) -> list[Any]:
    """The vector selectors (``promql_parser.VectorSelector``) of ``expr`` per the PromQL parser, its Grafana
    variables holding sample values (``filled``); none when it does not parse."""
    return tree_selectors(_tree(expr))


def tree_selectors(tree: Any | None) -> list[Any]:
    """The vector selectors of a parse tree (none of None)."""
    stack, found = [tree], []
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, str | int | float):
            continue
        kind = type(node)
        if kind is pp.VectorSelector:
            found.append(node)
        elif kind in _OPERANDS:  # each attribute read builds its subtree's Python objects: only those that exist
            stack.extend(getattr(node, attr) for attr in _OPERANDS[kind])
            if kind is pp.Call:
                stack.extend(node.args or ())
        elif isinstance(node, pp.VectorSelector):
            found.append(node)
        else:
            stack.extend(getattr(node, attr, None) for attr in ("lhs", "rhs", "expr", "param", "vector_selector"))
            stack.extend(getattr(node, "args", None) or ())
    return found


# The operands of each node type, in the order the generic walk above pushes them (its results keep their order).
_OPERANDS: dict[type, tuple[str, ...]] = {
    pp.BinaryExpr: ("lhs", "rhs"),
    pp.AggregateExpr: ("expr", "param"),
    pp.Call: (),
    pp.ParenExpr: ("expr",),
    pp.UnaryExpr: ("expr",),
    pp.SubqueryExpr: ("expr",),
    pp.MatrixSelector: ("vector_selector",),
    pp.NumberLiteral: (),
    pp.StringLiteral: (),
}


LABEL_VALUES = re.compile(r"^\s*label_values\s*\((?P<args>.*)\)\s*$", re.DOTALL)
QUERY_RESULT = re.compile(r"^\s*query_result\s*\((?P<expr>.*)\)\s*$", re.DOTALL)


def scope_variable_query(query: str, matcher: str) -> Scoped:
    """A Grafana Prometheus variable query scoped as ``scope_expr`` scopes a panel query: the selector of
    ``label_values(<selector>, label)``, the expression of ``query_result(...)``; ``label_values(label)`` (every
    series in the store) becomes ``label_values({<matcher>}, label)``."""
    if not matcher or not query.strip():
        return Scoped(query, 0)
    found = QUERY_RESULT.match(query)
    if found:
        inner = scope_expr(found.group("expr"), matcher)
        return Scoped(f"query_result({inner.expr})", inner.selectors, inner.reason)
    found = LABEL_VALUES.match(query)
    if found:
        args = found.group("args")
        head, comma, label = args.rpartition(",")
        if not comma:
            return Scoped(f"label_values({{{matcher}}}, {args.strip()})", 1)
        inner = scope_expr(head, matcher)
        return Scoped(f"label_values({inner.expr.strip()}, {label.strip()})", inner.selectors, inner.reason)
    if re.match(r"^\s*(label_names|metrics)\s*\(", query):
        return Scoped(query, 0, "label_names() / metrics() take no selector Grafana would scope")
    return scope_expr(query, matcher)
