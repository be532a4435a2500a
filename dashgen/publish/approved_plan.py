"""The approved plan: merge-to-apply's record of what a reviewer approved in a pull request.

A pull request's check plans the release (``dashgen publish --dry-run --approvals-out FILE``): for every dashboard
the release would write or refuses, the build's SHA, the version Grafana held when the plan read it, and the
approval keys of its refusals. A reviewer commits that file (``releases/approvals.toml``), keeping the keys they
approve; the publish on main (``--approved-plan FILE``) then applies exactly that plan:

* a dashboard's keys are granted only while its build SHA and Grafana's version are those planned;
* a dashboard the release would write but the plan does not hold, holds for another build, or holds at another
  Grafana version (someone saved it, another release ran) is refused with a ``plan:<uid>`` key that no flag
  grants, naming the dashboard and what moved: plan again.

The file is TOML::

    commit = "…"                       # the commit the plan was made at (for people; not checked)
    [[dashboard]]
    uid = "dg-h20-16-cluster"
    build_sha = "…"                    # the build's content SHA the plan was made for
    live_version = 12                  # Grafana's version when planned; 0: not in Grafana
    approve = ["cache_evidence.tier_occupancy"]

Pure: parsing, rendering and the two plan steps; the command reads and writes the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dashgen.errors import InputError
from dashgen.files.parsers import parse_toml
from dashgen.publish.actions import Action
from dashgen.publish.approvals import NEVER_GRANTED, PLAN_PREFIX, Approvals
from dashgen.publish.guard import Refusal
from dashgen.publish.plan import LiveState, Plan, PublishTarget

HEADER = """\
# The release plan reviewed in a pull request (dashgen publish --dry-run --approvals-out). Committing this
# file approves, for each dashboard below, the listed keys for exactly this build SHA at exactly this Grafana
# version; the publish on main (--approved-plan) refuses anything else, naming the dashboard. Delete a key you
# do not approve; plan again after any change.
"""


@dataclass(frozen=True)
class PlannedDashboard:
    uid: str
    build_sha: str
    live_version: int  # 0: not in Grafana when planned
    approve: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApprovedPlan:
    source: str
    commit: str
    dashboards: Mapping[str, PlannedDashboard]

    @property
    def never_made(self) -> bool:
        """This is the plan ``dashgen init`` commits (``render_empty``): no pull request's plan was ever committed."""
        return not self.commit and not self.dashboards

    def approvals(
        self, targets: list[PublishTarget], live: Mapping[str, LiveState | None], base: Approvals
    ) -> Approvals:
        """``base`` plus the planned keys of each dashboard whose build and Grafana version are the planned ones
        (scoped to the dashboard: ``<uid>/<key>``, so an exact key of one dashboard grants nothing elsewhere)."""
        granted = [
            f"{t.uid}/{key}"
            for t in targets
            if (planned := self.dashboards.get(t.uid)) is not None and _moved(planned, t, live.get(t.uid)) is None
            for key in planned.approve
        ]
        return replace(base, patterns=(*base.patterns, *granted))

    def enforce(self, plan: Plan) -> Plan:
        """The plan with every write or refusal the approved plan does not hold made a ``plan:<uid>`` refusal."""
        items = []
        for item in plan.dashboards:
            if not (item.writes or item.action == Action.REFUSED):
                items.append(item)
                continue
            planned = self.dashboards.get(item.target.uid)
            why = (
                f"{item.target.uid} is not in the approved plan {self.source} (it changed in Grafana or in the "
                "build since the plan was reviewed, or the plan was never made)"
                if planned is None
                else _moved(planned, item.target, item.live)
            )
            if why is None:
                items.append(item)
                continue
            refusal = Refusal(f"{PLAN_PREFIX}{item.target.uid}", why)
            items.append(replace(item, action=Action.REFUSED, refusals=(refusal, *item.refusals)))
        return replace(plan, dashboards=tuple(items))


