"""Run every target of every dashboard against a Prometheus-compatible API and say, per panel, whether
it has data (series count), is empty and why (one of the five No Data reasons of S6), or fails
(HTTP status and the data source's message).

Why a target is empty is decided in two ways:

1. the dashboards' own reason queries, when ``queries.nodata`` offers them (``layers(profile)`` and
   ``reason_code(profile, layer)``): the layer of the target's source is evaluated per node and
   the nodes with a non-zero code are named;
2. otherwise, or when those say every node is ok, generically from the data: a selector with no
   series in the window -> ``up`` of its job decides collection failed (5) or uninitialised (4);
   a selector whose densest series is below ``share x window / scrape interval`` -> insufficient
   samples (3); a rate/increase over counters that did not move -> no I/O (2, disk counters) or
   no traffic (1); else the filters or guards of the expression removed every sample.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import promql_parser as pp

from dashgen.demo.catalogue import source_of
from dashgen.deployment.profile import KNOWN_SOURCES, Profile
from dashgen.lint.model import iter_raw_panels, unwrap
from dashgen.live.datasource import Datasource, DatasourceError
from dashgen.live.expand import (
    DEFAULT_MAX_DATA_POINTS,
    DEFAULT_SCRAPE_SECONDS,
    ExpandedQuery,
    Window,
    expand_target,
    expand_text,
    format_duration,
    globals_for,
    variable_values,
)

REASON_NAMES = {0: "ok", 1: "no traffic", 2: "no I/O", 3: "insufficient samples", 4: "uninitialised",
                5: "collection failed", 6: "segment host not mapped"}
COUNTER_FUNCTIONS = {"rate", "irate", "increase", "delta", "idelta", "resets"}
# queries.nodata layer keys -> the profile source they describe (others match by key).
LAYER_SOURCES = {"engine": "sglang", "hicache_host": "hicache", "mooncake": "mooncake_master", "disk": "node_exporter"}


@dataclass(frozen=True)
class DashboardInput:
    """A dashboard to check: its document and, when rendered from one, its profile."""

    name: str
    document: Mapping[str, Any]
    profile: Profile | None = None


@dataclass
class Reason:
    code: int
    text: str
    node: str = ""
    layer: str = ""

    @property
    def name(self) -> str:
        return REASON_NAMES.get(self.code, "unknown")


@dataclass
class TargetCheck:
    ref_id: str
    kind: str
    expr: str
    query: str
    status: str = "ok"  # ok | empty | error
    series: int = 0
    reasons: list[Reason] = field(default_factory=list)
    error_status: int | None = None
    error_message: str = ""
    seconds: float = 0.0


@dataclass
class PanelCheck:
    dashboard: str
    panel_id: int | None
    title: str
    row: str
    targets: list[TargetCheck]

    @property
    def status(self) -> str:
        states = {t.status for t in self.targets}
        if "error" in states:
            return "error"
        if states == {"empty"}:
            return "empty"
        return "partial" if "empty" in states else "ok"

    @property
    def series(self) -> int:
        return sum(t.series for t in self.targets)


# -- planning -------------------------------------------------------------------------------------


def scrape_seconds_for(expr: str, profile: Profile | None, default: float = DEFAULT_SCRAPE_SECONDS,
                       *, stored: bool = False) -> float:
    """The smallest scrape interval of the profile sources whose metrics the expression reads;
    with ``stored``, their sample interval (the spacing the central store keeps) instead."""
    if profile is None:
        return default
    intervals = []
    for name in metric_names(expr):
        source = source_of(name)
        if source and source in profile.sources:
            found = profile.source(source)
            intervals.append(found.sample_interval_seconds if stored else found.scrape_interval_seconds)
    return min(intervals) if intervals else default


def metric_names(expr: str) -> list[str]:
    return [name for sel in selectors(expr) if (name := _name(sel))]


def selectors(expr: str) -> list[Any]:
    try:
        tree = pp.parse(expr)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # promql-parser raises ValueError; pyo3 panics are BaseException
        return []
    found = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, pp.VectorSelector):
            found.append(node)
            continue
        for attr in ("lhs", "rhs", "expr", "param", "vector_selector"):
            child = getattr(node, attr, None)
            if child is not None and not isinstance(child, str | int | float):
                stack.append(child)
        stack.extend(getattr(node, "args", None) or ())
    return found


def _name(selector: Any) -> str | None:
    if selector.name:
        return str(selector.name)
    for m in selector.matchers.matchers if selector.matchers else ():
        if m.name == "__name__" and m.op == pp.MatchOp.Equal:
            return str(m.value)
    return None


def _functions(expr: str) -> set[str]:
    try:
        tree = pp.parse(expr)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return set()
    names: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, pp.Call):
            names.add(node.func.name)
        for attr in ("lhs", "rhs", "expr", "param", "vector_selector"):
            child = getattr(node, attr, None)
            if child is not None and not isinstance(child, str | int | float):
                stack.append(child)
        stack.extend(getattr(node, "args", None) or ())
    return names


@dataclass
class PlannedPanel:
    dashboard: DashboardInput
    raw: Mapping[str, Any]
    row: str
    queries: list[ExpandedQuery]


def plan(
    inputs: Iterable[DashboardInput],
    window: Window,
    max_data_points: int = DEFAULT_MAX_DATA_POINTS,
    scrape_default: float = DEFAULT_SCRAPE_SECONDS,
    label_values: Callable[[str, str], list[str]] | None = None,
) -> list[PlannedPanel]:
    """Every panel with targets, each target expanded as Grafana would."""
    planned = []
    for item in inputs:
        body = unwrap(item.document)
        raw_vars = (body.get("templating") or {}).get("list") or []
        values = variable_values(raw_vars, label_values)
        for raw, row in iter_raw_panels(body):
            if raw.get("type") == "row" or not raw.get("targets"):
                continue
            queries: list[ExpandedQuery] = []
            for target in raw.get("targets") or []:
                if not isinstance(target, Mapping):
                    continue
                expr = str(target.get("expr") or "")
                scrape = scrape_seconds_for(expand_text(expr, {**values, **globals_for(window, 60, 60)}),
                                            item.profile, scrape_default)
                queries += expand_target(raw, target, values, window, scrape, max_data_points)
            if queries:
                planned.append(PlannedPanel(item, raw, row or "", queries))
    return planned


# -- running --------------------------------------------------------------------------------------


class ReasonFinder:
    """Explains empty results: the dashboards' reason queries per layer when available, else generic."""

    def __init__(self, datasource: Datasource, window: Window, timeout: float) -> None:
        self.ds = datasource
        self.window = window
        self.timeout = timeout
        self._layer_cache: dict[tuple[str, str], list[Reason]] = {}

    # The hook into queries.nodata: (layer key, title, per-node reason-code PromQL) per source.
    @staticmethod
    def layer_queries(profile: Profile) -> dict[str, list[tuple[str, str, str]]]:
        try:
            from queries import nodata
        except ImportError:
            return {}
        layers_of = getattr(nodata, "layers", None)
        reason_code = getattr(nodata, "reason_code", None)
        if layers_of is None or reason_code is None:
            return {}
        found: dict[str, list[tuple[str, str, str]]] = {}
        for layer in layers_of(profile):
            key = getattr(layer, "key", "")
            source = LAYER_SOURCES.get(key, key)
            if source not in profile.sources:
                source = next((s.name for s in profile.sources.values() if s.job == getattr(layer, "job", "")), "")
            found.setdefault(source, []).append((key, getattr(layer, "title", key), reason_code(profile, layer)))
        return found

    def layer_reasons(self, profile: Profile, variables: Mapping[str, str], sources: set[str]) -> list[Reason]:
        reasons: list[Reason] = []
        queries = self.layer_queries(profile)
        for source in sorted(sources):
            for key, title, expr in queries.get(source, []):
                cache_key = (profile.name, key)
                if cache_key not in self._layer_cache:
                    text = expand_text(expr, {**variables, **globals_for(self.window, 60, 60)})
                    result = self.ds.query(text, self.window.end, self.timeout)
                    found = []
                    for item in result.result:
                        code = int(float(item["value"][1]))
                        if code:
                            node = item["metric"].get(profile.label("node"), "")
                            found.append(Reason(code, f"{REASON_NAMES.get(code, code)} ({title})", node, key))
                    self._layer_cache[cache_key] = sorted(found, key=lambda r: r.node)
                reasons += self._layer_cache[cache_key]
        return reasons

    def generic(self, query: ExpandedQuery, profile: Profile | None) -> Reason:
        rng = format_duration(self.window.length)
        at = self.window.end
        found = selectors(query.expr)
        if not found:
            return Reason(0, "the expression selects no series (constant or function only)")
        for selector in found:
            text = str(selector)
            name = _name(selector) or text
            # A query, not /api/v1/series: VictoriaMetrics answers series by whole days of its index.
            if self.ds.query(f"count(count_over_time({text}[{rng}]))", at, self.timeout).result:
                continue
            source = source_of(name)
            job = (profile.source(source).job if profile and source in profile.sources
                   else KNOWN_SOURCES.get(source or "", {}).get("job"))
            if not job:
                return Reason(4, f"{name}: no series in the window and no known scrape job "
                                 "(uninitialised or collection failed)")
            node_matchers = [f'{m.name}{_op(m)}"{m.value}"' for m in selector.matchers.matchers
                             if m.name in ("node", "instance") or (profile and m.name == profile.label("node"))]
            up_selector = "up{" + ", ".join([f'job="{job}"', *node_matchers]) + "}"
            up = self.ds.query(f"max_over_time({up_selector}[{rng}])", at, self.timeout).result
            if not up:
                return Reason(5, f"{name}: no series; no target of job {job!r} in up (target gone)")
            if all(float(item["value"][1]) == 0 for item in up):
                return Reason(5, f"{name}: no series; up == 0 for every {job!r} target (scrape failed)")
            return Reason(4, f"{name}: {job!r} targets are up but the series was never exported in the window")
        scrape = scrape_seconds_for(query.expr, profile, stored=True)
        share = profile.insufficient_samples_share if profile else 0.5
        expected = share * self.window.length / scrape
        for selector in found:
            counted = self.ds.query(f"max(count_over_time({selector}[{rng}]))", at, self.timeout).result
            if counted and float(counted[0]["value"][1]) < expected:
                return Reason(3, f"{_name(selector)}: {float(counted[0]['value'][1]):g} samples in the window, "
                                 f"fewer than {expected:g} ({share:g} x window / {format_duration(scrape)})")
        if _functions(query.expr) & COUNTER_FUNCTIONS:
            for selector in found:
                moved = self.ds.query(f"max(increase({selector}[{rng}]))", at, self.timeout).result
                if moved and float(moved[0]["value"][1]) == 0:
                    name = _name(selector) or ""
                    code = 2 if name.startswith(("node_disk_", "mooncake_ssd_")) else 1
                    return Reason(code, f"{name}: counter did not increase in the window")
        return Reason(0, "series exist, but the expression's filters or guards (e.g. `> 0` on an idle "
                         "denominator) removed every sample")


