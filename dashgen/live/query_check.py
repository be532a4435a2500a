"""Run every target of every dashboard against a Prometheus-compatible API and say, per panel, whether
it has data (series count), is empty and why (``dashgen.live.reasons``), or fails (HTTP status and
the data source's message).

:func:`plan` expands each target as Grafana would (``dashgen.live.expand``); :func:`run_checks`
runs the queries on a small thread pool and explains the empty ones. The reports are in
``dashgen.live.report`` and re-exported here with the result types for the CLI and publish.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from dashgen.deployment.profile import Profile
from dashgen.document import iter_panels, raw_variables, unwrap
from dashgen.live.datasource import Datasource, DatasourceError
from dashgen.live.expand import (
    DEFAULT_MAX_DATA_POINTS,
    DEFAULT_SCRAPE_SECONDS,
    ExpandedQuery,
    Window,
    expand_target,
    expand_text,
    globals_for,
    variable_values,
)
from dashgen.live.reasons import ReasonFinder
from dashgen.live.report import exit_code, render_json, render_text, summary
from dashgen.live.results import REASON_NAMES, PanelCheck, Reason, TargetCheck
from dashgen.live.selectors import metric_names
from dashgen.live.sources import scrape_seconds_for, source_of

__all__ = [
    "REASON_NAMES",
    "DashboardInput",
    "PanelCheck",
    "PlannedPanel",
    "Reason",
    "ReasonFinder",
    "TargetCheck",
    "exit_code",
    "plan",
    "render_json",
    "render_text",
    "run_checks",
    "summary",
]


@dataclass(frozen=True)
class DashboardInput:
    """A dashboard to check: its document and, when rendered from one, its profile."""

    name: str
    document: Mapping[str, Any]
    profile: Profile | None = None


@dataclass
class PlannedPanel:
    dashboard: DashboardInput
    raw: Mapping[str, Any]
    row: str
    queries: list[ExpandedQuery]


def expand_panel(
    panel: Mapping[str, Any],
    values: Mapping[str, str],
    window: Window,
    profile: Profile | None = None,
    max_data_points: int = DEFAULT_MAX_DATA_POINTS,
    scrape_default: float = DEFAULT_SCRAPE_SECONDS,
) -> list[tuple[ExpandedQuery, Mapping[str, Any]]]:
    """Each query Grafana would run for the panel, with the target it came from; ``$__rate_interval`` from the
    scrape interval of the target's source."""
    out = []
    for target in panel.get("targets") or []:
        if not isinstance(target, Mapping):
            continue
        expr = str(target.get("expr") or "")
        scrape = scrape_seconds_for(
            expand_text(expr, {**values, **globals_for(window, 60, 60)}), profile, scrape_default
        )
        out += [(q, target) for q in expand_target(panel, target, values, window, scrape, max_data_points)]
    return out


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
        values = variable_values(raw_variables(body), label_values)
        for site in iter_panels(body):
            raw = site.raw
            if raw.get("type") == "row" or not raw.get("targets"):
                continue
            queries = [q for q, _ in expand_panel(raw, values, window, item.profile, max_data_points, scrape_default)]
            if queries:
                planned.append(PlannedPanel(item, raw, site.row or "", queries))
    return planned


# -- running --------------------------------------------------------------------------------------


class _Budget:
    """The command's deadline and the fail-fast rule, shared by the worker threads: after ``max_failures``
    consecutive answers-that-never-came (refused, unreachable, timed out) the data source is taken for dead
    and no further query is sent; past ``deadline_at`` (monotonic seconds) none is sent either."""

    def __init__(self, deadline: float | None, max_failures: int) -> None:
        self.deadline_at = None if deadline is None else time.monotonic() + deadline
        self.deadline = deadline
        self.max_failures = max_failures
        self.consecutive = 0
        self.lock = threading.Lock()

    def stop_reason(self) -> str | None:
        if self.max_failures and self.consecutive >= self.max_failures:
            return (
                f"not run: the data source did not answer {self.consecutive} consecutive queries "
                "(fail fast: it is taken for down)"
            )
        if self.deadline_at is not None and time.monotonic() >= self.deadline_at:
            return f"not run: the command's deadline of {self.deadline:g}s was reached"
        return None

    def timeout(self, timeout: float) -> float:
        if self.deadline_at is None:
            return timeout
        return max(0.05, min(timeout, self.deadline_at - time.monotonic()))

    def record(self, connection_failed: bool) -> None:
        with self.lock:
            self.consecutive = self.consecutive + 1 if connection_failed else 0


