"""Grafana-variable expansion and PromQL AST helpers for lint.

``expand_variables`` ports dashboard-linter's ``expandVariables`` as a placeholder policy of the
substitution core (``dashgen.document.variables``): text inside double quotes is left alone;
outside them ``$var``, ``${var}``, ``${var:fmt}`` and ``[[var]]`` are replaced.
Global variables become "magic" values below 2^32 ms (promql-parser rejects larger numbers),
so ``$__rate_interval`` can be recognised again in the parsed AST. A dashboard variable
becomes its current value, else its first option, else its own name (format applied to three
copies). ``walk`` yields each AST node with the stack of its ancestors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import promql_parser as pp
from dashgen_queries.promql import query_size, surely_within_budget

from dashgen.document import Reference, Variable, substitute
from dashgen.render import promql_trees

RATE_INTERVAL_MS = 4234567890
INTERVAL_MS = 4123456789
RANGE_MS = 4012345678

MAGIC_RATE_INTERVAL = timedelta(milliseconds=RATE_INTERVAL_MS)
MAGIC_INTERVAL = timedelta(milliseconds=INTERVAL_MS)
MAGIC_RANGE = timedelta(milliseconds=RANGE_MS)

GLOBALS: Mapping[str, str] = {
    "__rate_interval": f"{RATE_INTERVAL_MS}ms",
    "__rate_interval_ms": str(RATE_INTERVAL_MS),
    "__interval": f"{INTERVAL_MS}ms",
    "__interval_ms": str(INTERVAL_MS),
    "__range": f"{RANGE_MS}ms",
    "__range_ms": str(RANGE_MS),
    "__range_s": str(RANGE_MS // 1000),
    "__auto": "12345ms",
    "__from": "1594671549254",
    "__to": "1594757949254",
    "__dashboard": "AwREbnft",
    "__user": "user",
    "__org": "org",
    "__name": "name",
}

_MAX_DEPTH = 8


class PromQLError(ValueError):
    """A target expression does not parse after variable expansion."""


class OverBudget(PromQLError):
    """A target expression is over the parse budget (``queries.promql.MAX_QUERY_*``) and was not parsed."""


def _format_name(name: str, fmt: str | None) -> str:
    copies = [name] * 3
    match fmt:
        case None | "" | "raw" | "text":
            return name
        case "regex" | "pipe":
            return "|".join(copies)
        case "csv":
            return ",".join(copies)
        case "glob":
            return "{" + ",".join(copies) + "}"
        case "json":
            return "[" + ",".join(f'"{c}"' for c in copies) + "]"
        case "singlequote":
            return ",".join(f"'{c}'" for c in copies)
        case "doublequote":
            return ",".join(f'"{c}"' for c in copies)
        case _:
            return name


def _placeholder(ref: Reference, variables: Mapping[str, Variable], depth: int) -> str:
    # dashboard-linter reads the format after the last colon.
    name, fmt = ref.name, (ref.format.split(":")[-1] if ref.format is not None else None)
    if name.startswith("__auto_interval"):
        return "10s"
    if name in GLOBALS:
        return GLOBALS[name]
    variable = variables.get(name)
    if variable is not None and depth < _MAX_DEPTH:
        value = next((v for v in variable.current if v), "") or next((v for v in variable.options if v), "")
        if value and value not in {"$__all", "All"}:
            return _expand(value, variables, depth + 1)
    return _format_name(name, fmt)


def _expand(expr: str, variables: Mapping[str, Variable], depth: int) -> str:
    return substitute(expr, lambda ref: _placeholder(ref, variables, depth), skip_double_quoted=True)


def expand_variables(expr: str, variables: Mapping[str, Variable]) -> str:
    """Replace Grafana variables outside double quotes (dashboard-linter semantics)."""
    return _expand(expr, variables, 0)


def parse(expr: str) -> Any:
    """Parse PromQL; raise :class:`PromQLError` with the parser's message, :class:`OverBudget` without
    calling the parser when the expression is over the parse budget (its cost is quadratic in the terms,
    and a long enough chain crashes the process)."""
    over = None if surely_within_budget(expr) else query_size(expr).over_budget()
    if over is not None:
        raise OverBudget(f"not parsed: {over}")
    try:
        return promql_trees.parse(expr)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # promql-parser raises ValueError, pyo3 panics are BaseException
        raise PromQLError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


def children(node: Any) -> list[Any]:
    """The direct sub-expressions of an AST node."""
    if isinstance(node, pp.BinaryExpr):
        return [node.lhs, node.rhs]
    if isinstance(node, pp.AggregateExpr):
        return [n for n in (node.param, node.expr) if n is not None]
    if isinstance(node, pp.Call):
        return list(node.args)
    if isinstance(node, pp.ParenExpr | pp.UnaryExpr | pp.SubqueryExpr):
        return [node.expr]
    if isinstance(node, pp.MatrixSelector):
        return [node.vector_selector]
    return []


def walk(node: Any, parents: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Depth-first, pre-order: yield ``(node, ancestors)`` with the root first in ``ancestors``.
    Iterative (an explicit stack), so no expression depth reaches Python's recursion limit."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(node, parents)]
    while stack:
        current, above = stack.pop()
        yield current, above
        below = (*above, current)
        stack.extend((child, below) for child in reversed(children(current)))


def unparen(node: Any) -> Any:
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node


def func_name(node: Any) -> str | None:
    return node.func.name if isinstance(node, pp.Call) else None


def agg_op(node: Any) -> str:
    return str(node.op) if isinstance(node, pp.AggregateExpr) else ""


@dataclass(frozen=True)
class Grouping:
    """An aggregation's label modifier: ``by`` (keep only labels) or ``without`` (drop labels)."""

    by: bool
    labels: frozenset[str]


