"""Execute a release plan against Grafana: push, read back, verify the SHA, record the ledger.

The only module of the pipeline that writes to Grafana. Each dashboard is pushed with
``overwrite: false`` and the exported version, so a save made by someone between the export and
the push is a conflict, never an overwrite. A write whose outcome is unknown is never retried
blindly: it is read back. Every dashboard gets its ledger line as soon as its fate is known, so a
release that fails half-way leaves a consistent ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import GrafanaError, VersionConflict, WriteOutcomeUnknown
from dashgen.publish.backups import save_backup
from dashgen.publish.ledger import LedgerRecord, append
from dashgen.publish.plan import DashboardPlan, Plan
from dashgen.render.canonical import content_sha, content_view

QueryValidator = Callable[[DashboardPlan], list[str]]


@dataclass(frozen=True)
class Outcome:
    uid: str
    profile: str
    outcome: str  # published | unchanged | refused | conflict | failed | verify-failed | invalid-queries
    version: int | None
    stored_sha: str | None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome in ("published", "unchanged")


def now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def release_message(build_sha: str, git_commit: str) -> str:
    return f"dashgen {build_sha[:12]} {git_commit[:12]}"


def grafana_changes(sent: dict[str, Any], stored: dict[str, Any], limit: int = 20) -> list[str]:
    """Leaf paths where what Grafana stored differs from what was sent (server-owned fields aside)."""
    changes: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if len(changes) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{index}]")
        elif a != b:
            changes.append(f"{path}: sent {a!r:.80} stored {b!r:.80}")

    walk(content_view(sent), content_view(stored), "$")
    return changes


def execute_plan(
    plan: Plan,
    client: GrafanaClient,
    *,
    ledger_path: Path,
    backup_dir: Path,
    git_commit: str,
    grafana_url: str,
    validator: QueryValidator | None = None,
    progress: Callable[[Iterable[DashboardPlan]], Iterable[DashboardPlan]] = lambda items: items,
) -> list[Outcome]:
    """Run the plan; returns one Outcome per dashboard, in plan order."""
    outcomes = []
    for item in progress(plan.dashboards):
        outcome, published_file = _execute_one(item, plan.folder_uid, client, backup_dir, git_commit, validator)
        outcomes.append(outcome)
        append(ledger_path, [_record(item, outcome, git_commit, grafana_url, published_file)])
    return outcomes


def _execute_one(
    item: DashboardPlan,
    folder_uid: str | None,
    client: GrafanaClient,
    backup_dir: Path,
    git_commit: str,
    validator: QueryValidator | None,
) -> tuple[Outcome, str | None]:
    target, live = item.target, item.live
    base = Outcome(target.uid, target.profile, item.action, live.version if live else None,
                   live.sha if live else None)
    if item.action == "unchanged":
        return replace(base, outcome="unchanged", detail="no write: Grafana already stores this build"), None
    if item.action == "refused":
        detail = "; ".join(f"{r.reason} (approve: {r.key})" for r in item.refusals)
        return replace(base, outcome="refused", detail=detail), None
    if validator is not None:
        problems = validator(item)
        if problems:
            return replace(base, outcome="invalid-queries", detail="; ".join(problems)), None

    payload = dict(target.document)  # only top-level keys are set below
    if live is not None:
        payload["version"] = live.version
        payload["id"] = live.document.get("id")
    folder = folder_uid if folder_uid is not None else (live.folder_uid if live else None)
    message = release_message(target.build_sha, git_commit)
    try:
        try:
            saved = client.save_dashboard(payload, folder, message, overwrite=False)
        except WriteOutcomeUnknown as unknown:
            resolved = client.resolve_save(unknown)
            if resolved is None:
                return replace(base, outcome="failed",
                               detail=f"{unknown}; read back: Grafana does not store this build"), None
            saved = resolved
        stored = client.get_dashboard(target.uid)
    except VersionConflict as exc:
        return replace(base, outcome="conflict",
                       detail=f"someone saved {target.uid} after the export; nothing was overwritten ({exc})"), None
    except GrafanaError as exc:
        return replace(base, outcome="failed", detail=str(exc)), None
    if stored is None:
        return replace(base, outcome="verify-failed", version=saved.version,
                       detail="saved, but Grafana returns 404 on read-back"), None
    stored_sha = content_sha(stored.dashboard)
    published = save_backup(backup_dir, target.uid, stored.version, now_stamp(),
                            {"dashboard": stored.dashboard, "meta": stored.meta}, kind="published")
    if stored_sha != target.build_sha:
        changed = grafana_changes(target.document, stored.dashboard)
        return replace(base, outcome="verify-failed", version=stored.version, stored_sha=stored_sha,
                       detail="Grafana stored something else than the build: " + "; ".join(changed)), str(published)
    return replace(base, outcome="published", version=stored.version, stored_sha=stored_sha,
                   detail=f"v{stored.version} verified {stored_sha[:12]}"), str(published)


def _record(item: DashboardPlan, outcome: Outcome, git_commit: str, grafana_url: str,
            published_file: str | None) -> LedgerRecord:
    return LedgerRecord(
        time=now_stamp(),
        git_commit=git_commit,
        profile=item.target.profile,
        uid=item.target.uid,
        outcome=outcome.outcome,
        grafana_version=outcome.version,
        build_sha=item.target.build_sha,
        stored_sha=outcome.stored_sha,
        approvals_used=item.approvals_used,
        cleanup=item.cleanup if outcome.outcome == "published" else (),
        backup_file=item.live.backup_file if item.live else None,
        published_file=published_file,
        grafana_url=grafana_url,
        message=outcome.detail,
        refusals=tuple(r.key for r in item.refusals),
    )
