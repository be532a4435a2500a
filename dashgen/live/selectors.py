"""The PromQL facts validate-queries reads from an expanded expression: its selectors, their metric
names and the functions it calls. An expression that does not parse has none of them (the data
source reports the error itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import promql_parser as pp
from dashgen_queries.promql import query_size

from dashgen.render import promql_trees

_CHILD_ATTRS = ("lhs", "rhs", "expr", "param", "vector_selector")


def _nodes(expr: str) -> Iterator[Any]:
    """Every AST node of ``expr`` (a stack walk: selectors come last-argument first); none for a query over the
    parse budget, which the native parser could crash on."""
    if query_size(expr).over_budget() is not None:
        return
    try:
        tree = promql_trees.parse(expr)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # promql-parser raises ValueError; pyo3 panics are BaseException
        return
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, pp.VectorSelector):
            continue
        for attr in _CHILD_ATTRS:
            child = getattr(node, attr, None)
            if child is not None and not isinstance(child, str | int | float):
                stack.append(child)
        stack.extend(getattr(node, "args", None) or ())


def selectors(expr: str) -> list[Any]:
    """The vector selectors of ``expr``."""
    return list(_selectors(expr))


@lru_cache(maxsize=16_384)
def _selectors(expr: str) -> tuple[Any, ...]:
    """Once per text per process: validate-queries and the demo read the same expanded queries of each build, and
    walking a tree costs more than parsing it (every attribute read builds a Python object); the nodes are
    read-only."""
    return tuple(node for node in _nodes(expr) if isinstance(node, pp.VectorSelector))


def selector_name(selector: Any) -> str | None:
    """The metric name of a selector, including the ``{__name__="x"}`` form."""
    if selector.name:
        return str(selector.name)
    for m in selector.matchers.matchers if selector.matchers else ():
        if m.name == "__name__" and m.op == pp.MatchOp.Equal:
            return str(m.value)
    return None


def metric_names(expr: str) -> list[str]:
    """The metric names ``expr`` selects, in :func:`selectors` order."""
    return list(_metric_names(expr))


@lru_cache(maxsize=16_384)
def _metric_names(expr: str) -> tuple[str, ...]:
    return tuple(name for sel in _selectors(expr) if (name := selector_name(sel)))


def functions(expr: str) -> set[str]:
    """The names of the functions ``expr`` calls."""
    return {node.func.name for node in _nodes(expr) if isinstance(node, pp.Call)}


def matcher_op(matcher: Any) -> str:
    """A label matcher's operator as written: ``=``, ``!=``, ``=~`` or ``!~``."""
    for op, text in ((pp.MatchOp.Equal, "="), (pp.MatchOp.NotEqual, "!="), (pp.MatchOp.Re, "=~")):
        if matcher.op == op:
            return text
    return "!~"
