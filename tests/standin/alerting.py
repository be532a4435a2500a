"""The stand-in's Grafana-managed alert rules: the alerting provisioning API (``/api/v1/provisioning``) as
grafana-api.md §15 describes Grafana's handlers (``pkg/services/ngalert/api/api_provisioning.go``,
``provisioning/alert_rules.go``, ``provisioning/validation/errors.go``, ``tooling/definitions``).

What it follows: rules stored by uid, grouped per (folder, group title) with the group's interval; ``PUT
/folder/:f/rule-groups/:g`` replaces the whole group (rules absent from the body are deleted) and echoes the body
with 200; every write stores a provenance, ``api`` unless the request carries ``X-Disable-Provenance`` (its
presence counts, not its value); changing a stored provenance other than none is refused with the errutil 403
``alerting.notifications.invalidProvenance`` (Grafana 12's older 500 text is not emulated); a rule without
``title``, ``condition`` or ``data`` is 400; a title used by another rule of the folder is 400; an unknown rule is
404 with an empty body; a missing group is 404 (body not read in Grafana's source: ``{"message": "..."}`` here).
There is no version field: Grafana offers no conditional write for rules.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

from .store import ApiError, OrgStore, errutil_error, now_rfc3339, plain_error, response_error

PROVENANCE_HEADER = "x-disable-provenance"


class EmptyNotFound(ApiError):
    """404 with an empty body (``response.Empty(404)``)."""

    def __init__(self) -> None:
        super().__init__(404, {})


@dataclass
class StoredRule:
    id: int
    data: dict[str, Any]  # the rule as sent, with uid, folderUID and ruleGroup set
    provenance: str
    updated: str


class AlertingStore:
    """The Grafana-managed rules of one organisation (guarded by the org store's lock)."""

    def __init__(self, org: OrgStore) -> None:
        self.org = org
        self.rules: dict[str, StoredRule] = {}
        self.intervals: dict[tuple[str, str], int] = {}
        self._ids = itertools.count(1)

    def _rule_body(self, rule: StoredRule) -> dict[str, Any]:
        body = copy.deepcopy(rule.data)
        body.update({"id": rule.id, "orgID": self.org.org_id, "updated": rule.updated})
        if rule.provenance:
            body["provenance"] = rule.provenance
        return body

    def _group_rules(self, folder: str, title: str) -> list[StoredRule]:
        return [
            r for r in self.rules.values() if r.data.get("folderUID") == folder and r.data.get("ruleGroup") == title
        ]

    def get_group(self, folder: str, title: str) -> dict[str, Any]:
        with self.org.lock:
            rules = self._group_rules(folder, title)
            if not rules:
                raise response_error(404, "rule group not found")
            return {
                "title": title,
                "folderUid": folder,
                "interval": self.intervals.get((folder, title), 60),
                "rules": [self._rule_body(r) for r in sorted(rules, key=lambda r: r.id)],
            }

    def _check_provenance(self, stored: str, wanted: str) -> None:
        if stored and stored != wanted:
            raise errutil_error(
                403,
                "alerting.notifications.invalidProvenance",
                f"Resource with provenance status '{stored}' cannot be changed to '{wanted or 'none'}'. "
                "Change the provenance of the resource or use the API that manages it",
            )

    def _validate(self, rule: Any, folder: str) -> None:
        if not isinstance(rule, dict):
            raise plain_error(400, "bad request data")
        for key in ("title", "condition", "data"):
            if not rule.get(key):
                raise response_error(400, f"invalid alert rule: {key} is required")
        if not 1 <= len(str(rule["title"])) <= 190:
            raise response_error(400, "invalid alert rule: title must be 1-190 characters")

    def put_group(self, folder: str, title: str, body: Any, headers: dict[str, str]) -> dict[str, Any]:
        if folder not in self.org.folders:
            raise response_error(404, "folder not found")
        if not isinstance(body, dict) or not isinstance(body.get("rules"), list):
            raise plain_error(400, "bad request data")
        provenance = "" if PROVENANCE_HEADER in headers else "api"
        with self.org.lock:
            for rule in body["rules"]:
                self._validate(rule, folder)
            sent = {str(r.get("uid") or ""): r for r in body["rules"]}
            titles = [str(r["title"]) for r in body["rules"]]
            others = {
                str(r.data.get("title"))
                for r in self.rules.values()
                if r.data.get("folderUID") == folder and r.data.get("uid") not in sent
            }
            if len(set(titles)) != len(titles) or set(titles) & others:
                raise response_error(400, "a rule with the same title already exists in the folder")
            current = self._group_rules(folder, title)
            for rule in current:  # deleted or changed: the provenance must allow it
                self._check_provenance(rule.provenance, provenance)
            for uid in sent:
                if uid in self.rules and self.rules[uid] not in current:
                    stored = self.rules[uid]
                    if stored.data.get("folderUID") != folder or stored.data.get("ruleGroup") != title:
                        raise response_error(400, "a rule with this uid already exists in another group")
            for rule in current:
                if rule.data.get("uid") not in sent:
                    del self.rules[str(rule.data["uid"])]
            now = now_rfc3339()
            for uid, raw in sent.items():
                data = copy.deepcopy(raw)
                data = {k: v for k, v in data.items() if k not in ("id", "orgID", "updated", "provenance")}
                data.update({"uid": uid or f"r{next(self._ids):08d}", "folderUID": folder, "ruleGroup": title})
                existing = self.rules.get(data["uid"])
                self.rules[data["uid"]] = StoredRule(
                    existing.id if existing else next(self._ids), data, provenance, now
                )
            self.intervals[(folder, title)] = int(body.get("interval") or 60)
        return body

    def delete_group(self, folder: str, title: str, headers: dict[str, str]) -> None:
        provenance = "" if PROVENANCE_HEADER in headers else "api"
        with self.org.lock:
            rules = self._group_rules(folder, title)
            if not rules:
                raise response_error(404, "rule group not found")
            for rule in rules:
                self._check_provenance(rule.provenance, provenance)
            for rule in rules:
                del self.rules[str(rule.data["uid"])]
            self.intervals.pop((folder, title), None)

    def get_rule(self, uid: str) -> dict[str, Any]:
        with self.org.lock:
            rule = self.rules.get(uid)
            if rule is None:
                raise EmptyNotFound()
            return self._rule_body(rule)

    def list_rules(self) -> list[dict[str, Any]]:
        with self.org.lock:
            return [self._rule_body(r) for r in sorted(self.rules.values(), key=lambda r: r.id)]

    def export_group(self, folder: str, title: str) -> dict[str, Any]:
        """The file-provisioning export (json) of a group."""
        group = self.get_group(folder, title)
        folder_title = self.org.folders[folder].title if folder in self.org.folders else folder
        keep = ("uid", "title", "condition", "data", "noDataState", "execErrState", "for", "annotations", "labels")
        return {
            "apiVersion": 1,
            "groups": [
                {
                    "orgId": self.org.org_id,
                    "name": title,
                    "folder": folder_title,
                    "interval": f"{group['interval']}s",
                    "rules": [
                        {**{k: r[k] for k in keep if k in r}, "isPaused": bool(r.get("isPaused"))}
                        for r in group["rules"]
                    ],
                }
            ],
        }

    # ------------------------------------------------------------------ people

    def person_edit(self, uid: str, mutate: Any, *, through_api: bool = False) -> dict[str, Any]:
        """A person changes a rule: in the UI (only a provenance-none rule is editable there; it stays none) or
        through the API without the header (the provenance becomes ``api``)."""
        with self.org.lock:
            rule = self.rules.get(uid)
            if rule is None:
                raise EmptyNotFound()
            if rule.provenance and not through_api:
                raise plain_error(403, "the rule is provisioned and cannot be edited in the UI")
            replaced = mutate(rule.data)
            if isinstance(replaced, dict):
                rule.data = replaced
            rule.updated = now_rfc3339()
            if through_api:
                rule.provenance = "api"
            return self._rule_body(rule)


def alerting_of(org: OrgStore) -> AlertingStore:
    """The alerting store of an organisation, created on first use."""
    with org.lock:
        store = getattr(org, "alerting", None)
        if store is None:
            store = AlertingStore(org)
            org.alerting = store  # type: ignore[attr-defined]
        return store
