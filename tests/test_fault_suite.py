"""The catalogue's fault suite (S36): one demo fault scenario per catalogue row, on a production-like
VictoriaMetrics per suite profile (its ``[store]`` flags), every rule group of every deployment replayed by the real
vmalert, then per row: its alert fires naming its entity within the row's hold + 5 minutes of the fault, and nothing
else fires in that deployment but the alerts the fault's rows allow (their ``also``); the healthy deployment, in the
same shared store, fires no alert and records no health state.

Every row of the catalogue runs in one suite: long-context-64 runs every row that applies to it; the rows it cannot
show (the PD transfer engine, the Mooncake Store client's targets, the video pools) run on the shipped profile they
apply to (``SUITES``), that profile's healthy baseline beside them.

Fast: the catalogue's own faults (``fault:<key>``, ``dashgen.demo.faults``) strike different nodes, so several share
one deployment (one import each); the incident drills' scenarios keep a deployment each; one vmalert replay covers
every deployment. The suite's profile is long-context-64 whose dcgm-exporter also collects the NVLink error fields
(the default field list comments them out, and S22 writes no alert on a field not collected).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter

import pytest
from dashgen_queries import health, now
from dashgen_queries.sglang_slo import FAST_BURN, SLOW_BURN
from drills import SHARED_STORE, refused_unless_replayed, shared_store, start_store
from fault_plan import (
    DRILLS,
    HELD_OUT,
    HOURS,
    PROFILE,
    REPLAY_SECONDS,
    SHARED,
    STEP,
    SUITES,
    Deployment,
    held_out,
    suite_plan,
    suite_profile,
    suite_rows,
)

from dashgen.build import build_profile
from dashgen.catalogue import ROWS, FailureMode, by_id, conditions, entity_labels, rows_for
from dashgen.demo.fault_stream import reshape
from dashgen.demo.faults import BY_KEY, ENGINE_SOURCES, PREFIX, fault_of, starts
from dashgen.demo.faults import entity as fault_entity
from dashgen.demo.run import demo_models, demo_plan, demo_series
from dashgen.demo.scenarios import entity
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_text, globals_for, variable_values

SLACK = 300.0  # "within the row's hold + 5 minutes"


# Rows whose test reads a rate over a window longer than the time its fault needs to show (the host tier's share over
# 10 minutes must fall for most of its window): they fire within hold + that window + 5 minutes.
# The video pools' stuck rows see no job finish over 2 x the 10-minute job bound first.
WINDOW_FIRST = {"hicache-host-tier-collapsed": 600.0, "video-pool-stuck": 1200.0, "video-instance-stuck": 1200.0}
# A burn-rate row holds once its long window's error ratio passes burn x budget: with every request bad from the
# fault on, after that share of the window (of the hour imported, when the window is longer).
# The engine's fast burn: the SRE workbook's detection time, 8.6 min at a 1 % budget, on a demo that spends almost
# none of the budget while healthy.
BURNS = {"video-job-slo-fast-burn": FAST_BURN, "video-job-slo-slow-burn": SLOW_BURN, "slo-fast-burn": FAST_BURN}


def window_first(profile: Profile, row: FailureMode) -> float:
    if row.id in BURNS:
        long, _short, burn = BURNS[row.id]
        return min(parse_seconds(long), HOURS * 3600) * burn * (1 - profile.slo.objective)
    return WINDOW_FIRST.get(row.id, 0.0)


Line = tuple[dict[str, str], list[tuple[float, float]]]  # a problem-list line's labels and its (time, value) samples


@dataclass
class Suite:
    name: str
    rows: tuple[FailureMode, ...]
    url: str
    end: float
    profiles: dict[str, Profile]  # deployment name -> profile
    deployments: list[Deployment]
    timings: dict[str, float]

    def replayed(self, expr: str) -> str:
        """``expr``, refused when it reads a record the store's replay left out (``drills.checked``)."""
        return refused_unless_replayed(next(iter(self.profiles.values())), expr)

    def query(self, expr: str, at: float) -> list[dict]:
        return Datasource(self.url, timeout=60).query(self.replayed(expr), at).result

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[Line]:
        """Each series' labels and its (time, value) samples in [start, end]."""
        result = Datasource(self.url, timeout=120).query_range(self.replayed(expr), start, end, step).result
        return [(item["metric"], [(float(t), float(v)) for t, v in item["values"]]) for item in result]


