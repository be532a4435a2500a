"""Grafana-managed alert rules from the same rule groups as the Prometheus / vmalert files (pure).

The conversion reads only the rendered rule-group records (``rule_groups_data``: ``{"name", "rules": [{"alert" |
"record", "expr", "for", "labels", "annotations"}]}``), never a particular alert, so every rule the groups hold
today or later converts the same way:

* an alerting rule becomes a Grafana alert rule whose query ``A`` is ``(<expr>) * 0 + 1`` (an instant PromQL
  query on the context's data source: every series the Prometheus expression returns is 1, any other is absent)
  and whose condition ``C`` is the server-side threshold ``A > 0``: exactly the series Prometheus would fire
  for fire, whatever the values of the expression (a ``< 0.5`` comparison returns values that may be 0 or
  negative). ``for``, labels and annotations are kept; no data is ``OK`` (an absent series is not an alert in
  Prometheus either) and an evaluation error is ``Error``;
* a recording rule becomes a Grafana recording rule (``record: {metric, from: "A", targetDatasourceUid}``) that
  writes to the same data source, so the alerts and the dashboards read the series they read under Prometheus.

``ruler`` (a profile's ``[dashboard] ruler``) says who evaluates what, never the same rule twice:
``prometheus`` (the default) keeps everything in the rule files; ``grafana`` moves everything to Grafana;
``both`` keeps the recording rules in the rule files (written where the dashboards read them) and moves the alerts
to Grafana. :func:`prometheus_side` is what the rule files keep, :func:`grafana_groups` what Grafana gets.

Grafana names an alert by its title (the ``alertname`` label) and refuses two rules of one title in a folder, so
the title is the alert's name and the profile (``SloErrorBudgetFastBurn (pd-128)``), with ``#2``, ``#3`` for a
name used by several rules of the profile. Rule uids derive from the profile, group and title: stable across
releases, within Grafana's 40 characters.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from dashgen_queries.nodata import RULE_INTERVAL_SECONDS

from dashgen.deployment.dashboard_section import RULERS

__all__ = ["RULERS", "file_provisioning", "grafana_groups", "group_sha", "operator_groups", "prometheus_side"]

EXPRESSION_UID = "__expr__"
RULE_UID_PREFIX = "dga-"
GROUP_UID_PREFIX = "dgr-"
QUERY_RANGE_SECONDS = 600
# The keys of a rule dashgen sends and compares on read-back (Grafana adds id, orgID, updated, provenance...).
RULE_KEYS = (
    "uid",
    "title",
    "condition",
    "data",
    "for",
    "labels",
    "annotations",
    "noDataState",
    "execErrState",
    "isPaused",
    "record",
)


def _uid(prefix: str, *parts: str) -> str:
    return prefix + hashlib.sha256("/".join(parts).encode()).hexdigest()[:24]


def group_uid(profile: str, group: str) -> str:
    """The ledger's uid of a rule group (Grafana names groups by folder and title only)."""
    return _uid(GROUP_UID_PREFIX, profile, group)


