"""Run every target of every dashboard against a Prometheus-compatible API and say, per panel, whether
it has data (series count), is empty and why (``dashgen.live.reasons``), or fails (HTTP status and
the data source's message).

:func:`plan` expands each target as Grafana would (``dashgen.live.expand``); :func:`run_checks`
runs the queries on a small thread pool and explains the empty ones. The reports are in
``dashgen.live.report`` and re-exported here with the result types for the CLI and publish.
"""

from __future__ import annotations

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
            queries: list[ExpandedQuery] = []
            for target in raw.get("targets") or []:
                if not isinstance(target, Mapping):
                    continue
                expr = str(target.get("expr") or "")
                scrape = scrape_seconds_for(expand_text(expr, {**values, **globals_for(window, 60, 60)}),
                                            item.profile, scrape_default)
                queries += expand_target(raw, target, values, window, scrape, max_data_points)
            if queries:
                planned.append(PlannedPanel(item, raw, site.row or "", queries))
    return planned


# -- running --------------------------------------------------------------------------------------


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
