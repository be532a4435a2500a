"""The Grafana-managed rule groups of a release plan (pure): one decision per group of the build, and per group
dashgen published before that the build no longer has, each refusal with the key that approves it.

* ``overwrite-live:<group uid>`` — a rule of the group was changed in Grafana since the last release (the stored
  group's SHA is not the ledger's), or Grafana holds the group but dashgen never released it here;
* ``alert:<rule title>`` — the queries of an existing rule change (as ``<panel key>`` for a dashboard's panel);
* ``remove:rule:<rule title>`` — a rule Grafana holds in the group that the build no longer has (the PUT of a group
  deletes it);
* ``remove:rule-group:<group uid>`` — a group dashgen published for a profile of the release that the build no
  longer has is deleted;
* ``create-folder:<uid>`` — the rules' folder does not exist;
* ``provenance:<group uid>`` — never granted: the group's rules carry a provenance (``api``, ``file``...) another
  tool set; Grafana refuses to change it (403), so dashgen does not try.

The group uid (``dgr-…``) derives from the profile and the group title (``dashgen.rules.grafana.group_uid``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dashgen.grafana.alerting import provenance_of
from dashgen.publish.actions import RESOURCE_WRITING, STORED_OUTCOMES, OutcomeKind, ResourceAction
from dashgen.publish.approvals import PROVENANCE_PREFIX, Approvals
from dashgen.publish.guard import Refusal, Verdict, require
from dashgen.publish.ledger import LedgerRecord, last_written
from dashgen.rules.grafana import group_sha

KIND = "alert-rule-group"  # the ledger's ``kind`` of a rule group's line


@dataclass(frozen=True)
class RuleGroupTarget:
    """A rule group the build wants Grafana to evaluate."""

    uid: str
    profile: str
    group: dict[str, Any]  # the provisioning API's AlertRuleGroup

    @property
    def title(self) -> str:
        return str(self.group["title"])

    @property
    def folder_uid(self) -> str:
        return str(self.group["folderUid"])

    @property
    def sha(self) -> str:
        return group_sha(self.group)


@dataclass(frozen=True)
class RuleGroupItem:
    """What the release does with one group: ``create``, ``update``, ``unchanged``, ``delete`` or ``refused``."""

    uid: str
    profile: str
    title: str
    folder_uid: str
    action: ResourceAction
    target: RuleGroupTarget | None
    live: dict[str, Any] | None
    summary: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    approvals_used: tuple[str, ...] = ()
    create_folder: bool = False

    @property
    def writes(self) -> bool:
        return self.action in RESOURCE_WRITING

    @property
    def live_sha(self) -> str | None:
        return group_sha(self.live) if self.live is not None else None

    # what its ledger line says (``dashgen.publish.resource_outcome.ResourceItem``)
    @property
    def build_sha(self) -> str:
        return self.target.sha if self.target is not None else ""

    @property
    def ledger_folder(self) -> str:
        return self.folder_uid

    @property
    def ledger_name(self) -> str:
        return self.title

    live_version = None  # Grafana keeps no version of a rule group
    live_grants = None


def _queries(rule: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(d.get("refId")), str((d.get("model") or {}).get("expr", "")))
        for d in rule.get("data") or []
        if isinstance(d, dict)
    ]


def _changes(target: RuleGroupTarget, live: dict[str, Any], approvals: Approvals) -> tuple[Verdict, list[str]]:
    verdict, lines = Verdict(), []
    old = {str(r.get("uid")): r for r in live.get("rules") or [] if isinstance(r, dict)}
    new = {str(r.get("uid")): r for r in target.group["rules"]}
    for uid, rule in new.items():
        if uid not in old:
            lines.append(f'added rule "{rule["title"]}"')
        elif _queries(old[uid]) != _queries(rule):
            title = str(rule["title"])
            verdict += require(f"alert:{title}", f'queries of existing rule "{title}" change', target.uid, approvals)
            lines.append(f'changed rule "{title}": query')
        elif group_sha({"rules": [old[uid]]}) != group_sha({"rules": [rule]}):
            lines.append(f'changed rule "{rule["title"]}"')
    for uid, rule in old.items():
        if uid not in new:
            title = str(rule.get("title"))
            verdict += require(
                f"remove:rule:{title}", f'rule "{title}" is in Grafana but not in the build', target.uid, approvals
            )
    if live.get("interval") != target.group.get("interval"):
        lines.append(f"interval {live.get('interval')}s -> {target.group.get('interval')}s")
    return verdict, lines


def _plan_group(
    target: RuleGroupTarget,
    live: dict[str, Any] | None,
    ledger: list[LedgerRecord],
    approvals: Approvals,
    folder_exists: bool,
) -> RuleGroupItem:
    where = (target.uid, target.profile, target.title, target.folder_uid)
    verdict = Verdict()
    if not folder_exists:
        verdict += require(
            f"create-folder:{target.folder_uid}",
            f"the rules' folder {target.folder_uid!r} does not exist",
            target.uid,
            approvals,
        )
    if live is None:
        rules = len(target.group["rules"])
        action: ResourceAction = "refused" if verdict.refusals else "create"
        summary = (f"new rule group with {rules} rules in folder {target.folder_uid!r}",)
        return RuleGroupItem(*where, action, target, None, summary, verdict.refusals, verdict.used, not folder_exists)
    provenance = provenance_of(live)
    if provenance:
        refusal = Refusal(
            f"{PROVENANCE_PREFIX}{target.uid}",
            f"Grafana stores the rules of group {target.title!r} with provenance {provenance!r} (written by another "
            "tool or through the API without X-Disable-Provenance); Grafana refuses to change it (403)",
        )
        return RuleGroupItem(*where, "refused", target, live, (), (refusal,))
    live_sha = group_sha(live)
    if live_sha == target.sha:
        return RuleGroupItem(*where, "unchanged", target, live, ("Grafana stores this build",))
    last = last_written(ledger, target.uid)
    if last is None or last.stored_sha != live_sha:
        why = (
            "Grafana holds this rule group but the ledger has no release of it on this instance; publishing "
            "replaces it (a backup is kept)"
            if last is None
            else f"a rule of the group was changed in Grafana since the last release (SHA {live_sha[:12]} != "
            f"recorded {str(last.stored_sha)[:12]}); publishing overwrites it (a backup is kept)"
        )
        verdict += require(f"overwrite-live:{target.uid}", why, target.uid, approvals)
    changes, lines = _changes(target, live, approvals)
    verdict += changes
    action = "refused" if verdict.refusals else "update"
    return RuleGroupItem(*where, action, target, live, tuple(lines), verdict.refusals, verdict.used)


def stale_groups(
    ledger: list[LedgerRecord], profiles: Iterable[str], built: Iterable[str]
) -> dict[str, tuple[str, str, str]]:
    """uid -> (profile, folder uid, title) of each group dashgen stored for one of ``profiles`` (no ``deleted``
    line after it) that the build no longer has."""
    wanted, have = set(profiles), set(built)
    stored: dict[str, tuple[str, str, str]] = {}
    for record in ledger:
        if record.kind != KIND:
            continue
        uid = str(record.uid)
        if record.outcome in STORED_OUTCOMES:
            stored[uid] = (str(record.profile), str(record.folder_uid), str(record.name))
        elif record.outcome == OutcomeKind.DELETED:
            stored.pop(uid, None)
    return {uid: where for uid, where in stored.items() if uid not in have and where[0] in wanted}


def plan_rules(
    targets: list[RuleGroupTarget],
    live: Mapping[str, dict[str, Any] | None],
    ledger: list[LedgerRecord],
    approvals: Approvals,
    folders: Mapping[str, bool],
    stale: Mapping[str, tuple[str, str, str]] | None = None,
) -> tuple[RuleGroupItem, ...]:
    """One item per target, then one per ``stale`` group Grafana still holds. ``live`` and ``folders`` are keyed
    by group uid and folder uid."""
    items = [_plan_group(t, live.get(t.uid), ledger, approvals, folders.get(t.folder_uid, True)) for t in targets]
    for uid, (profile, folder, title) in sorted((stale or {}).items()):
        state = live.get(uid)
        if state is None:
            continue
        provenance = provenance_of(state)
        if provenance:
            refusal = Refusal(f"{PROVENANCE_PREFIX}{uid}", f"group {title!r} has provenance {provenance!r}")
            items.append(RuleGroupItem(uid, profile, title, folder, "refused", None, state, (), (refusal,)))
            continue
        verdict = require(
            f"remove:rule-group:{uid}", f"rule group {title!r} is in Grafana but no longer built", uid, approvals
        )
        action: ResourceAction = "refused" if verdict.refusals else "delete"
        items.append(
            RuleGroupItem(uid, profile, title, folder, action, None, state, (), verdict.refusals, verdict.used)
        )
    return tuple(items)
