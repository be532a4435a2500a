"""Run the queries of the panels a preview draws, as Grafana would, on a bounded thread pool.

The edge of the preview towards the data source: panels + the dashboard's variable values + a window in,
per panel the :class:`~dashgen.preview.frames.Answer` of each of its queries out. The expansion is the
one ``validate-queries`` uses (``dashgen.live.expand``: ``$__range``, ``$__rate_interval`` from the Min
step, variables at their default or as given). A failed query is an answer with its error, never an
exception: the panel then shows the error, as Grafana's red corner does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dashgen.document import raw_variables
from dashgen.live.datasource import Datasource, DatasourceError
from dashgen.live.expand import (
    ExpandedQuery,
    variable_values,
)
from dashgen.preview.frames import Answer

Job = tuple[int, ExpandedQuery, Mapping[str, Any]]


def dashboard_values(
    body: Mapping[str, Any],
    overrides: Mapping[str, str],
    label_values: Callable[[str, str], list[str]] | None = None,
) -> dict[str, str]:
    """The variables' interpolated values: the dashboard's default selection, ``overrides`` (``--var``) on top."""
    raws = []
    for raw in raw_variables(body):
        name = str(raw.get("name") or "")
        if name in overrides:
            value = overrides[name]
            raw = {**raw, "current": {"value": value, "text": value}, "allValue": None}
        raws.append(raw)
    return variable_values(raws, label_values)


def _run(datasource: Datasource, query: ExpandedQuery, target: Mapping[str, Any], timeout: float) -> Answer:
    try:
        if query.kind == "instant":
            result = datasource.query(query.expr, query.end, timeout)
        else:
            result = datasource.query_range(query.expr, query.start, query.end, query.step, timeout)
    except DatasourceError as exc:
        where = f"HTTP {exc.status}" if exc.status is not None else "no answer"
        return Answer(query, target, error=f"{where}: {exc.message}")
    return Answer(query, target, result.result_type, result.result)


def run_panels(
    datasource: Datasource,
    panels: Sequence[Sequence[tuple[ExpandedQuery, Mapping[str, Any]]]],
    workers: int = 4,
    timeout: float = 30.0,
    progress: Callable[[int], None] | None = None,
) -> list[list[Answer]]:
    """Every query of every panel, ``workers`` at a time; the answers grouped per panel, in target order."""
    jobs: list[Job] = [(index, query, target) for index, queries in enumerate(panels) for query, target in queries]

    def one(job: Job) -> Answer:
        answer = _run(datasource, job[1], job[2], timeout)
        if progress is not None:
            progress(1)
        return answer

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        answers = list(pool.map(one, jobs))
    grouped: list[list[Answer]] = [[] for _ in panels]
    for (index, _query, _target), answer in zip(jobs, answers, strict=True):
        grouped[index].append(answer)
    return grouped