def suite_param(name: str, *more: str) -> object:
    """A parameter of the tests of suite ``name`` (and ``more`` values): long-context-64's read the store it shares
    with the incident drills, marked so that they run where the drills run (one xdist group)."""
    return pytest.param(name, *more, marks=SHARED_STORE if name == SHARED else ())


# The suite fixture's profile, by name (indirect: one store per profile, shared by its tests).
EACH_SUITE = pytest.mark.parametrize("suite", [suite_param(name) for name in SUITES], indirect=True)


@pytest.fixture(scope="module")
def suite(request: pytest.FixtureRequest) -> Iterator[Suite]:
    name = request.param
    deployments = suite_plan(name)
    if name == SHARED:  # the drills' store, which holds this suite's deployments too (``tests/drills.py``)
        store = shared_store(request.config)
        profiles = {d.name: store.profiles[d.name] for d in deployments}
        yield Suite(name, suite_rows(name), store.url, store.end, profiles, deployments, store.timings)
        return
    server, own = start_store(suite_profile(name), deployments)
    try:
        yield Suite(name, suite_rows(name), own.url, own.end, own.profiles, deployments, own.timings)
    finally:
        server.stop()


def _scenario_entity(profile: Profile, scenario: str) -> dict[str, str]:
    fault = fault_of(scenario)
    if fault is not None:
        return fault_entity(profile, fault)
    return entity(profile, scenario) if scenario in DRILLS else {}


def _rows(profile: Profile, scenario: str) -> list[FailureMode]:
    """The rows a scenario shows: those whose demo fault it is, or a held-out fault's judged rows."""
    if scenario in HELD_OUT:
        return [by_id(row_id) for row_id in HELD_OUT[scenario]]
    return [row for row in rows_for(profile) if row.demo.scenario == scenario]


def _allowed(profile: Profile, scenarios: list[str]) -> set[str]:
    rows = [row for scenario in scenarios for row in _rows(profile, scenario)]
    also = {other for row in rows for other in row.also}
    return {row.alert for row in rows} | {row.alert for row in ROWS if row.id in also}


def test_every_catalogue_row_runs_in_one_suite() -> None:
    """No row is left without a fault run: every row of the catalogue applies to one suite profile, runs there only,
    and its scenario is a deployment's (a drill, or a ``fault:<key>`` that ``dashgen.demo.faults`` has)."""
    ran = [row.id for name in SUITES for row in suite_rows(name)]
    judged = [scenario for name in SUITES for scenario in held_out(name, suite_rows(name))]
    assert sorted(judged) == sorted(HELD_OUT), "every held-out fault runs in one suite"
    assert sorted(ran) == sorted(row.id for row in ROWS), sorted({row.id for row in ROWS} - set(ran))
    for name in SUITES:
        rows = suite_rows(name)
        assert rows, name
        planned = {s for d in suite_plan(name) for s in d.scenarios}
        assert {row.demo.scenario for row in rows} | set(held_out(name, rows)) == planned, name
        for scenario in planned:
            assert fault_of(scenario) is not None or scenario in DRILLS, (name, scenario)


