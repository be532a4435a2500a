"""The demo's collector series (S23, S26): each node's vmagent as it reports itself (CPU, memory, threads,
send queue, dropped data, failed scrapes), what it writes per target (``up`` of its own job,
``scrape_duration_seconds``, ``scrape_samples_scraped``), the targets of the sources the profile runs on
several nodes beyond the demo's one (``[collector.targets]``), and ``ALERTS`` for the scenario's faults.

Healthy: vmagent well inside the profile's bounds (resident memory about a third of ``memory_limit``, the
send queue near empty, nothing dropped). A node whose targets fail (five-reasons, collection failed) keeps
a live collector: its scrapes fail and count, which is what tells a target fault from a collector fault.
Names and label sets are vmagent 1.79's (metric catalogue §10). Streams import objects like
``dashgen.demo.series``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from dashgen.demo.endpoints import PORTS
from dashgen.demo.scenarios import NodeFault
from dashgen.demo.scopes import TARGET_OF, Plan, target_labels
from dashgen.demo.values import import_object, series_rng, timestamps

VMAGENT_PORT = 8429
QUEUE_PATH = "/var/lib/vmagent/persistent-queue/1_0123456789ABCDEF"
URL = "1:secret-url"  # vmagent's url label without -remoteWrite.showURL
NAMES = frozenset(
    {
        "ALERTS",
        "ALERTS_FOR_STATE",
        "process_cpu_seconds_total",
        "process_cpu_cores_available",
        "process_resident_memory_bytes",
        "process_memory_limit_bytes",
        "process_num_threads",
        "vmagent_remotewrite_pending_data_bytes",
        "vm_persistentqueue_bytes_pending",
        "vmagent_remotewrite_packets_dropped_total",
        "vmagent_remotewrite_samples_dropped_total",
        "vm_persistentqueue_bytes_dropped_total",
        "vm_promscrape_scrapes_failed_total",
        "scrape_duration_seconds",
        "scrape_samples_scraped",
    }
)
SAMPLES_PER_TARGET = {
    "sglang": 900,
    "dcgm": 700,
    "gpm": 160,
    "node_exporter": 1400,
    "mooncake_master": 120,
    "gateway": 300,
    "mooncake_client": 200,
}


def _grid(plan: Plan, spacing: float) -> list[int]:
    first = math.ceil(plan.start / spacing) * spacing
    count = int((plan.end - first) // spacing) + 1
    return [int(round((first + i * spacing) * 1000)) for i in range(max(count, 0))]


def _targets(plan: Plan, node: str) -> list[str]:
    """The profile sources with a scrape target on ``node`` in the demo (as ``dashgen.demo.series.up_series``)."""
    found = []
    for source in plan.profile.sources.values():
        if not source.exported or source.name in TARGET_OF:
            continue
        if source.name in ("mooncake_master", "gateway") and node != plan.master_node:
            continue
        found.append(source.name)
    return found


def _wave(rng: Any, stamps: list[int], base: float, amp: float, period: float = 1800.0) -> list[float]:
    phase = rng.uniform(0, 2 * math.pi)
    return [
        max(base + amp * math.sin(2 * math.pi * ms / 1000 / period + phase) + rng.gauss(0, amp / 10), 0.0)
        for ms in stamps
    ]


def _counter(rng: Any, stamps: list[int], per_second: float) -> list[float]:
    value, last, out = rng.uniform(1e3, 1e4) * per_second, None, []
    for ms in stamps:
        if last is not None:
            value += per_second * (ms - last) / 1000 * rng.uniform(0.8, 1.2)
        out.append(round(value, 3))
        last = ms
    return out


def _own(plan: Plan, node: str) -> Iterator[dict[str, Any]]:
    profile, collector = plan.profile, plan.profile.collector
    assert collector is not None
    labels = {
        profile.label("node"): node,
        profile.label("job"): collector.job,
        profile.label("instance"): f"{node}:{VMAGENT_PORT}",
    }
    if profile.deployment:
        labels[profile.label("deployment")] = profile.deployment
    stamps = _grid(plan, max(collector.scrape_interval_seconds, plan.step))
    failing = plan.fault(node).down
    rng = series_rng("vmagent", labels)
    queue = {**labels, "path": QUEUE_PATH}
    yield import_object("up", labels, [1.0] * len(stamps), stamps)
    gauges = {
        "process_cpu_cores_available": (labels, [collector.cpu_quota_cores] * len(stamps)),
        "process_memory_limit_bytes": (labels, [float(collector.memory_limit_bytes)] * len(stamps)),
        "process_resident_memory_bytes": (
            labels,
            _wave(rng, stamps, 0.33 * collector.memory_limit_bytes, 0.04 * collector.memory_limit_bytes),
        ),
        "process_num_threads": (labels, [float(round(v)) for v in _wave(rng, stamps, 18, 2)]),
        "vmagent_remotewrite_pending_data_bytes": ({**queue, "url": URL}, _wave(rng, stamps, 40_000, 20_000)),
        "vm_persistentqueue_bytes_pending": (queue, [0.0] * len(stamps)),
    }
    for name, (series_labels, values) in gauges.items():
        yield import_object(name, series_labels, values, stamps)
    counters = {
        "process_cpu_seconds_total": (labels, 0.06 * collector.cpu_quota_cores / 0.5),
        "vmagent_remotewrite_packets_dropped_total": ({**labels, "url": URL}, 0.0),
        "vmagent_remotewrite_samples_dropped_total": ({**labels, "url": URL}, 0.0),
        "vm_persistentqueue_bytes_dropped_total": (queue, 0.0),
        "vm_promscrape_scrapes_failed_total": (labels, len(_targets(plan, node)) / 15.0 if failing else 0.0),
    }
    for name, (series_labels, per_second) in counters.items():
        values = _counter(rng, stamps, per_second) if per_second else [0.0] * len(stamps)
        yield import_object(name, series_labels, values, stamps)


def _per_target(plan: Plan, node: str) -> Iterator[dict[str, Any]]:
    fault = plan.fault(node)
    for source in _targets(plan, node):
        labels = target_labels(plan, node, source)
        stamps = timestamps(plan, source, NodeFault())
        rng = series_rng("scrape", labels)
        duration = _wave(rng, stamps, 0.04 if source != "gpm" else 0.01, 0.01)
        samples = [0.0 if fault.down else float(SAMPLES_PER_TARGET.get(source, 200))] * len(stamps)
        yield import_object("scrape_duration_seconds", labels, duration, stamps)
        yield import_object("scrape_samples_scraped", labels, samples, stamps)


def _more_targets(plan: Plan) -> Iterator[dict[str, Any]]:
    """``up`` of the extra targets ``[collector.targets]`` gives a source on some nodes (the demo's first runs
    on the master node): one on each following node, so a healthy demo reads the profile's expected count."""
    profile = plan.profile
    assert profile.collector is not None
    for source, count in profile.collector.targets.items():
        for index in range(1, count):
            node = profile.node_names[index % profile.nodes]
            labels = {
                **target_labels(plan, node, source),
                profile.label("instance"): f"{node}:{PORTS[source] + index // profile.nodes}",
            }
            stamps = timestamps(plan, source, NodeFault())
            yield import_object("up", labels, [0.0 if plan.fault(node).down else 1.0] * len(stamps), stamps)


