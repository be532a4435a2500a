"""Step 4 of a release: run the new and changed queries of each dashboard against the data source,
the way Grafana's backend would (variables at All, ``$__range`` etc. over the last hour), before
anything is pushed. A query the data source rejects refuses that dashboard; an empty result does
not (a new panel may watch a series that has not appeared yet)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from dashgen.document import iter_panels, unwrap
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan, run_checks
from dashgen.live.results import PanelCheck
from dashgen.publish.plan import DashboardPlan

VALIDATION_WINDOW_SECONDS = 3600.0


def only_panels(document: dict[str, Any], titles: set[str]) -> dict[str, Any]:
    """The dashboard (a v2 one as its classic view) reduced to the panels with the given titles (rows' nested
    panels included)."""
    body = dict(unwrap(document))
    kept = [site.raw for site in iter_panels(body) if site.raw.get("type") != "row" and site.raw.get("title") in titles]
    return {**body, "panels": kept}


def checked_now(datasource: Datasource, inputs: list[DashboardInput], timeout: float) -> list[PanelCheck]:
    """Every query of ``inputs`` run over the last hour, as Grafana's backend would."""
    window = Window(end=time.time(), length=VALIDATION_WINDOW_SECONDS)
    return run_checks(datasource, plan(inputs, window), window, timeout=timeout, explain=False)


def rejections(checks: list[PanelCheck]) -> list[str]:
    """One line per query the data source rejected."""
    return [
        f'panel "{check.title}" query {target.ref_id}: the data source answered {target.error_status}: '
        f"{target.error_message}"
        for check in checks
        for target in check.targets
        if target.status == "error"
    ]


def make_validator(datasource_url: str, timeout: float = 30.0) -> Callable[[DashboardPlan], list[str]]:
    """A validator for ``execute_plan``: the problems of one dashboard's new and changed queries."""
    datasource = Datasource(datasource_url, timeout=timeout)

    def validate(item: DashboardPlan) -> list[str]:
        titles = {query.panel for query in item.new_queries}
        if not titles:
            return []
        document = only_panels(item.target.document, titles)
        return rejections(checked_now(datasource, [DashboardInput(item.target.uid, document)], timeout))

    return validate