def test_no_deployment_packs_the_slo_burn_beside_a_fault_ending_an_entry_stages_engine() -> None:
    """An entry stage's engine (pipeline rank 0: its tokenizer writes its replica's request histograms) whose targets
    end takes its share of the requests out of the engine-side SLO ratios: beside the SLO burn, the burn fired 7-9
    minutes late, past its row's bound, and the noise of the deployment's name decided whether it passed. The two
    declare the part they share (``Fault.resources``: ``slo``), so no plan packs them together."""
    checked = 0
    for name in SUITES:
        profile = suite_profile(name)
        entry = {role.name for role in Topology(profile).nodes if 0 in role.pp_ranks}
        for deployment in suite_plan(name):
            if "fault:slo-burn" not in deployment.scenarios:
                continue
            checked += 1
            for scenario in deployment.scenarios:
                fault = fault_of(scenario)
                if fault is None or not (set(fault.sources) & {*ENGINE_SOURCES, "*"}):
                    continue
                node = profile.node_names[min(fault.node, profile.nodes - 1)]
                assert not fault.every_node and node not in entry, (name, deployment.name, scenario)
    assert checked == 1, "the SLO burn runs in one suite"


@pytest.mark.parametrize("name", sorted(SUITES))
def test_no_fault_writes_a_second_series_beside_one_the_demo_writes(name: str) -> None:
    """A fault's series must not share its label set with another series of the import (a copy onto a series the
    demo already writes): the store merges the two, the healthy samples stay beside the fault's, and an alert that
    reads the series (ClockSkew's ``max_over_time(node_timex_sync_status[5m]) == 0``) never sees the fault."""
    profile = suite_profile(name)
    scenarios = [f"{PREFIX}{key}" for key in sorted(BY_KEY)]
    models, _ = demo_models(profile, "healthy", scenarios)
    plan = demo_plan(profile, "healthy", 1_800_000_000.0, 0.1, STEP)
    # no value is read: what reshape keeps of a series and the copies it writes follow the timestamps alone, so the
    # models' series are made without their samples, each given zeros for reshape to write over
    healthy = list(demo_series(plan, models, (), samples=False))
    for item in healthy:
        if item["values"] is None:
            item["values"] = [0.0] * len(item["timestamps"])
    # a reshaped series that keeps its healthy labels keeps the very dict: its label set is sorted once, not once
    # per scenario (the sorting was most of this test's ~7 s a profile)
    label_sets = {id(item["metric"]): _label_set(item["metric"]) for item in healthy}
    assert len(set(label_sets.values())) == len(healthy), "the healthy import has two series with one label set"
    owner = {key: ident for ident, key in label_sets.items()}  # a healthy label set -> the id of its dict
    twice, written_count, sorted_again = [], 0, 0
    for scenario in scenarios:
        fault = fault_of(scenario)
        assert fault is not None
        # a million series over all faults. Two of them share a label set only as the same healthy dict written
        # twice (the healthy label sets are distinct), or as a fault's own copy whose label set is another copy's
        # or that of a healthy dict written too: so the healthy dicts are counted by id (C ints, not a million
        # nested tuples hashed again) and only the fault's own copies are sorted and looked up
        metrics = list(map(itemgetter("metric"), reshape(profile, fault, plan.start, healthy)))
        present = set(map(id, metrics))
        # the fault's own copies, picked out by C-level maps and set operations (no bytecode per series of the million)
        copied = present.difference(label_sets)
        fresh = [_label_set(m) for m in compress(metrics, map(copied.__contains__, map(id, metrics)))] if copied else []
        written_count += len(metrics)
        sorted_again += len(fresh)
        if len(present) < len(metrics):  # a dict written twice
            counts = Counter(map(id, metrics))
            twice += [(scenario, label_sets.get(i, (("__name__", "?"),))) for i, n in counts.items() if n > 1]
        copies: Counter[tuple[tuple[str, str], ...]] = Counter(fresh)
        twice += [(scenario, key) for key, count in copies.items() if count > 1 or owner.get(key) in present]
    assert not twice, [(scenario, dict(key)["__name__"]) for scenario, key in twice]
    # no fault changed a healthy series' labels in place (the label sets above would then be stale)
    assert all(label_sets[id(item["metric"])] == _label_set(item["metric"]) for item in healthy)
    # and the sharing holds: a fault's own copies are the only series whose labels are sorted again (were reshape
    # to copy every label set, this test would silently take its old ~7 s a profile)
    assert written_count > len(healthy) and sorted_again < written_count // 100, (sorted_again, written_count)