def _op(matcher: Any) -> str:
    for op, text in ((pp.MatchOp.Equal, "="), (pp.MatchOp.NotEqual, "!="), (pp.MatchOp.Re, "=~")):
        if matcher.op == op:
            return text
    return "!~"


def _run_one(ds: Datasource, query: ExpandedQuery, timeout: float) -> TargetCheck:
    check = TargetCheck(query.ref_id, query.kind, query.original, query.expr)
    began = time.monotonic()
    try:
        if query.kind == "instant":
            result = ds.query(query.expr, query.end, timeout)
        else:
            result = ds.query_range(query.expr, query.start, query.end, query.step, timeout)
        check.series = result.series
        check.status = "ok" if result.series else "empty"
    except DatasourceError as exc:
        check.status = "error"
        check.error_status = exc.status
        check.error_message = exc.message
    check.seconds = round(time.monotonic() - began, 3)
    return check


def run_checks(
    ds: Datasource,
    planned: list[PlannedPanel],
    window: Window,
    workers: int = 4,
    timeout: float = 30.0,
    explain: bool = True,
) -> list[PanelCheck]:
    """Run every query with a small thread pool; explain the empty ones."""
    jobs = [(index, query) for index, panel in enumerate(planned) for query in panel.queries]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(lambda job: _run_one(ds, job[1], timeout), jobs))
    by_panel: dict[int, list[TargetCheck]] = {}
    for (index, _query), check in zip(jobs, results, strict=True):
        by_panel.setdefault(index, []).append(check)
    finder = ReasonFinder(ds, window, timeout)
    checks = []
    for index, panel in enumerate(planned):
        targets = by_panel.get(index, [])
        if explain:
            _explain(finder, panel, targets)
        body = unwrap(panel.dashboard.document)
        checks.append(PanelCheck(str(body.get("uid") or panel.dashboard.name), panel.raw.get("id"),
                                 str(panel.raw.get("title") or ""), panel.row, targets))
    return checks


