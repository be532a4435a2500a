"""PromQL for the Mooncake Store master as the cache-evidence group reads it (metric catalogue §3).

S11: the master's ``node`` label names where the master runs, not where data lives. Per-node
Store numbers come from ``segment="<host>:<port>"`` (one segment per SGLang rank that mounts
memory), whose host is the client's ``local_hostname``, normally the node's IP. The profile is the
source of truth for host -> node: ``cluster.node_addresses`` (a node not listed registers under its
node name). The mapping is not written into the queries (it would grow with the node count: 35 KB at
128 nodes, over VictoriaMetrics' 16 KiB query limit); it is the node inventory series
(``queries.inventory``, one recording rule per node carrying ``segment_host``), joined on the
segment's host part::

    label_replace(m, "segment_host", "$1", "segment", "(.*):[0-9]+")
      * on(segment_host) group_left(node) max by (segment_host, node) (node:dashgen_inventory:info)

``group_left(node)`` overwrites the master's own ``node`` label with the data-holding node; the join
keeps the mapped segments only and ``unless on(segment_host)`` the unmapped ones, so the query text is
the same for 2 and for 2,000 nodes.
Segments whose host is in no profile entry are never silently dropped: ``unmapped_segments``
counts them (a Store stat), and the Missing-data table reports "segment host not mapped" instead of
"uninitialised" for a node without mapped segments while unmapped ones exist.

The KV-cache group's capacity view (``by_host``) labels each segment ``host``: the node name for a
mapped host and the raw segment host (e.g. an IP) for a host the profile does not know, so an
unmapped segment stays visible under its address instead of vanishing. Per-host sums add distinct
segments, which is sound.

Master counters (``mem_cache_hit_nums_`` ...) have no storage-node label: they are never split per
node (S14). Several master targets (HA) are de-duplicated per segment with ``max``.
"""

from __future__ import annotations

from dashgen_queries.inventory import REPLICA, SEGMENT_HOST, host_to_node, node_to_replica
from dashgen_queries.promql import agg, divide, increase, job, matcher, node_var, rate, scale, selector

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.exporters.table import MOONCAKE_MASTER

ALLOCATED = MOONCAKE_MASTER.name("segment_allocated_bytes")
CAPACITY = MOONCAKE_MASTER.name("segment_total_capacity_bytes")
MASTER_ALLOCATED = MOONCAKE_MASTER.name("master_allocated_bytes")
MASTER_CAPACITY = MOONCAKE_MASTER.name("master_total_capacity_bytes")
RAM_RETURNS = MOONCAKE_MASTER.name("mem_cache_hit_nums_")
SSD_RETURNS = MOONCAKE_MASTER.name("file_cache_hit_nums_")
KEY_COUNT = MOONCAKE_MASTER.name("master_key_count")
RAM_OBJECTS = MOONCAKE_MASTER.name("mem_cache_nums_")
SSD_OBJECTS = MOONCAKE_MASTER.name("file_cache_nums_")
PORT_REGEX = ":[0-9]+"
GIB = 2**30
HOST_LABEL = "host"  # the capacity view's label: node name of a mapped segment host, else the raw host
REPLICA_LABEL = REPLICA  # the engine replica a segment's node belongs to (the inventory's label)
_REGEX_SPECIAL = set(".^$*+?()[]{}|\\")


def regex_literal(text: str) -> str:
    """``text`` as a literal inside a (RE2) regular expression."""
    return "".join(f"\\{c}" if c in _REGEX_SPECIAL else c for c in text)


def segment_hosts(profile: Profile) -> dict[str, str]:
    """Node name -> the host its segments carry, from the profile (S11)."""
    return {node: profile.node_address(node) for node in profile.node_names}


def master(profile: Profile, metric: str, *matchers: str) -> str:
    return selector(metric, job(profile, "mooncake_master"), *matchers)


def with_segment_host(expr: str) -> str:
    """``expr`` with ``segment_host`` := the host part of its ``segment`` label."""
    return f'label_replace({expr}, "{SEGMENT_HOST}", "$1", "segment", "(.*){PORT_REGEX}")'


def to_node(profile: Profile, expr: str) -> str:
    """The segments of ``expr`` whose host is a profile node's address, their ``node`` label overwritten
    with that node (S11), through the inventory (no node list in the text); unmapped segments drop out."""
    node = profile.label("node")
    return f"({with_segment_host(expr)} * on({SEGMENT_HOST}) group_left({node}) {host_to_node(profile)})"


