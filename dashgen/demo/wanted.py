"""Which metrics (and which label values) the dashboards query: read from every target and variable
query of the rendered dashboard JSON, so the demo covers new panels without being told.

Equality matchers on a metric's own labels (``mode="host_hit"``, ``cache_source="storage"``) are
collected so the generated series include the values a panel filters on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import promql_parser as pp
from dashgen_queries.gpu_window import is_window_record
from dashgen_queries.health import LAYER_HEALTH
from dashgen_queries.inventory import INVENTORY
from dashgen_queries.nodata import EVALUATOR_HEARTBEAT, LAYER_REASON
from dashgen_queries.now_records import is_record as is_now_record
from dashgen_queries.request_rates import is_rate_record

from dashgen.demo.catalogue import CAP_ONLY_VALUES, MetricModel
from dashgen.demo.collector_series import NAMES as COLLECTOR_NAMES
from dashgen.demo.diffusion_series import is_diffusion
from dashgen.demo.incidents import TIMEX_NAMES
from dashgen.demo.pd_models import lookup
from dashgen.demo.scopes import SCOPE_LABELS
from dashgen.document import iter_panels, raw_variables, unwrap
from dashgen.exporters.availability import latest_spelling
from dashgen.live.expand import Window, expand_text, globals_for, variable_values
from dashgen.render import promql_trees
from dashgen.render.memo import Memo

_WINDOW = Window(end=3600.0, length=3600.0)
# What vmalert writes of the alerting rules (never the demo's to generate): an expression reading either reads every
# alert's output.
ALERT_SERIES = frozenset({"ALERTS", "ALERTS_FOR_STATE"})


@dataclass
class Wanted:
    """Metric name -> label -> values seen in equality matchers; plus names nobody models."""

    metrics: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    unparsed: list[str] = field(default_factory=list)

    def add(self, name: str, label: str | None = None, value: str | None = None) -> None:
        labels = self.metrics.setdefault(name, {})
        if label is not None and value is not None:
            labels.setdefault(label, set()).add(value)

    def copy(self) -> Wanted:
        """A copy whose additions leave this one as it is."""
        return Wanted(
            {name: {label: set(values) for label, values in labels.items()} for name, labels in self.metrics.items()},
            list(self.unparsed),
        )


def _expressions(document: Mapping[str, Any]) -> Iterable[str]:
    body = unwrap(document)
    raw_vars = raw_variables(body)
    values = {**variable_values(raw_vars), **globals_for(_WINDOW, 15.0, 60.0)}
    for raw in raw_vars:
        query = raw.get("query")
        query = query.get("query", "") if isinstance(query, Mapping) else str(query or "")
        if raw.get("type") == "query" and query.startswith("label_values("):
            inner = query[len("label_values(") :].rsplit(",", 1)[0]
            yield expand_text(inner, values)
    for site in iter_panels(body):
        for target in site.raw.get("targets") or []:
            expr = target.get("expr") if isinstance(target, Mapping) else None
            if isinstance(expr, str) and expr.strip():
                yield expand_text(expand_text(expr, values), values)


def _walk(node: Any) -> Iterable[Any]:
    yield node
    for attr in ("lhs", "rhs", "expr", "param", "vector_selector"):
        child = getattr(node, attr, None)
        if child is not None and not isinstance(child, str | int | float):
            yield from _walk(child)
    for arg in getattr(node, "args", None) or ():
        yield from _walk(arg)


def wanted_from_dashboards(documents: Iterable[Mapping[str, Any]]) -> Wanted:
    wanted = Wanted()
    for document in documents:
        add_expressions(wanted, _expressions(document))
    return wanted


def add_rule_expressions(wanted: Wanted, groups: Iterable[Mapping[str, Any]]) -> None:
    """Add what a rule file's groups (``dashgen.rules.render.rule_groups_data``) query; the series its recording
    rules write are the evaluator's, not the demo's."""
    rules = [rule for group in groups for rule in group.get("rules", ())]
    recorded = {str(rule["record"]) for rule in rules if "record" in rule}
    before = set(wanted.metrics)
    add_expressions(wanted, (str(rule["expr"]) for rule in rules))
    for name in (set(wanted.metrics) - before) & (recorded | ALERT_SERIES):
        del wanted.metrics[name]


Selected = tuple[tuple[str, str | None, str | None], ...]  # (metric, label, value) additions to a Wanted

# What each expression text selects, or None where it does not parse: once per text per process. The deployments of
# one profile (each resolving its models afresh), a store's ``reads`` and the rule files read the same texts again.
_SELECTED: Memo[str, tuple[Selected | None]] = Memo("demo.selected", 16_384)


def add_expressions(wanted: Wanted, expressions: Iterable[str]) -> None:
    """Add what PromQL ``expressions`` query (an unparsable one is listed in ``wanted.unparsed``)."""
    for expr in expressions:
        known = _SELECTED.get(expr)
        if known is None:
            known = (_selected(expr),)
            _SELECTED.put(expr, known)
        (selected,) = known
        if selected is None:
            wanted.unparsed.append(expr)
            continue
        for name, label, value in selected:
            wanted.add(name, label, value)


def _selected(expr: str) -> Selected | None:
    """The metrics ``expr`` selects and the label values its equality matchers (and ``le`` alternatives) name."""
    try:
        tree = promql_trees.parse(expr)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # promql-parser raises ValueError, pyo3 panics are BaseException
        return None
    selected: list[tuple[str, str | None, str | None]] = []
    for node in _walk(tree):
        if not isinstance(node, pp.VectorSelector):
            continue
        name = node.name
        matchers = list(node.matchers.matchers) if node.matchers else []
        if not name:
            name = next((m.value for m in matchers if m.name == "__name__" and m.op == pp.MatchOp.Equal), None)
        if not name:
            continue
        selected.append((str(name), None, None))
        for m in matchers:
            if m.op == pp.MatchOp.Equal and m.name != "__name__":
                selected.append((str(name), str(m.name), str(m.value)))
            elif m.op == pp.MatchOp.Re and m.name == "le":
                # le=~"6|6\\.0": the bucket bounds a panel needs (SLO thresholds).
                for part in str(m.value).replace("\\.", ".").split("|"):
                    try:
                        selected.append((str(name), "le", repr(float(part))))
                    except ValueError:
                        continue
    return tuple(selected)


def resolve(
    wanted: Wanted, contract_labels: set[str]
) -> tuple[list[tuple[MetricModel, dict[str, tuple[str, ...]]]], list[str]]:
    """Models to generate (each with extra label values the panels filter on) and the names without a model.

    Equality matchers on contract labels (node, job, gpu, tp_rank...) are left to the scope; on a
    metric's own label they add the value; on a label the model lacks they add that label.
    """
    chosen: dict[str, tuple[MetricModel, dict[str, set[str]]]] = {}
    unknown = []
    for name, labels in sorted(wanted.metrics.items()):
        # generated elsewhere: up (series.up_series), the inventory, diffusion_series, collector_series; the
        # recorded reason codes, health states, evaluator heartbeat, first-screen lists, per-GPU window statistics and
        # request and stage rates are vmalert's to write (dashgen.demo.recorder replays their rules)
        if (
            name in ("up", INVENTORY, LAYER_REASON, LAYER_HEALTH, EVALUATOR_HEARTBEAT)
            or is_window_record(name)
            or is_rate_record(name)
            or is_now_record(name)
            or is_diffusion(name)
            or name in COLLECTOR_NAMES
            or name in TIMEX_NAMES
        ):
            continue
        found = lookup(latest_spelling(name))  # an older version's or the router's spelling (S35)
        if found is None:
            unknown.append(name)
            continue
        model = found[0]
        _, extra = chosen.setdefault(model.name, (model, {}))
        for label, values in labels.items():
            if label == "le":
                extra.setdefault("le", set()).update(values)
                continue
            if label in contract_labels or label in SCOPE_LABELS:
                continue
            known = set(model.labels.get(label, ()))
            missing = {v for v in values - known if (model.source, label, v) not in CAP_ONLY_VALUES}
            if missing:
                extra.setdefault(label, set(model.labels.get(label, ()))).update(missing)
    models = [(model, {k: tuple(sorted(v)) for k, v in extra.items()}) for model, extra in chosen.values()]
    return models, unknown