def grouping(node: Any) -> Grouping:
    """Grouping of an AggregateExpr; a bare ``sum(x)`` is ``by ()``."""
    modifier = getattr(node, "modifier", None)
    if modifier is None:
        return Grouping(by=True, labels=frozenset())
    return Grouping(by=modifier.type == pp.AggModifierType.By, labels=frozenset(modifier.labels))


Walked = Iterable[tuple[Any, tuple[Any, ...]]]  # what ``walk`` yields: each node with its ancestors


def selectors(node: Any) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Every VectorSelector with its ancestors."""
    return selectors_in(walk(node))


def selectors_in(walked: Walked) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """The VectorSelectors (with their ancestors) of an expression already walked."""
    for n, parents in walked:
        if isinstance(n, pp.VectorSelector):
            yield n, parents


def metric_name(selector: Any) -> str | None:
    """The metric name of a selector, including the ``{__name__="x"}`` form."""
    if selector.name:
        return str(selector.name)
    for matcher in selector.matchers.matchers:
        if matcher.name == "__name__" and matcher.op == pp.MatchOp.Equal:
            return str(matcher.value)
    return None


def metric_names(node: Any) -> set[str]:
    return metric_names_in(walk(node))


def metric_names_in(walked: Walked) -> set[str]:
    return {name for sel, _ in selectors_in(walked) if (name := metric_name(sel))}


def matcher_labels(selector: Any) -> set[str]:
    return {m.name for m in selector.matchers.matchers}


def outer_aggregations(node: Any) -> list[Any]:
    """The aggregations nearest the root on each path (not those nested inside another)."""
    return outer_aggregations_in(walk(node))


def outer_aggregations_in(walked: Walked) -> list[Any]:
    """``outer_aggregations`` of an expression already walked."""
    found: list[Any] = []
    for n, parents in walked:
        if isinstance(n, pp.AggregateExpr) and not any(isinstance(p, pp.AggregateExpr) for p in parents):
            found.append(n)
    return found


# MetricsQL (VictoriaMetrics) functions PromQL does not have: a query calling one does not parse as PromQL, which
# on a VictoriaMetrics data source is no error of the dashboard. The common ones; not exhaustive.
METRICSQL_FUNCTIONS = frozenset(
    {
        "aggr_over_time",
        "alias",
        "any",
        "ascent_over_time",
        "bottomk_avg",
        "bottomk_last",
        "bottomk_max",
        "bottomk_min",
        "buckets_limit",
        "count_eq_over_time",
        "count_gt_over_time",
        "count_le_over_time",
        "count_ne_over_time",
        "count_values_over_time",
        "decreases_over_time",
        "default_rollup",
        "descent_over_time",
        "distinct_over_time",
        "duration_over_time",
        "first_over_time",
        "geomean",
        "geomean_over_time",
        "histogram_avg",
        "histogram_over_time",
        "histogram_quantiles",
        "histogram_share",
        "histogram_stddev",
        "histogram_stdvar",
        "ideriv",
        "increase_prometheus",
        "increase_pure",
        "increases_over_time",
        "integrate",
        "interpolate",
        "keep_last_value",
        "keep_next_value",
        "label_copy",
        "label_del",
        "label_keep",
        "label_lowercase",
        "label_map",
        "label_match",
        "label_mismatch",
        "label_move",
        "label_set",
        "label_transform",
        "label_uppercase",
        "label_value",
        "lag",
        "lead",
        "lifetime",
        "limit_offset",
        "mad",
        "mad_over_time",
        "median_over_time",
        "mode_over_time",
        "outliers_iqr",
        "outliers_mad",
        "outliersk",
        "prometheus_buckets",
        "quantiles",
        "quantiles_over_time",
        "range_avg",
        "range_first",
        "range_last",
        "range_max",
        "range_median",
        "range_min",
        "range_quantile",
        "range_sum",
        "rate_prometheus",
        "remove_resets",
        "rollup",
        "rollup_candlestick",
        "rollup_delta",
        "rollup_deriv",
        "rollup_increase",
        "rollup_rate",
        "rollup_scrape_interval",
        "running_avg",
        "running_max",
        "running_min",
        "running_sum",
        "share",
        "share_eq_over_time",
        "share_gt_over_time",
        "share_le_over_time",
        "sum2_over_time",
        "tmax_over_time",
        "tmin_over_time",
        "topk_avg",
        "topk_last",
        "topk_max",
        "topk_min",
        "union",
        "zscore",
        "zscore_over_time",
    }
)
_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


def metricsql_functions(expr: str) -> list[str]:
    """The MetricsQL-only functions ``expr`` calls, in order of first use."""
    return list(dict.fromkeys(name for name in _CALL.findall(expr) if name in METRICSQL_FUNCTIONS))
