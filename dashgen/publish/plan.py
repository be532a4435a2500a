"""The release plan: a pure, printable value computed from the build, the live exports and the ledger.

For every target dashboard it decides one action — create, update, unchanged (no write, so
Grafana's history is not flooded) or refused — and lists every refusal with the key that would
approve it. Nothing here performs I/O; ``--dry-run`` prints exactly this value.

Approval keys (``--approve KEY``; prefix with ``<uid>/`` to scope one dashboard):
  ``<panel key>``        an existing panel whose queries change (``cache_evidence.tier_occupancy``)
  ``var:<name>``         an existing variable whose definition changes
  ``remove:panel:<id>``  a panel present live but not in the build (the clean-up list)
  ``remove:var:<name>``  a variable present live but not in the build
Edits made in Grafana since the last release are refused unless ``--adopt-live <uid>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashgen.diff import DashboardDiff, diff_dashboards
from dashgen.document import iter_panels
from dashgen.publish.ledger import last_stored
from dashgen.render.canonical import content_sha


@dataclass(frozen=True)
class PublishTarget:
    """A dashboard dashgen wants Grafana to store."""

    profile: str
    uid: str
    document: dict[str, Any]
    build_sha: str
    panel_keys: dict[int, str] = field(default_factory=dict)  # panel id -> stable key


@dataclass(frozen=True)
class LiveState:
    """What Grafana stores now, as exported at the start of the release."""

    uid: str
    version: int
    folder_uid: str | None
    document: dict[str, Any]
    backup_file: str | None
    provisioned: bool = False
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", content_sha(self.document))


@dataclass(frozen=True)
class Refusal:
    key: str
    reason: str


@dataclass(frozen=True)
class NewQuery:
    panel: str
    ref_id: str
    expr: str
    instant: bool


@dataclass(frozen=True)
class DashboardPlan:
    target: PublishTarget
    live: LiveState | None
    action: str  # create | update | unchanged | refused
    summary: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    approvals_used: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()
    new_queries: tuple[NewQuery, ...] = ()
    live_edited: bool = False

    @property
    def writes(self) -> bool:
        return self.action in ("create", "update")


@dataclass(frozen=True)
class Plan:
    dashboards: tuple[DashboardPlan, ...]
    folder_uid: str | None

    @property
    def refused(self) -> bool:
        return any(d.action == "refused" for d in self.dashboards)

    def to_dict(self) -> dict[str, Any]:
        return {
            "folder_uid": self.folder_uid,
            "dashboards": [
                {
                    "profile": d.target.profile,
                    "uid": d.target.uid,
                    "action": d.action,
                    "live_version": d.live.version if d.live else None,
                    "build_sha": d.target.build_sha,
                    "live_sha": d.live.sha if d.live else None,
                    "live_edited": d.live_edited,
                    "summary": list(d.summary),
                    "refusals": [{"approve_with": r.key, "reason": r.reason} for r in d.refusals],
                    "approvals_used": list(d.approvals_used),
                    "cleanup": list(d.cleanup),
                    "new_queries": len(d.new_queries),
                    "backup_file": d.live.backup_file if d.live else None,
                }
                for d in self.dashboards
            ],
        }

    def render_text(self) -> str:
        lines = []
        for d in self.dashboards:
            version = f"live v{d.live.version}" if d.live else "not in Grafana"
            lines.append(f"{d.action.upper():<9} {d.target.uid} ({d.target.profile}; {version}; "
                         f"build {d.target.build_sha[:12]})")
            lines += [f"    {line}" for line in d.summary]
            lines += [f"    approved: {key}" for key in d.approvals_used]
            lines += [f"    clean-up: {item}" for item in d.cleanup]
            lines += [f"    REFUSED: {r.reason} -> {_remedy(r.key)}" for r in d.refusals]
        counts = {action: sum(d.action == action for d in self.dashboards)
                  for action in ("create", "update", "unchanged", "refused")}
        lines.append("plan: " + ", ".join(f"{n} {a}" for a, n in counts.items()))
        return "\n".join(lines)


def _remedy(key: str) -> str:
    if key.startswith("adopt-live:"):
        return f"--adopt-live {key.split(':', 1)[1]}"
    return f"--approve {key}"


def _approved(key: str, uid: str, approvals: frozenset[str]) -> bool:
    return key in approvals or f"{uid}/{key}" in approvals


def plan_release(
    targets: list[PublishTarget],
    live: dict[str, LiveState | None],
    ledger: list[dict[str, Any]],
    approvals: frozenset[str] = frozenset(),
    adopt_live: frozenset[str] = frozenset(),
    folder_uid: str | None = None,
    recorded: dict[str, dict[str, Any]] | None = None,
) -> Plan:
    """Decide, for each target, what the release does and what it refuses. Pure.

    ``recorded`` holds, per uid, the dashboard as Grafana stored it at the last release (the ledger's
    read-back copy), so a live copy that differs from it only by what a UI save adds is not taken
    for a person's edit.
    """
    recorded = recorded or {}
    return Plan(
        tuple(_plan_one(t, live.get(t.uid), ledger, approvals, adopt_live, recorded.get(t.uid)) for t in targets),
        folder_uid,
    )


def _plan_one(
    target: PublishTarget,
    live: LiveState | None,
    ledger: list[dict[str, Any]],
    approvals: frozenset[str],
    adopt_live: frozenset[str],
    recorded: dict[str, Any] | None,
) -> DashboardPlan:
    if live is None:
        queries = tuple(_queries(target.document, None))
        summary = (f"new dashboard with {len(queries)} queries",)
        return DashboardPlan(target, None, "create", summary, new_queries=queries)
    if live.sha == target.build_sha:
        return DashboardPlan(target, live, "unchanged", ("Grafana already stores this build (same SHA)",))

    refusals: list[Refusal] = []
    used: list[str] = []
    last = last_stored(ledger, target.uid)
    live_edited = last is None or last.get("stored_sha") != live.sha
    noise_note: list[str] = []
    if (live_edited and last is not None and recorded is not None
            and not diff_dashboards(recorded, live.document).has_semantic_changes):
        live_edited = False
        noise_note.append(f"live v{live.version} differs from the last release only by what a Grafana UI save "
                          "adds (no semantic edit)")
    if live_edited:
        why = ("Grafana holds this dashboard but the ledger has no release of it: it was not published by dashgen"
               if last is None else
               f"edited in Grafana since the last release (live v{live.version} SHA {live.sha[:12]} != recorded "
               f"{str(last.get('stored_sha'))[:12]} of v{last.get('grafana_version')})")
        key = f"adopt-live:{target.uid}"
        if target.uid in adopt_live:
            used.append(key)
        else:
            refusals.append(Refusal(key, why))

    diff = diff_dashboards(live.document, target.document)
    summary, cleanup = _summarise(diff)
    summary = noise_note + summary
    guarded = [
        (target.panel_keys.get(c.id or -1, f"panel:{c.id}"), f'queries of existing panel "{c.title}" change')
        for c in diff.changed_panels if "query" in c.categories
    ]
    guarded += [(f"var:{v.name}", f"definition of existing variable ${v.name} changes")
                for v in diff.changed_variables if v.definition]
    guarded += [(f"remove:panel:{p.id}", f'panel "{p.title}" is live but not in the build (clean-up)')
                for p in diff.removed_panels]
    guarded += [(f"remove:var:{name}", f"variable ${name} is live but not in the build (clean-up)")
                for name in diff.removed_variables]
    for key, reason in guarded:
        if _approved(key, target.uid, approvals):
            used.append(key)
        else:
            refusals.append(Refusal(key, reason))

    changed_ids = {c.id for c in diff.changed_panels if "query" in c.categories}
    added_ids = {p.id for p in diff.added_panels}
    queries = tuple(_queries(target.document, changed_ids | added_ids))
    if not diff.has_semantic_changes:
        summary = summary or ("no semantic change; only Grafana-side noise differs",)
    action = "refused" if refusals else "update"
    return DashboardPlan(target, live, action, tuple(summary), tuple(refusals), tuple(used), tuple(cleanup),
                         queries, live_edited)


def _summarise(diff: DashboardDiff) -> tuple[list[str], list[str]]:
    summary = [f'added panel "{p.title}"' for p in diff.added_panels]
    summary += [f'changed panel "{c.title}": {", ".join(c.categories)}' for c in diff.changed_panels]
    summary += [f"added variable ${name}" for name in diff.added_variables]
    summary += [f"changed variable ${v.name}" for v in diff.changed_variables]
    if diff.layout_moves:
        summary.append(f"{len(diff.layout_moves)} panels moved")
    summary += [f"dashboard {c.path}: {c.old!r} -> {c.new!r}" for c in diff.dashboard_changes]
    cleanup = [f'panel "{p.title}" (id {p.id})' for p in diff.removed_panels]
    cleanup += [f"variable ${name}" for name in diff.removed_variables]
    return summary, cleanup


def _queries(document: dict[str, Any], panel_ids: set[Any] | None) -> list[NewQuery]:
    found = []
    for site in iter_panels(document):
        candidate = site.raw
        if panel_ids is not None and candidate.get("id") not in panel_ids:
            continue
        for target in candidate.get("targets", []) or []:
            if target.get("expr"):
                found.append(NewQuery(candidate.get("title", ""), target.get("refId", ""), target["expr"],
                                      bool(target.get("instant"))))
    return found
