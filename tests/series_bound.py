"""An upper bound on the series a PromQL query returns, from its shape and the deployment's size: a raw
selector is unbounded, ``by (labels)`` bounds it by the labels' cardinalities, ``topk(k, ...)`` by ``k``,
``x and on (labels) y`` by ``y`` where ``x`` has one series per ``labels``, a recorded band
(``queries.stage_bands``) by its three series per pool. Tests use it to hold every graph
that opens with the dashboard to a screenful at any cluster size without loading a 4,096-GPU store."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import promql_parser as pp
from dashgen_queries import stage_bands
from dashgen_queries.promql import BAND_LABEL

from dashgen.lint.promql import agg_op, func_name, grouping, unparen

INF = math.inf
BAND_POOLS = ("prefill", "decode")  # the most pools one band record holds (``stage_bands.roles``)


@dataclass(frozen=True)
class Bound:
    count: float  # at most this many series
    labels: frozenset[str] | None  # the labels that tell its series apart (None: a raw selector's, unknown)


def cardinality(labels: frozenset[str], sizes: Mapping[str, float], per_node: float) -> float:
    """Series a ``by (labels)`` can keep: the product of each label's count, where labels that name something
    inside one node (a PP stage, a GPU, a rank) together count at most the node's GPUs."""
    in_node = {"pp_rank", "gpu", "tp_rank", "dp_rank", "stage_name", "replica", "instance"}
    count = 1.0
    if "node" in labels and labels & in_node:
        count *= sizes["node"] * per_node
        labels = labels - in_node - {"node"}
    for label in labels:
        count *= sizes.get(label, INF)
    return count


def bound(node: object, sizes: Mapping[str, float], per_node: float) -> Bound:
    node = unparen(node)
    one = Bound(1, frozenset())
    if isinstance(node, pp.NumberLiteral | pp.StringLiteral):
        return one
    if isinstance(node, pp.UnaryExpr):
        return bound(node.expr, sizes, per_node)
    if isinstance(node, pp.VectorSelector) and (node.name or "").startswith("pool:dashgen_"):
        # a recorded band: min, median and max per pool, one pool where the read names it
        named = any(m.name == stage_bands.POOL and str(m.op).endswith("Equal") for m in node.matchers.matchers)
        return Bound(3 * (1 if named else len(BAND_POOLS)), frozenset({BAND_LABEL, stage_bands.POOL}))
    if isinstance(node, pp.VectorSelector | pp.MatrixSelector):
        return Bound(INF, None)
    if isinstance(node, pp.SubqueryExpr):
        return bound(node.expr, sizes, per_node)
    if isinstance(node, pp.AggregateExpr):
        inner = bound(node.expr, sizes, per_node)
        group = grouping(node)
        op = agg_op(node)
        if op in ("topk", "bottomk", "limitk"):
            k = float(str(unparen(node.param)))
            groups = cardinality(group.labels, sizes, per_node) if group.by else INF
            return Bound(min(inner.count, k * groups), inner.labels)
        if op == "count_values":
            return Bound(INF, None)
        if group.by:
            return Bound(min(inner.count, cardinality(group.labels, sizes, per_node)), group.labels)
        kept = None if inner.labels is None else inner.labels - group.labels
        return Bound(inner.count if kept is None else min(inner.count, cardinality(kept, sizes, per_node)), kept)
    if isinstance(node, pp.Call):
        name = func_name(node)
        args = list(node.args)
        if name in ("vector", "scalar", "time", "absent", "absent_over_time", "pi"):
            return one
        if name in ("label_replace", "label_join"):
            inner = bound(args[0], sizes, per_node)
            added = str(unparen(args[1])).strip('"')
            return Bound(inner.count, None if inner.labels is None else inner.labels | {added})
        if name == "histogram_quantile":
            inner = bound(args[1], sizes, per_node)
            kept = None if inner.labels is None else inner.labels - {"le"}
            return Bound(INF if kept is None else cardinality(kept, sizes, per_node), kept)
        vectors = [a for a in args if not isinstance(unparen(a), pp.NumberLiteral | pp.StringLiteral)]
        return bound(vectors[0], sizes, per_node) if vectors else one
    if isinstance(node, pp.BinaryExpr):
        lhs, rhs = bound(node.lhs, sizes, per_node), bound(node.rhs, sizes, per_node)
        op = str(node.op)
        matching = node.modifier.matching if node.modifier else None
        on = (
            frozenset(matching.labels)
            if matching is not None and str(matching.type).endswith(("On", "Include"))
            else None
        )
        if op == "or":
            labels = None if lhs.labels is None or rhs.labels is None else lhs.labels | rhs.labels
            return Bound(lhs.count + rhs.count, labels)
        if op in ("and", "unless"):
            if op == "and" and on is not None and lhs.labels is not None:
                # each matched rhs series keeps the lhs series with its ``on`` labels: one, or one per value of
                # the lhs labels not in ``on``
                per_match = cardinality(lhs.labels - on, sizes, per_node)
                return Bound(min(lhs.count, rhs.count * per_match), lhs.labels)
            return lhs
        card = str(node.modifier.card) if node.modifier else ""
        if "ManyToOne" in card:
            return lhs
        if "OneToMany" in card:
            return rhs
        if rhs.labels == frozenset() and rhs.count == 1:
            return lhs
        if lhs.labels == frozenset() and lhs.count == 1:
            return rhs
        return Bound(min(lhs.count, rhs.count), lhs.labels if lhs.labels is not None else rhs.labels)
    return Bound(INF, None)
