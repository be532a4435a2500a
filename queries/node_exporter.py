"""PromQL for node_exporter: the KV-cache disks (diskstats), their filesystem, the model disk,
per-node CPU and host memory (metric catalogue §5).

Cache disks are the block devices matching ``profile.disks.cache_device_regex`` (whole NVMe
namespaces; partitions are excluded by node_exporter's defaults); filesystems are selected by
mount point. Every result keeps ``node`` (and ``device`` for disks): nothing is added across nodes.
"""

from __future__ import annotations

from dashgen.deployment.profile import Profile
from queries.promql import agg, divide, job, matcher, node_var, rate, selector


def node_series(profile: Profile, metric: str, *matchers: str) -> str:
    return selector(metric, job(profile, "node_exporter"), node_var(profile), *matchers)


def cache_device(profile: Profile) -> str:
    return matcher("device", "=~", profile.disks.cache_device_regex)


def disk_labels(profile: Profile) -> list[str]:
    return [profile.label("node"), "device"]


def disk_rate(profile: Profile, metric: str) -> str:
    """Per-second rate of a diskstats counter, per node and cache device."""
    return agg("sum", disk_labels(profile), rate(node_series(profile, metric, cache_device(profile))))


def disk_latency(profile: Profile, time_metric: str, ops_metric: str) -> str:
    """Mean time per completed I/O (await) = Δtime / Δops; an idle disk gives no sample, not 0."""
    return divide(disk_rate(profile, time_metric), disk_rate(profile, ops_metric))


def filesystem(profile: Profile, metric: str, mountpoint: str) -> str:
    """A filesystem gauge per node at ``mountpoint`` (max: one value even if a device is listed twice)."""
    return agg("max", [profile.label("node")], node_series(profile, metric, matcher("mountpoint", "=", mountpoint)))


def cpu_mode_share(profile: Profile, mode: str) -> str:
    """Share of CPU time in ``mode`` per node, averaged over the node's CPUs (0-1)."""
    cpu = node_series(profile, "node_cpu_seconds_total", matcher("mode", "=", mode))
    return agg("avg", [profile.label("node")], rate(cpu))


def memory(profile: Profile, metric: str) -> str:
    return agg("max", [profile.label("node")], node_series(profile, metric))