def _explain(finder: ReasonFinder, panel: PlannedPanel, targets: list[TargetCheck]) -> None:
    profile = panel.dashboard.profile
    body = unwrap(panel.dashboard.document)
    values = variable_values((body.get("templating") or {}).get("list") or [])
    queries = {(q.ref_id, q.kind): q for q in panel.queries}
    for check in targets:
        if check.status != "empty":
            continue
        query = queries[(check.ref_id, check.kind)]
        try:
            # The generic cause of this target's emptiness first, then the per-node reasons of its layers.
            check.reasons = [finder.generic(query, profile)]
            if profile is not None:
                sources = {s for n in metric_names(query.expr) if (s := source_of(n))}
                check.reasons += finder.layer_reasons(profile, values, sources)
        except DatasourceError as exc:
            check.reasons = [Reason(0, f"could not classify: {exc}")]


# -- reporting ------------------------------------------------------------------------------------


def summary(checks: list[PanelCheck]) -> dict[str, int]:
    counts = {"panels": len(checks), "ok": 0, "partial": 0, "empty": 0, "error": 0,
              "targets": sum(len(c.targets) for c in checks)}
    for check in checks:
        counts[check.status] += 1
    return counts


def exit_code(checks: list[PanelCheck]) -> int:
    return 1 if any(c.status == "error" for c in checks) else 0