def _moved(planned: PlannedDashboard, target: PublishTarget, live: LiveState | None) -> str | None:
    """What differs from the plan for this dashboard, or None."""
    version = live.version if live is not None else 0
    if planned.build_sha not in target.accepted_shas:
        return (
            f"{target.uid}: the approved plan is for build {planned.build_sha[:12]}, this build is "
            f"{target.build_sha[:12]}: the dashboard changed after the plan was reviewed"
        )
    if planned.live_version != version:
        held = f"version {version}" if live is not None else "nothing (it was deleted)"
        was = f"version {planned.live_version}" if planned.live_version else "nothing"
        return (
            f"{target.uid}: Grafana changed since the plan: it held {was} when planned and holds {held} now "
            "(a person saved it, or another release ran)"
        )
    return None


def parse(text: str, source: str) -> ApprovedPlan:
    """The approved plan in ``text`` (TOML); an error names ``source`` and the entry and field at fault."""
    try:
        data = parse_toml(text)
    except ValueError as exc:
        raise InputError(f"{source}: not TOML ({exc})") from None
    unknown = sorted(set(data) - {"commit", "dashboard"})
    if unknown:
        raise InputError(f"{source}: unknown key {unknown[0]!r} (known: commit, [[dashboard]])")
    commit = data.get("commit", "")
    entries = data.get("dashboard", [])
    if not isinstance(commit, str) or not isinstance(entries, list):
        raise InputError(f"{source}: commit must be a string and dashboard a list of tables ([[dashboard]])")
    dashboards: dict[str, PlannedDashboard] = {}
    for number, entry in enumerate(entries, 1):
        dashboards_entry = _entry(entry, f"{source}: [[dashboard]] #{number}")
        if dashboards_entry.uid in dashboards:
            raise InputError(f"{source}: [[dashboard]] #{number}: uid {dashboards_entry.uid!r} is planned twice")
        dashboards[dashboards_entry.uid] = dashboards_entry
    return ApprovedPlan(source, commit, dashboards)


def _entry(entry: Any, where: str) -> PlannedDashboard:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be a table")
    unknown = sorted(set(entry) - {"uid", "build_sha", "live_version", "approve"})
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (uid, build_sha, live_version, approve)")
    uid, sha, version, keys = entry.get("uid"), entry.get("build_sha"), entry.get("live_version"), entry.get("approve")
    if not isinstance(uid, str) or not uid:
        raise InputError(f"{where}: uid must be a non-empty string")
    if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise InputError(f"{where} ({uid}): build_sha must be the build's 64-hex content SHA")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InputError(f"{where} ({uid}): live_version must be Grafana's version, an integer ≥ 0")
    keys = [] if keys is None else keys
    if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
        raise InputError(f"{where} ({uid}): approve must be a list of approval keys (strings)")
    never = [k for k in keys if k.startswith(NEVER_GRANTED)]
    if never:
        raise InputError(f"{where} ({uid}): {never[0]!r} cannot be approved (no approval makes it writable)")
    return PlannedDashboard(uid, sha, version, tuple(keys))


def render(plan: Plan, commit: str) -> str:
    """The approved-plan file for ``plan``: each dashboard it writes or refuses, with its refusals' keys."""
    lines = [HEADER, f"commit = {json.dumps(commit)}", ""]
    for item in plan.dashboards:
        if not (item.writes or item.action == Action.REFUSED):
            continue
        keys = [k for k in (*item.approvals_used, *(r.key for r in item.refusals)) if not k.startswith(NEVER_GRANTED)]
        lines += [
            "[[dashboard]]",
            f"uid = {json.dumps(item.target.uid)}",
            f'build_sha = "{item.target.build_sha}"',
            f"live_version = {item.live.version if item.live is not None else 0}",
            "approve = [" + ", ".join(json.dumps(k) for k in keys) + "]",
            "",
        ]
    return "\n".join(lines)


def render_empty() -> str:
    """The approved plan of a repository no pull request has planned yet: it approves no write."""
    return "\n".join([HEADER, 'commit = ""', ""])