def _label_set(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def test_a_flapping_target_fails_every_other_scrape_of_its_node_only() -> None:
    """A flapping fault (``Fault.flapping``) writes what vmagent stores for a target that times out every other
    scrape: ``up`` 0 at those scrapes and 1 between, the target's other series missing exactly those scrapes; its
    series before the fault, and every other node's, untouched."""
    profile = suite_profile("video-200")
    scenario = "fault:held-out-node-exporter-flapping"
    fault = fault_of(scenario)
    assert fault is not None and fault.flapping
    models, _ = demo_models(profile, "healthy", [scenario])
    # only the target's own metrics are generated (each series draws from its own seeded generator, so they are
    # the series the whole import holds: the same 2,075 node series): the rest, four in five, were made to be dropped
    targeted = [(model, extra) for model, extra in models if model.source in fault.sources]
    assert 0 < len(targeted) < len(models)
    plan = demo_plan(profile, "healthy", 1_800_000_000.0, 0.5, STEP)
    healthy = [item for item in demo_series(plan, targeted, ()) if item["metric"].get("job") == "node"]
    at = plan.start + 900
    after = {tuple(sorted(i["metric"].items())): i for i in reshape(profile, fault, at, healthy)}
    node = profile.node_names[fault.node]
    checked = 0
    for item in healthy:
        key = tuple(sorted(item["metric"].items()))
        stamps, got = item["timestamps"], after[key]
        late = [ms for ms in stamps if ms >= at * 1000]
        if item["metric"].get("node") != node:
            assert got["timestamps"] == stamps and got["values"] == item["values"], key
        elif item["metric"]["__name__"] == "up":
            assert got["timestamps"] == stamps
            ups = got["values"][len(stamps) - len(late) :]
            assert ups[0::2] == [1.0] * len(ups[0::2]) and ups[1::2] == [0.0] * len(ups[1::2]), ups
            checked += 1
        else:
            assert got["timestamps"] == [ms for ms in stamps if ms < at * 1000] + late[0::2], key
            checked += 1
    assert checked > 10, "the node's up and node_exporter series were checked"


@EACH_SUITE
def test_the_suite_runs_one_scenario_per_catalogue_row(suite: Suite) -> None:
    covered = {s for d in suite.deployments for s in d.scenarios}
    assert {row.demo.scenario for row in suite.rows} | set(held_out(suite.name, suite.rows)) == covered
    if suite.name == PROFILE:
        assert len(suite.rows) >= 40
        assert len(suite.deployments) <= len(suite.rows) / 2, "scenarios share deployments"
    print(
        f"\nfault suite {suite.name}: {len(suite.rows)} rows, {len(covered)} scenarios, "
        f"{len(suite.deployments)} deployments, {suite.timings}"
    )


@EACH_SUITE
def test_healthy_and_shared_store_baselines_fire_nothing_and_paint_nothing(suite: Suite) -> None:
    healthy = suite.deployments[0]
    assert not healthy.scenarios
    scope = f'{suite.profiles[healthy.name].label("deployment")}="{healthy.name}"'
    window = f"{int(REPLAY_SECONDS)}s"
    firing = suite.query(f'max_over_time(ALERTS{{alertstate="firing", {scope}}}[{window}])', suite.end)
    assert not firing, [item["metric"] for item in firing]
    painted = suite.query(f"max_over_time({health.LAYER_HEALTH}{{{scope}}}[{window}])", suite.end)
    assert not painted, [item["metric"] for item in painted]


def _deployment_rows() -> list[object]:
    return [
        suite_param(name, d.name, s)
        for name in SUITES
        for d in suite_plan(name)
        for s in d.scenarios
        if s not in HELD_OUT
    ]


@pytest.mark.parametrize(("suite", "deployment", "scenario"), _deployment_rows(), indirect=["suite"])
def test_each_fault_fires_its_rows_alert_naming_its_entity_within_hold_plus_5_minutes(
    suite: Suite, deployment: str, scenario: str
) -> None:
    missed = alert_misses(suite, deployment, scenario, [row for row in suite.rows if row.demo.scenario == scenario])
    assert not missed, missed


def alert_misses(suite: Suite, deployment: str, scenario: str, rows: list[FailureMode]) -> list[str]:
    """The rows whose alert did not fire naming the scenario's entity within the row's hold + 5 minutes."""
    profile = suite.profiles[deployment]
    scope = f'{profile.label("deployment")}="{deployment}"'
    at = fault_start(suite, scenario)
    named = _scenario_entity(profile, scenario)
    missed = []
    for row in rows:
        by = min(at + parse_seconds(row.hold) + window_first(profile, row) + SLACK, suite.end)
        window = max(int(by - at), 60)
        expr = f'max_over_time(ALERTS{{alertstate="firing", alertname="{row.alert}", {scope}}}[{window}s])'
        found = [item["metric"] for item in suite.query(expr, by)]
        names = entity_labels(profile, row)
        wanted = {k: v for k, v in named.items() if k in names}  # what this row's alert names of the entity
        if not any(all(labels.get(k) == v for k, v in wanted.items()) for labels in found):
            missed.append(f"{row.alert} ({row.id}): {found or 'not firing'} by fault + {row.hold} + 5m, entity {named}")
    return missed


@pytest.mark.parametrize(
    ("suite", "deployment"),
    [suite_param(name, d.name) for name in SUITES for d in suite_plan(name) if d.scenarios],
    indirect=["suite"],
)
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


# -- the first screen's line of each fault ----------------------------------------------------------------------------

LINE_STEP = 60.0  # the step of the one range query per deployment: the rule replay's evaluation interval or finer


@functools.cache
def _dashboard_values(name: str) -> dict[str, str]:
    """The suite profile's dashboard variables in their default selection (every node), as Grafana sends them."""
    (built,) = build_profile(suite_profile(name))
    return variable_values(built.document["templating"]["list"])


def first_screen_query(suite: Suite, deployment: str) -> str:
    """The first screen's problem list ("What is wrong now") of one deployment, expanded as Grafana sends it."""
    values = {**_dashboard_values(suite.name), **globals_for(Window(suite.end, HOURS * 3600), STEP, 4 * STEP)}
    return expand_text(now.wrong_now(suite.profiles[deployment]), values)


def entity_words(profile: Profile, named: dict[str, str], labels: tuple[str, ...]) -> list[str]:
    """How the problem list writes the parts of ``named`` that the alert names (``labels``): "node-3", "GPU 2". As
    ``queries.now.with_entity`` writes them: a backend's alert names the backend, not the gateway's host or process;
    a node's alert names no job or target."""
    node, instance, job = profile.label("node"), profile.label("instance"), profile.label("job")
    about = {label: value for label, value in named.items() if label in labels}
    if "worker" in about or "backend" in about:
        about = {k: v for k, v in about.items() if k not in (node, instance)}
    if node in about:
        about = {k: v for k, v in about.items() if k not in (job, instance)}
    return [shown.replace("$1", about[label]) for label, shown in now.entity_parts(profile) if label in about]


def names(line: dict[str, str], words: list[str]) -> bool:
    """Whether a problem-list line's entity names every one of ``words`` (whole parts, not a prefix: node-1 is not
    node-10)."""
    entity = f" {line.get(now.ENTITY, '')} "
    return all(f" {word} " in entity for word in words)


# Rows whose line's "Active since" must be the fault's start (within the test's rate window): the line says since
# when the state holds, not since when the alert fired (a replica loading its weights: "loading since N min").
SINCE_THE_FAULT = {"engine-loading-slow": conditions.WINDOW}


def first_screen_misses(
    profile: Profile, lines: list[Line], at: float, scenario: str, rows: list[FailureMode]
) -> list[str]:
    """The rows whose line the problem list (``lines``) does not show naming the fault's entity and the row's likely
    cause at some step between the fault (``at``) and the row's hold + 5 minutes (and, for ``SINCE_THE_FAULT``,
    active since the fault)."""
    named = _scenario_entity(profile, scenario)
    missed = []
    for row in rows:
        by = at + parse_seconds(row.hold) + window_first(profile, row) + SLACK
        words = entity_words(profile, named, entity_labels(profile, row))
        shown = [
            (line, [value for t, value in samples if at - LINE_STEP <= t <= by])
            for line, samples in lines
            if line.get("alertname") == row.alert
        ]
        found = [(line, values) for line, values in shown if values and names(line, words)]
        found = [(line, values) for line, values in found if line.get(now.CAUSE) == row.cause]
        if not found:
            missed.append(f"{row.alert} ({row.id}): wanted {words} and cause {row.cause!r}, lines {shown or 'none'}")
        elif row.id in SINCE_THE_FAULT:
            late = at + parse_seconds(SINCE_THE_FAULT[row.id]) + LINE_STEP
            since = [value / 1000 for _line, values in found for value in values]
            if not any(at - LINE_STEP <= s <= late for s in since):
                missed.append(f"{row.alert} ({row.id}): active since {since}, not the fault's start {at}")
    return missed


def fault_start(suite: Suite, scenario: str) -> float:
    """When the scenario's fault is judged from: its start, or the replay's when it struck before (an alert's hold
    cannot start before the replay does)."""
    return max(starts(scenario, suite.end - HOURS * 3600, suite.end), suite.end - REPLAY_SECONDS)


@pytest.mark.parametrize(
    ("suite", "deployment"),
    [suite_param(name, d.name) for name in SUITES for d in suite_plan(name) if d.scenarios],
    indirect=["suite"],
)
def test_each_faults_first_screen_line_names_its_entity_and_cause(suite: Suite, deployment: str) -> None:
    """The first screen's problem list, as Grafana sends it, evaluated on the suite's store over the replayed window
    (one range query per deployment): each row of each fault has a line naming the fault's entity (the parts the
    row's alert names) and the row's likely cause, within the row's hold + 5 minutes of the fault."""
    profile = suite.profiles[deployment]
    scenarios = next(d.scenarios for d in suite.deployments if d.name == deployment)
    lines = suite.query_range(first_screen_query(suite, deployment), suite.end - REPLAY_SECONDS, suite.end, LINE_STEP)
    missed = []
    for scenario in scenarios:
        rows = [row for row in suite.rows if row.demo.scenario == scenario]
        missed += first_screen_misses(profile, lines, fault_start(suite, scenario), scenario, rows)
    assert not missed, missed


@EACH_SUITE
def test_held_out_faults_fire_and_are_named_like_the_catalogues_own(suite: Suite) -> None:
    """Coverage beyond the faults the catalogue was built on: each held-out fault of the suite fires its judged
    rows' alerts naming its entity within hold + 5 minutes, and the first screen has their lines naming entity and
    cause. Prints the measure (how many fire, how many are named)."""
    planned = [(d.name, s) for d in suite.deployments for s in d.scenarios if s in HELD_OUT]
    fired, shown, missed = 0, 0, []
    for deployment, scenario in planned:
        profile = suite.profiles[deployment]
        rows = _rows(profile, scenario)
        alerts = alert_misses(suite, deployment, scenario, rows)
        lines = suite.query_range(
            first_screen_query(suite, deployment), suite.end - REPLAY_SECONDS, suite.end, LINE_STEP
        )
        screen = first_screen_misses(profile, lines, fault_start(suite, scenario), scenario, rows)
        fired += not alerts
        shown += not screen
        missed += [f"{scenario}: {miss}" for miss in alerts + screen]
    print(
        f"\nheld-out faults {suite.name}: {fired}/{len(planned)} fire naming the entity, "
        f"{shown}/{len(planned)} named with cause on the first screen"
    )
    assert not missed, missed


def parse_seconds(text: str) -> float:
    return float(text[:-1]) * {"s": 1, "m": 60, "h": 3600}[text[-1]]
