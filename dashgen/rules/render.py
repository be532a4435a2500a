"""Profile -> rule groups -> deterministic YAML bytes, one file per profile (``rules/<profile>.yml``).

The YAML is written by dashgen's one emitter (``dashgen.render.yamlemit``): every scalar is a JSON string,
which YAML reads as a double-quoted scalar, so the output needs no YAML library and loads in Prometheus
(``rule_files:``) and vmalert (``-rule=``). The same groups are also written as a prometheus-operator
``PrometheusRule`` and as a vmalert groups file (``dashgen rules --format``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dashgen_queries import now_records, request_rates, stage_bands, stage_rates
from dashgen_queries.gpu import GpuSource, gpu_source
from dashgen_queries.nodata import RULE_INTERVAL_SECONDS
from dashgen_queries.sglang_slo import check_objective

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.exporters.availability import adapt
from dashgen.render.memo import Memo, profile_key
from dashgen.render.scope import save_known_names
from dashgen.render.yamlemit import dump
from dashgen.rules.alerts import (
    client_slo_alerts,
    client_slo_records,
    collection_alerts,
    engine_alerts,
    gpu_alerts,
    slo_alerts,
    target_missing_alerts,
)
from dashgen.rules.collector import collector_alerts
from dashgen.rules.failures import catalogue_alerts, in_profile_labels, stamp
from dashgen.rules.gpu_health import gpu_missing_alerts, health_alerts
from dashgen.rules.grafana import file_provisioning, grafana_groups, operator_groups, prometheus_side
from dashgen.rules.incident import incident_alerts
from dashgen.rules.jobs import job_slo_alerts, job_slo_records, stuck_alerts
from dashgen.rules.links import LinkBase, alert_links, link_base
from dashgen.rules.model import AlertRule, RecordingRule, RuleGroup
from dashgen.rules.recording import (
    first_screen_records,
    gpu_records,
    gpu_window_records,
    inventory_records,
    layer_health_records,
    request_rate_records,
    slo_records,
    stage_band_records,
    stage_reuse_records,
)

RULES_DIR = Path("rules")
GPU_WINDOW_GROUP = "gpu-window"  # the per-GPU table's recorded statistics (queries.gpu_window)
REQUEST_RATES_GROUP = request_rates.GROUP  # the SLO group's request rates (queries.request_rates)
STAGE_REUSE_GROUP = stage_rates.GROUP  # the per-stage prefix reuse rates (queries.stage_rates)
STAGE_BANDS_GROUP = stage_bands.GROUP  # the per-stage gauges' bands, at the engine's sample interval
NOW_GROUP = now_records.GROUP  # the first screen's lists and counts (queries.now_records)
Rule = RecordingRule | AlertRule

# A profile's content -> its rule groups: frozen records all the way down, so every caller shares one answer. The
# rule files, their docs, the alert links, check and the demo each ask for the same profile's groups again.
_GROUPS: Memo[str, tuple[RuleGroup, ...]] = Memo("rule groups", 16)


def rule_groups(profile: Profile) -> tuple[RuleGroup, ...]:
    """The profile's rule groups. Recording rules come first in the group whose alerts read them,
    so an alert sees the series recorded in the same evaluation. Group names carry the profile, and
    every rule the deployment label (S21), so the rule files of several deployments load into one
    Prometheus or vmalert without two rules writing the same series. Computed once per profile content in a
    process (the groups depend on the profile alone; a profile that fails its checks is never remembered)."""
    key = profile_key(profile)
    hit = _GROUPS.get(key)
    if hit is None:
        hit = _rule_groups(profile)
        _GROUPS.put(key, hit)
    return hit


def _rule_groups(profile: Profile) -> tuple[RuleGroup, ...]:
    groups: list[tuple[str, tuple[RecordingRule | AlertRule, ...]]] = [("inventory", inventory_records(profile))]
    layer_health = layer_health_records(profile)
    if layer_health:
        groups.append(("layer-health", layer_health))
    # apart from layer-health, whose records its not-ok cells read: a rule reads what another group recorded
    groups.append((NOW_GROUP, first_screen_records(profile)))
    engine = profile.exported("sglang")
    if engine and profile.has_kind(TEXT):
        check_objective(profile)
        groups.append(("slo", slo_records(profile) + slo_alerts(profile)))
        # apart from the alerts, like gpu-window: what the SLO group's graphs read, replayed alone by the demo
        groups.append((REQUEST_RATES_GROUP, request_rate_records(profile)))
        groups.append((STAGE_REUSE_GROUP, stage_reuse_records(profile)))
        groups.append((STAGE_BANDS_GROUP, stage_band_records(profile)))
    if engine and profile.has_kind(VIDEO):  # S25: the job SLO and stuck alerts, never TTFT / TPOT / tokens
        check_objective(profile)
        groups.append(("jobs", job_slo_records(profile) + job_slo_alerts(profile) + stuck_alerts(profile)))
    client = client_slo_records(profile) + client_slo_alerts(profile)
    if client:  # S33: the SLO as the client sees it, at the gateway
        check_objective(profile)
        groups.append(("client-slo", client))
    source = gpu_source(profile)
    if source is not None:
        groups.append(
            (
                "gpu",
                _collected_records(profile, source)
                + gpu_alerts(profile, source)
                + gpu_missing_alerts(profile)
                + health_alerts(profile),
            )
        )
        # apart from the alerts: the demo and the bench replay this group alone, over the whole window
        groups.append((GPU_WINDOW_GROUP, gpu_window_records(profile, source)))
    if engine:  # a video-only deployment keeps the scrape alert; the others read token series
        groups.append(
            (
                "engine",
                tuple(
                    a
                    for a in engine_alerts(profile)
                    if profile.has_kind(TEXT) or a.alert == "EngineMetricsScrapeFailing"
                ),
            )
        )
    targets = collection_alerts(profile) + target_missing_alerts(profile)
    if targets:
        groups.append(("targets", targets))
    groups.append(("collector", collector_alerts(profile)))
    incident = incident_alerts(profile)
    if incident:  # S31-S33: the failure classes the drills found silent
        groups.append(("incident", incident))
    failures = catalogue_alerts(profile)
    if failures:  # the catalogue's rows whose PromQL it builds itself
        groups.append(("failures", failures))
    groups = [
        (name, tuple(in_profile_labels(profile, stamp(r)) if isinstance(r, AlertRule) else r for r in rules))
        for name, rules in groups
    ]
    deployed = [(name, as_deployed(profile, rules)) for name, rules in groups]
    return tuple(
        RuleGroup(f"dashgen-{profile.name}-{name}", tuple(_scoped(profile, rule) for rule in rules))
        for name, rules in deployed
        if rules
    )


def as_deployed(profile: Profile, rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The rules with the names the profile's stated exporter versions and scrape paths write, without the rules
    that read a series they never write (an alert that could never fire is not written; S35)."""
    stated = {name: source.stated for name, source in profile.sources.items() if source.exported}
    kept: list[Rule] = []
    for rule in rules:
        adapted = adapt(rule.expr, stated)
        if not adapted.missing:
            kept.append(rule if adapted.expr == rule.expr else replace(rule, expr=adapted.expr))
    return tuple(kept)


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


