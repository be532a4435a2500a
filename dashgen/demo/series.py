"""The demo's series model: (profile, topology, scenario, window, wanted metrics) -> VictoriaMetrics
import objects ``{"metric": {...}, "values": [...], "timestamps": [ms, ...]}``, streamed one series
at a time so hours of 1 s GPU data never sit in memory at once.

The label sets come from ``dashgen.demo.scopes``, the samples from ``dashgen.demo.values``; this
module applies the scenario: a node that is down has only ``up == 0``, a source absent on a node
has no series there, no traffic / no I/O flatten the counters that need them, an
absent-until-first-event counter appears mid-window, and a lost GPU's series end mid-window after
its Xid.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from dashgen_queries.inventory import INVENTORY, inventory_labels

from dashgen.demo.catalogue import Histogram, MetricModel, Rate, Wave
from dashgen.demo.diffusion_series import diffusion_series
from dashgen.demo.scenarios import LOST_AT, LOST_XID, XID_AT, NodeFault
from dashgen.demo.scopes import TARGET_OF, Plan, SeriesSpec, expand_extra_labels, scope_series, target_labels
from dashgen.demo.values import (
    _grid,
    counter_values,
    filesystem_values,
    gauge_values,
    histogram_series,
    import_object,
    series_rng,
    timestamps,
)
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.exporters.availability import Stated, adapt

# -- the generator --------------------------------------------------------------------------------

RULE_INTERVAL = 30.0  # how often the demo's stand-in recorder "evaluates" the inventory rules (seconds)


def inventory_series(
    profile: Profile, topology: Topology, start: float, end: float, step: float = RULE_INTERVAL
) -> Iterator[dict[str, Any]]:
    """The node inventory (``queries.inventory``) as vmalert or Prometheus records it from the rule file:
    ``1`` per profile node every ``step`` seconds, with the rule's labels (deployment, node, segment host,
    replica). The demo has no recorder, so it writes what the recorder would."""
    stamps = list(_grid(start, end, max(step, RULE_INTERVAL)))
    scope = {profile.label("deployment"): profile.deployment} if profile.deployment else {}
    for labels in inventory_labels(profile, topology):
        yield import_object(INVENTORY, {**scope, **dict(labels)}, [1.0] * len(stamps), stamps)


def up_series(plan: Plan) -> Iterator[dict[str, Any]]:
    """``up`` per target per node: 1, or 0 on a node whose collection failed; a missing target has none."""
    p = plan.profile
    targets = [s for s in p.sources.values() if s.exported and s.name not in TARGET_OF]
    for node in p.node_names:
        fault = plan.fault(node)
        for source in targets:
            if source.name == "mooncake_master" and node != plan.master_node:
                continue
            if source.name == "gateway" and node != plan.gateway_node:
                continue
            if fault.down and fault.missing_job_source == source.name:
                continue
            stamps = timestamps(plan, source.name, NodeFault())
            value = 0.0 if fault.down else 1.0
            yield import_object("up", target_labels(plan, node, source.name), [value] * len(stamps), stamps)


def metric_series(
    plan: Plan, model: MetricModel, extra: dict[str, tuple[str, ...]], samples: bool = True
) -> Iterator[dict[str, Any]]:
    """Every series of one metric under the plan's scenario. ``samples`` False: each series' labels and timestamps
    only, its ``values`` None and none of its samples computed (the same series, each seeded from its own labels)."""
    extra = dict(extra)
    bounds = {float(v) for v in extra.pop("le", ()) if v not in ("+Inf", "inf")}
    specs = expand_extra_labels(scope_series(plan, model), {**model.labels, **extra})
    for spec in specs:
        fault = plan.fault(spec.node)
        if fault.down or model.source in fault.absent_sources:
            continue
        share_of = model.model.share_of if isinstance(model.model, Rate) else ""
        seed = share_of or model.name
        rng = series_rng(seed, spec.labels) if samples else None
        if model.kind == "histogram":
            assert isinstance(model.model, Histogram)
            stamps = timestamps(plan, model.source, fault)
            flat = fault.no_traffic and model.model.traffic == "requests"
            histogram = model.model
            if bounds - set(histogram.buckets):
                histogram = replace(histogram, buckets=tuple(sorted(set(histogram.buckets) | bounds)))
            yield from histogram_series(plan, model.name, histogram, spec.labels, rng, stamps, flat)
            continue
        if model.kind == "counter":
            assert isinstance(model.model, Rate)
            rate_model = model.model.for_labels(spec.labels)
            flat = (fault.no_traffic and rate_model.traffic == "requests") or (
                fault.no_io and rate_model.traffic == "io" and spec.extra.get("cache", True)
            )
            start = None
            from_zero = False
            if model.first_event and rate_model.rare and spec.active:
                if flat:
                    continue  # the rare event never happened on this node: the series does not exist yet
                # the series' first draw, so the time of its first sample is the same with or without samples
                first = (rng if rng is not None else series_rng(seed, spec.labels)).uniform(0.3, 0.6)
                start = plan.start + (plan.end - plan.start) * first
                from_zero = True
            stamps = timestamps(plan, model.source, fault, start)
            values = None
            if rng is not None:
                values = counter_values(plan, rate_model, rng, stamps, flat, from_zero, seeded_zero=not spec.active)
            if (lost := _lost_at(plan, fault, spec)) is not None:
                values, stamps = _until_lost(plan, model, values, stamps, lost)
            yield import_object(model.name, spec.labels, values, stamps)
            continue
        assert isinstance(model.model, Wave)
        stamps = timestamps(plan, model.source, fault)
        lost = _lost_at(plan, fault, spec)
        idle = fault.no_traffic or (fault.no_io and model.scope == "disk" and spec.extra.get("cache", False))
        values = None
        if rng is not None:
            filesystem = model.scope == "filesystem"
            filled = filesystem_values(model.name, spec.extra["size"], rng, stamps) if filesystem else None
            values = filled if filled is not None else gauge_values(plan, model.model, rng, stamps, idle)
        if lost is not None:
            values, stamps = _until_lost(plan, model, values, stamps, lost)
        yield import_object(model.name, spec.labels, values, stamps)


XID_METRIC = "DCGM_FI_DEV_XID_ERRORS"


def _lost_at(plan: Plan, fault: NodeFault, spec: SeriesSpec) -> float | None:
    """The time (ms) a lost GPU's series end, for the series of that GPU; else None."""
    if fault.lost_gpu is None or spec.extra.get("gpu") != fault.lost_gpu:
        return None
    return (plan.start + (plan.end - plan.start) * LOST_AT) * 1000


