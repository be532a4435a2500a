"""What a pull request changes in the alert rules: alerts added or removed, and per alert its expression,
threshold, ``for`` and severity old → new — read from the rule files on both sides (``rules/<profile>.yml``, and the
Grafana-managed rule groups of a profile whose ruler is Grafana where they are committed).

An SLO change rewrites burn-rate alerts the dashboards never show; the reviewer sees them here. A change of the
numbers in an expression alone is a threshold change (``0.9 → 0.95``); any other change of the expression is shown
as the expression old → new. Pure: YAML texts in, lines out (the comment and the report escape them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import yaml

from dashgen.render import yamlcheck

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")


RuleChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class AlertChange:
    file: str
    alert: str
    kind: RuleChangeKind
    details: tuple[str, ...] = ()

    def line(self) -> str:
        what = f"alert {self.alert} ({self.file}) {self.kind}"
        return what + (": " + "; ".join(self.details) if self.details else "")


# A Grafana-managed alert's query keeps the Prometheus expression inside "(...) * 0 + 1" (``dashgen.rules.grafana``)
GRAFANA_WRAP = re.compile(r"\((?P<expr>.*)\) \* 0 \+ 1", re.DOTALL)


def _grafana_alert(rule: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Grafana-managed alert rule (file provisioning, or a ``GrafanaAlertRuleGroup``'s rule) in the Prometheus
    shape compared here: its title, the expression of query A, ``for`` and labels; a recording rule has none."""
    if "record" in rule or not isinstance(rule.get("data"), list) or "title" not in rule:
        return None
    query = next((d for d in rule["data"] if isinstance(d, Mapping) and d.get("refId") == "A"), {})
    model = query.get("model")
    expr = str(model.get("expr", "")) if isinstance(model, Mapping) else ""
    if wrapped := GRAFANA_WRAP.fullmatch(expr):
        expr = wrapped["expr"]
    return {"alert": str(rule["title"]), "expr": expr, "for": rule.get("for"), "labels": rule.get("labels") or {}}


def _groups(data: Any) -> list[Any]:
    """The rule groups of a parsed file: ``groups:`` (Prometheus, vmalert, Grafana's file provisioning), a
    PrometheusRule / VMRule's ``spec.groups``, or a ``List`` of grafana-operator ``GrafanaAlertRuleGroup``s."""
    if not isinstance(data, Mapping):
        return []
    if isinstance(data.get("items"), list):
        return [
            item["spec"]
            for item in data["items"]
            if isinstance(item, Mapping)
            and item.get("kind") == "GrafanaAlertRuleGroup"
            and isinstance(item.get("spec"), Mapping)
        ]
    if data.get("kind") == "GrafanaAlertRuleGroup" and isinstance(data.get("spec"), Mapping):
        return [data["spec"]]
    if isinstance(data.get("spec"), Mapping):
        data = data["spec"]
    groups = data.get("groups")
    return groups if isinstance(groups, list) else []


def alerts_of(text: str) -> dict[str, dict[str, Any]]:
    """Alert name (with its labels other than severity when two alerts share a name) -> the rule, of one rule file
    (Prometheus ``groups:``, a PrometheusRule / VMRule ``spec.groups``, or Grafana-managed rule groups as file
    provisioning or grafana-operator CRs write them); an unreadable file has none."""
    try:
        data = yamlcheck.load(text)
    except yaml.YAMLError:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for group in _groups(data):
        for rule in (group.get("rules") or []) if isinstance(group, Mapping) else []:
            if isinstance(rule, Mapping) and "alert" not in rule:
                rule = _grafana_alert(rule)
            if not isinstance(rule, Mapping) or "alert" not in rule:
                continue
            name = str(rule["alert"])
            if name in found:
                labels = {k: v for k, v in (rule.get("labels") or {}).items() if k != "severity"}
                name += " {" + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) + "}"
            found[name] = dict(rule)
    return found


def _severity(rule: Mapping[str, Any]) -> str:
    labels = rule.get("labels")
    return str(labels.get("severity", "")) if isinstance(labels, Mapping) else ""


def _expr_change(old: str, new: str) -> str | None:
    old, new = " ".join(old.split()), " ".join(new.split())
    if old == new:
        return None
    if NUMBER.sub("#", old) == NUMBER.sub("#", new):
        pairs = [(a, b) for a, b in zip(NUMBER.findall(old), NUMBER.findall(new), strict=True) if a != b]
        return "threshold " + ", ".join(f"{a} → {b}" for a, b in pairs)
    return f"expression {old} → {new}"


def _details(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    details = []
    if (expr := _expr_change(str(old.get("expr", "")), str(new.get("expr", "")))) is not None:
        details.append(expr)
    if str(old.get("for", "")) != str(new.get("for", "")):
        details.append(f"for {old.get('for') or '0s'} → {new.get('for') or '0s'}")
    if _severity(old) != _severity(new):
        details.append(f"severity {_severity(old) or 'none'} → {_severity(new) or 'none'}")
    return tuple(details)


def rule_changes(old_files: Mapping[str, str], new_files: Mapping[str, str]) -> list[AlertChange]:
    """Every alert added, removed or changed between two sets of rule files (file name -> YAML text), each change
    once: the same change of a profile's alert in several files of it (``<profile>.grafana-alerting.yaml`` and
    ``<profile>.grafanaalertrulegroup.yaml``, a ``.yml`` and its PrometheusRule) is one line naming them all."""
    merged: dict[tuple[str, str, str, tuple[str, ...]], AlertChange] = {}
    for change in _changes(old_files, new_files):
        key = (change.file.split(".", 1)[0], change.alert, change.kind, change.details)
        seen = merged.get(key)
        merged[key] = change if seen is None else replace(seen, file=f"{seen.file}, {change.file}")
    return list(merged.values())


def _changes(old_files: Mapping[str, str], new_files: Mapping[str, str]) -> list[AlertChange]:
    changes: list[AlertChange] = []
    for file in sorted(set(old_files) | set(new_files)):
        old, new = alerts_of(old_files.get(file, "")), alerts_of(new_files.get(file, ""))
        for name in sorted(set(old) | set(new)):
            if name not in old:
                rule = new[name]
                summary = (f"severity {_severity(rule) or 'none'}, for {rule.get('for') or '0s'}",)
                changes.append(AlertChange(file, name, "added", (*summary, f"expression {rule.get('expr', '')}")))
            elif name not in new:
                changes.append(AlertChange(file, name, "removed"))
            elif details := _details(old[name], new[name]):
                changes.append(AlertChange(file, name, "changed", details))
    return changes
