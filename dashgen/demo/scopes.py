"""Who emits what in the demo: the :class:`Plan` (profile, topology, window, faults) and the label set
of every series a metric has (:func:`scope_series`), per the metric catalogue's label contract.

``node``, ``job`` and ``instance`` on every series; ``gpu`` and ``UUID``/``uuid`` on DCGM/GPM;
``tp_rank``/``pp_rank`` from the topology's RankPlacement on radix/storage series and the logging
rank's on scheduler series; tokenizer series on node_rank 0 of each replica; Mooncake segments
named ``<node address>:<port>`` per rank; node_exporter per node, device, mount and CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashgen.demo.catalogue import CPUS_PER_NODE, MetricModel
from dashgen.demo.endpoints import PORTS, SYSTEM_DISK, cache_devices
from dashgen.demo.scenarios import NodeFault
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import RankPlacement, Topology

# Sources that are collectors inside another source's process share its scrape target.
TARGET_OF = {"hicache": "sglang", "hicache_storage": "sglang"}
MODEL_NAME = "demo-model"
SEGMENT_BASE_PORT = 12300
# Labels the scopes set themselves; a panel's equality matcher on one of them selects, it adds nothing.
SCOPE_LABELS = frozenset(
    {
        "engine_type",
        "cache_type",
        "storage_backend",
        "pp_size",
        "attn_cp_rank",
        "attn_cp_size",
        "moe_ep_rank",
        "device",
        "mountpoint",
        "fstype",
        "cpu",
        "segment",
        "Hostname",
        "modelName",
        "nodename",
        "sysname",
        "release",
    }
)


@dataclass(frozen=True)
class Plan:
    """Everything the generator needs; ``step`` is the coarsest spacing the caller allows (0: scrape interval)."""

    profile: Profile
    topology: Topology
    start: float
    end: float
    step: float = 0.0
    faults: dict[str, NodeFault] = field(default_factory=dict)

    def fault(self, node: str) -> NodeFault:
        return self.faults.get(node, NodeFault())

    def spacing(self, source: str) -> float:
        return max(self.profile.source(source).scrape_interval_seconds, self.step)

    @property
    def master_node(self) -> str:
        return self.profile.node_names[0]

    @property
    def gateway_node(self) -> str:
        return self.profile.node_names[0]


@dataclass(frozen=True)
class SeriesSpec:
    """One series to generate: its labels, node, and whether it carries real values (else a seeded 0)."""

    labels: dict[str, str]
    node: str
    active: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def mounts(profile: Profile, topology: Topology) -> list[tuple[str, str, str, float]]:
    """(device, mountpoint, fstype, size bytes) of the node's filesystems."""
    cache_size = (profile.capacity.disk_nominal_size or 3_840_000_000_000) * 0.895
    cache = (
        [(f"/dev/{cache_devices(profile)[0]}", profile.disks.cache_mountpoint, "xfs", cache_size)]
        if profile.disks.has_cache_tier
        else []
    )
    return [
        *cache,
        (f"/dev/{SYSTEM_DISK}3", profile.disks.model_mountpoint, "ext4", 2.0e12),
        (f"/dev/{SYSTEM_DISK}2", "/", "ext4", 4.8e11),
    ]


# -- label sets -----------------------------------------------------------------------------------


def target_labels(plan: Plan, node: str, source: str) -> dict[str, str]:
    profile = plan.profile
    owner = TARGET_OF.get(source, source)
    labels = {
        profile.label("node"): node,
        profile.label("job"): profile.source(owner).job,
        profile.label("instance"): f"{node}:{PORTS[owner]}",
    }
    if profile.deployment:  # the per-node vmagent's -remoteWrite.label=cluster=<deployment> (S21)
        labels[profile.label("deployment")] = profile.deployment
    return labels


def _logging_ranks(topology: Topology) -> list[RankPlacement]:
    first: dict[tuple[str, int, int], int] = {}
    for r in topology.ranks:
        key = (r.pool, r.replica, r.pp_rank)
        first[key] = min(first.get(key, r.tp_rank), r.tp_rank)
    return [r for r in topology.ranks if r.tp_rank == first[(r.pool, r.replica, r.pp_rank)]]


def _role(profile: Profile, pool: str) -> str:
    return next(p.role for p in profile.pools if p.name == pool)


def _pp_size(profile: Profile, pool: str) -> str:
    return str(next(p.pp for p in profile.pools if p.name == pool))


def _rank_labels(plan: Plan, rank: RankPlacement, model: MetricModel) -> dict[str, str]:
    p = plan.profile
    labels = target_labels(plan, rank.node, model.source)
    labels[p.label("tp_rank")] = str(rank.tp_rank)
    labels[p.label("pp_rank")] = str(rank.pp_rank)
    if model.source == "hicache":
        labels.update({"cache_type": "HiRadixCache", p.label("dp_rank"): "0"})
    elif model.source == "hicache_storage":
        labels.update(
            {
                "storage_backend": "mooncake",
                p.label("dp_rank"): "0",
                "pp_size": _pp_size(p, rank.pool),
                "attn_cp_rank": "0",
                "attn_cp_size": "1",
            }
        )
    else:
        labels.update({p.label("model_name"): MODEL_NAME, "engine_type": _role(p, rank.pool), "moe_ep_rank": "0"})
    return labels


