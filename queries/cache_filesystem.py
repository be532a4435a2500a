"""PromQL for the KV cache disk as the cache-evidence group reads it: the cache filesystem's size
and use from node_exporter (metric catalogue §5), and the disk op counters that prove I/O.

A filesystem's size is not the disk's nominal size (a 3.84 TB disk shows about 3.44 TiB of
filesystem) and neither is a quota: the three are shown apart (S17). Two "used" quantities exist
and are named apart everywhere: **not available to the cache process** = size - avail (counts the
root-reserved blocks, which an unprivileged cache process cannot write) and **used** = size - free
(blocks actually holding data). On ext4 with a 5 % reserve they differ by 5 % of the size.
"""

from __future__ import annotations

from dashgen.deployment.profile import Profile
from queries.promql import agg, divide, job, matcher, node_var, scale, selector

SIZE = "node_filesystem_size_bytes"
AVAIL = "node_filesystem_avail_bytes"
FREE = "node_filesystem_free_bytes"
READS = "node_disk_reads_completed_total"
WRITES = "node_disk_writes_completed_total"
TIB = 2**40
UNAVAILABLE_NAME = "not available to the cache process (size − avail)"
USED_NAME = "used (size − free)"


def filesystem(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, "node_exporter"), node_var(profile),
                    matcher("mountpoint", "=", profile.disks.cache_mountpoint))


def disk(profile: Profile, metric: str) -> str:
    return selector(metric, job(profile, "node_exporter"), node_var(profile),
                    matcher("device", "=~", profile.disks.cache_device_regex))


def unavailable_pct(profile: Profile) -> str:
    """Share of the cache filesystem not available to the cache process at window end, %:
    1 - avail / size (root-reserved blocks count as unavailable)."""
    ratio = f"1 - {divide(filesystem(profile, AVAIL), filesystem(profile, SIZE))}"
    return agg("max", [profile.label("node")], scale(ratio, 100))


def size_tib(profile: Profile) -> str:
    return scale(agg("max", [profile.label("node")], filesystem(profile, SIZE)), 1 / TIB)


def avail_tib(profile: Profile) -> str:
    return scale(agg("max", [profile.label("node")], filesystem(profile, AVAIL)), 1 / TIB)


def unavailable_tib(profile: Profile) -> str:
    """size - avail: what the cache process cannot write (data plus root-reserved blocks)."""
    unavailable = f"{filesystem(profile, SIZE)} - {filesystem(profile, AVAIL)}"
    return scale(agg("max", [profile.label("node")], unavailable), 1 / TIB)


def used_tib(profile: Profile) -> str:
    """size - free: blocks holding data (root-reserved free blocks not counted)."""
    used = f"{filesystem(profile, SIZE)} - {filesystem(profile, FREE)}"
    return scale(agg("max", [profile.label("node")], used), 1 / TIB)