def _alerts(plan: Plan) -> Iterator[dict[str, Any]]:
    """ALERTS (and ALERTS_FOR_STATE) the rules would fire for the scenario: ``<Source>CollectionFailed`` on a node
    whose targets fail."""
    profile = plan.profile
    for node in profile.node_names:
        if not plan.fault(node).down:
            continue
        for source in _targets(plan, node):
            if source == "sglang":
                alert, severity = "EngineMetricsScrapeFailing", "critical"
            else:
                alert, severity = "".join(p.capitalize() for p in source.split("_")) + "CollectionFailed", "warning"
            labels = {
                **target_labels(plan, node, source),
                "alertname": alert,
                "alertstate": "firing",
                "severity": severity,
            }
            stamps = timestamps(plan, source, NodeFault())
            yield import_object("ALERTS", labels, [1.0] * len(stamps), stamps)
            # as the evaluator writes it beside ALERTS: the same labels but alertstate, value the activation time
            active = {name: value for name, value in labels.items() if name != "alertstate"}
            yield import_object("ALERTS_FOR_STATE", active, [stamps[0] / 1000] * len(stamps), stamps)


def collector_series(plan: Plan) -> Iterator[dict[str, Any]]:
    """Every collector series of the plan; only ALERTS when the profile has no ``[collector]`` section."""
    yield from _alerts(plan)
    if plan.profile.collector is None:
        return
    for node in plan.profile.node_names:
        yield from _own(plan, node)
        yield from _per_target(plan, node)
    yield from _more_targets(plan)
