"""What a dashboard's queries cost the data source (``dashgen cost``), from its own statistics.

Every target is expanded as Grafana would at the dashboard's default time range (``dashgen.live.expand``
via ``query_check.plan``) and run once with the data source's statistics switched on; per panel the
report adds up what the data source says it did:

* **series fetched** and **samples scanned**: VictoriaMetrics' ``stats.seriesFetched`` where the version
  returns it, else its query trace (``trace=1``: the ``fetch unique series=N, ..., samples=M`` steps,
  and ``samplesScanned=K`` where the rollup reports it); Prometheus ``stats=all``:
  ``samples.totalQueryableSamples`` (Prometheus reports no series count: None, shown as ``-``);
* **seconds**: the data source's own time (VictoriaMetrics' trace root ``duration_msec`` or
  ``executionTimeMsec``, Prometheus ``timings.execTotalTime``), the wall time of the request beside it.

The dashboard total **on open** counts the panels Grafana runs when the dashboard opens: the top-level
ones; a panel inside a collapsed row runs only when the row is opened (its cost is listed, not added).
A :class:`Budget` per panel and per dashboard turns the report into a gate (:func:`violations`).

This module is pure (answers -> figures -> report); the one I/O function, :func:`measure`, takes a
``Datasource`` and the planned panels.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from dashgen.escape import inline_text
from dashgen.live.datasource import Datasource, DatasourceError
from dashgen.live.expand import QueryKind
from dashgen.live.query_check import PlannedPanel

_FETCH = re.compile(r"\bfetch unique series=(\d+), blocks=\d+, samples=(\d+)")
_SCANNED = re.compile(r"\bsamplesScanned=(\d+)")
MAX_TRACE_NODES = 200_000  # a hostile or huge trace is read this far, no further


CostOrigin = Literal["victoriametrics-stats", "victoriametrics-trace", "prometheus", "none"]


@dataclass(frozen=True)
class Stats:
    """One query's cost as the data source reported it; None where it reports no such figure."""

    series_fetched: int | None
    samples_scanned: int | None
    seconds: float | None
    origin: CostOrigin


def _int(value: Any) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def _trace_messages(trace: Mapping[str, Any]) -> Iterator[str]:
    stack: list[Any] = [trace]
    seen = 0
    while stack and seen < MAX_TRACE_NODES:
        node = stack.pop()
        seen += 1
        if not isinstance(node, Mapping):
            continue
        message = node.get("message")
        if isinstance(message, str):
            yield message
        children = node.get("children")
        if isinstance(children, list):
            stack.extend(children)


def stats_from_answer(answer: Mapping[str, Any]) -> Stats:
    """The cost figures in one query answer: VictoriaMetrics ``stats`` or ``trace``, or Prometheus ``data.stats``."""
    vm = answer.get("stats")
    trace = answer.get("trace")
    data = answer.get("data") if isinstance(answer.get("data"), Mapping) else {}
    prom = data.get("stats") if isinstance(data, Mapping) else None
    if isinstance(vm, Mapping) and "seriesFetched" in vm:
        milliseconds = _int(vm.get("executionTimeMsec"))
        samples = None
        if isinstance(trace, Mapping):
            samples = _trace_samples(trace)
        seconds = None if milliseconds is None else milliseconds / 1000
        return Stats(_int(vm.get("seriesFetched")), samples, seconds, "victoriametrics-stats")
    if isinstance(trace, Mapping):
        series = samples = 0
        found = False
        for message in _trace_messages(trace):
            if match := _FETCH.search(message):
                found = True
                series += int(match.group(1))
                samples += int(match.group(2))
        scanned = _trace_samples(trace)
        duration = trace.get("duration_msec")
        seconds = float(duration) / 1000 if isinstance(duration, int | float) else None
        return Stats(
            series if found else 0, scanned if scanned is not None else samples, seconds, "victoriametrics-trace"
        )
    if isinstance(prom, Mapping):
        samples_block = prom.get("samples")
        timings = prom.get("timings")
        total = timings.get("execTotalTime") if isinstance(timings, Mapping) else None
        return Stats(
            None,
            _int(samples_block.get("totalQueryableSamples")) if isinstance(samples_block, Mapping) else None,
            float(total) if isinstance(total, int | float) else None,
            "prometheus",
        )
    return Stats(None, None, None, "none")


def _trace_samples(trace: Mapping[str, Any]) -> int | None:
    """VictoriaMetrics' own ``samplesScanned`` summed over the trace, else None (older traces lack it)."""
    scanned = [int(m.group(1)) for message in _trace_messages(trace) if (m := _SCANNED.search(message))]
    return sum(scanned) if scanned else None


