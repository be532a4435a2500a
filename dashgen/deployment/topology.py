"""Topology: which node hosts which pool, replica and PP stage, the rank -> GPU map, and the
capacity arithmetic of S17. Pure functions of a Profile.

Ranks are laid out the way SGLang does it (``data_parallel_controller.py``, see the metric
catalogue §7): within a replica spanning ``nnodes`` nodes,
``node_rank`` hosts PP stages ``[pp_per_node * (node_rank // nnodes_per_pp), +pp_per_node)`` and
TP ranks ``[tp_per_node * (node_rank % nnodes_per_pp), +tp_per_node)``, and
``gpu = (pp_rank % pp_per_node) * tp_per_node + (tp_rank % tp_per_node)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from dashgen.deployment.profile import Pool, Profile


@dataclass(frozen=True)
class RankPlacement:
    """One engine rank (one GPU) of one replica."""

    pool: str
    replica: int  # index within the pool
    node: str
    gpu: int  # local GPU index on the node
    tp_rank: int
    pp_rank: int


@dataclass(frozen=True)
class NodeRole:
    """What one node runs: its pool, the replica(s) and the PP stages on it."""

    name: str
    index: int
    pool: str
    replicas: tuple[int, ...]
    pp_ranks: tuple[int, ...]
    gpus: int


@dataclass(frozen=True)
class ReplicaPlacement:
    """One replica of a pool and the nodes it spans, in node_rank order."""

    pool: str
    index: int
    nodes: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.pool}-{self.index}"


@dataclass(frozen=True)
class CapacityAnatomy:
    """S17: a quota read at each level. ``None`` where the profile has no such tier."""

    store_per_rank: int | None
    store_per_node: int | None
    store_per_replica: int | None
    store_total: int | None
    host_per_rank: int | None
    host_per_node: int | None
    host_per_replica: int | None
    host_total: int | None
    nvme_limit_per_rank: int | None
    nvme_limit_per_node: int | None
    nvme_physical_per_node: int | None
    disk_nominal: int | None


def _layout_replica(pool: Pool, replica: int, nodes: list[str], gpus_per_node: int) -> list[RankPlacement]:
    nnodes = len(nodes)
    pp_per_node = max(pool.pp // nnodes, 1)
    nnodes_per_pp = max(nnodes // pool.pp, 1)
    tp_per_node = pool.tp // nnodes_per_pp
    placements = []
    for node_rank, node in enumerate(nodes):
        first_pp = pp_per_node * (node_rank // nnodes_per_pp)
        first_tp = tp_per_node * (node_rank % nnodes_per_pp)
        for pp_rank in range(first_pp, first_pp + pp_per_node):
            for tp_rank in range(first_tp, first_tp + tp_per_node):
                gpu = (pp_rank % pp_per_node) * tp_per_node + (tp_rank % tp_per_node)
                placements.append(RankPlacement(pool.name, replica, node, gpu, tp_rank, pp_rank))
    return placements


class Topology:
    """The derived layout of a profile. Construct with ``Topology(profile)``."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        ranks: list[RankPlacement] = []
        replicas: list[ReplicaPlacement] = []
        node_cursor = 0
        names = profile.node_names
        per_node = profile.gpus_per_node
        for pool in profile.pools:
            if pool.gpus_per_replica >= per_node:
                span = pool.gpus_per_replica // per_node
                for replica in range(pool.replicas):
                    nodes = list(names[node_cursor : node_cursor + span])
                    node_cursor += span
                    replicas.append(ReplicaPlacement(pool.name, replica, tuple(nodes)))
                    ranks.extend(_layout_replica(pool, replica, nodes, per_node))
            else:
                # Several replicas share a node: each takes the next block of GPUs.
                per = per_node // pool.gpus_per_replica
                for replica in range(pool.replicas):
                    node = names[node_cursor + replica // per]
                    offset = (replica % per) * pool.gpus_per_replica
                    replicas.append(ReplicaPlacement(pool.name, replica, (node,)))
                    for placement in _layout_replica(pool, replica, [node], pool.gpus_per_replica):
                        ranks.append(
                            RankPlacement(
                                placement.pool,
                                replica,
                                node,
                                placement.gpu + offset,
                                placement.tp_rank,
                                placement.pp_rank,
                            )
                        )
                node_cursor += -(-pool.replicas // per)
        self.ranks: tuple[RankPlacement, ...] = tuple(ranks)
        self.replicas: tuple[ReplicaPlacement, ...] = tuple(replicas)

    @cached_property
    def nodes(self) -> tuple[NodeRole, ...]:
        roles = []
        by_node: dict[str, list[RankPlacement]] = {}
        for rank in self.ranks:  # one pass: linear in the ranks, not nodes x ranks
            by_node.setdefault(rank.node, []).append(rank)
        for index, name in enumerate(self.profile.node_names):
            on_node = by_node.get(name, [])
            roles.append(
                NodeRole(
                    name=name,
                    index=index,
                    pool=on_node[0].pool,
                    replicas=tuple(sorted({r.replica for r in on_node})),
                    pp_ranks=tuple(sorted({r.pp_rank for r in on_node})),
                    gpus=len(on_node),
                )
            )
        return tuple(roles)

    def nodes_of_pool(self, pool: str) -> tuple[str, ...]:
        return tuple(role.name for role in self.nodes if role.pool == pool)

    @cached_property
    def multi_node_replicas(self) -> tuple[ReplicaPlacement, ...]:
        return tuple(r for r in self.replicas if len(r.nodes) > 1)

    @cached_property
    def node_group(self) -> str:
        """The variable that selects groups of nodes: ``pool`` (several pools), ``replica`` (several
        replicas spanning nodes) or "" (neither)."""
        if self.profile.has_pools:
            return "pool"
        return "replica" if len(self.multi_node_replicas) > 1 else ""

    @cached_property
    def capacity(self) -> CapacityAnatomy:
        return capacity_anatomy(self.profile)


def capacity_anatomy(profile: Profile) -> CapacityAnatomy:
    """The S17 arithmetic for the profile's first pool that uses the tiers.

    Store: ``global_segment_size`` is the quota per replica; divided by TP x PP gives the quota
    per rank; times the ranks on one node gives the quota per node; times replicas the total.
    Host cache and NVMe bucket limits are given per rank and multiply up the same way.
    """
    capacity = profile.capacity
    pool = profile.pools[0]
    ranks_per_replica = pool.gpus_per_replica
    ranks_per_node = min(profile.gpus_per_node, ranks_per_replica * max(1, profile.gpus_per_node // ranks_per_replica))
    total_replicas = sum(p.replicas for p in profile.pools)

    def scaled(value: int | None, factor: int) -> int | None:
        return None if value is None else value * factor

    store_per_rank = None if capacity.global_segment_size is None else capacity.global_segment_size // ranks_per_replica
    host_per_rank = capacity.host_cache_per_rank
    return CapacityAnatomy(
        store_per_rank=store_per_rank,
        store_per_node=scaled(store_per_rank, ranks_per_node),
        store_per_replica=capacity.global_segment_size,
        store_total=scaled(capacity.global_segment_size, total_replicas),
        host_per_rank=host_per_rank,
        host_per_node=scaled(host_per_rank, ranks_per_node),
        host_per_replica=scaled(host_per_rank, ranks_per_replica),
        host_total=scaled(host_per_rank, profile.total_gpus),
        nvme_limit_per_rank=capacity.nvme_bucket_limit_per_rank,
        nvme_limit_per_node=scaled(capacity.nvme_bucket_limit_per_rank, ranks_per_node),
        nvme_physical_per_node=scaled(capacity.nvme_physical_per_rank, ranks_per_node),
        disk_nominal=capacity.disk_nominal_size,
    )


_RECENT: dict[int, tuple[Profile, Topology]] = {}
_RECENT_MAX = 16


def topology_of(profile: Profile) -> Topology:
    """The Topology of ``profile``, laid out once per profile object (a Profile is immutable, and not hashable: it
    holds dicts). Laying out 10,000 GPUs takes ~40 ms, and the dashboard, its queries and rules each asked for it
    again: 124 layouts in one ``dashgen check`` of the scale profiles, half its time."""
    hit = _RECENT.get(id(profile))
    if hit is not None and hit[0] is profile:  # the profile is held here, so its id is not reused meanwhile
        return hit[1]
    topology = Topology(profile)
    if len(_RECENT) >= _RECENT_MAX:
        _RECENT.pop(next(iter(_RECENT)))
    _RECENT[id(profile)] = (profile, topology)
    return topology
