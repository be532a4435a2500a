"""PromQL for node_exporter: the KV-cache disks (diskstats), their filesystem, the model disk,
per-node CPU and host memory (metric catalogue §5), and the disk op counters that prove I/O.

A filesystem's size is not the disk's nominal size (a 3.84 TB disk shows about 3.44 TiB of
filesystem) and neither is a quota: the three are shown apart (S17). Two "used" quantities exist
and are named apart everywhere: **not available to the cache process** = size - avail (counts the
root-reserved blocks, which an unprivileged cache process cannot write) and **used** = size - free
(blocks actually holding data). On ext4 with a 5 % reserve they differ by 5 % of the size.

A disk's role is its mount point (``[disks]`` cache, model and root mount points): the block device behind
it (``mount_devices``; whole NVMe namespaces, partitions are excluded by node_exporter's defaults); filesystems
are selected by mount point. Every result keeps ``node`` (and ``device`` for disks): nothing is added across nodes.
"""

from __future__ import annotations

from dashgen_queries.promql import agg, deployment, divide, job, matcher, node_var, rate, scale, selector

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import NODE_EXPORTER

SIZE = NODE_EXPORTER.name("node_filesystem_size_bytes")
AVAIL = NODE_EXPORTER.name("node_filesystem_avail_bytes")
FREE = NODE_EXPORTER.name("node_filesystem_free_bytes")
READS = NODE_EXPORTER.name("node_disk_reads_completed_total")
WRITES = NODE_EXPORTER.name("node_disk_writes_completed_total")
TIB = 2**40
UNAVAILABLE_NAME = "not available to the cache process (size − avail)"
USED_NAME = "used (size − free)"


def node_series(profile: Profile, metric: str, *matchers: str) -> str:
    return selector(metric, job(profile, "node_exporter"), node_var(profile), *matchers)


def cache_device(profile: Profile) -> str:
    return matcher("device", "=~", profile.disks.cache_device_regex)


def disk_labels(profile: Profile) -> list[str]:
    return [profile.label("node"), "device"]


def mount_devices(profile: Profile, mountpoint: str, *, scoped: bool = True) -> str:
    """The block device behind ``mountpoint``, per node, named as diskstats names it: the filesystem's
    ``device="/dev/nvme0n1p1"`` becomes ``nvme0n1`` (the whole disk; node_exporter's diskstats leaves partitions
    out by default), ``/dev/sdb1`` becomes ``sdb``. A disk's role is its mount point, never a device-name pattern
    (the cache and the model disk are often both ``nvme*n1``). ``scoped=False``: every node, no ``$node``
    variable (the alert and recording rules)."""
    mount = matcher("mountpoint", "=", mountpoint)
    size = node_series(profile, SIZE, mount) if scoped else selector(SIZE, job(profile, "node_exporter"), mount)
    mounted = agg("max", disk_labels(profile), size)
    named = f'label_replace({mounted}, "device", "$1", "device", "/dev/(.+)")'
    whole_nvme = f'label_replace({named}, "device", "$1", "device", "(nvme[0-9]+n[0-9]+)p[0-9]+")'
    return f'label_replace({whole_nvme}, "device", "$1", "device", "((?:s|v|xv|h)d[a-z]+)[0-9]+")'


def disk_rate(profile: Profile, metric: str, mountpoint: str | None = None) -> str:
    """Per-second rate of a diskstats counter, per node and device: the device behind ``mountpoint`` (the cache
    mount point by default; ``mount_devices``), not a name pattern that also matches OS and model disks."""
    where = profile.disks.cache_mountpoint if mountpoint is None else mountpoint
    rates = agg("sum", disk_labels(profile), rate(node_series(profile, metric)))
    return f"{rates} and on ({', '.join(disk_labels(profile))}) {mount_devices(profile, where)}"


def disk_latency(profile: Profile, time_metric: str, ops_metric: str) -> str:
    """Mean time per completed I/O (await) = Δtime / Δops; an idle disk gives no sample, not 0."""
    return divide(disk_rate(profile, time_metric), disk_rate(profile, ops_metric))


def filesystem(profile: Profile, metric: str, mountpoint: str) -> str:
    """A filesystem gauge per node at ``mountpoint`` (max: one value even if a device is listed twice)."""
    return agg("max", [profile.label("node")], node_series(profile, metric, matcher("mountpoint", "=", mountpoint)))


def cpu_mode_share(profile: Profile, mode: str) -> str:
    """Share of CPU time in ``mode`` per node, averaged over the node's CPUs (0-1)."""
    cpu = node_series(profile, NODE_EXPORTER.name("node_cpu_seconds_total"), matcher("mode", "=", mode))
    return agg("avg", [profile.label("node")], rate(cpu))


def memory(profile: Profile, metric: str) -> str:
    return agg("max", [profile.label("node")], node_series(profile, metric))


# --- the node's clock (S32: a clock off) ----------------------------------------------------------------------

TIMEX_OFFSET = NODE_EXPORTER.name(
    "node_timex_offset_seconds"
)  # node_exporter's timex collector: the kernel's NTP/PTP offset


def clock_offset(profile: Profile) -> str:
    """The node's clock offset from its time source as the kernel reports it (seconds, signed)."""
    return agg("max", [profile.label("node")], node_series(profile, TIMEX_OFFSET))


def newest_sample_age(profile: Profile) -> str:
    """Store clock minus the newest ``up`` sample of the node (any job; the collector stamps them with the node's
    clock): a few scrape intervals when all is well, negative when the node's clock runs ahead, large when it runs
    behind or the collector is silent."""
    node = profile.label("node")
    return f"time() - {agg('max', [node], 'timestamp(' + selector('up', deployment(profile), node_var(profile)) + ')')}"


# --- the cache filesystem, read at the window end per node (S17) ---------------------------------


def cache_filesystem(profile: Profile, metric: str) -> str:
    """A filesystem gauge of the cache mount point, per node and device (not aggregated)."""
    return node_series(profile, metric, matcher("mountpoint", "=", profile.disks.cache_mountpoint))


def disk(profile: Profile, metric: str) -> str:
    """A diskstats counter of the cache devices, per node and device (not aggregated)."""
    return node_series(profile, metric, cache_device(profile))


def unavailable_pct(profile: Profile) -> str:
    """Share of the cache filesystem not available to the cache process at window end, %:
    1 - avail / size (root-reserved blocks count as unavailable)."""
    ratio = f"1 - {divide(cache_filesystem(profile, AVAIL), cache_filesystem(profile, SIZE))}"
    return agg("max", [profile.label("node")], scale(ratio, 100))


def size_tib(profile: Profile) -> str:
    return scale(agg("max", [profile.label("node")], cache_filesystem(profile, SIZE)), 1 / TIB)


def avail_tib(profile: Profile) -> str:
    return scale(agg("max", [profile.label("node")], cache_filesystem(profile, AVAIL)), 1 / TIB)


def unavailable_tib(profile: Profile) -> str:
    """size - avail: what the cache process cannot write (data plus root-reserved blocks)."""
    unavailable = f"{cache_filesystem(profile, SIZE)} - {cache_filesystem(profile, AVAIL)}"
    return scale(agg("max", [profile.label("node")], unavailable), 1 / TIB)


def used_tib(profile: Profile) -> str:
    """size - free: blocks holding data (root-reserved free blocks not counted)."""
    used = f"{cache_filesystem(profile, SIZE)} - {cache_filesystem(profile, FREE)}"
    return scale(agg("max", [profile.label("node")], used), 1 / TIB)