def _is_number(value: Any) -> bool:
    if isinstance(value, str):
        try:
            float(value)  # Prometheus writes sample values as strings, "NaN" and "+Inf" included
        except ValueError:
            return False
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)


def numeric_series(result_type: str, result: list[Any]) -> int:
    """How many series of an answer have at least one ``[time, value]`` sample whose value is a number."""
    if result_type == "string":
        return 1  # a string answer has no number to check (no panel of dashgen's asks for one)
    if result_type == "scalar":
        return int(len(result) == 2 and _is_number(result[1]))
    key = "values" if result_type == "matrix" else "value"
    count = 0
    for item in result:
        samples = item.get(key) if isinstance(item, dict) else None
        if key == "value":
            samples = [samples]
        count += any(isinstance(s, list) and len(s) == 2 and _is_number(s[1]) for s in samples or [])
    return count


def _run_one(ds: Datasource, query: ExpandedQuery, timeout: float, budget: _Budget | None = None) -> TargetCheck:
    check = TargetCheck(query.ref_id, query.kind, query.original, query.expr)
    if budget is not None and (stop := budget.stop_reason()) is not None:
        check.status = "error"
        check.error_message = stop
        return check
    if budget is not None:
        timeout = budget.timeout(timeout)
    began = time.monotonic()
    try:
        if query.kind == "instant":
            result = ds.query(query.expr, query.end, timeout)
        else:
            result = ds.query_range(query.expr, query.start, query.end, query.step, timeout)
        check.series = result.series
        check.status = "ok" if result.series else "empty"
        if result.series and not numeric_series(result.result_type, result.result):
            check.status = "error"  # values that are not numbers are no data a panel can draw
            check.error_message = f"malformed answer: none of its {result.series} series has a numeric sample value"
        if budget is not None:
            budget.record(False)
    except DatasourceError as exc:
        check.status = "error"
        check.error_status = exc.status
        check.error_message = exc.message
        if budget is not None:
            budget.record(exc.connection)
    check.seconds = round(time.monotonic() - began, 3)
    return check


def run_checks(
    ds: Datasource,
    planned: list[PlannedPanel],
    window: Window,
    workers: int = 4,
    timeout: float = 30.0,
    explain: bool = True,
    deadline: float | None = None,
    max_connection_failures: int = 5,
    progress: Callable[[int], None] | None = None,
) -> list[PanelCheck]:
    """Run every query with a small thread pool; explain the empty ones. ``deadline`` bounds the whole run
    (queries not started by then are errors saying so); after ``max_connection_failures`` consecutive
    connection failures no further query is sent (0: never stop early). ``progress(1)`` hears of each query."""
    jobs = [(index, query) for index, panel in enumerate(planned) for query in panel.queries]
    budget = _Budget(deadline, max_connection_failures)

    def run(job: tuple[int, ExpandedQuery]) -> TargetCheck:
        check = _run_one(ds, job[1], timeout, budget)
        if progress is not None:
            progress(1)
        return check

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(run, jobs))
    explain = explain and budget.stop_reason() is None
    by_panel: dict[int, list[TargetCheck]] = {}
    for (index, _query), check in zip(jobs, results, strict=True):
        by_panel.setdefault(index, []).append(check)
    finder = ReasonFinder(ds, window, timeout)
    checks = []
    for index, panel in enumerate(planned):
        targets = by_panel.get(index, [])
        if explain and budget.stop_reason() is None:  # the reason queries are bounded by the deadline too
            _explain(finder, panel, targets)
        body = unwrap(panel.dashboard.document)
        checks.append(
            PanelCheck(
                str(body.get("uid") or panel.dashboard.name),
                panel.raw.get("id"),
                str(panel.raw.get("title") or ""),
                panel.row,
                targets,
            )
        )
    return checks


def _explain(finder: ReasonFinder, panel: PlannedPanel, targets: list[TargetCheck]) -> None:
    profile = panel.dashboard.profile
    body = unwrap(panel.dashboard.document)
    values = variable_values(raw_variables(body))
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
