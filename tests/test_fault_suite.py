"""The catalogue's fault suite (S36): one demo fault scenario per catalogue row, on ONE production-like
VictoriaMetrics (long-context-64's ``[store]`` flags), every rule group of every deployment replayed by the real
vmalert, then per row: its alert fires naming its entity within the row's hold + 5 minutes of the fault, and nothing
else fires in that deployment but the alerts the fault's rows allow (their ``also``); the healthy deployment, in the
same shared store, fires no alert and records no health state.

Fast: the catalogue's own faults (``fault:<key>``, ``dashgen.demo.faults``) strike different nodes, so several share
one deployment (one import each); the incident drills' scenarios keep a deployment each; one vmalert replay covers
every deployment. The suite's profile is long-context-64 whose dcgm-exporter also collects the NVLink error fields
(the default field list comments them out, and S22 writes no alert on a field not collected).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from dashgen_queries import dcgm, health, sglang_slo
from drills import DRILL_BASELINE
from victoriametrics import program_or_skip, start_production_store

from dashgen.catalogue import ROWS, FailureMode, conditions, entity_labels, rows_for
from dashgen.demo import recorder
from dashgen.demo.faults import entity as fault_entity
from dashgen.demo.faults import fault_of
from dashgen.demo.run import import_demo
from dashgen.demo.scenarios import INCIDENTS, entity, fault_time, incident, lost_gpu
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.live.datasource import Datasource

PROFILE = "long-context-64"
HOURS, STEP = 1.0, 30.0
REPLAY_SECONDS = 1800.0
SLACK = 300.0  # "within the row's hold + 5 minutes"


def suite_profile() -> Profile:
    (base,) = load_profiles([PROFILE])
    fields = (*dcgm.fields(base), *conditions.NVLINK_COUNTERS)
    sources = {**base.sources, "dcgm": dataclasses.replace(base.source("dcgm"), fields=fields)}
    return dataclasses.replace(base, sources=sources, alerts=dataclasses.replace(base.alerts, **DRILL_BASELINE))


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
}


DRILLS = ("gpu-missing", *INCIDENTS)
# Rows whose test reads a rate over a window longer than the time its fault needs to show (the host tier's share over
# 10 minutes must fall for most of its window): they fire within hold + that window + 5 minutes.
WINDOW_FIRST = {
    "hicache-host-tier-collapsed": 600.0,
    # the fast burn's 1h window reaches 14.4 x the budget after that share of an hour of every request failing (the
    # SRE workbook's detection time: 8.6 min at a 1 % budget) on a demo that spends almost none of it while healthy
    "slo-fast-burn": sglang_slo.FAST_BURN[2] * sglang_slo.error_budget(suite_profile()) * 3600,
}


def _drill_uses(profile: Profile, scenario: str) -> set[str]:
    if scenario == "gpu-missing":
        return {f"node{profile.node_names.index(lost_gpu(profile)[0])}"}
    found = incident(profile, scenario)
    nodes = {*found.nodes, *found.idle}
    return {f"node{profile.node_names.index(n)}" for n in nodes} | DRILL_USES.get(scenario, set())


def plan(profile: Profile) -> list[Deployment]:
    """The deployments: healthy alone; each drill scenario in its own, with the catalogue's faults packed into them
    (and into further deployments) so that no two scenarios of one deployment use the same node or part."""
    scenarios = sorted({row.demo.scenario for row in rows_for(profile)})
    deployments = [
        Deployment(f"suite-{scenario}", [scenario], _drill_uses(profile, scenario))
        for scenario in scenarios
        if scenario in DRILLS
    ]
    for scenario in scenarios:
        fault = fault_of(scenario)
        if fault is None:
            continue
        uses = set(fault.resources)
        target = next((d for d in deployments if not d.uses & uses), None)
        if target is None:
            target = Deployment(f"suite-faults-{len(deployments)}")
            deployments.append(target)
        target.scenarios.append(scenario)
        target.uses |= uses
    return [Deployment("suite-healthy"), *deployments]


@dataclass
class Suite:
    url: str
    end: float
    profiles: dict[str, Profile]  # deployment name -> profile
    deployments: list[Deployment]
    timings: dict[str, float]

    def query(self, expr: str, at: float) -> list[dict]:
        return Datasource(self.url, timeout=60).query(expr, at).result


@pytest.fixture(scope="module")
def suite() -> Iterator[Suite]:
    program_or_skip(recorder.find_vmalert(), "vmalert not found (Debian package 'victoria-metrics')")
    base = suite_profile()
    deployments = plan(base)
    timings: dict[str, float] = {}
    began = time.monotonic()
    server = start_production_store(base)
    try:
        end = (time.time() // 3600) * 3600 - 3600
        datasource = Datasource(server.url, timeout=120)
        profiles = {}
        for deployment in deployments:
            profile = dataclasses.replace(base, deployment=deployment.name)
            profiles[deployment.name] = profile
            scenarios = deployment.scenarios or ["healthy"]
            import_demo(datasource, profile, scenarios[0], end, HOURS, STEP, more=scenarios[1:])
        datasource.flush()
        timings["import"] = time.monotonic() - began
        replayed = time.monotonic()
        recorder.replay(server.url, list(profiles.values()), end - REPLAY_SECONDS, end, every_group=True)
        datasource.flush()
        timings["replay"] = time.monotonic() - replayed
        timings["total"] = time.monotonic() - began
        yield Suite(server.url, end, profiles, deployments, timings)
    finally:
        server.stop()


def _scenario_entity(profile: Profile, scenario: str) -> dict[str, str]:
    fault = fault_of(scenario)
    if fault is not None:
        return fault_entity(profile, fault)
    return entity(profile, scenario) if scenario in DRILLS else {}


def _rows(profile: Profile, scenario: str) -> list[FailureMode]:
    return [row for row in rows_for(profile) if row.demo.scenario == scenario]


def _allowed(profile: Profile, scenarios: list[str]) -> set[str]:
    rows = [row for scenario in scenarios for row in _rows(profile, scenario)]
    also = {other for row in rows for other in row.also}
    return {row.alert for row in rows} | {row.alert for row in ROWS if row.id in also}


def test_the_suite_runs_one_scenario_per_catalogue_row(suite: Suite) -> None:
    profile = next(iter(suite.profiles.values()))
    covered = {s for d in suite.deployments for s in d.scenarios}
    rows = rows_for(profile)
    assert len(rows) >= 40
    assert {row.demo.scenario for row in rows} == covered
    assert len(suite.deployments) <= len(rows) / 2, "scenarios share deployments"
    print(
        f"\nfault suite: {len(rows)} rows, {len(covered)} scenarios, {len(suite.deployments)} deployments, "
        f"{suite.timings}"
    )


def test_healthy_and_shared_store_baselines_fire_nothing_and_paint_nothing(suite: Suite) -> None:
    scope = 'cluster="suite-healthy"'
    window = f"{int(REPLAY_SECONDS)}s"
    firing = suite.query(f'max_over_time(ALERTS{{alertstate="firing", {scope}}}[{window}])', suite.end)
    assert not firing, [item["metric"] for item in firing]
    painted = suite.query(f"max_over_time({health.LAYER_HEALTH}{{{scope}}}[{window}])", suite.end)
    assert not painted, [item["metric"] for item in painted]


def _deployment_rows() -> list[tuple[str, str]]:
    profile = suite_profile()
    return [(d.name, s) for d in plan(profile) for s in d.scenarios]


@pytest.mark.parametrize(("deployment", "scenario"), _deployment_rows())
def test_each_fault_fires_its_rows_alert_naming_its_entity_within_hold_plus_5_minutes(
    suite: Suite, deployment: str, scenario: str
) -> None:
    profile = suite.profiles[deployment]
    scope = f'{profile.label("deployment")}="{deployment}"'
    at = fault_time(scenario, suite.end - HOURS * 3600, suite.end)
    named = _scenario_entity(profile, scenario)
    missed = []
    for row in _rows(profile, scenario):
        by = min(at + parse_seconds(row.hold) + WINDOW_FIRST.get(row.id, 0.0) + SLACK, suite.end)
        window = max(int(by - at), 60)
        expr = f'max_over_time(ALERTS{{alertstate="firing", alertname="{row.alert}", {scope}}}[{window}s])'
        found = [item["metric"] for item in suite.query(expr, by)]
        names = entity_labels(profile, row)
        wanted = {k: v for k, v in named.items() if k in names}  # what this row's alert names of the entity
        if not any(all(labels.get(k) == v for k, v in wanted.items()) for labels in found):
            missed.append(f"{row.alert} ({row.id}): {found or 'not firing'} by fault + {row.hold} + 5m, entity {named}")
    assert not missed, missed


@pytest.mark.parametrize("deployment", [d.name for d in plan(suite_profile()) if d.scenarios])
def test_nothing_else_of_note_fires(suite: Suite, deployment: str) -> None:
    profile = suite.profiles[deployment]
    scenarios = next(d.scenarios for d in suite.deployments if d.name == deployment)
    allowed = _allowed(profile, scenarios)
    scope = f'{profile.label("deployment")}="{deployment}"'
    window = f"{int(REPLAY_SECONDS)}s"
    firing = {
        item["metric"]["alertname"]
        for item in suite.query(f'max_over_time(ALERTS{{alertstate="firing", {scope}}}[{window}])', suite.end)
    }
    assert firing - allowed == set(), (scenarios, sorted(firing - allowed))


def parse_seconds(text: str) -> float:
    return float(text[:-1]) * {"s": 1, "m": 60, "h": 3600}[text[-1]]