def _segment(rank: RankPlacement, profile: Profile, topology: Topology) -> str:
    """``<host>:<port>``: the host is the node's address from the profile (its IP where
    ``cluster.node_addresses`` lists one, else its name), one port per rank client on the node."""
    local = [r for r in topology.ranks if r.node == rank.node].index(rank)
    return f"{profile.node_address(rank.node)}:{SEGMENT_BASE_PORT + local}"


def scope_series(plan: Plan, model: MetricModel) -> list[SeriesSpec]:
    """The label sets (before the metric's own extra labels) of every series a metric has."""
    p, t = plan.profile, plan.topology
    scope = model.scope
    specs: list[SeriesSpec] = []
    if scope == "gpu":
        uuid_label = p.label("gpm_uuid" if model.source == "gpm" else "dcgm_uuid")
        for node_index, node in enumerate(p.node_names):
            for gpu in range(p.gpus_per_node):
                labels = target_labels(plan, node, model.source)
                labels[p.label("gpu")] = str(gpu)
                labels[uuid_label] = f"GPU-{node_index:04x}{gpu:04x}-d0d0-4e4e-8a8a-{node_index * 100 + gpu:012d}"
                if model.source == "dcgm":
                    labels.update({"device": f"nvidia{gpu}", "modelName": "NVIDIA H800", "Hostname": node})
                specs.append(SeriesSpec(labels, node, extra={"gpu": gpu}))
    elif scope in ("rank", "client"):
        for rank in t.ranks:
            specs.append(SeriesSpec(_rank_labels(plan, rank, model), rank.node))
    elif scope == "logging_rank":
        for rank in _logging_ranks(t):
            specs.append(SeriesSpec(_rank_labels(plan, rank, model), rank.node))
    elif scope == "seeded_rank":
        logging = set(_logging_ranks(t))
        for rank in t.ranks:
            specs.append(SeriesSpec(_rank_labels(plan, rank, model), rank.node, active=rank in logging))
    elif scope == "tokenizer":
        for replica in t.replicas:
            node = replica.nodes[0]
            labels = target_labels(plan, node, model.source)
            labels.update({p.label("model_name"): MODEL_NAME, "engine_type": _role(p, replica.pool)})
            specs.append(SeriesSpec(labels, node))
    elif scope == "master":
        specs.append(SeriesSpec(target_labels(plan, plan.master_node, model.source), plan.master_node))
    elif scope == "segment":
        for rank in t.ranks:
            labels = target_labels(plan, plan.master_node, model.source)
            labels["segment"] = _segment(rank, p, t)
            specs.append(SeriesSpec(labels, plan.master_node, extra={"holder": rank.node}))
    elif scope == "gateway":
        specs.append(SeriesSpec(target_labels(plan, plan.gateway_node, model.source), plan.gateway_node))
    elif scope == "node":
        for node in p.node_names:
            labels = target_labels(plan, node, model.source)
            if model.name == "node_uname_info":
                labels.update({"nodename": node, "sysname": "Linux", "release": "6.8.0"})
            specs.append(SeriesSpec(labels, node))
    elif scope == "disk":
        for node in p.node_names:
            for device in [*cache_devices(p), SYSTEM_DISK]:
                labels = target_labels(plan, node, model.source)
                labels["device"] = device
                specs.append(SeriesSpec(labels, node, extra={"cache": device != SYSTEM_DISK}))
    elif scope == "filesystem":
        for node in p.node_names:
            for device, mountpoint, fstype, size in mounts(p, t):
                labels = target_labels(plan, node, model.source)
                labels.update({"device": device, "mountpoint": mountpoint, "fstype": fstype})
                specs.append(SeriesSpec(labels, node, extra={"size": size}))
    elif scope == "cpu":
        for node in p.node_names:
            for cpu in range(CPUS_PER_NODE):
                labels = target_labels(plan, node, model.source)
                labels["cpu"] = str(cpu)
                specs.append(SeriesSpec(labels, node))
    elif scope == "netdev":
        for node in p.node_names:
            for device in ("eth0", "ib0"):
                labels = target_labels(plan, node, model.source)
                labels["device"] = device
                specs.append(SeriesSpec(labels, node))
    else:  # pragma: no cover - the catalogue only uses the scopes above
        raise ValueError(f"{model.name}: unknown scope {scope!r}")
    return specs


def expand_extra_labels(specs: list[SeriesSpec], extra: dict[str, tuple[str, ...]]) -> list[SeriesSpec]:
    """The cartesian product of the base label sets with the metric's own labels (mode, reason...)."""
    for label, values in extra.items():
        specs = [SeriesSpec({**s.labels, label: v}, s.node, s.active, s.extra) for s in specs for v in values]
    return specs
