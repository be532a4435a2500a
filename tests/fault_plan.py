"""The fault suite's plan (S36): which catalogue rows run on which suite profile (``SUITES``), the held-out faults
beside them, and how a suite's scenarios are laid out in the deployments of one production-like store
(:func:`suite_plan`). ``tests/test_fault_suite.py`` runs the plan. long-context-64's suite shares its store with the
incident drills (``tests/drills.py``): its drill scenarios are the drills' own deployments (one scenario each, which
the drills' checks of "on its entity only" need), and only the catalogue's faults are packed together."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dashgen_queries import dcgm

from dashgen.catalogue import FailureMode, conditions, rows_for
from dashgen.demo.faults import fault_of
from dashgen.demo.scenarios import INCIDENTS, entity, incident, lost_gpu
from dashgen.deployment.profile import Profile, load_profiles

PROFILE = "long-context-64"
# The suites, in order: a row runs in the first whose profile it applies to. Per profile, the sources the suite
# exports although the shipped profile does not (the Store client's metrics exist but pd-128 does not deploy them;
# the transfer engine's, TENT, are compiled out in every shipped profile).
SUITES: dict[str, tuple[str, ...]] = {PROFILE: (), "pd-128": ("mooncake_client", "mooncake_tent"), "video-200": ()}
# Every suite's window (the incident drills' too): an hour imported at the production store's resolution, every
# rule group replayed over its last half hour.
HOURS, STEP = 1.0, 30.0
REPLAY_SECONDS = 1800.0

# The drills' windows are 1 h long, so the own-baseline alerts (disk await, host-tier hit share) compare with the
# 20 minutes ending 25 minutes before each evaluation instead of the default 6 h ending 1 h before (which a 1 h
# window has no data for). The fault starts at 60 % of the window, after that baseline; every other threshold is the
# default, and the promtool cases test the default baseline.
DRILL_BASELINE = {"baseline_window": "20m", "baseline_offset": "25m"}


def suite_profile(name: str = PROFILE) -> Profile:
    (base,) = load_profiles([name])
    sources = dict(base.sources)
    if name == PROFILE:
        fields = (*dcgm.fields(base), *conditions.NVLINK_COUNTERS)
        sources["dcgm"] = dataclasses.replace(base.source("dcgm"), fields=fields)
    for source in SUITES[name]:
        sources[source] = dataclasses.replace(base.source(source), status="exported")
    return dataclasses.replace(base, sources=sources, alerts=dataclasses.replace(base.alerts, **DRILL_BASELINE))


def suite_rows(name: str) -> tuple[FailureMode, ...]:
    """The rows the suite of profile ``name`` runs: those that apply to it and to no suite before it."""
    earlier = {row.id for before in list(SUITES)[: list(SUITES).index(name)] for row in rows_for(suite_profile(before))}
    return tuple(row for row in rows_for(suite_profile(name)) if row.id not in earlier)


@dataclass
class Deployment:
    name: str
    scenarios: list[str] = field(default_factory=list)
    uses: set[str] = field(default_factory=set)


# What a drill scenario occupies besides its nodes (``dashgen.demo.faults.Fault.resources``).
DRILL_USES = {
    "gateway-shedding": {"gw-responses", "slo"},
    "gateway-no-backend": {"gw-workers", "slo"},
    "master-failover": {"master-alloc", "master-segments", "master-target"},
    "replica-hung": {"slo"},
    "replica-restart": {"slo"},
    "collector-dropping": {"collector-all"},
    "stuck-instance": {"video-all"},
}


DRILLS = ("gpu-missing", "stuck-instance", *INCIDENTS)


# Faults written apart from the catalogue's rows (``dashgen.demo.faults.HELD_OUT``, classes and shapes no row's own
# demo fault has) -> the rows that must name them: each runs in the first suite that runs all its rows, beside the
# catalogue's faults, and is judged by the same checks (an alert naming the entity within the hold + 5 minutes, a
# first-screen line naming entity and cause).
HELD_OUT: dict[str, tuple[str, ...]] = {
    "fault:held-out-nic-transmit-errors": ("host-nic-errors",),
    "fault:held-out-clock-behind": ("clock-skew",),
    "fault:held-out-clock-unsynchronised": ("clock-skew",),
    "fault:held-out-root-disk-nearly-full": ("disk-root-full",),
    "fault:held-out-hbm-row-remap-failure": ("gpu-row-remap-failure",),
    "fault:held-out-hbm-double-bit-ecc": ("gpu-xid-fatal", "gpu-hbm-uncorrectable"),
    "fault:held-out-gpu-power-brake": ("gpu-clocks-throttled",),
    "fault:held-out-model-disk-read-only": ("disk-filesystem-errors",),
    "fault:held-out-pcie-link-degraded": ("gpu-pcie-replays",),
    "fault:held-out-engine-oom-killed": ("host-oom-kill", "engine-scrape-failing"),
    "fault:held-out-gateway-event-loop-stall": ("gateway-event-loop-stalling",),
    "fault:held-out-decode-kv-transfer-timeouts": ("transfer-engine-failing",),
    # the second round (``dashgen.demo.faults.HELD_OUT_AGAIN``), each on the profile ``HELD_OUT_ON`` names
    "fault:held-out-gpu-fell-off-the-bus": ("gpu-xid-fatal", "gpu-missing"),
    "fault:held-out-root-inodes-exhausted": ("disk-root-full",),
    "fault:held-out-scratch-inodes-exhausted": ("disk-cache-full",),
    "fault:held-out-hbm-overheating": ("gpu-clocks-throttled",),
    "fault:held-out-engine-wedged-at-light-load": ("engine-stalled",),
    "fault:held-out-engine-metrics-flapping": ("engine-scrape-failing",),
    "fault:held-out-node-exporter-flapping": ("node-exporter-scrape-failing",),
    "fault:held-out-mooncake-client-flapping": ("mooncake-client-scrape-failing",),
}
# Held-out faults run on a suite profile of their own rather than the first whose rows include their judged rows:
# the measure is spread over the profiles (a PD decode node, the video pool's scratch disk and 25 nodes).
HELD_OUT_ON: dict[str, str] = {
    "fault:held-out-gpu-fell-off-the-bus": "pd-128",
    "fault:held-out-scratch-inodes-exhausted": "video-200",
    "fault:held-out-node-exporter-flapping": "video-200",
    "fault:held-out-mooncake-client-flapping": "pd-128",
}


def held_out(name: str, rows: tuple[FailureMode, ...]) -> list[str]:
    """The held-out scenarios the suite of profile ``name`` (running ``rows``) runs: those ``HELD_OUT_ON`` gives it,
    and the others all of whose judged rows it runs."""
    ids = {row.id for row in rows}
    return [
        scenario
        for scenario, judged in HELD_OUT.items()
        if HELD_OUT_ON.get(scenario) == name or (scenario not in HELD_OUT_ON and set(judged) <= ids)
    ]


def _drill_uses(profile: Profile, scenario: str) -> set[str]:
    if scenario == "gpu-missing":
        return {f"node{profile.node_names.index(lost_gpu(profile)[0])}"}
    if scenario == "stuck-instance":
        return {f"node{profile.node_names.index(entity(profile, scenario)[profile.label('node')])}", "video-all"}
    found = incident(profile, scenario)
    nodes = {*found.nodes, *found.idle}
    return {f"node{profile.node_names.index(n)}" for n in nodes} | DRILL_USES.get(scenario, set())


def plan(profile: Profile, rows: tuple[FailureMode, ...], apart: bool = False) -> list[Deployment]:
    """The deployments: healthy alone; each drill scenario in its own, with the catalogue's faults packed into them
    (and into further deployments) so that no two scenarios of one deployment use the same node or part
    (``Fault.resources``). ``apart``: the drill scenarios are the incident drills' deployments (``drill-<scenario>``,
    the drills' healthy ``drill-healthy``), each alone, and the catalogue's faults are packed into deployments of
    their own (``suite-faults-<n>``)."""
    scenarios = sorted({row.demo.scenario for row in rows})
    prefix = "drill" if apart else "suite"
    drills = [
        Deployment(f"{prefix}-{scenario}", [scenario], _drill_uses(profile, scenario))
        for scenario in scenarios
        if scenario in DRILLS
    ]
    packed = [] if apart else drills  # the deployments a catalogue fault may join
    for scenario in [*scenarios, *held_out(profile.name, rows)]:
        fault = fault_of(scenario)
        if fault is None:
            continue
        uses = set(fault.resources)
        target = next((d for d in packed if not d.uses & uses), None)
        if target is None:
            target = Deployment(f"suite-faults-{len(packed)}")
            packed.append(target)
        target.scenarios.append(scenario)
        target.uses |= uses
    return [Deployment(f"{prefix}-healthy"), *(drills if apart else []), *(d for d in packed if d.scenarios)]


# long-context-64's suite shares its store with the incident drills (``tests/drills.py``); the other suites' stores
# are their own.
SHARED = PROFILE


def suite_plan(name: str) -> list[Deployment]:
    """The deployments of the suite of profile ``name``, healthy first."""
    return plan(suite_profile(name), suite_rows(name), apart=name == SHARED)