def _until_lost(
    plan: Plan, model: MetricModel, values: list[float] | None, stamps: list[int], lost: float
) -> tuple[list[float] | None, list[int]]:
    """The samples before the GPU was lost; its last Xid code reads LOST_XID from XID_AT on."""
    if values is None:
        return None, [ms for ms in stamps if ms < lost]
    xid_at = (plan.start + (plan.end - plan.start) * XID_AT) * 1000
    kept = [
        (LOST_XID if model.name == XID_METRIC and ms >= xid_at else v, ms)
        for v, ms in zip(values, stamps, strict=True)
        if ms < lost
    ]
    return [v for v, _ in kept], [ms for _, ms in kept]


def generate(
    plan: Plan, models: list[tuple[MetricModel, dict[str, tuple[str, ...]]]], samples: bool = True
) -> Iterator[dict[str, Any]]:
    """``up`` and every series of the given metrics (each with extra label values to cover), skipping
    sources the profile does not export and series its stated exporter versions and flags never write, each
    under the name its stated version and scrape path write (``dashgen.exporters``, S35). ``samples`` False: the
    metrics' series without their values (:func:`metric_series`), for a check that reads only which series exist."""
    yield from up_series(plan)
    yield from inventory_series(plan.profile, plan.topology, plan.start, plan.end, plan.step)
    stated = {name: source.stated for name, source in plan.profile.sources.items() if source.exported}
    for model, extra in models:
        if plan.profile.exported(model.source) and not adapt(model.name, stated).missing:
            yield from as_written(metric_series(plan, model, extra, samples), stated)
    yield from as_written(diffusion_series(plan), stated)


def as_written(series: Iterator[dict[str, Any]], stated: Mapping[str, Stated]) -> Iterator[dict[str, Any]]:
    """Each import object under the name the stated exporter version and scrape path write."""
    renamed: dict[str, str] = {}
    for item in series:
        name = item["metric"]["__name__"]
        if name not in renamed:
            renamed[name] = adapt(name, stated).expr
        if renamed[name] != name:
            item["metric"]["__name__"] = renamed[name]
        yield item
