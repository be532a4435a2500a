"""General dashboard hygiene rules (in the spirit of grafana/dashboard-linter, adapted to dashgen).

Data sources templated, units and descriptions present, ``$__rate_interval`` in graph rates,
PromQL that parses, metric names the catalogue knows, ``histogram_quantile`` keeping ``le``,
counters never shown raw, per-GPU legends that name both the node and the GPU, state timelines whose
value mappings Grafana would merge away, and bar gauges with a min.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import timedelta
from typing import Any

import promql_parser as pp

from dashgen.document import DatasourceRef, Panel
from dashgen.lint.context import LintContext, ParsedQuery
from dashgen.lint.findings import Hit, Rule, Severity
from dashgen.lint.promql import (
    MAGIC_INTERVAL,
    MAGIC_RANGE,
    MAGIC_RATE_INTERVAL,
    Grouping,
    func_name,
    grouping,
    matcher_labels,
    metric_name,
    metricsql_functions,
    outer_aggregations_in,
    selectors_in,
    walk,
)
from dashgen.lint.rules_evidence import NODE_LABELS

QUERY_PANEL_TYPES = frozenset(
    {
        "timeseries",
        "graph",
        "stat",
        "gauge",
        "bargauge",
        "table",
        "barchart",
        "state-timeline",
        "heatmap",
        "piechart",
        "histogram",
        "status-history",
        "singlestat",
    }
)
UNIT_PANEL_TYPES = frozenset({"timeseries", "graph", "stat", "gauge", "bargauge", "table", "barchart", "singlestat"})
GRAPH_TYPES = frozenset({"timeseries", "graph", "barchart", "state-timeline", "status-history", "heatmap"})
LEGEND_TYPES = frozenset({"timeseries", "graph", "barchart", "bargauge", "state-timeline", "status-history"})
RATE_FUNCS = frozenset({"rate", "irate", "increase"})
COUNTER_SAFE_FUNCS = frozenset(
    {
        "rate",
        "irate",
        "increase",
        "resets",
        "changes",
        "absent",
        "absent_over_time",
        "present_over_time",
        "count_over_time",
        "timestamp",
    }
)
_LITERAL_WINDOW = re.compile(r"\[\s*(\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*)\s*[\]:]")
_LEGEND_NODE = re.compile(r"\{\{\s*(" + "|".join(sorted(NODE_LABELS)) + r")\s*\}\}")
_LEGEND_GPU = re.compile(r"\{\{\s*(gpu|UUID|uuid)\s*\}\}")


def _ref(q: ParsedQuery) -> str:
    return q.target.ref_id or str(q.target.index)


# --- data sources ------------------------------------------------------------------------


def check_datasource_variable(ctx: LintContext) -> Iterator[Hit]:
    if not ctx.dashboard.datasource_variables:
        yield Hit(None, "no data source variable: panels cannot follow the data source a viewer picks")


def _datasource_problem(ref: DatasourceRef | None, ds_vars: set[str]) -> tuple[str, Severity] | None:
    if ref is None or (ref.uid is None and ref.is_default) or (ref.uid is None and ref.type):
        return "uses the default data source instead of the data source variable", Severity.WARNING
    if ref.is_builtin or ref.uid is None:
        return None
    if ref.variable is not None:
        if ref.variable in ds_vars:
            return None
        return f"data source ${ref.variable} is not a data source variable", Severity.ERROR
    return f"hard-coded data source {ref.uid!r}: use the data source variable", Severity.ERROR


def check_datasource_templated(ctx: LintContext) -> Iterator[Hit]:
    ds_vars = {v.name for v in ctx.dashboard.datasource_variables}
    for panel in ctx.dashboard.panels:
        if panel.type not in QUERY_PANEL_TYPES or not panel.targets:
            continue
        refs: list[DatasourceRef | None] = [panel.datasource] if panel.datasource is not None else []
        refs += [t.datasource for t in panel.targets if t.datasource is not None]
        if not refs:
            refs = [None]
        seen: set[str] = set()
        for ref in refs:
            problem = _datasource_problem(ref, ds_vars)
            if problem and problem[0] not in seen:
                seen.add(problem[0])
                yield Hit(panel, problem[0], problem[1])


# --- units and descriptions ---------------------------------------------------------------


def has_unit(panel: Panel) -> bool:
    if panel.field_defaults.get("unit"):
        return True
    for override in panel.field_overrides:
        for prop in override.get("properties") or []:
            if isinstance(prop, dict) and prop.get("id") == "unit" and prop.get("value"):
                return True
    yaxes = panel.raw.get("yaxes")
    return bool(isinstance(yaxes, list) and yaxes and isinstance(yaxes[0], dict) and yaxes[0].get("format"))


def check_units(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        if panel.type in UNIT_PANEL_TYPES and not has_unit(panel) and not panel.field_defaults.get("mappings"):
            yield Hit(panel, "no unit set: a number without a unit can be misread")


def check_descriptions(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        if panel.type in QUERY_PANEL_TYPES and not panel.description.strip():
            yield Hit(panel, "no description: say what the panel proves and where its limits are")


# --- state timelines ------------------------------------------------------------------------


def _colour_modes(panel: Panel) -> list[Any]:
    """The panel's field colour modes: the defaults' and every override's."""
    color = panel.field_defaults.get("color")
    modes = [color.get("mode") if isinstance(color, Mapping) else None]
    for override in panel.field_overrides:
        for prop in override.get("properties") or []:
            if isinstance(prop, Mapping) and prop.get("id") == "color" and isinstance(prop.get("value"), Mapping):
                modes.append(prop["value"].get("mode"))
    return modes


