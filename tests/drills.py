"""The incident-drill harness (S31-S35): ONE production-like VictoriaMetrics (long-context-64's ``[store]`` flags:
30 s deduplication, 30 s latency offset) holding each drill scenario of ``dashgen.demo.scenarios`` in its own
deployment (``cluster="drill-<scenario>"``, the same node names: several deployments share one store, as in
production), every window ending at the same anchor; the real vmalert replays each deployment's rule groups (alerts
included, so ``ALERTS`` is written back; only the rules whose output the checks read, :func:`checked`) over the last
``REPLAY_SECONDS`` of the windows.

The same store holds long-context-64's fault suite (``tests/fault_plan.py``: the suite's drill scenarios are these
deployments, its catalogue faults packed into ``suite-faults-<n>``): one import and one replay of each scenario for
both modules instead of two stores building thirteen of the same scenarios. :func:`shared_store` starts it once per
process (the first of the two modules to ask) and stops it when the session ends; both modules mark their tests of it
``shared_store`` so that under xdist they run on one worker (``tests/conftest.py``). :func:`drills_fixture` makes a
pytest fixture of the drills. Each :class:`Drill` answers instant queries at its window's end and lists the alerts
firing there for its deployment.

Imported at the store's resolution (30 s, what the deduplicated store keeps of every faster source anyway), each
deployment's rules replayed (three vmalert passes) while the next deployment is generated and imported: the whole
store (25 deployments of a 1 h window) took 37-38 s of CPU and 74-93 s of wall on the shared 2-core machine at load
12-13 (2026-12-07; 28 deployments, every rule, one replay after all imports: 45-47 s, 109-118 s); ``Store.timings``
holds the measure ("import": until the last import is in, replays running beside; "replay": the replays' tail).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from dashgen_panels import first_screen
from dashgen_queries import health, nodata, now
from fault_plan import HOURS, PROFILE, REPLAY_SECONDS, STEP, Deployment, suite_plan, suite_profile
from victoriametrics import program_or_skip, start_production_store

from dashgen.demo import recorder, vmlauncher
from dashgen.demo.incidents import DRILL_METRICS
from dashgen.demo.run import import_demo
from dashgen.demo.scenarios import INCIDENTS, entity
from dashgen.deployment.profile import Profile
from dashgen.live.datasource import Datasource

SCENARIOS = ("healthy", "gpu-missing", *INCIDENTS)
# What the tests read of the stores besides what the rules read (``dashgen.demo.run.demo_models``): the metrics the
# incidents reshape, which the drills' checks read in each drill's deployment and compare with the healthy one's
# (tests/test_incident_drills.py holds that every metric a check selects is there). The first screen's queries read
# records and ALERTS only. The dashboards' other metrics (three tenths of the series) are left out.
READS = tuple(sorted(DRILL_METRICS))
# The marker (and xdist group) of the tests reading the shared store.
SHARED_STORE = pytest.mark.shared_store(f"{PROFILE}-drills-and-fault-suite")


@dataclass
class Drill:
    """One scenario in its own deployment of the shared store."""

    profile: Profile  # with its deployment
    scenario: str
    entity: dict[str, str]
    end: float  # the window's end (epoch seconds)
    url: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def deployment(self) -> str:
        return self.profile.deployment

    def scoped(self, selector: str = "") -> str:
        """``<deployment label>="drill-…"`` plus ``selector`` (matchers without braces)."""
        own = f'{self.profile.label("deployment")}="{self.deployment}"'
        return f"{own}, {selector}" if selector else own

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query at the window's end."""
        return Datasource(self.url, timeout=60).query(refused_unless_replayed(self.profile, expr), self.end).result

    def firing(self) -> list[dict[str, str]]:
        """The label sets of this deployment's alerts firing at the window's end (the last evaluation)."""
        expr = f'last_over_time(ALERTS{{alertstate="firing", {self.scoped()}}}[{recorder.RULE_INTERVAL_SECONDS}s])'
        return [{k: v for k, v in item["metric"].items() if k != "__name__"} for item in self.query(expr)]


@dataclass
class Store:
    """A production-like store holding each deployment's scenarios over the window ending at ``end``."""

    url: str
    end: float
    profiles: dict[str, Profile]  # deployment name -> its profile
    deployments: list[Deployment]
    timings: dict[str, float]


def checked(profile: Profile) -> tuple[str, ...]:
    """What the drills' and the fault suites' checks read of the rules' output, as PromQL: the alerts (``ALERTS``),
    the Now row's codes, and the first screen's matrix and problem list; only the rules these can see are replayed
    (``recorder.rules_read``: the per-GPU window statistics and the SLO group's graph rates are not).
    ``test_every_record_a_store_check_names_is_replayed`` holds that no check names another record."""
    return (
        "ALERTS",
        health.LAYER_HEALTH,
        nodata.LAYER_REASON,
        now.wrong_now(profile),
        first_screen.matrix_query(profile),
    )


_LEFT_OUT: dict[str, frozenset[str]] = {}