def _rule_dict(rule: RecordingRule | AlertRule, links: LinkBase) -> dict[str, Any]:
    if isinstance(rule, RecordingRule):
        data: dict[str, Any] = {"record": rule.record, "expr": rule.expr}
        if rule.labels:
            data["labels"] = dict(rule.labels)
        return data
    data = {
        "alert": rule.alert,
        "expr": rule.expr,
        "for": rule.for_,
        "labels": {"severity": rule.severity, **dict(rule.labels)},
    }
    data["annotations"] = {
        "summary": rule.summary,
        "description": rule.description,
        # the on-call's first steps; the runbook section itself is runbook_url (a link Alertmanager can open)
        **({"first_steps": rule.first_steps} if rule.first_steps else {}),
        **alert_links(data, links, rule.anchor),
    }
    return data


def rule_groups_data(profile: Profile) -> list[dict[str, Any]]:
    """The profile's rule groups as plain data (Prometheus ``groups:``, also the PrometheusRule ``spec``)."""
    groups = rule_groups(profile)
    links = link_base(profile, groups)
    # The interval is written, not left to the evaluator's default: the recorded windows and the per-interval GPU
    # statistics are built for one evaluation every RULE_INTERVAL_SECONDS (an evaluator set to 2m would skip samples).
    # The bands record each stored sample of the gauges they band: the engine's sample interval.
    interval = f"{RULE_INTERVAL_SECONDS:g}s"
    intervals = {f"dashgen-{profile.name}-{STAGE_BANDS_GROUP}": stage_bands.interval(profile)}
    data = [
        {
            "name": group.name,
            "interval": intervals.get(group.name, interval),
            "rules": [_rule_dict(rule, links) for rule in group.rules],
        }
        for group in groups
    ]
    save_known_names()  # the links' metric names, for the next run
    return data


FORMATS = ("prometheus", "prometheus-operator", "vmalert", "vmrule", "grafana", "grafana-operator")
SUFFIX = {
    "prometheus": ".yml",
    "prometheus-operator": ".prometheusrule.yaml",
    "vmalert": ".vmalert.yml",
    "vmrule": ".vmrule.yaml",
    "grafana": ".grafana-alerting.yaml",
    "grafana-operator": ".grafanaalertrulegroup.yaml",
}