def unmapped_of(profile: Profile, expr: str) -> str:
    """The segments of ``expr`` whose host maps to no profile node."""
    return f"({with_segment_host(expr)} unless on({SEGMENT_HOST}) {host_to_node(profile)})"


def mapped(profile: Profile, metric: str) -> str:
    """A per-segment gauge of the segments whose host is a profile node's address, labelled with that node."""
    return to_node(profile, master(profile, metric))


def unmapped(profile: Profile, metric: str) -> str:
    """A per-segment gauge of the segments whose host maps to no profile node."""
    return unmapped_of(profile, master(profile, metric))


def selected_nodes(profile: Profile) -> str:
    """The engine nodes chosen in ``$node`` (the Store clients run inside the SGLang ranks)."""
    return agg("max", [profile.label("node")], selector("up", job(profile, "sglang"), node_var(profile)))


def per_segment(profile: Profile, metric: str) -> str:
    """One series per (data-holding node, segment) of the nodes in ``$node``, HA duplicates removed."""
    node = profile.label("node")
    segments = agg("max", [node, "segment"], mapped(profile, metric))
    return f"({segments} and on({node}) {selected_nodes(profile)})"


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


def unmapped_segments(profile: Profile) -> str:
    """Mounted segments whose host maps to no profile node, counted per master job at the window end.

    Every segment the master reports is 1 (unmapped) or 0 (mapped) before the sum, so 0 is a real
    count of real series; with no segment mounted at all the result is absent, not 0 (S7)."""
    label_job = profile.label("job")
    flags = f"({unmapped(profile, CAPACITY)} * 0 + 1) or ({mapped(profile, CAPACITY)} * 0)"
    return agg("sum", [label_job], agg("max", [label_job, "segment"], flags))


def node_group(profile: Profile, metric: str) -> str:
    """A master-global gauge (node-group total), one value per master job."""
    return agg("max", [profile.label("job")], master(profile, metric))


VALID_GETS = MOONCAKE_MASTER.name(
    "valid_get_nums_"
)  # GetReplicaList with at least one completed replica: a metadata hit
TOTAL_GETS = MOONCAKE_MASTER.name("total_get_nums_")


def presence(profile: Profile) -> str:
    """The per-segment capacity gauge of every segment: its samples prove a node's Store clients are
    mounted. The reasons table counts its samples first, then maps them with ``to_node`` (which keeps
    the mapped segments only) and narrows by its own node rows."""
    return master(profile, CAPACITY)


def unmapped_in_window(profile: Profile) -> str:
    """The unmapped segments' capacity gauge with a sample in the window: any means some segment hosts
    are not in the profile."""
    return unmapped_of(profile, f"count_over_time({master(profile, CAPACITY)}[$__range])")


# --- the capacity view of the KV-cache group: per segment host, unmapped hosts kept visible -------


def host_of_segment(profile: Profile, expr: str) -> str:
    """``host`` := the node name of a mapped segment, else the segment's raw host part."""
    named = f'label_replace({to_node(profile, expr)}, "{HOST_LABEL}", "$1", "{profile.label("node")}", "(.*)")'
    raw = f'label_replace({unmapped_of(profile, expr)}, "{HOST_LABEL}", "$1", "{SEGMENT_HOST}", "(.*)")'
    return f"({named} or {raw})"


def by_host(profile: Profile, metric: str, op: str = "sum") -> str:
    """``op by (host)`` of a per-segment gauge, ``host`` = the segment's node (or its raw host if unmapped);
    each segment read once over the master targets (HA masters de-duplicated with ``max``, as everywhere)."""
    segments = agg("max", [HOST_LABEL, "segment"], host_of_segment(profile, master(profile, metric)))
    return agg(op, [HOST_LABEL], segments)


def per_replica_bytes(profile: Profile, topology: Topology, metric: str) -> str:
    """Bytes of a segment gauge per engine replica (the node group that shares one global_segment_size,
    S17): the segments of the replica's nodes, each read once (HA de-duplicated), added. The node ->
    replica map is the inventory's ``replica`` label (``topology`` is the profile's; the inventory rules
    are written from it). A segment whose host maps to no node is in no replica."""
    node = profile.label("node")
    segments = agg("max", [node, "segment"], mapped(profile, metric))
    placed = f"({segments} * on({node}) group_left({REPLICA}) {node_to_replica(profile)})"
    return agg("sum", [REPLICA], placed)


