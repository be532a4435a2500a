"""Tie the demo together: profile -> rendered dashboards -> wanted metrics -> series -> import.

The only module of ``dashgen.demo`` that does I/O (through a :class:`Datasource`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

from dashgen.build import build_profile
from dashgen.demo.catalogue import MetricModel
from dashgen.demo.collector_series import collector_series
from dashgen.demo.fault_stream import reshape
from dashgen.demo.faults import fault_of, starts
from dashgen.demo.incidents import DRILL_METRICS, apply
from dashgen.demo.scenarios import INCIDENTS, faults
from dashgen.demo.scopes import Plan
from dashgen.demo.series import generate
from dashgen.demo.wanted import Wanted, add_expressions, add_rule_expressions, resolve, wanted_from_dashboards
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.render.memo import Memo, profile_key
from dashgen.rules.render import rule_groups_data


@dataclass(frozen=True)
class ImportSummary:
    profile: str
    scenario: str
    start: float
    end: float
    series: int
    samples: int
    seconds: float
    unknown: tuple[str, ...]


Models = list[tuple[MetricModel, dict[str, tuple[str, ...]]]]

# What the profile's dashboards and rules query, by the profile's content less its deployment value: that value
# is a contract label's (``labels.deployment``), which ``resolve`` leaves to the scope, so the deployments of one
# profile in a shared store (the fault suite's fifteen, the drills' thirteen) read it once; reading it parses
# every panel and rule query of the profile (~0.4 s of CPU for long-context-64). Each call gets its own copy.
_QUERIED: Memo[str, Wanted] = Memo("demo.queried", 16)


def demo_models(
    profile: Profile, scenario: str = "healthy", more: Sequence[str] = (), reads: Sequence[str] | None = None
) -> tuple[Models, list[str]]:
    """The metrics the profile's dashboards and rules query (an alert may read a metric no panel draws), and those
    an incident drill reshapes, resolved to models; and the names without a model. ``reads``: of those, only the
    metrics the rules and these PromQL expressions select (a store whose only readers are the rules and a few known
    queries: the fault suite's and the drills' need three tenths fewer series), each with every label value the
    dashboards add, so that each series kept is the one the full import writes."""
    key = profile_key(replace(profile, deployment=""))
    queried = _QUERIED.get(key)
    if queried is None:
        queried = wanted_from_dashboards([built.document for built in build_profile(profile)])
        add_rule_expressions(queried, rule_groups_data(profile))
        _QUERIED.put(key, queried)
    wanted = queried.copy()
    if reads is not None:
        read_key = "\x00".join((key, "reads", *reads))
        narrow = _QUERIED.get(read_key)
        if narrow is None:
            narrow = Wanted()
            add_expressions(narrow, reads)
            add_rule_expressions(narrow, rule_groups_data(profile))
            _QUERIED.put(read_key, narrow)
        for name in set(wanted.metrics) - set(narrow.metrics):
            del wanted.metrics[name]
        for name, labels in narrow.metrics.items():
            for label, values in labels.items():
                for value in values:
                    wanted.add(name, label, value)
            wanted.add(name)
    if scenario in INCIDENTS:
        for name in DRILL_METRICS:
            wanted.add(name)
    for name in (scenario, *more):
        fault = fault_of(name)
        for change in fault.changes if fault else ():
            wanted.add(change.metric)
    return resolve(wanted, set(profile.labels.values()))


def demo_plan(profile: Profile, scenario: str, end: float, hours: float, step: float = 0.0) -> Plan:
    """The plan of a scenario; a catalogue fault (``fault:<key>``) reshapes the healthy plan's series."""
    healthy = "healthy" if fault_of(scenario) else scenario
    return Plan(profile, Topology(profile), end - hours * 3600, end, step, faults(profile, healthy))


def demo_series(
    plan: Plan,
    models: list[tuple[MetricModel, dict[str, tuple[str, ...]]]],
    scenarios: Sequence[str],
    samples: bool = True,
) -> Iterator[dict[str, Any]]:
    """The plan's import objects (its drill's, every node's clock series), each catalogue fault of ``scenarios``
    applied from its start on. ``samples`` False: the models' series without their values (``series.generate``),
    which no drill or fault can reshape."""
    stream = apply(plan, chain(generate(plan, models, samples), collector_series(plan)))
    for name in scenarios:
        fault = fault_of(name)
        if fault is not None:
            stream = reshape(plan.profile, fault, starts(name, plan.start, plan.end), stream)
    return stream


def _counted(
    series: Iterator[dict[str, Any]], counts: list[int], progress: Callable[[int], None] | None = None
) -> Iterator[dict[str, Any]]:
    for item in series:
        counts[0] += 1
        counts[1] += len(item["values"])
        if progress is not None:
            progress(1)
        yield item


def import_demo(
    datasource: Datasource,
    profile: Profile,
    scenario: str,
    end: float,
    hours: float,
    step: float = 0.0,
    warn: Callable[[str], None] = lambda message: None,
    progress: Callable[[int], None] | None = None,
    more: Sequence[str] = (),
    reads: Sequence[str] | None = None,
) -> ImportSummary:
    """Generate and import one scenario of one profile; ``warn`` hears about metrics without a model,
    ``progress(1)`` of each series sent. ``more``: further catalogue faults (``fault:<key>``, on other nodes) in the
    same deployment; ``reads``: only the metrics the rules and these expressions read (:func:`demo_models`)."""
    began = time.monotonic()
    models, unknown = demo_models(profile, scenario, more, reads)
    for name in unknown:
        warn(f"{profile.name}: no demo model for metric {name!r}; it gets no series")
    plan = demo_plan(profile, scenario, end, hours, step)
    counts = [0, 0]
    stream = demo_series(plan, models, (scenario, *more))
    datasource.import_series(_counted(stream, counts, progress))
    datasource.flush()
    return ImportSummary(
        profile.name, scenario, plan.start, plan.end, counts[0], counts[1], time.monotonic() - began, tuple(unknown)
    )
