"""The ``[alerts]`` section of a profile: the thresholds of the incident alerts (S31-S33) that are the operator's
choice. Every key is optional; a profile without the section gets the defaults below, which are what the alerts
and the Now row's health states (``queries.health``) read.

The conditions themselves (what is compared with what) live in ``queries.health``; this section only says how far
is too far: a disk's busy share and queue depth, how many times its await may grow over its own baseline, how far a
host tier's hit share may fall against its baseline and its peers, what share of a gateway's answers may be shed or
failed, how far a Store master's key count may fall, how far a node's clock may be off, and the baseline window.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen.deployment.reader import TableReader, parse_duration


@dataclass(frozen=True)
class AlertThresholds:
    """Thresholds of the incident alerts, in the units the conditions compare (shares 0-1, seconds, factors)."""

    disk_busy_share: float = 0.9  # share of time the cache device had I/O in flight (rate of io_time)
    disk_queue_depth: float = 10.0  # average requests in flight (rate of io_time_weighted)
    disk_await_factor: float = 4.0  # await above this many times the device's own baseline await
    host_hit_drop_factor: float = 5.0  # host-hit share below 1/this of its own baseline and of its peers' median
    host_hit_min_share: float = 0.05  # a node whose baseline host-hit share is below this cannot collapse
    gateway_shed_share: float = 0.05  # share of a gateway instance's answers that are 429
    gateway_error_share: float = 0.05  # share of its answers that are 5xx or timeouts (408 / 504)
    store_reset_share: float = 0.1  # a master's key count (or allocated bytes) below this share of its recent peak
    store_min_keys: int = 1000  # the recent peak must be at least this many keys to count as a healthy level
    clock_offset_seconds: float = 0.5  # |node_timex_offset_seconds| above this
    baseline_window: str = "6h"  # the own-baseline window of the disk await and the host-hit share ...
    baseline_offset: str = "1h"  # ... ending this long before the evaluation, so a new fault is not its own baseline


DEFAULTS = AlertThresholds()


def _share(reader: TableReader, key: str, default: float) -> float:
    value = reader.number(key, default)
    assert value is not None
    if value >= 1:
        raise reader.fail(key, f"a share between 0 and 1 (exclusive), got {value:g}")
    return value


def _factor(reader: TableReader, key: str, default: float) -> float:
    value = reader.number(key, default)
    assert value is not None
    if value <= 1:
        raise reader.fail(key, f"a factor above 1 (how many times worse than the baseline), got {value:g}")
    return value


def _duration(reader: TableReader, key: str, default: str) -> str:
    text = reader.string(key, default)
    try:
        parse_duration(text)
    except ValueError as exc:
        raise reader.fail(key, str(exc)) from None
    return text


def parse_alerts(reader: TableReader) -> AlertThresholds:
    """``[alerts]``: each threshold, or its default; every error names the file and the field."""
    d = DEFAULTS
    busy = _share(reader, "disk_busy_share", d.disk_busy_share)
    queue = reader.number("disk_queue_depth", d.disk_queue_depth)
    await_factor = _factor(reader, "disk_await_factor", d.disk_await_factor)
    drop = _factor(reader, "host_hit_drop_factor", d.host_hit_drop_factor)
    min_share = _share(reader, "host_hit_min_share", d.host_hit_min_share)
    shed = _share(reader, "gateway_shed_share", d.gateway_shed_share)
    errors = _share(reader, "gateway_error_share", d.gateway_error_share)
    reset = _share(reader, "store_reset_share", d.store_reset_share)
    min_keys = reader.integer("store_min_keys", d.store_min_keys, maximum=10**12)
    clock = reader.number("clock_offset_seconds", d.clock_offset_seconds)
    window = _duration(reader, "baseline_window", d.baseline_window)
    offset = _duration(reader, "baseline_offset", d.baseline_offset)
    reader.reject_unknown()
    if parse_duration(window) < 3600:
        raise reader.fail("baseline_window", f"{window!r}: at least 1h, so a baseline holds more than a blip")
    assert queue is not None and clock is not None
    return AlertThresholds(
        busy, queue, await_factor, drop, min_share, shed, errors, reset, min_keys, clock, window, offset
    )
