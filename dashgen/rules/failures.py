"""Alerts from the failure-mode catalogue (``dashgen.catalogue``): the rows whose PromQL the catalogue builds become
alert rules here, and :func:`stamp` gives every alert of every group its row's severity, hold, catalogue labels
(component, layer, failure, cause, look), runbook text and docs anchor. An alert no row writes is refused, so no
alert exists outside the catalogue, and a builder whose severity or hold disagrees with its row is an error."""

from __future__ import annotations

import re
from dataclasses import replace

from dashgen.catalogue import FailureMode, alert_labels, by_alert, entity_labels, rows_for
from dashgen.deployment.model import DEFAULT_LABELS
from dashgen.deployment.profile import Profile
from dashgen.rules.model import AlertRule


def _entity_text(profile: Profile, row: FailureMode) -> str:
    names = entity_labels(profile, row)
    if not names or row.scope == "cluster":
        return "Cluster-wide" + (
            ", " + ", ".join(f"{role} {{{{ $labels.{name} }}}}" for role, name in zip(row.entity, names, strict=True))
            if names
            else ""
        )
    return ", ".join(
        f"{role.replace('_', ' ')} {{{{ $labels.{name} }}}}" for role, name in zip(row.entity, names, strict=True)
    )


def description(profile: Profile, row: FailureMode) -> str:
    """The description of a catalogue-built alert: entity, test, hold, why, likely cause, where to look."""
    return (
        f"{_entity_text(profile, row)}: {row.test} (value {{{{ $value }}}}), for {row.hold}. Why this test: "
        f"{row.test_reason}. Why {row.hold}: {row.hold_reason}. Likely cause: {row.cause}. Open: {row.look}."
    )


def catalogue_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """The alerts of the profile's rows whose expression the catalogue builds."""
    return tuple(
        AlertRule(
            alert=row.alert,
            expr=row.expr(profile),
            for_=row.hold,
            severity=row.severity,
            summary=(row.summary or row.alert).replace("{deployment}", profile.deployment or profile.name),
            description=description(profile, row),
        )
        for row in rows_for(profile)
        if row.expr is not None
    )


def stamp(rule: AlertRule) -> AlertRule:
    """``rule`` as its catalogue row says: hold, severity, catalogue labels, first steps, runbook anchor. KeyError
    when no row writes the alert; ValueError when the builder's hold or severity disagrees with the row."""
    row = by_alert(rule.alert)
    for field, built, listed in (("for", rule.for_, row.hold), ("severity", rule.severity, row.severity)):
        if built and built != listed:
            raise ValueError(
                f"{rule.alert}: {field} {built!r} in dashgen/rules but {listed!r} in its catalogue row {row.id}"
            )
    return replace(
        rule,
        for_=row.hold,
        severity=row.severity,
        labels=alert_labels(row) + tuple(rule.labels),
        first_steps=row.runbook,
        anchor=row.anchor,
    )


_LABEL_REFERENCE = re.compile(r"\$labels\.([A-Za-z_][A-Za-z0-9_]*)")


def in_profile_labels(profile: Profile, rule: AlertRule) -> AlertRule:
    """``rule`` whose summary, description and first steps read each label role by the profile's name for it: the
    rows and builders write a role's default name (``{{ $labels.node }}``), which renders empty on a deployment
    whose nodes are labelled ``host``, and the alert would no longer say what is wrong (S31)."""
    renamed = {
        default: profile.label(role) for role, default in DEFAULT_LABELS.items() if profile.label(role) != default
    }
    if not renamed:
        return rule

    def named(text: str) -> str:
        return _LABEL_REFERENCE.sub(lambda m: "$labels." + renamed.get(m.group(1), m.group(1)), text)

    return replace(
        rule, summary=named(rule.summary), description=named(rule.description), first_steps=named(rule.first_steps)
    )
