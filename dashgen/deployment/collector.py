"""The ``[collector]`` section of a profile: the per-node vmagent's bounds (S23) and the scrape targets of
the sources that run on some nodes only.

Seed 000 runs one vmagent per node under systemd with ``CPUQuota=50%``, ``MemoryMax=512M``, swap 0,
``TasksMax=64``, a send queue of at most 1 GB (``-remoteWrite.maxDiskUsagePerURL``) and ``Restart=no``.
The section states those bounds so the Collector group can draw them and the alerts can compare with
them; ``job`` is the scrape job under which each vmagent scrapes its own ``/metrics``. ``[collector.targets]``
counts the targets of the sources that do not run on every node (the Mooncake master, the gateway); every
other exported source has one target per node (``dashgen.deployment.targets``).

A profile without the section has no collector facts: its dashboard says so, and vmagent's own target is
not counted in the coverage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dashgen.deployment.checks import JOB_FORM, JOB_RE, name_problem
from dashgen.deployment.reader import TableReader, parse_duration

# Sources that run on some nodes only; ``[collector.targets]`` says how many targets each has (default 1).
SOME_NODE_SOURCES = ("mooncake_master", "gateway")
MAX_TARGETS = 10_000


@dataclass(frozen=True)
class Collector:
    """The per-node collector (vmagent) as the deployment runs it."""

    job: str = "vmagent"
    scrape_interval: str = "15s"
    scrape_interval_seconds: float = 15.0
    cpu_quota_cores: float = 0.5  # systemd CPUQuota=50 % -> 0.5 cores
    memory_limit_bytes: int = 512 << 20
    send_queue_limit_bytes: int = 1_000_000_000
    tasks_max: int = 64
    # Targets of each source that runs on some nodes only (SOME_NODE_SOURCES), when exported.
    targets: dict[str, int] = field(default_factory=dict)


def _cpu_quota(reader: TableReader) -> float:
    """``cpu_quota``: systemd's ``CPUQuota=`` form, a percentage of one CPU ("50%", "200%")."""
    text = reader.string("cpu_quota", "50%")
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", text)
    if not match or not 0 < float(match.group(1)) <= 100_000:
        raise reader.fail(
            "cpu_quota", f'{text[:40]!r}: expected systemd\'s CPUQuota form, a percentage of one CPU such as "50%"'
        )
    return float(match.group(1)) / 100


def parse_collector(reader: TableReader, exported: set[str]) -> Collector | None:
    """``[collector]``, or None when the profile has no such section. ``exported``: the exported sources."""
    if not reader.table:
        return None
    job = reader.string("job", "vmagent")
    if problem := name_problem(job, JOB_RE, JOB_FORM):
        raise reader.fail("job", problem)
    interval = reader.string("scrape_interval", "15s")
    try:
        seconds = parse_duration(interval)
    except ValueError as exc:
        raise reader.fail("scrape_interval", str(exc)) from None
    quota = _cpu_quota(reader)
    memory = reader.size("memory_limit", required=True)
    queue = reader.size("send_queue_limit", required=True)
    tasks = reader.integer("tasks_max", 64, maximum=1_000_000)
    counts = reader.table_at("targets")
    targets: dict[str, int] = {}
    for name in counts.table:
        if name not in SOME_NODE_SOURCES:
            raise counts.fail(
                name,
                f"not a source that runs on some nodes only; those are "
                f"{', '.join(SOME_NODE_SOURCES)} (every other source has one target per node)",
            )
        if name not in exported:
            raise counts.fail(name, "this source is not exported in the profile's [sources], so it has no targets")
        targets[name] = counts.integer(name, maximum=MAX_TARGETS)
    counts.reject_unknown()
    reader.reject_unknown()
    assert memory is not None and queue is not None
    for key, value in (("memory_limit", memory), ("send_queue_limit", queue)):
        if value <= 0:
            raise reader.fail(key, "must be more than 0 bytes")
    return Collector(job, interval, seconds, quota, memory, queue, tasks, targets)