# --- masters as the profile maps them ([[mooncake.masters]], else one shared master) -------------------

MASTER_LABEL = "master"


def master_targets(profile: Profile, metric: str, master_name: str) -> str:
    """A master metric of one master's targets (its HA copies): the nodes the profile names for it, or every
    target of the master job for a master without nodes (the one shared master)."""
    (found,) = [m for m in profile.masters() if m.name == master_name]
    if not found.nodes:
        return master(profile, metric)
    nodes = "|".join(regex_literal(node) for node in found.nodes)
    return master(profile, metric, matcher(profile.label("node"), "=~", nodes))


def per_master(profile: Profile, metric: str, over: str = "", by: tuple[str, ...] = ()) -> str:
    """A master-global metric once per master: each master's targets labelled ``master="<name>"`` and read
    with ``max`` over its HA copies, the same de-duplication as the per-segment views. ``over``: ``rate`` or
    ``increase`` of a counter (over $__rate_interval / the dashboard window), "" for a gauge. ``by``: the
    metric's own labels kept beside ``master`` (a tenant's series stays one series per tenant)."""
    node = profile.label("node")
    parts = []
    for found in profile.masters():
        series = master_targets(profile, metric, found.name)
        if over == "rate":
            series = rate(series)
        elif over == "increase":
            series = increase(series)
        parts.append(f'label_replace({series}, "{MASTER_LABEL}", "{found.name}", "{node}", ".*")')
    return agg("max", [MASTER_LABEL, *by], " or ".join(parts))


def get_hit_share_per_master(profile: Profile) -> str:
    """Each master's metadata hit share per rate interval, 0-1: valid / all GetReplicaList calls."""
    return divide(per_master(profile, VALID_GETS, "rate"), per_master(profile, TOTAL_GETS, "rate"))


def replica_master(profile: Profile, expr: str) -> str:
    """``master`` := the master serving each series' ``replica`` (the profile's mapping). One master serves
    every replica: no list of replicas in the text (it would grow with the cluster)."""
    masters = profile.masters()
    if len(masters) == 1:
        return f'label_replace({expr}, "{MASTER_LABEL}", "{masters[0].name}", "{REPLICA_LABEL}", ".*")'
    for found in masters:
        replicas = "|".join(regex_literal(key) for key in found.replicas).replace("\\", "\\\\")
        expr = f'label_replace({expr}, "{MASTER_LABEL}", "{found.name}", "{REPLICA_LABEL}", "{replicas}")'
    return expr


def per_replica(profile: Profile, topology: Topology, metric: str, op: str = "sum") -> str:
    """``op`` (sum of bytes, or count of segments) of a per-segment gauge per engine replica, with the master
    serving it (``replica``, ``master`` labels): the segments of the replica's nodes, each read once over HA
    master targets; the node -> replica map is the inventory's (no node list in the text). A segment whose host
    maps to no node is in no replica."""
    node = profile.label("node")
    segments = agg("max", [node, "segment"], mapped(profile, metric))
    placed = f"({segments} * on({node}) group_left({REPLICA}) {node_to_replica(profile)})"
    return agg(op, [REPLICA_LABEL, MASTER_LABEL], replica_master(profile, placed))


def masters_text(profile: Profile) -> str:
    """The profile's master <-> replica mapping in one sentence, for descriptions."""
    if not profile.mooncake_masters:
        return (
            "one shared Mooncake master serves every replica (the profile lists no [[mooncake.masters]]): "
            "every target of the master job is one of its HA copies"
        )
    return "; ".join(
        f"master {m.name} (targets on {', '.join(m.nodes) or 'any node'}) serves {', '.join(m.replicas)}"
        for m in profile.masters()
    )


def source_share_pct_per_master(profile: Profile, numerator: str) -> str:
    """S12 per master: RAM (or SSD) returns / (RAM + SSD returns) in the window, %. Misses are not in it."""
    ram, ssd = per_master(profile, RAM_RETURNS, "increase"), per_master(profile, SSD_RETURNS, "increase")
    part = ram if numerator == RAM_RETURNS else ssd
    return scale(divide(part, f"{ram} + {ssd}"), 100)
