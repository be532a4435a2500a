"""The checks that let a staged release go on to its next stage, run on what a context's Grafana holds now:

* every dashboard the release published (or found unchanged) is read back and still holds the SHA the release
  verified (another writer, a restore, a Grafana that lost it: each fails the check);
* where the context names a data source, every query of each read-back dashboard runs there as Grafana would
  (variables at All, the last hour); a query the data source rejects fails the check, an empty result does not;
* every library panel, Grafana-managed rule group and folder's permissions the release stored (or found unchanged)
  is read back and still holds the SHA the release verified.

I/O: reads Grafana and the data source, writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashgen.grafana.alerting import RuleGroups
from dashgen.grafana.errors import GrafanaError
from dashgen.grafana.permissions import FolderPermissions
from dashgen.grafana.resources import WRITE_VERSION
from dashgen.live.datasource import Datasource
from dashgen.live.query_check import DashboardInput
from dashgen.publish.execute import v2_version
from dashgen.publish.export import Connection, parallel, read_back
from dashgen.publish.library import read_element
from dashgen.publish.library_plan import KIND as LIBRARY_KIND
from dashgen.publish.permissions_plan import KIND as PERMISSIONS_KIND
from dashgen.publish.permissions_plan import grants_sha
from dashgen.publish.query_validation import checked_now, rejections
from dashgen.publish.release import ReleaseReport
from dashgen.publish.rules_plan import KIND as RULES_KIND
from dashgen.rules.grafana import group_sha


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


def resource_outcomes(result: ReleaseReport) -> list[dict[str, Any]]:
    """The library panels, rule groups and folder permissions of one context's release as a staged release keeps
    them: each outcome with its ``kind`` and what the stage check reads it back by (folder, group title, grants)."""
    items = {i.uid: (kind, i) for kind, kept in _kinds(result) for i in kept}
    out = []
    for o in (*result.library, *result.rules, *result.permissions):
        kind, item = items[o.uid]
        out.append(
            {
                "uid": o.uid,
                "outcome": o.outcome,
                "version": o.version,
                "stored_sha": o.stored_sha,
                "detail": o.detail,
                "kind": kind,
                "folder_uid": item.ledger_folder,
                "name": item.ledger_name,
                "grants": [list(pair) for pair in o.grants or ()],
            }
        )
    return out


def _kinds(result: ReleaseReport) -> list[tuple[str, Sequence[Any]]]:
    plan = result.plan
    return [(LIBRARY_KIND, plan.library), (RULES_KIND, plan.rules), (PERMISSIONS_KIND, plan.permissions)]


def _stored_sha(connection: Connection, outcome: Mapping[str, Any]) -> str | None:
    """The SHA of what Grafana stores now of a resource outcome (None: it is gone)."""
    client, kind = connection.client, outcome["kind"]
    if kind == LIBRARY_KIND:
        element = read_element(connection, str(outcome["uid"]))  # through /apis where it is served
        return element.sha if element is not None else None
    if kind == RULES_KIND:
        group = RuleGroups(client).get(str(outcome["folder_uid"]), str(outcome["name"]))
        return group_sha(group) if group is not None else None
    api = FolderPermissions(client)
    for principal, _ in outcome.get("grants") or []:  # the read-back names each entry it knows by its id
        api.resolve(str(principal))
    grants = api.get(str(outcome["folder_uid"]))
    return grants_sha(grants) if grants is not None else None


def check_resources(connection: Connection, outcomes: Sequence[Mapping[str, Any]]) -> StageCheck:
    """Every library panel, rule group and folder's permissions in ``outcomes`` (what the release stored or found
    unchanged) still holds the SHA the release verified."""
    result = StageCheck()
    for outcome in outcomes:
        uid = outcome["uid"]
        try:
            sha = _stored_sha(connection, outcome)
        except (GrafanaError, ValueError) as exc:
            result.problems.append(f"{uid}: cannot be read back ({exc})")
            continue
        if sha is None:
            result.problems.append(f"{uid}: gone from Grafana since the release stored it")
        elif sha != outcome["stored_sha"]:
            result.problems.append(
                f"{uid}: Grafana holds {sha[:12]}, not the {str(outcome['stored_sha'])[:12]} the release verified"
            )
    if outcomes and not result.problems:
        kinds = sorted({str(o["kind"]) for o in outcomes})
        result.held.append(f"read back {len(outcomes)} {' / '.join(kinds)}: each holds the SHA the release verified")
    return result