def _has_mappings(panel: Panel) -> bool:
    if panel.field_defaults.get("mappings"):
        return True
    return any(
        isinstance(prop, Mapping) and prop.get("id") == "mappings" and prop.get("value")
        for override in panel.field_overrides
        for prop in override.get("properties") or []
    )


def check_timeline_mappings_merged_away(ctx: LintContext) -> Iterator[Hit]:
    """Grafana's state timeline with mergeValues (on unless set false) and a field coloured by thresholds
    draws each value as its threshold step's label and colour and reads no value mapping."""
    for panel in ctx.dashboard.panels:
        if panel.type != "state-timeline" or panel.options.get("mergeValues") is False:
            continue
        if "thresholds" in _colour_modes(panel) and _has_mappings(panel):
            yield Hit(
                panel,
                "colour mode 'thresholds' with mergeValues: Grafana draws the threshold steps' labels and "
                "ignores the value mappings; use colour mode 'fixed' so the mapped states show",
            )


def check_bargauge_min(ctx: LintContext) -> Iterator[Hit]:
    """Grafana's bar gauge without a min scales its bars from the smallest value shown: that bar is empty."""
    for panel in ctx.dashboard.panels:
        if panel.type == "bargauge" and not isinstance(panel.field_defaults.get("min"), int | float):
            yield Hit(panel, "no min: the bars start at the smallest value shown, drawn as an empty bar; set min 0")


# --- queries ------------------------------------------------------------------------------


def check_promql_parses(ctx: LintContext) -> Iterator[Hit]:
    for q in ctx.queries:
        if q.over_budget:
            yield Hit(q.panel, f"target {_ref(q)} is too large to lint ({q.error}); split the query", Severity.WARNING)
        elif q.error is not None and (metricsql := metricsql_functions(q.expanded)):
            yield Hit(
                q.panel,
                f"target {_ref(q)} is MetricsQL ({', '.join(metricsql)}: VictoriaMetrics only), not "
                "PromQL: not checked by the PromQL rules",
                Severity.WARNING,
            )
        elif q.error is not None:
            yield Hit(q.panel, f"target {_ref(q)} does not parse after variable expansion: {q.error}")


def _window_problem(rng: timedelta, q: ParsedQuery, literal: str | None) -> str | None:
    graph = q.panel.type in GRAPH_TYPES and not q.target.instant
    if rng == MAGIC_RATE_INTERVAL:
        return None
    if rng == MAGIC_RANGE:
        return "uses $__range in a time series: every point covers the whole window" if graph else None
    if rng == MAGIC_INTERVAL:
        return "uses $__interval; $__rate_interval never drops below four scrape intervals"
    if literal is not None:
        use = "$__rate_interval" if graph else "$__range (window statistics) or $__rate_interval"
        return f"fixed [{literal}] window: use {use}"
    return None


def check_rate_interval(ctx: LintContext) -> Iterator[Hit]:
    for q in ctx.queries:
        if q.ast is None:
            continue
        literals = _LITERAL_WINDOW.findall(q.target.expr)
        problems: list[str] = []
        for node, parents in q.nodes:
            if isinstance(node, pp.MatrixSelector) and parents and func_name(parents[-1]) in RATE_FUNCS:
                literal = pp.display_duration(node.range) if literals else None
                if literal is not None and literal not in literals:
                    literal = literals[0]
                problem = _window_problem(node.range, q, literal)
                if problem and problem not in problems:
                    problems.append(problem)
        for problem in problems:
            yield Hit(q.panel, f"target {_ref(q)}: {problem}")


