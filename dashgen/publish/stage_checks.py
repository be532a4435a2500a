"""The checks that let a staged release go on to its next stage, run on what a context's Grafana holds now:

* every dashboard the release published (or found unchanged) is read back and still holds the SHA the release
  verified (another writer, a restore, a Grafana that lost it: each fails the check);
* where the context names a data source, every query of each read-back dashboard runs there as Grafana would
  (variables at All, the last hour); a query the data source rejects fails the check, an empty result does not.

I/O: reads Grafana and the data source, writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dashgen.grafana.errors import GrafanaError
from dashgen.grafana.resources import WRITE_VERSION
from dashgen.live.datasource import Datasource
from dashgen.live.query_check import DashboardInput
from dashgen.publish.execute import v2_version
from dashgen.publish.export import Connection, parallel, read_back
from dashgen.publish.query_validation import checked_now, rejections


@dataclass
class StageCheck:
    held: list[str] = field(default_factory=list)  # what was checked and held
    problems: list[str] = field(default_factory=list)


def check_published(
    connection: Connection,
    stored: Mapping[str, str],
    documents: Mapping[str, dict[str, Any]],
    datasource_url: str | None,
    timeout: float = 30.0,
) -> StageCheck:
    """``stored``: uid -> the SHA the release verified; ``documents``: uid -> the build (its schema says which
    API version to read back)."""
    result = StageCheck()
    uids = sorted(stored)

    def read(uid: str) -> tuple[str, dict[str, Any] | None, str]:
        try:
            live = read_back(connection, uid, v2_version(documents[uid]) or WRITE_VERSION)
        except GrafanaError as exc:
            return uid, None, f"{uid}: cannot be read back ({exc})"
        if live is None:
            return uid, None, f"{uid}: gone from Grafana since the release saved it"
        if live.sha != stored[uid]:
            return uid, None, f"{uid}: Grafana holds {live.sha[:12]}, not the {stored[uid][:12]} the release verified"
        return uid, live.document, ""

    read_backs = parallel(connection.jobs, read, uids)
    result.problems += [problem for _, _, problem in read_backs if problem]
    if not result.problems:
        result.held.append(f"read back {len(uids)} dashboard(s): each holds the SHA the release verified")
    if datasource_url:
        inputs = [DashboardInput(uid, document) for uid, document, _ in read_backs if document is not None]
        ran, errors = _queries(datasource_url, inputs, timeout)
        result.problems += errors
        if not errors:
            result.held.append(f"{ran} queries of the published dashboards ran on {datasource_url} without error")
    return result


def _queries(datasource_url: str, inputs: list[DashboardInput], timeout: float) -> tuple[int, list[str]]:
    """How many queries ran, and each one the data source rejected (named by its dashboard)."""
    checks = checked_now(Datasource(datasource_url, timeout=timeout), inputs, timeout)
    errors = [f"{check.dashboard}: {line}" for check in checks for line in rejections([check])]
    return sum(len(check.targets) for check in checks), errors
