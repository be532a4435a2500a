"""What every rule reads: the loaded dashboard, each PromQL target parsed once, the catalogue."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dashgen_queries.promql import query_size, surely_within_budget

from dashgen.document import Dashboard, Panel, Target, Variable
from dashgen.lint.catalogue import Catalogue
from dashgen.lint.promql import OverBudget, PromQLError, expand_variables, metric_names_in, parse, walk

NON_PROMQL_TYPES = frozenset(
    {"loki", "tempo", "elasticsearch", "influxdb", "mysql", "postgres", "graphite", "testdata", "grafana"}
)


@dataclass(frozen=True)
class ParsedQuery:
    """A panel target's PromQL: raw, expanded, and its AST (None with ``error`` when it fails)."""

    panel: Panel
    target: Target
    expanded: str
    ast: Any | None
    error: str | None
    over_budget: bool = False  # not parsed: over the parse budget (a warning, not a syntax error)

    @cached_property
    def nodes(self) -> tuple[tuple[Any, tuple[Any, ...]], ...]:
        """Every node of the AST with its ancestors, in ``walk``'s order: walked once, whichever rules read it
        (each node the parser hands out is a new Python object, so a walk costs more than it looks)."""
        return tuple(walk(self.ast)) if self.ast is not None else ()

    @cached_property
    def metrics(self) -> frozenset[str]:
        """The metric names the query selects (``promql.metric_names``)."""
        return frozenset(metric_names_in(self.nodes))


@dataclass(frozen=True)
class LintContext:
    dashboard: Dashboard
    queries: tuple[ParsedQuery, ...]
    catalogue: Catalogue

    @cached_property
    def _by_panel(self) -> dict[int, list[ParsedQuery]]:
        """Queries by panel identity: one pass, so a rule asking per panel stays linear in panels."""
        index: dict[int, list[ParsedQuery]] = {}
        for query in self.queries:
            index.setdefault(id(query.panel), []).append(query)
        return index

    def parsed_of(self, panel: Panel) -> list[ParsedQuery]:
        return [q for q in self._by_panel.get(id(panel), ()) if q.ast is not None]


def _is_promql(panel: Panel, target: Target) -> bool:
    if not target.expr.strip() or target.raw.get("hide") is True:
        return False
    ds = target.datasource or panel.datasource
    return not (ds and ds.type in NON_PROMQL_TYPES)


def parse_query(panel: Panel, target: Target, variables: Mapping[str, Variable]) -> ParsedQuery:
    # before expansion too: its cost grows with the text
    over = None if surely_within_budget(target.expr) else query_size(target.expr).over_budget()
    if over is not None:
        return ParsedQuery(panel, target, target.expr, None, f"not parsed: {over}", over_budget=True)
    expanded = expand_variables(target.expr, variables)
    try:
        return ParsedQuery(panel, target, expanded, parse(expanded), None)
    except OverBudget as exc:
        return ParsedQuery(panel, target, expanded, None, str(exc), over_budget=True)
    except PromQLError as exc:
        return ParsedQuery(panel, target, expanded, None, str(exc))


def build_context(dashboard: Dashboard, catalogue: Catalogue) -> LintContext:
    variables = {v.name: v for v in dashboard.variables}
    queries = tuple(
        parse_query(panel, target, variables)
        for panel in dashboard.panels
        if panel.type != "row"
        for target in panel.targets
        if _is_promql(panel, target)
    )
    return LintContext(dashboard=dashboard, queries=queries, catalogue=catalogue)