def check_metric_known(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        unknown = sorted({n for q in ctx.parsed_of(panel) for n in q.metrics if not ctx.catalogue.is_known(n)})
        if unknown:
            yield Hit(panel, f"metric not in the catalogue: {', '.join(unknown)}")


BUCKET_LABELS = frozenset({"le", "vmrange"})  # Prometheus' bucket bound; VictoriaMetrics' own histograms' range


def _keeps_buckets(kept: Grouping) -> bool:
    return bool(kept.labels & BUCKET_LABELS) if kept.by else not kept.labels & BUCKET_LABELS


def check_histogram_quantile(ctx: LintContext) -> Iterator[Hit]:
    for q in ctx.queries:
        if q.ast is None:
            continue
        for node, _ in q.nodes:
            if func_name(node) != "histogram_quantile" or len(node.args) < 2:
                continue
            for inner, _ in walk(node.args[1]):
                if isinstance(inner, pp.AggregateExpr) and not _keeps_buckets(grouping(inner)):
                    yield Hit(
                        q.panel,
                        f"target {_ref(q)}: histogram_quantile over `{inner.op}` that drops the bucket label: "
                        "aggregate `by (le, ...)` (or `by (vmrange, ...)` for VictoriaMetrics histograms)",
                    )
                    break


def check_counter_raw(ctx: LintContext) -> Iterator[Hit]:
    for q in ctx.queries:
        if q.ast is None:
            continue
        raw = sorted(
            {
                name
                for sel, parents in selectors_in(q.nodes)
                if (name := metric_name(sel))
                and name.endswith("_total")
                and not any(func_name(p) in COUNTER_SAFE_FUNCS for p in parents)
            }
        )
        if raw:
            yield Hit(
                q.panel,
                f"target {_ref(q)}: counter {', '.join(raw)} used raw: wrap it in rate() or increase() "
                "(a raw counter resets with the process)",
            )


# --- legends ------------------------------------------------------------------------------


def keeps_gpu(q: ParsedQuery) -> bool:
    """Does the query's result keep one series per GPU?"""
    aggs = outer_aggregations_in(q.nodes)
    if aggs:
        return all(grouping(a).by and "gpu" in grouping(a).labels for a in aggs)
    if _LEGEND_GPU.search(q.target.legend_format):
        return True
    for sel, _ in selectors_in(q.nodes):
        name = metric_name(sel) or ""
        if "gpu" in matcher_labels(sel) or name.startswith(("DCGM_FI_", "gpm_")):
            return True
    return False


def check_legend_node_gpu(ctx: LintContext) -> Iterator[Hit]:
    for q in ctx.queries:
        legend = q.target.legend_format.strip()
        if q.ast is None or q.panel.type not in LEGEND_TYPES or not legend or legend == "__auto":
            continue
        if not keeps_gpu(q):
            continue
        missing = [w for w, rx in (("node", _LEGEND_NODE), ("GPU", _LEGEND_GPU)) if not rx.search(legend)]
        if missing:
            yield Hit(
                q.panel,
                f"target {_ref(q)}: per-GPU legend {legend!r} does not name the {' and '.join(missing)}: "
                "series of different nodes look alike",
            )


RULES: tuple[Rule, ...] = (
    Rule(
        "datasource-variable",
        Severity.WARNING,
        "the dashboard has a data source variable",
        check_datasource_variable,
    ),
    Rule(
        "datasource-templated",
        Severity.ERROR,
        "panels and targets use the data source variable, no hard-coded uid",
        check_datasource_templated,
    ),
    Rule("panel-units", Severity.WARNING, "value panels set a unit", check_units),
    Rule("panel-description", Severity.WARNING, "query panels have a description", check_descriptions),
    Rule(
        "promql-parse",
        Severity.ERROR,
        "every PromQL target parses after variable expansion",
        check_promql_parses,
    ),
    Rule(
        "rate-interval",
        Severity.WARNING,
        "rate/irate/increase use $__rate_interval in graphs ($__range in window tables), no fixed windows",
        check_rate_interval,
    ),
    Rule(
        "metric-known",
        Severity.WARNING,
        "queried metric names are in the metric catalogue",
        check_metric_known,
    ),
    Rule(
        "histogram-quantile-le",
        Severity.ERROR,
        "histogram_quantile's inner aggregation keeps `le`",
        check_histogram_quantile,
    ),
    Rule(
        "counter-raw",
        Severity.WARNING,
        "_total counters are shown through rate()/increase(), never raw",
        check_counter_raw,
    ),
    Rule(
        "timeline-mappings-merged-away",
        Severity.ERROR,
        "a state timeline with value mappings is not coloured by thresholds while merging values",
        check_timeline_mappings_merged_away,
    ),
    Rule(
        "bargauge-min",
        Severity.WARNING,
        "a bar gauge sets its scale's min, so its smallest bar is not drawn empty",
        check_bargauge_min,
    ),
    Rule(
        "legend-node-gpu",
        Severity.WARNING,
        "per-GPU series have legends naming both node and GPU",
        check_legend_node_gpu,
    ),
)


def rules() -> Iterable[Rule]:
    return RULES