def refused_unless_replayed(profile: Profile, expr: str) -> str:
    """``expr``, if it reads no record a store's replay left out (``checked``); else an assertion error: a check
    reading such a record would read nothing, and "nothing wrong" would pass without testing anything."""
    if profile.name not in _LEFT_OUT:
        every = recorder.replayed_groups([profile], every_group=True)
        kept = recorder.replayed_groups([profile], every_group=True, reads=checked(profile))
        _LEFT_OUT[profile.name] = frozenset(_records(every) - _records(kept))
    missing = recorder.names_in(expr) & _LEFT_OUT[profile.name]
    assert not missing, f"the store does not replay {sorted(missing)}: add what reads them to drills.checked"
    return expr


def _records(groups: list[dict[str, Any]]) -> set[str]:
    return {str(rule["record"]) for group in groups for rule in group["rules"] if "record" in rule}


# Replays run beside the imports: each deployment's as soon as its import is searchable (vmalert and the store's
# queries on one core while Python generates the next deployment on the other); two at once keep both busy when the
# replays are the longer part.
REPLAYS_AT_ONCE = 2


def start_store(base: Profile, deployments: Sequence[Deployment]) -> tuple[vmlauncher.VictoriaMetrics, Store]:
    """Start a store with ``base``'s ``[store]`` flags, import each deployment's scenarios (healthy when it has none;
    the metrics ``READS`` says) over the hour ending at the last but one whole hour, and replay each deployment's rule
    groups (what :func:`checked` reads of them) over the last ``REPLAY_SECONDS``, each deployment's replay started
    once its import is in; the server (the caller stops it) and what it holds. Each deployment's rules read only its
    own series (S21, ``tests/test_deployment_scope.py``), so a replay does not depend on the imports after it."""
    program_or_skip(
        recorder.find_vmalert(),
        "vmalert not found (Debian package 'victoria-metrics', `make debian-deps`, or set VMALERT_BIN)",
    )
    timings: dict[str, float] = {}
    began = time.monotonic()
    server = start_production_store(base)
    try:
        end = (time.time() // 3600) * 3600 - 3600
        datasource = Datasource(server.url, timeout=120)
        profiles = {}
        replays = ThreadPoolExecutor(REPLAYS_AT_ONCE, thread_name_prefix="dashgen-replay")
        try:
            replayed = []
            for deployment in deployments:
                profile = profiles[deployment.name] = replace(base, deployment=deployment.name)
                scenarios = deployment.scenarios or ["healthy"]
                # import_demo returns once the store has flushed the import: its replay may start
                import_demo(datasource, profile, scenarios[0], end, HOURS, STEP, more=scenarios[1:], reads=READS)
                # the groups are made here, not on the replay's thread (rendering rules writes a cache file)
                groups = recorder.replayed_groups([profile], every_group=True, reads=checked(profile))
                replayed.append(replays.submit(recorder.replay_groups, server.url, groups, end - REPLAY_SECONDS, end))
            timings["import"] = time.monotonic() - began
            for done in replayed:
                done.result()
        finally:  # an import that fails (or Ctrl-C) drops the replays still queued instead of running them first
            replays.shutdown(cancel_futures=True)
        datasource.flush()
        timings["replay"] = time.monotonic() - began - timings["import"]
        timings["total"] = time.monotonic() - began
    except BaseException:
        server.stop()
        raise
    return server, Store(server.url, end, profiles, list(deployments), timings)


def store_plan() -> list[Deployment]:
    """The shared store's deployments: long-context-64's fault suite plan (its healthy and drill scenarios are the
    drills' ``drill-…`` deployments) and the drill scenarios the suite does not run, each in ``drill-<scenario>``."""
    deployments = suite_plan(PROFILE)
    names = {d.name for d in deployments}
    return [*deployments, *(Deployment(f"drill-{s}", [s]) for s in SCENARIOS if f"drill-{s}" not in names)]


_RUNNING: dict[str, Store] = {}


def shared_store(config: pytest.Config) -> Store:
    """The store the drills and long-context-64's fault suite share: started by the first test to ask in this process
    (``start_drills``), stopped when the session ends."""
    found = _RUNNING.get(PROFILE)
    if found is None:
        server, found = start_drills()
        config.add_cleanup(server.stop)
        _RUNNING[PROFILE] = found
    return found


def start_drills() -> tuple[vmlauncher.VictoriaMetrics, Store]:
    """The shared store started (the caller stops the server)."""
    return start_store(suite_profile(PROFILE), store_plan())


def drills_fixture(scope: str = "module") -> Callable[[pytest.FixtureRequest], dict[str, Drill]]:
    """A pytest fixture (``scope``) giving the drills by scenario, read from :func:`shared_store`."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def drills(request: pytest.FixtureRequest) -> dict[str, Drill]:
        store = shared_store(request.config)
        found = {}
        for scenario in SCENARIOS:
            profile = store.profiles[f"drill-{scenario}"]
            found[scenario] = Drill(profile, scenario, entity(profile, scenario), store.end, store.url, store.timings)
        return found

    return drills