def _total(values: Iterable[int | float | None]) -> int | float | None:
    """Sum of the known values; None when none is known (a figure the data source does not report)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@dataclass
class QueryCost:
    ref_id: str
    kind: QueryKind
    query: str
    series_returned: int = 0
    series_fetched: int | None = None
    samples_scanned: int | None = None
    seconds: float | None = None
    wall_seconds: float = 0.0
    origin: str = "none"
    error: str = ""


@dataclass
class PanelCost:
    dashboard: str
    title: str
    row: str
    panel_id: int | None
    on_open: bool
    queries: list[QueryCost] = field(default_factory=list)

    @property
    def series_fetched(self) -> int | None:
        return _total(q.series_fetched for q in self.queries)  # type: ignore[return-value]

    @property
    def samples_scanned(self) -> int | None:
        return _total(q.samples_scanned for q in self.queries)  # type: ignore[return-value]

    @property
    def seconds(self) -> float | None:
        return _total(q.seconds for q in self.queries)

    @property
    def errors(self) -> list[str]:
        return [f"{q.ref_id} ({q.kind}): {q.error}" for q in self.queries if q.error]


@dataclass(frozen=True)
class Budget:
    """Limits per panel and per dashboard on open (None: no limit on that figure)."""

    panel_series: int | None = None
    panel_samples: int | None = None
    dashboard_series: int | None = None
    dashboard_samples: int | None = None


@dataclass(frozen=True)
class DashboardTotal:
    dashboard: str
    panels: int
    panels_on_open: int
    queries_on_open: int
    series_fetched: int | None
    samples_scanned: int | None
    seconds: float | None
    wall_seconds: float


def totals(panels: list[PanelCost]) -> list[DashboardTotal]:
    """Per dashboard, what opening it costs: the panels Grafana runs on open (collapsed rows excluded)."""
    out = []
    for name in dict.fromkeys(p.dashboard for p in panels):
        mine = [p for p in panels if p.dashboard == name]
        opened = [p for p in mine if p.on_open]
        out.append(
            DashboardTotal(
                name,
                len(mine),
                len(opened),
                sum(len(p.queries) for p in opened),
                _total(p.series_fetched for p in opened),  # type: ignore[arg-type]
                _total(p.samples_scanned for p in opened),  # type: ignore[arg-type]
                _total(p.seconds for p in opened),
                sum(q.wall_seconds for p in opened for q in p.queries),
            )
        )
    return out


def violations(panels: list[PanelCost], budget: Budget) -> list[str]:
    """One message per figure over its budget, naming the dashboard and panel (a panel counts wherever it
    sits: a collapsed row's panel is paid for when the row opens)."""
    found = []
    for panel in panels:
        for figure, limit in (("series fetched", budget.panel_series), ("samples scanned", budget.panel_samples)):
            value = panel.series_fetched if figure == "series fetched" else panel.samples_scanned
            if limit is not None and value is not None and value > limit:
                found.append(
                    f"{panel.dashboard}: panel {panel.title!r}: {figure} {value:,} over the panel budget {limit:,}"
                )
    for total in totals(panels):
        for figure, value, limit in (
            ("series fetched", total.series_fetched, budget.dashboard_series),
            ("samples scanned", total.samples_scanned, budget.dashboard_samples),
        ):
            if limit is not None and value is not None and value > limit:
                found.append(
                    f"{total.dashboard}: dashboard on open: {figure} {value:,} over the dashboard budget {limit:,}"
                )
    return found


def unmeasured(panels: list[PanelCost], budget: Budget) -> list[str]:
    """The figures the budget limits that the data source reported for no panel at all (no statistics): a budget
    on them was not checked, and is never called kept."""
    found = []
    for figure, limits, values in (
        ("series fetched", (budget.panel_series, budget.dashboard_series), [p.series_fetched for p in panels]),
        ("samples scanned", (budget.panel_samples, budget.dashboard_samples), [p.samples_scanned for p in panels]),
    ):
        if any(limit is not None for limit in limits) and all(value is None for value in values):
            found.append(figure)
    return found


def report(panels: list[PanelCost], budget: Budget, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-ready report: meta, budget, per-dashboard totals, per-panel figures, violations, errors."""
    return {
        **meta,
        "budget": asdict(budget),
        "dashboards": [asdict(t) for t in totals(panels)],
        "panels": [
            {
                "dashboard": p.dashboard,
                "title": p.title,
                "row": p.row,
                "panel_id": p.panel_id,
                "on_open": p.on_open,
                "series_fetched": p.series_fetched,
                "samples_scanned": p.samples_scanned,
                "seconds": p.seconds,
                "queries": [asdict(q) for q in p.queries],
            }
            for p in panels
        ],
        "over_budget": violations(panels, budget),
        "unmeasured": unmeasured(panels, budget),
        "errors": [f"{p.dashboard}: panel {p.title!r}: {e}" for p in panels for e in p.errors],
    }


def _figure(value: int | float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"


def render_text(data: Mapping[str, Any], top: int = 15) -> str:
    """The report for a terminal: each dashboard's total on open, its most expensive panels, the verdict."""
    lines = [
        f"query cost on {inline_text(data.get('datasource', '?'))}, window {inline_text(data.get('window', '?'))} "
        f"ending {inline_text(data.get('at_text', '?'))}"
    ]
    for total in data["dashboards"]:
        lines.append(
            f"{inline_text(total['dashboard'])}: on open {total['panels_on_open']} of {total['panels']} panels, "
            f"{total['queries_on_open']} queries: series fetched {_figure(total['series_fetched'])}, "
            f"samples scanned {_figure(total['samples_scanned'])}, "
            f"data source time {_figure(total['seconds'])} s (wall {total['wall_seconds']:.3f} s)"
        )
        mine = [p for p in data["panels"] if p["dashboard"] == total["dashboard"]]
        mine.sort(key=lambda p: (p["samples_scanned"] or 0, p["series_fetched"] or 0), reverse=True)
        for panel in mine[:top]:
            where = "" if panel["on_open"] else f"  [collapsed row {panel['row']!r}]"
            lines.append(
                f"  {_figure(panel['samples_scanned']):>14} samples  {_figure(panel['series_fetched']):>9} "
                f"series  {_figure(panel['seconds']):>8} s  {inline_text(panel['title'])}{where}"
            )
    for message in data["errors"]:
        lines.append(f"error: {inline_text(message)}")
    for message in data["over_budget"]:
        lines.append(f"over budget: {inline_text(message)}")
    missing = data.get("unmeasured") or []
    if missing:
        lines.append(
            f"budget not checked: the data source returned no statistics for {' or '.join(missing)} "
            "(no figure, so no verdict)"
        )
    if not data["over_budget"] and not data["errors"] and not unchecked(data):
        lines.append("within budget" if any(v is not None for v in data["budget"].values()) else "no budget set")
    return "\n".join(lines) + "\n"


def unchecked(data: Mapping[str, Any]) -> bool:
    """Every figure the budget limits went unmeasured: nothing was checked."""
    limited = {
        figure
        for figure, keys in (
            ("series fetched", ("panel_series", "dashboard_series")),
            ("samples scanned", ("panel_samples", "dashboard_samples")),
        )
        if any(data["budget"].get(key) is not None for key in keys)
    }
    return bool(limited) and limited <= set(data.get("unmeasured") or [])


def exit_code(data: Mapping[str, Any]) -> int:
    """1 when a figure is over budget, a query failed or no limited figure could be measured, else 0."""
    return 1 if data["over_budget"] or data["errors"] or unchecked(data) else 0


# -- I/O -----------------------------------------------------------------------------------------


def measure(
    datasource: Datasource, planned: list[PlannedPanel], top_level: set[int], timeout: float = 30.0
) -> list[PanelCost]:
    """Run every planned query once, in order, with statistics on. ``top_level``: ``id()`` of the panel
    objects at the dashboard's top level (the ones Grafana runs on open). Queries run one at a time, so
    the data source's timings are not inflated by our own concurrency. A query without any answer (refused,
    unreachable, timed out) ends the run with its DatasourceError; a refused query is reported per query."""
    panels = []
    for item in planned:
        panel_id = item.raw.get("id")
        cost = PanelCost(
            item.dashboard.name,
            str(item.raw.get("title") or ""),
            item.row,
            panel_id if isinstance(panel_id, int) else None,
            id(item.raw) in top_level,
        )
        for query in item.queries:
            step = query.step if query.kind == "range" else 0.0
            began = time.perf_counter()
            entry = QueryCost(query.ref_id, query.kind, query.expr)
            try:
                result, answer = datasource.query_with_stats(query.expr, query.start, query.end, step, timeout)
            except DatasourceError as exc:
                if exc.connection:  # no answer at all: every other query would wait its timeout too
                    raise
                entry.error = str(exc)[:500]
            else:
                stats = stats_from_answer(answer)
                entry.series_returned = result.series
                entry.series_fetched, entry.samples_scanned = stats.series_fetched, stats.samples_scanned
                entry.seconds, entry.origin = stats.seconds, stats.origin
            entry.wall_seconds = time.perf_counter() - began
            cost.queries.append(entry)
        panels.append(cost)
    return panels
