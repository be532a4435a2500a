"""The Grafana-managed rule groups of a release, at the I/O edge: read each group Grafana stores
(``plan_release_rules``), then replace (``run_rules``, phase ``write``) and delete (phase ``delete``) them, each
written group read back, proven by its SHA (``dashgen.rules.grafana.group_sha``) and given a ledger line
(``kind: alert-rule-group``, ``name``: its title, ``folder_uid``: its folder).

Before a group is replaced or deleted, what Grafana stores is backed up (``<backups>/<group uid>/…``); each
write's read-back is kept (``…-published.json``), which ``dashgen rollback <group uid>`` republishes. Writes carry
``X-Disable-Provenance`` (``dashgen.grafana.alerting`` says why).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from dashgen.grafana.alerting import RuleGroups
from dashgen.grafana.errors import GrafanaError
from dashgen.publish.actions import OutcomeKind
from dashgen.publish.approvals import Approvals
from dashgen.publish.export import Connection, parallel
from dashgen.publish.ledger import LedgerRecord
from dashgen.publish.resource_outcome import Phase, ResourceOutcome, ResourceRelease, run_phase
from dashgen.publish.rules_plan import KIND, RuleGroupItem, RuleGroupTarget, plan_rules, stale_groups
from dashgen.rules.grafana import group_sha, rule_view


def plan_release_rules(
    connection: Connection,
    targets: list[RuleGroupTarget],
    ledger: list[LedgerRecord],
    approvals: Approvals,
    *,
    cleanup_profiles: tuple[str, ...] = (),
) -> tuple[RuleGroupItem, ...]:
    """Read every target group, each stale one of ``cleanup_profiles`` and the targets' folders; plan (pure)."""
    api = RuleGroups(connection.client)
    stale = stale_groups(ledger, cleanup_profiles, [t.uid for t in targets]) if cleanup_profiles else {}
    where = [(t.uid, t.folder_uid, t.title) for t in targets] + [(u, f, n) for u, (_, f, n) in sorted(stale.items())]
    if not where:
        return ()
    groups = parallel(connection.jobs, lambda w: api.get(w[1], w[2]), where)
    live = {uid: group for (uid, _, _), group in zip(where, groups, strict=True)}
    folders = {f: connection.client.get_folder(f) is not None for f in sorted({t.folder_uid for t in targets})}
    return plan_rules(targets, live, ledger, approvals, folders, stale)


def _write_one(item: RuleGroupItem, release: ResourceRelease) -> ResourceOutcome:
    target = item.target
    assert target is not None  # a write always has its group
    client = release.connection.client
    api = RuleGroups(client)
    base = ResourceOutcome(item.uid, item.profile, OutcomeKind.FAILED, None)
    try:
        backup = release.backup(item.uid, {"group": item.live}) if item.live is not None else None
        if item.create_folder and client.get_folder(target.folder_uid) is None:
            client.create_folder(target.folder_uid, uid=target.folder_uid)
        api.put(target.group)
        stored = api.get(target.folder_uid, target.title)
    except GrafanaError as exc:
        return replace(base, detail=str(exc))
    if stored is None:
        return replace(base, outcome=OutcomeKind.VERIFY_FAILED, detail="saved, but Grafana returns 404 on read-back")
    published = release.backup(item.uid, {"group": stored}, "published")
    sha = group_sha(stored)
    if sha != target.sha:
        detail = f"Grafana stores another group than the build (SHA {sha[:12]} != {target.sha[:12]})"
        return ResourceOutcome(item.uid, item.profile, OutcomeKind.VERIFY_FAILED, sha, detail, None, published, backup)
    detail = f"{len(stored['rules'])} rules in folder {target.folder_uid!r}, SHA {sha[:12]} verified"
    return ResourceOutcome(item.uid, item.profile, OutcomeKind.PUBLISHED, sha, detail, None, published, backup)


def _delete_one(item: RuleGroupItem, release: ResourceRelease) -> ResourceOutcome:
    api = RuleGroups(release.connection.client)
    base = ResourceOutcome(item.uid, item.profile, OutcomeKind.FAILED, None)
    try:
        backup = release.backup(item.uid, {"group": item.live}) if item.live is not None else None
        now = api.get(item.folder_uid, item.title)
        if now is not None and item.live is not None and group_sha(now) != group_sha(item.live):
            return replace(
                base, outcome=OutcomeKind.CONFLICT, detail="changed in Grafana after the export; not deleted"
            )
        api.delete(item.folder_uid, item.title)
    except GrafanaError as exc:
        return replace(base, detail=str(exc))
    return replace(base, outcome=OutcomeKind.DELETED, detail="deleted (the backup keeps its rules)", backup_file=backup)


def run_rules(
    items: tuple[RuleGroupItem, ...], release: ResourceRelease, *, phase: Phase, held: bool
) -> list[ResourceOutcome]:
    """One phase of the release's rule groups (``write``: every item but deletions; ``delete``); one ledger append."""
    return run_phase(KIND, items, phase, held, release, write=_write_one, delete=_delete_one)


def recorded_group(record: LedgerRecord, load: Any) -> RuleGroupTarget | None:
    """The group a ledger line's read-back copy holds, as a target (a rollback republishes it)."""
    path = record.published_file
    if not path or not Path(str(path)).exists():
        return None
    group = (load(Path(str(path))) or {}).get("group") or {}
    if not isinstance(group.get("rules"), list):
        return None
    body = {
        "title": group.get("title"),
        "folderUid": group.get("folderUid"),
        "interval": group.get("interval"),
        "rules": [
            {**rule_view(r), "ruleGroup": group.get("title"), "folderUID": group.get("folderUid")}
            for r in group["rules"]
        ],
    }
    return RuleGroupTarget(str(record.uid), str(record.profile), body)
