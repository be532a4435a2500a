"""PromQL for the Mooncake Store master as the cache-evidence group reads it (metric catalogue §3).

S11: the master's ``node`` label names where the master runs, not where data lives. Per-node
Store numbers come from ``segment="host:port"`` (one segment per SGLang rank that mounts memory):
the host part is written into the node label with ``label_replace``. Assumption (stated on the
panels): the segment's host equals the node name the vmagents put in ``node`` (the profile's node
names are the hosts, and Mooncake's ``local_hostname`` is the host name). Where segments carry IPs
instead, these rows stay empty, never mis-attributed; an IP -> node info series would be needed.

Master counters (``mem_cache_hit_nums_`` ...) have no storage-node label: they are never split per
node (S14). Several master targets (HA) are de-duplicated per segment with ``max``.
"""

from __future__ import annotations

from dashgen.profile import Profile
from queries.promql import agg, divide, increase, job, matcher, scale, selector

ALLOCATED = "segment_allocated_bytes"
CAPACITY = "segment_total_capacity_bytes"
MASTER_ALLOCATED = "master_allocated_bytes"
MASTER_CAPACITY = "master_total_capacity_bytes"
RAM_RETURNS = "mem_cache_hit_nums_"
SSD_RETURNS = "file_cache_hit_nums_"
KEY_COUNT = "master_key_count"
RAM_OBJECTS = "mem_cache_nums_"
SSD_OBJECTS = "file_cache_nums_"
SEGMENT_HOST_REGEX = "(.+):[0-9]+"
GIB = 2**30


def master(profile: Profile, metric: str, *matchers: str) -> str:
    return selector(metric, job(profile, "mooncake_master"), *matchers)


def segment_selector(profile: Profile, metric: str) -> str:
    """A per-segment gauge restricted to the segments of the nodes chosen in ``$node``."""
    return master(profile, metric, matcher("segment", "=~", "($node):[0-9]+"))


def to_node(profile: Profile, expr: str) -> str:
    """Replace the master's node label by the host part of ``segment`` (S11)."""
    return f'label_replace({expr}, "{profile.label("node")}", "$1", "segment", "{SEGMENT_HOST_REGEX}")'


def per_segment(profile: Profile, metric: str) -> str:
    """One series per (data-holding node, segment), duplicates from several masters removed."""
    return agg("max", [profile.label("node"), "segment"], to_node(profile, segment_selector(profile, metric)))


def per_node_bytes(profile: Profile, metric: str) -> str:
    """Bytes of a segment gauge per data-holding node (distinct segments added)."""
    return agg("sum", [profile.label("node")], per_segment(profile, metric))


def per_node_gib(profile: Profile, metric: str) -> str:
    return scale(per_node_bytes(profile, metric), 1 / GIB)


def per_node_occupancy_pct(profile: Profile) -> str:
    """Store allocation at window end as % of the node's mounted segment capacity."""
    return scale(divide(per_node_bytes(profile, ALLOCATED), per_node_bytes(profile, CAPACITY)), 100)


def segments_per_node(profile: Profile) -> str:
    """Mounted segments per node (one per rank client); the rank <-> port map is not exported."""
    return agg("count", [profile.label("node")], per_segment(profile, CAPACITY))


def node_group(profile: Profile, metric: str) -> str:
    """A master-global gauge (node-group total), one value per master job."""
    return agg("max", [profile.label("job")], master(profile, metric))


def returns_in_window(profile: Profile, metric: str) -> str:
    return agg("max", [profile.label("job")], increase(master(profile, metric)))


def source_share_pct(profile: Profile, numerator: str) -> str:
    """S12: RAM (or SSD) returns / (RAM + SSD returns) in the window, %. Misses are not in it."""
    ram, ssd = increase(master(profile, RAM_RETURNS)), increase(master(profile, SSD_RETURNS))
    part = ram if numerator == RAM_RETURNS else ssd
    return scale(divide(part, f"{ram} + {ssd}"), 100)


def presence(profile: Profile) -> str:
    """The per-segment capacity gauge: its samples prove the node's Store clients are mounted."""
    return segment_selector(profile, CAPACITY)
