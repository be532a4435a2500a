"""The incident-drill harness (S31-S35): ONE production-like VictoriaMetrics (long-context-64's ``[store]`` flags:
30 s deduplication, 30 s latency offset) holding each drill scenario of ``dashgen.demo.scenarios`` in its own
deployment (``cluster="drill-<scenario>"``, the same node names: several deployments share one store, as in
production), every window ending at the same anchor; then the real vmalert replays ALL rule groups of every
deployment (alerts included, so ``ALERTS`` is written back) over the last ``REPLAY_SECONDS`` of the windows.

:func:`start_drills` does it once; :func:`drills_fixture` makes a pytest fixture of it. Each :class:`Drill` answers
instant queries at its window's end and lists the alerts firing there for its deployment.

Imported at the store's resolution (30 s, what the deduplicated store keeps of every faster source anyway): the
whole fixture (16 imports of a 1 h window, 3 vmalert passes) takes about 30 s on an idle 2-core machine, about a
minute when the cores are shared; ``Drill.timings`` holds the measure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from victoriametrics import program_or_skip, start_production_store

from dashgen.demo import recorder, vmlauncher
from dashgen.demo.run import import_demo
from dashgen.demo.scenarios import INCIDENTS, entity
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.live.datasource import Datasource

PROFILE = "long-context-64"
SCENARIOS = ("healthy", "gpu-missing", *INCIDENTS)
HOURS = 1.0
STEP = 30.0  # import spacing: the production store keeps one sample per 30 s ([store] resolution)
REPLAY_SECONDS = 1800.0  # longer than the longest `for:` of the alerts (15 min) plus a few rate windows


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
        return Datasource(self.url, timeout=60).query(expr, self.end).result

    def firing(self) -> list[dict[str, str]]:
        """The label sets of this deployment's alerts firing at the window's end (the last evaluation)."""
        expr = f'last_over_time(ALERTS{{alertstate="firing", {self.scoped()}}}[{recorder.RULE_INTERVAL_SECONDS}s])'
        return [{k: v for k, v in item["metric"].items() if k != "__name__"} for item in self.query(expr)]


# The drills' windows are 1 h long, so the own-baseline alerts (disk await, host-tier hit share) compare with the
# 20 minutes ending 25 minutes before each evaluation instead of the default 6 h ending 1 h before (which a 1 h
# window has no data for). The fault starts at 60 % of the window, after that baseline; every other threshold is the
# default, and the promtool cases test the default baseline.
DRILL_BASELINE = {"baseline_window": "20m", "baseline_offset": "25m"}


def drill_profile(base: Profile, scenario: str) -> Profile:
    """``base`` as deployment ``drill-<scenario>`` with the drills' baseline window (``DRILL_BASELINE``)."""
    return replace(base, deployment=f"drill-{scenario}", alerts=replace(base.alerts, **DRILL_BASELINE))


def start_drills(
    scenarios: Sequence[str] = SCENARIOS, replay: bool = True
) -> tuple[vmlauncher.VictoriaMetrics, dict[str, Drill], dict[str, float]]:
    """Start the store, import each scenario into ``drill-<scenario>`` and replay every rule group; the server (the
    caller stops it), the drills by scenario, and how long each step took (seconds)."""
    (base,) = load_profiles([PROFILE])
    if replay:
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
        drills = {}
        for scenario in scenarios:
            profile = drill_profile(base, scenario)
            import_demo(datasource, profile, scenario, end, HOURS, STEP)
            drills[scenario] = Drill(profile, scenario, entity(profile, scenario), end, server.url)
        datasource.flush()
        timings["import"] = time.monotonic() - began
        if replay:
            replayed = time.monotonic()
            recorder.replay(
                server.url, [d.profile for d in drills.values()], end - REPLAY_SECONDS, end, every_group=True
            )
            datasource.flush()
            timings["replay"] = time.monotonic() - replayed
        timings["total"] = time.monotonic() - began
    except BaseException:
        server.stop()
        raise
    return server, drills, timings


def drills_fixture(
    scenarios: Sequence[str] = SCENARIOS, scope: str = "module"
) -> Callable[[], Iterator[dict[str, Drill]]]:
    """A pytest fixture (``scope``) yielding the drills by scenario; the store stops after the last test."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def drills() -> Iterator[dict[str, Drill]]:
        server, found, timings = start_drills(scenarios)
        for drill in found.values():
            drill.timings = timings
        try:
            yield found
        finally:
            server.stop()

    return drills