def render_json(checks: list[PanelCheck], meta: Mapping[str, Any]) -> str:
    panels = []
    for check in checks:
        item = asdict(check)
        item["status"] = check.status
        item["series"] = check.series
        for target in item["targets"]:
            for reason in target["reasons"]:
                reason["name"] = REASON_NAMES.get(reason["code"], "unknown")
        panels.append(item)
    return json.dumps({**meta, "summary": summary(checks), "panels": panels}, indent=2) + "\n"


def render_text(checks: list[PanelCheck], meta: Mapping[str, Any]) -> str:
    lines = [f"data source {meta.get('datasource')}  window {meta.get('window')} ending {meta.get('at_text')}"]
    current = None
    for check in checks:
        if check.dashboard != current:
            current = check.dashboard
            lines.append(f"\n{current}")
        lines.append(f"  [{check.status:<7}] {check.title}  ({check.series} series)")
        for target in check.targets:
            if target.status == "ok":
                continue
            head = f"      {target.ref_id or '?'} {target.kind}: {target.status}"
            if target.status == "error":
                lines.append(f"{head}: HTTP {target.error_status}: {target.error_message}")
                lines.append(f"        {target.query}")
                continue
            lines.append(head)
            for reason in target.reasons:
                where = f"{reason.node}: " if reason.node else ""
                lines.append(f"        {where}{reason.name} ({reason.code}) - {reason.text}")
    counts = summary(checks)
    lines.append(f"\n{counts['panels']} panels, {counts['targets']} targets: {counts['ok']} ok, "
                 f"{counts['partial']} partly empty, {counts['empty']} empty, {counts['error']} with errors")
    return "\n".join(lines) + "\n"
