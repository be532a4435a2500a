"""Topology: node -> replica / PP stage, rank -> GPU (SGLang's layout), and the S17 capacity arithmetic."""

from __future__ import annotations

from pathlib import Path

from dashgen.deployment.profile import load_profile
from dashgen.deployment.sizes import GiB, TiB, format_binary, format_decimal
from dashgen.deployment.topology import Topology

PROFILES = Path(__file__).resolve().parent.parent / "profiles"


def topology(name: str) -> Topology:
    return Topology(load_profile(PROFILES / f"{name}.toml"))


def test_long_context_64_has_one_pp_stage_per_node_and_two_replicas():
    topo = topology("long-context-64")
    assert [(n.replicas, n.pp_ranks) for n in topo.nodes] == [((r,), (s,)) for r in (0, 1) for s in range(4)]
    assert [r.nodes for r in topo.replicas] == [
        ("lc-node-00", "lc-node-01", "lc-node-02", "lc-node-03"),
        ("lc-node-04", "lc-node-05", "lc-node-06", "lc-node-07"),
    ]
    assert len(topo.ranks) == 64
    # tp_rank t of each stage runs on local GPU t.
    assert all(r.gpu == r.tp_rank for r in topo.ranks)
    (on_node_02,) = [r.gpu for r in topo.ranks if (r.node, r.tp_rank, r.pp_rank) == ("lc-node-02", 5, 2)]
    assert on_node_02 == 5


def test_every_gpu_hosts_exactly_one_rank_in_every_profile():
    for name in ("long-context-64", "pd-128", "h20-16", "video-200"):
        topo = topology(name)
        placed = [(r.node, r.gpu) for r in topo.ranks]
        assert len(placed) == len(set(placed)) == topo.profile.total_gpus, name


def test_pd_128_prefill_and_decode_pools_take_separate_nodes():
    topo = topology("pd-128")
    assert len(topo.nodes_of_pool("prefill")) == 12
    assert len(topo.nodes_of_pool("decode")) == 4
    assert not set(topo.nodes_of_pool("prefill")) & set(topo.nodes_of_pool("decode"))


def test_layout_of_a_replica_spanning_two_nodes_per_stage():
    """TP16 x PP2 over 4 nodes: each PP stage spans two nodes, TP ranks split 8 + 8 (SGLang's formula)."""
    import tomllib

    from dashgen.deployment.profile import profile_from_dict

    data = tomllib.loads((PROFILES / "h20-16.toml").read_text())
    data["cluster"]["nodes"] = 4
    data["pools"][0].update(tp=16, pp=2)
    topo = Topology(profile_from_dict(data, "test.toml", expected_name="h20-16"))
    by_node = {n.name: n.pp_ranks for n in topo.nodes}
    assert list(by_node.values()) == [(0,), (0,), (1,), (1,)]
    tp_on_second = sorted(r.tp_rank for r in topo.ranks if r.node == "h20-node-1")
    assert tp_on_second == list(range(8, 16))


def test_s17_capacity_anatomy_of_long_context_64():
    capacity = topology("long-context-64").capacity
    assert capacity.store_per_replica == 256 * GiB
    assert capacity.store_per_rank == 8 * GiB
    assert capacity.store_per_node == 64 * GiB
    assert capacity.store_total == 512 * GiB
    assert [
        format_binary(x)
        for x in (capacity.store_per_rank, capacity.store_per_node, capacity.store_per_replica, capacity.store_total)
    ] == ["8 GiB", "64 GiB", "256 GiB", "512 GiB"]
    assert capacity.host_per_rank == 32 * GiB
    assert capacity.host_per_node == 256 * GiB
    assert capacity.host_per_replica == 1 * TiB
    assert format_decimal(capacity.nvme_limit_per_node) == "1.92 TB"
    assert format_decimal(capacity.disk_nominal) == "3.84 TB"


def test_s17_profiles_without_a_store_have_no_store_quota():
    capacity = topology("video-200").capacity
    assert capacity.store_per_node is None and capacity.host_per_node is None
