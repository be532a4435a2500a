"""PromQL for the KV cache disk as the cache-evidence group reads it: the cache filesystem's size
and use from node_exporter (metric catalogue §5), and the disk op counters that prove I/O.

A filesystem's size is not the disk's nominal size (a 3.84 TB disk shows about 3.44 TiB of
filesystem) and neither is a quota: the three are shown apart (S17).
"""

from __future__ import annotations

from dashgen.profile import Profile
from queries.promql import agg, divide, job, matcher, node_var, scale, selector

SIZE = "node_filesystem_size_bytes"
AVAIL = "node_filesystem_avail_bytes"
READS = "node_disk_reads_completed_total"
WRITES = "node_disk_writes_completed_total"
TIB = 2**40


def filesystem(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, "node_exporter"), node_var(profile),
                    matcher("mountpoint", "=", profile.disks.cache_mountpoint))


def disk(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, "node_exporter"), node_var(profile),
                    matcher("device", "=~", profile.disks.cache_device_regex))


def used_pct(profile: Profile) -> str:
    """Used share of the cache filesystem at window end, % (non-root view: 1 - avail / size)."""
    ratio = f"1 - {divide(filesystem(profile, AVAIL), filesystem(profile, SIZE))}"
    return agg("max", [profile.label("node")], scale(ratio, 100))


def size_tib(profile: Profile) -> str:
    return scale(agg("max", [profile.label("node")], filesystem(profile, SIZE)), 1 / TIB)


def avail_tib(profile: Profile) -> str:
    return scale(agg("max", [profile.label("node")], filesystem(profile, AVAIL)), 1 / TIB)


def used_tib(profile: Profile) -> str:
    used = f"{filesystem(profile, SIZE)} - {filesystem(profile, AVAIL)}"
    return scale(agg("max", [profile.label("node")], used), 1 / TIB)