def seconds(duration: str) -> int:
    """``1m`` / ``30s`` / ``1h`` as seconds (the interval of a Grafana rule group)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(float(duration[:-1]) * units[duration[-1]]) if duration and duration[-1] in units else int(duration)


def prometheus_side(groups: list[dict[str, Any]], ruler: str) -> list[dict[str, Any]]:
    """The rule groups the Prometheus / vmalert files keep under ``ruler`` (empty groups left out)."""
    if ruler == "prometheus":
        return groups
    if ruler == "grafana":
        return []
    kept = [{**g, "rules": [r for r in g["rules"] if "record" in r]} for g in groups]
    return [g for g in kept if g["rules"]]


def _query(expr: str, datasource_uid: str) -> dict[str, Any]:
    return {
        "refId": "A",
        "queryType": "",
        "relativeTimeRange": {"from": QUERY_RANGE_SECONDS, "to": 0},
        "datasourceUid": datasource_uid,
        "model": {"refId": "A", "expr": expr, "instant": True, "range": False, "editorMode": "code"},
    }


def _threshold() -> dict[str, Any]:
    return {
        "refId": "C",
        "queryType": "",
        "relativeTimeRange": {"from": 0, "to": 0},
        "datasourceUid": EXPRESSION_UID,
        "model": {
            "refId": "C",
            "type": "threshold",
            "expression": "A",
            "datasource": {"type": "__expr__", "uid": EXPRESSION_UID},
            "conditions": [{"evaluator": {"type": "gt", "params": [0]}}],
        },
    }


def _titles(names: list[str], profile: str) -> list[str]:
    seen: Counter[str] = Counter()
    titles = []
    for name in names:
        seen[name] += 1
        titles.append(f"{name} ({profile})" + (f" #{seen[name]}" if seen[name] > 1 else ""))
    return titles


def _rule(raw: dict[str, Any], title: str, group: str, profile: str, folder_uid: str, ds: str) -> dict[str, Any]:
    base: dict[str, Any] = {
        "uid": _uid(RULE_UID_PREFIX, profile, group, title),
        "title": title,
        "ruleGroup": group,
        "folderUID": folder_uid,
        "labels": dict(raw.get("labels") or {}),
        "isPaused": False,
    }
    if "record" in raw:
        return {
            **base,
            "condition": "A",
            "data": [_query(str(raw["expr"]), ds)],
            "for": "0s",
            "annotations": {},
            "noDataState": "OK",
            "execErrState": "Error",
            "record": {"metric": str(raw["record"]), "from": "A", "targetDatasourceUid": ds},
        }
    return {
        **base,
        "condition": "C",
        "data": [_query(f"({raw['expr']}) * 0 + 1", ds), _threshold()],
        "for": str(raw.get("for") or "0s"),
        "annotations": dict(raw.get("annotations") or {}),
        "noDataState": "OK",
        "execErrState": "Error",
    }


def grafana_groups(
    groups: list[dict[str, Any]],
    ruler: str,
    *,
    profile: str,
    folder_uid: str,
    datasource_uid: str,
) -> list[dict[str, Any]]:
    """The Grafana rule groups (the provisioning API's ``AlertRuleGroup``) of the rule groups under ``ruler``, each
    evaluated at the interval its rule group states (dashgen's own groups state ``RULE_INTERVAL_SECONDS``, which a
    group that states none gets too)."""
    if ruler == "prometheus":
        return []
    out = []
    for group in groups:
        rules = [r for r in group["rules"] if ruler == "grafana" or "alert" in r]
        if not rules:
            continue
        names = [str(r.get("alert") or r.get("record")) for r in rules]
        titles = _titles(names, profile)
        converted = [
            _rule(raw, title, group["name"], profile, folder_uid, datasource_uid)
            for raw, title in zip(rules, titles, strict=True)
        ]
        out.append(
            {
                "title": group["name"],
                "folderUid": folder_uid,
                "interval": seconds(group["interval"]) if group.get("interval") else RULE_INTERVAL_SECONDS,
                "rules": converted,
            }
        )
    return out


def rule_view(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule as compared: only the keys dashgen sends (Grafana adds ids, timestamps and provenance)."""
    view = {key: rule[key] for key in RULE_KEYS if key in rule and rule[key] is not None}
    view.setdefault("labels", {})
    view.setdefault("annotations", {})
    view.setdefault("isPaused", False)
    return view


def group_sha(group: dict[str, Any]) -> str:
    """SHA-256 of a rule group's title, interval and rules as compared (:func:`rule_view`), in uid order."""
    rules = sorted((rule_view(r) for r in group.get("rules") or []), key=lambda r: str(r.get("uid")))
    body = {"title": group.get("title"), "interval": group.get("interval"), "rules": rules}
    encoded = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def file_provisioning(groups: list[dict[str, Any]], folder_title: str, org_id: int = 1) -> dict[str, Any]:
    """Grafana's alerting file-provisioning document (``apiVersion: 1``; the folder by title, the interval as a
    duration), as the provisioning API's export writes it."""
    return {
        "apiVersion": 1,
        "groups": [
            {
                "orgId": org_id,
                "name": g["title"],
                "folder": folder_title,
                "interval": f"{g['interval']}s",
                "rules": [rule_view(r) for r in g["rules"]],
            }
            for g in groups
        ],
    }


def operator_groups(
    groups: list[dict[str, Any]], profile: str, namespace: str | None, instance_labels: dict[str, str]
) -> list[dict[str, Any]]:
    """One grafana-operator ``GrafanaAlertRuleGroup`` per group (``grafana.integreatly.org/v1beta1``; its CRD
    takes ``record`` for a recording rule and the folder by ``folderUID``)."""
    out = []
    for g in groups:
        metadata: dict[str, Any] = {"name": g["title"][:63].rstrip("-")}
        if namespace:
            metadata["namespace"] = namespace
        metadata["labels"] = {"app.kubernetes.io/managed-by": "dashgen", "dashgen.io/profile": profile}
        rules = [rule_view(r) for r in g["rules"]]
        out.append(
            {
                "apiVersion": "grafana.integreatly.org/v1beta1",
                "kind": "GrafanaAlertRuleGroup",
                "metadata": metadata,
                "spec": {
                    "name": g["title"],
                    "instanceSelector": {"matchLabels": dict(instance_labels)},
                    "folderUID": g["folderUid"],
                    "interval": f"{g['interval']}s",
                    "rules": rules,
                },
            }
        )
    return out
