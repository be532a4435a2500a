"""Helpers the catalogue's row modules share: what a row applies to, what it reads, its demo fault, and the per-node
conditions of the health states whose condition is not the row's alert expression."""

from __future__ import annotations

from typing import Any

from dashgen_queries import dcgm, health
from dashgen_queries import mooncake as mc
from dashgen_queries.gpu import (
    CLOCK_EVENT_REASONS,
    HW_SLOWDOWN_BITS,
    POWER_BITS,
    THERMAL_BITS,
    gpu_clock_event_reasons,
    gpu_source,
)
from dashgen_queries.inventory import node_to_replica
from dashgen_queries.sglang import restarted_ranks
from dashgen_queries.sglang_slo import stalled_stages

from dashgen.catalogue.model import Applies, Component, DemoFault, Entity, FailureMode, Layer, Read, Severity
from dashgen.deployment.profile import TEXT, VIDEO, Profile


def exports(*sources: str, text: bool = False, video: bool = False) -> Applies:
    """The row applies where the profile exports every one of ``sources`` (and has a text / video pool)."""

    def applies(profile: Profile) -> bool:
        if text and not profile.has_kind(TEXT):
            return False
        if video and not profile.has_kind(VIDEO):
            return False
        return all(profile.exported(source) for source in sources)

    return applies


def dcgm_field(*fields: str) -> Applies:
    """DCGM exported and its field list collects every one of ``fields`` (S22: never alert on a field not collected)."""
    return lambda profile: profile.exported("dcgm") and all(dcgm.collects(profile, f) for f in fields)


def reads(source: str, *names: str) -> tuple[Read, ...]:
    return tuple(Read(source, name) for name in names)


def fault(scenario: str, shows: str) -> DemoFault:
    return DemoFault(scenario, shows)


def row(
    component: Component,
    id: str,
    alert: str,
    test: str,
    test_reason: str,
    hold: str,
    hold_reason: str,
    severity: Severity,
    cause: str,
    look: str,
    runbook: str,
    demo: DemoFault,
    *,
    layer: Layer,
    reads: tuple[Read, ...],
    entity: tuple[Entity, ...],
    applies: Applies,
    **extra: Any,
) -> FailureMode:
    """A row of ``component``: the fields every row states in the order a row reads (what, its test and hold,
    severity, the on-call's cause, row to open and first steps, its demo fault), the rest by name. A component's
    builder (``hardware._gpu_row``) passes what its rows share."""
    return FailureMode(
        id=id,
        alert=alert,
        component=component,
        layer=layer,
        reads=reads,
        entity=entity,
        test=test,
        test_reason=test_reason,
        hold=hold,
        hold_reason=hold_reason,
        severity=severity,
        cause=cause,
        look=look,
        runbook=runbook,
        demo=demo,
        applies=applies,
        **extra,
    )


# -- paints: per-node conditions of the health states ----------------------------------------------------------------


def clock_reasons_collected(profile: Profile) -> bool:
    source = gpu_source(profile)
    return source is not None and not source.missing((source.metric(CLOCK_EVENT_REASONS),))


def thermal(profile: Profile) -> str:
    source = gpu_source(profile)
    assert source is not None
    reasons = f"({gpu_clock_event_reasons(profile, source, scoped=False, valid_only=True)})"
    return health.clock_events_set(profile, reasons, THERMAL_BITS)


def power(profile: Profile) -> str:
    source = gpu_source(profile)
    assert source is not None
    reasons = f"({gpu_clock_event_reasons(profile, source, scoped=False, valid_only=True)})"
    return health.clock_events_set(profile, reasons, POWER_BITS)


def hw_slowdown(profile: Profile) -> str:
    """GPUs whose HW slowdown bit is set and no power or thermal bit (those rows name the cause then)."""
    source = gpu_source(profile)
    assert source is not None
    reasons = f"({gpu_clock_event_reasons(profile, source, scoped=False, valid_only=True)})"
    keys = f"{profile.label('node')}, {profile.label('gpu')}"
    caused = health.clock_events_set(profile, reasons, THERMAL_BITS + POWER_BITS)
    return f"({health.clock_events_set(profile, reasons, HW_SLOWDOWN_BITS)}) unless on ({keys}) ({caused})"


def store_reset_served(profile: Profile) -> str:
    """The Store reset of a master, painted on every node whose replica the master serves."""
    return (
        f"({mc.replica_master(profile, node_to_replica(profile))} and on ({mc.MASTER_LABEL}) "
        f"({health.store_reset(profile)}))"
    )


def restarted(profile: Profile) -> str:
    return restarted_ranks(profile)


def stalled(profile: Profile) -> str:
    return stalled_stages(profile)