def render_rule_file(
    profile: Profile,
    fmt: str = "prometheus",
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    grafana: GrafanaTarget | None = None,
    read_back: bool = True,
) -> bytes:
    """One profile's rules, byte-for-byte deterministic, as a Prometheus rule file (``rule_files:``), a
    prometheus-operator ``PrometheusRule`` (``monitoring.coreos.com/v1``; ``labels`` are what the Prometheus
    ``ruleSelector`` matches, e.g. ``release: kube-prometheus-stack``) or a vmalert ``-rule=`` file (the
    same groups, each with ``type: prometheus``) or a vm-operator ``VMRule`` (``operator.victoriametrics.com/v1beta1``,
    ``spec.groups`` the same groups; the operator's VMAlert selects it by its labels)."""
    source = f"Generated by dashgen from profiles/{profile.name}.toml: do not edit; run `dashgen rules`."
    if fmt in GRAFANA_FORMATS:
        return grafana_rule_file(profile, fmt, source, namespace, labels, grafana or GrafanaTarget())
    groups = prometheus_side(rule_groups_data(profile), profile.dashboard.ruler)
    document: dict[str, Any]
    if fmt in ("prometheus-operator", "vmrule"):
        metadata: dict[str, Any] = {"name": f"dashgen-{profile.name}"}
        if namespace:
            metadata["namespace"] = namespace
        metadata["labels"] = {"app.kubernetes.io/managed-by": "dashgen", **dict(labels or {})}
        if fmt == "vmrule":
            document = {
                "apiVersion": "operator.victoriametrics.com/v1beta1",
                "kind": "VMRule",
                "metadata": metadata,
                "spec": {"groups": groups},
            }
            comments = [source, "kubectl apply -f this file; the VMAlert's ruleSelector must match its labels."]
        else:
            document = {
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "PrometheusRule",
                "metadata": metadata,
                "spec": {"groups": groups},
            }
            comments = [source, "kubectl apply -f this file; the Prometheus ruleSelector must match its labels."]
    elif fmt == "vmalert":
        document = {"groups": [{"name": g["name"], "type": "prometheus", "rules": g["rules"]} for g in groups]}
        comments = [source, "Load with vmalert -rule=<this file> (-remoteWrite.url writes the recording rules back)."]
    elif fmt == "prometheus":
        document = {"groups": groups}
        comments = [source, "Load with Prometheus `rule_files:` or vmalert `-rule=`. Runbooks: docs/alerts.md."]
    else:
        raise ValueError(f"unknown rule format {fmt!r} (one of {', '.join(FORMATS)})")
    return dump(document, comments, read_back).encode("utf-8")


def render_rule_files(
    profiles: list[Profile],
    out_dir: Path = RULES_DIR,
    fmt: str = "prometheus",
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    grafana: GrafanaTarget | None = None,
) -> dict[Path, bytes]:
    """``{out_dir/<profile><suffix>: bytes}`` for every profile (``.yml`` for Prometheus); pure (for
    ``dashgen check`` staleness)."""
    return {
        out_dir / f"{profile.name}{SUFFIX[fmt]}": render_rule_file(profile, fmt, namespace, labels, grafana)
        for profile in profiles
    }


GRAFANA_FORMATS = ("grafana", "grafana-operator")


@dataclass(frozen=True)
class GrafanaTarget:
    """Where Grafana-managed rules go in a file or CR: the folder and the Prometheus data source of the Grafana."""

    folder_uid: str = "dashgen-alerts"
    folder_title: str = "dashgen alerts"
    datasource_uid: str = "prometheus"


def profile_grafana_groups(profile: Profile, target: GrafanaTarget) -> list[dict[str, Any]]:
    """The Grafana rule groups of a profile under its ruler (``dashgen.rules.grafana``)."""
    return grafana_groups(
        rule_groups_data(profile),
        profile.dashboard.ruler,
        profile=profile.name,
        folder_uid=target.folder_uid,
        datasource_uid=target.datasource_uid,
    )


def grafana_rule_file(
    profile: Profile,
    fmt: str,
    source: str,
    namespace: str | None,
    labels: Mapping[str, str] | None,
    target: GrafanaTarget,
) -> bytes:
    """Grafana's alerting file provisioning (``grafana``) or a ``List`` of grafana-operator
    ``GrafanaAlertRuleGroup`` resources (``grafana-operator``, selecting the Grafana by ``labels``)."""
    groups = profile_grafana_groups(profile, target)
    ruler = f"[dashboard] ruler = {profile.dashboard.ruler!r}" + (
        ": Grafana evaluates nothing of this profile" if not groups else ""
    )
    if fmt == "grafana":
        document = file_provisioning(groups, target.folder_title)
        comments = [source, ruler, "Put this file under Grafana's provisioning/alerting/ folder."]
    else:
        items = operator_groups(groups, profile.name, namespace, dict(labels or {"dashboards": "grafana"}))
        document = {"apiVersion": "v1", "kind": "List", "items": items}
        comments = [source, ruler, "kubectl apply -f this file; each CR's instanceSelector must match the Grafana."]
    return dump(document, comments).encode("utf-8")
