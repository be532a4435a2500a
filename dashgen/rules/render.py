"""Profile -> rule groups -> deterministic YAML bytes, one file per profile (``rules/<profile>.yml``).

The YAML is written by a small emitter for this fixed structure (groups / rules / labels /
annotations): every scalar is a JSON string, which YAML reads as a double-quoted scalar, so the
output needs no YAML library and loads in Prometheus (``rule_files:``) and vmalert (``-rule=``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from dashgen_queries.gpu import GpuSource, gpu_source
from dashgen_queries.sglang_slo import check_objective

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.rules.alerts import collection_alerts, engine_alerts, gpu_alerts, slo_alerts, target_missing_alerts
from dashgen.rules.collector import collector_alerts
from dashgen.rules.gpu_health import gpu_missing_alert, health_alerts
from dashgen.rules.jobs import job_slo_alerts, job_slo_records, stuck_alerts
from dashgen.rules.model import AlertRule, RecordingRule, RuleGroup
from dashgen.rules.recording import gpu_records, inventory_records, slo_records

RULES_DIR = Path("rules")


def rule_groups(profile: Profile) -> tuple[RuleGroup, ...]:
    """The profile's rule groups. Recording rules come first in the group whose alerts read them,
    so an alert sees the series recorded in the same evaluation. Group names carry the profile, and
    every rule the deployment label (S21), so the rule files of several deployments load into one
    Prometheus or vmalert without two rules writing the same series."""
    groups = [("inventory", inventory_records(profile))]
    engine = profile.exported("sglang")
    if engine and profile.has_kind(TEXT):
        check_objective(profile)
        groups.append(("slo", slo_records(profile) + slo_alerts(profile)))
    if engine and profile.has_kind(VIDEO):  # S25: the job SLO and stuck alerts, never TTFT / TPOT / tokens
        check_objective(profile)
        groups.append(("jobs", job_slo_records(profile) + job_slo_alerts(profile) + stuck_alerts(profile)))
    source = gpu_source(profile)
    if source is not None:
        groups.append(("gpu", _collected_records(profile, source) + gpu_alerts(profile, source)
                       + (gpu_missing_alert(profile, source),) + health_alerts(profile)))
    if engine:  # a video-only deployment keeps the scrape alert; the others read token series
        groups.append(("engine", tuple(a for a in engine_alerts(profile)
                                       if profile.has_kind(TEXT) or a.alert == "EngineMetricsScrapeFailing")))
    targets = collection_alerts(profile) + target_missing_alerts(profile)
    if targets:
        groups.append(("targets", targets))
    groups.append(("collector", collector_alerts(profile)))
    return tuple(RuleGroup(f"dashgen-{profile.name}-{name}", tuple(_scoped(profile, rule) for rule in rules))
                 for name, rules in groups)


def _collected_records(profile: Profile, source: GpuSource) -> tuple[RecordingRule, ...]:
    """The GPU recording rules whose metrics the source collects (a series that cannot exist is not recorded)."""
    metrics = {*source.metrics.values(), *source.memory_total_metrics}
    kept: list[RecordingRule] = []
    dropped: list[str] = []
    for rule in gpu_records(profile, source):
        reads = [name for name in (*metrics, *dropped) if re.search(rf"\b{re.escape(name)}\b", rule.expr)]
        if source.missing(reads) or set(reads) & set(dropped):
            dropped.append(rule.record)
        else:
            kept.append(rule)
    return tuple(kept)


def _scoped(profile: Profile, rule: RecordingRule | AlertRule) -> RecordingRule | AlertRule:
    """The rule with the deployment label, and at most a warning for a retired deployment (it never pages)."""
    labels = ((profile.label("deployment"), profile.deployment),) if profile.deployment else ()
    rule = replace(rule, labels=labels + tuple(rule.labels))
    if isinstance(rule, AlertRule) and profile.retired and rule.severity == "critical":
        rule = replace(rule, severity="warning")
    return rule


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _mapping(lines: list[str], key: str, items: list[tuple[str, str]], indent: str) -> None:
    if not items:
        return
    lines.append(f"{indent}{key}:")
    lines.extend(f"{indent}  {name}: {_q(value)}" for name, value in items)


def _rule_lines(rule: RecordingRule | AlertRule) -> list[str]:
    pad = "        "
    if isinstance(rule, RecordingRule):
        lines = [f"      - record: {_q(rule.record)}", f"{pad}expr: {_q(rule.expr)}"]
        _mapping(lines, "labels", list(rule.labels), pad)
        return lines
    lines = [f"      - alert: {_q(rule.alert)}", f"{pad}expr: {_q(rule.expr)}", f"{pad}for: {_q(rule.for_)}"]
    _mapping(lines, "labels", [("severity", rule.severity), *rule.labels], pad)
    _mapping(lines, "annotations",
             [("summary", rule.summary), ("description", rule.description), ("runbook", rule.runbook)], pad)
    return lines


def render_rule_file(profile: Profile) -> bytes:
    """The YAML document of one profile's rules, byte-for-byte deterministic."""
    lines = [
        f"# Generated by dashgen from profiles/{profile.name}.toml: do not edit; run `dashgen rules`.",
        "# Load with Prometheus `rule_files:` or vmalert `-rule=`. Runbooks: docs/alerts.md.",
        "groups:",
    ]
    for group in rule_groups(profile):
        lines.append(f"  - name: {_q(group.name)}")
        lines.append("    rules:")
        for rule in group.rules:
            lines.extend(_rule_lines(rule))
    return ("\n".join(lines) + "\n").encode("utf-8")


def render_rule_files(profiles: list[Profile], out_dir: Path = RULES_DIR) -> dict[Path, bytes]:
    """``{out_dir/<profile>.yml: bytes}`` for every profile; pure (for ``dashgen check`` staleness)."""
    return {out_dir / f"{profile.name}.yml": render_rule_file(profile) for profile in profiles}
