"""A catalogue fault (``dashgen.demo.faults``) applied to a stream of import objects (``dashgen.demo.run``): the
changes of the fault reshape the series they match from the fault's time on, and the targets it takes down end or
fail every other scrape. Pure: :func:`reshape` wraps the stream."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dashgen.demo.faults import GPU, NODE, Change, Fault
from dashgen.deployment.profile import Profile


def _resolve(profile: Profile, fault: Fault, value: str) -> str:
    node = profile.node_names[min(fault.node, profile.nodes - 1)]
    return (
        value.replace(NODE, node)
        .replace(GPU, str(fault.gpu))
        .replace("$cache", profile.disks.cache_mountpoint)
        .replace("$model", profile.disks.model_mountpoint)
        .replace("$address", re.escape(profile.node_address(node)))
    )


def _matcher(profile: Profile, fault: Fault, change: Change) -> tuple[tuple[str, str], ...]:
    """A change's label matches, the fault's node, GPU and mount points filled in: once per reshape, not once per
    series (the series of a whole import go through every change of a fault)."""
    return tuple(
        (profile.labels.get(label, label) if label in ("node", "gpu") else label, _resolve(profile, fault, wanted))
        for label, wanted in change.match
    )


def _names(metric: str) -> Callable[[str], bool]:
    """Whether a series name is a change's metric: the name itself, or ``~<regex>`` matching the whole name."""
    return (lambda series: re.fullmatch(metric[1:], series) is not None) if metric[:1] == "~" else metric.__eq__


def _matches(match: tuple[tuple[str, str], ...], labels: dict[str, str]) -> bool:
    """Whether a series (its metric already matched) has the change's labels."""
    for name, want in match:
        have = labels.get(name)
        if have is None or (want != "*" and not (re.fullmatch(want[1:], have) if want[:1] == "~" else have == want)):
            return False
    return True


def _after(stamps: list[int], at_ms: int) -> int:
    return next((i for i, ms in enumerate(stamps) if ms >= at_ms), len(stamps))


def _changed(item: dict[str, Any], change: Change, at_ms: int) -> dict[str, Any]:
    stamps, values = item["timestamps"], list(item["values"])
    first = _after(stamps, at_ms)
    if change.kind == "stop":
        return {**item, "values": values[:first], "timestamps": stamps[:first]}
    base = values[first - 1] if first else (values[0] if values else 0.0)
    for i in range(first, len(values)):
        elapsed = (stamps[i] - stamps[first]) / 1000 if first < len(stamps) else 0.0
        if change.kind == "gauge":
            values[i] = change.value
        elif change.kind == "flat":
            values[i] = base
        elif change.kind == "scale":
            values[i] = values[i] * change.value
        elif change.kind == "step":
            values[i] = values[i] + change.value
        elif change.kind == "rate":
            values[i] = base + change.value * elapsed
    return {**item, "values": values}


def _flapped(item: dict[str, Any], at_ms: int, up: bool) -> dict[str, Any]:
    """Every other scrape from ``at_ms`` on failed: ``up`` reads 0 then, any other series has no sample."""
    stamps, values = item["timestamps"], item["values"]
    first = _after(stamps, at_ms)
    failed = [i >= first and (i - first) % 2 == 1 for i in range(len(stamps))]
    if up:
        return {**item, "values": [0.0 if bad else v for v, bad in zip(values, failed, strict=True)]}
    kept = [i for i, bad in enumerate(failed) if not bad]
    return {**item, "values": [values[i] for i in kept], "timestamps": [stamps[i] for i in kept]}


def _copy(item: dict[str, Any], change: Change, at_ms: int) -> dict[str, Any] | None:
    stamps = item["timestamps"]
    first = _after(stamps, at_ms)
    if first >= len(stamps):
        return None
    kept = stamps[first:]
    values = [change.value * (ms - kept[0]) / 1000 for ms in kept]
    return {"metric": {**item["metric"], **dict(change.relabel)}, "values": values, "timestamps": kept}


def _ending(profile: Profile, fault: Fault) -> Callable[[dict[str, str]], bool]:
    """Whether a series belongs to a target the fault takes down on its node (every target: ``*``)."""
    node_label, job_label = profile.label("node"), profile.label("job")
    node = profile.node_names[min(fault.node, profile.nodes - 1)]
    every_source = "*" in fault.sources
    jobs = {profile.sources[s].job for s in fault.sources if s in profile.sources}

    def ends(labels: dict[str, str]) -> bool:
        if labels.get(node_label) != node and not fault.every_node:
            return False
        return every_source or labels.get(job_label, "") in jobs

    return ends


def reshape(profile: Profile, fault: Fault, at: float, stream: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The stream with ``fault`` applied from ``at`` (epoch seconds) on."""
    at_ms = int(at * 1000)
    ends = _ending(profile, fault)
    changes = [(change, _names(change.metric), _matcher(profile, fault, change)) for change in fault.changes]
    # series name -> its changes in the fault's order (each name tested once, not once per series and change)
    named: dict[str, list[tuple[Change, tuple[tuple[str, str], ...]]]] = {}
    for item in stream:
        labels = item["metric"]
        name = labels.get("__name__", "")
        if (applying := named.get(name)) is None:
            applying = named[name] = [(change, match) for change, is_it, match in changes if is_it(name)]
        if not applying and not (fault.sources and ends(labels)):  # most series: nothing of the fault's reaches them
            if item["timestamps"]:
                yield item
            continue
        if fault.sources and ends(labels):
            if fault.flapping:
                item = _flapped(item, at_ms, labels.get("__name__") == "up")
            elif labels.get("__name__") == "up" and fault.up is not None and "*" not in fault.sources:
                item = _changed(item, Change("up", (), "gauge", fault.up), at_ms)
            else:
                item = _changed(item, Change(labels["__name__"], (), "stop"), at_ms)
        for change, match in applying:
            if _matches(match, labels):
                if change.kind == "drop":
                    item = {**item, "values": [], "timestamps": []}
                elif change.kind == "copy":
                    copied = _copy(item, change, at_ms)
                    if copied is not None:
                        yield copied
                else:
                    item = _changed(item, change, at_ms)
        if item["timestamps"]:
            yield item
