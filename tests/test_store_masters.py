"""Issue 13.4, the Store by replica: the profile maps Mooncake masters to the replicas they serve (or states one
shared master), every wrong mapping is an error naming file and field; Store capacity, allocation and segments
are shown per replica and per node, and each master's HA copies are read once, the same way everywhere
(S11, S13, S17). In process, then on a real VictoriaMetrics with an HA copy of the master imported."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest
from dashgen_queries import mooncake as mc

from dashgen.build import build_profile
from dashgen.deployment.profile import MooncakeMaster, load_profiles, profile_from_dict
from dashgen.deployment.topology import Topology
from dashgen.errors import ProfileError
from dashgen.live.datasource import Datasource

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
MASTER_PANELS = ("store_request_failures", "store_alloc_failures", "store_evictions", "store_active_clients")


def raw(name: str = "long-context-64") -> dict:
    return copy.deepcopy(tomllib.loads((PROFILES / f"{name}.toml").read_text()))


def _masters(*entries: dict) -> dict:
    data = raw()
    data["mooncake"] = {"masters": list(entries)}
    return data


@pytest.mark.parametrize(
    ("data", "field", "fragment"),
    [
        (
            _masters({"name": "a", "replicas": ["main-0", "main-9"], "nodes": ["lc-node-00"]}),
            "mooncake.masters[0].replicas",
            "'main-9' is not a replica of this profile",
        ),
        (
            _masters(
                {"name": "a", "replicas": ["main-0"], "nodes": ["lc-node-00"]},
                {"name": "b", "replicas": ["main-0", "main-1"], "nodes": ["lc-node-04"]},
            ),
            "mooncake.masters[1].replicas",
            "'main-0' is already served by master 'a'",
        ),
        (
            _masters({"name": "a", "replicas": ["main-0"], "nodes": ["lc-node-00"]}),
            "mooncake.masters",
            "no master serves replica(s) main-1",
        ),
        (
            _masters(
                {"name": "a", "replicas": ["main-0"], "nodes": ["lc-node-00"]}, {"name": "b", "replicas": ["main-1"]}
            ),
            "mooncake.masters[1].nodes",
            "with several masters, each lists its nodes",
        ),
        (
            _masters(
                {"name": "a", "replicas": ["main-0"], "nodes": ["lc-node-00"]},
                {"name": "b", "replicas": ["main-1"], "nodes": ["lc-node-00"]},
            ),
            "mooncake.masters[1].nodes",
            "two masters on one node cannot be told apart",
        ),
        (
            _masters(
                {"name": "a", "replicas": ["main-0"], "nodes": ["lc-node-00"]},
                {"name": "a", "replicas": ["main-1"], "nodes": ["lc-node-04"]},
            ),
            "mooncake.masters[1].name",
            "listed twice",
        ),
        (_masters({"name": "Store!", "nodes": ["lc-node-00"]}), "mooncake.masters[0].name", "lower-case"),
        (_masters({"name": "a", "nodes": "lc-node-00"}), "mooncake.masters[0].nodes", "non-empty list"),
        (_masters({"name": "a", "nodes": ["bad host"]}), "mooncake.masters[0].nodes", "letters, digits"),
        (_masters({"name": "a", "replica": ["main-0"]}), "mooncake.masters[0].replica", "unknown field"),
        (
            {**raw("pd-128"), "mooncake": {"masters": [{"name": "a"}]}},
            "mooncake.masters",
            "sources.mooncake_master is not-deployed",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_wrong_master_mapping_is_an_error_naming_file_and_field(data, field, fragment):
    with pytest.raises(ProfileError) as info:
        profile_from_dict(data, "profiles/x.toml")
    assert info.value.field == field and fragment in str(info.value), str(info.value)
    assert str(info.value).startswith("profiles/x.toml"), str(info.value)


def test_without_a_mapping_one_shared_master_serves_every_replica():
    data = raw()
    del data["mooncake"]
    profile = profile_from_dict(data, "p.toml")
    assert profile.masters() == (MooncakeMaster("shared", ("main-0", "main-1")),)
    assert "one shared Mooncake master serves every replica" in mc.masters_text(profile)


def test_long_context_states_its_master_and_the_replicas_it_serves():
    (profile,) = load_profiles(["long-context-64"], directory=PROFILES)
    assert profile.masters() == (MooncakeMaster("store", ("main-0", "main-1"), ("lc-node-00", "lc-node-04")),)
    assert {replica.key for replica in Topology(profile).replicas} == set(profile.replica_keys())


def test_s13_every_master_metric_is_read_once_per_master_everywhere():
    """The Store health panels, the Store stats of the cache evidence and the ladder's metadata hit all read a
    master-global metric as max by (master) over that master's targets, never per job, never summed."""
    (profile,) = load_profiles(["long-context-64"], directory=PROFILES)
    (built,) = build_profile(profile)
    master_metrics = ("master_", "mem_cache_", "file_cache_", "valid_get_nums_", "total_get_nums_")
    checked = 0
    for panel in built.spec.panels():
        for target in panel.targets:
            if "segment" in target.expr or not any(f"{m}" in target.expr for m in master_metrics):
                continue
            if "vector(" in target.expr:
                continue
            checked += 1
            assert "max by (master)" in target.expr and "by (job)" not in target.expr, (panel.key, target.expr)
            assert 'node=~"lc-node-00|lc-node-04"' in target.expr, (panel.key, target.expr)
            assert "{{master}}" in target.legend, (panel.key, target.legend)
    assert checked >= 15, checked


def test_store_capacity_allocation_and_segments_per_replica_and_per_node():
    (profile,) = load_profiles(["long-context-64"], directory=PROFILES)
    (built,) = build_profile(profile)
    keys = {panel.key for panel in built.spec.panels()}
    for what in ("capacity", "allocated", "segments"):
        assert {f"kv_cache_nvme.store_{what}_per_replica", f"kv_cache_nvme.store_{what}_per_host"} <= keys, what
    rows = {row.title: [p.key for p in row.panels] for row in built.spec.groups}
    store_row = rows["Store (Mooncake): capacity per replica and node, health"]
    assert {f"kv_cache_nvme.{key}" for key in MASTER_PANELS} <= set(store_row)  # health beside capacity


# --- on a real VictoriaMetrics ---------------------------------------------------------------------------


HA = "long-context-64-ha"  # a deployment value of its own, so the copies change no other test's window


def _ha_pair(ds: Datasource, profile, end: float) -> None:
    """The master's series of the healthy window, imported again under deployment HA twice: as the primary
    (lc-node-00) and as its standby's target (lc-node-04), the same values, as an HA pair exports them."""
    start = end - 3600
    series = []
    for metric in ("segment_total_capacity_bytes", "master_active_clients"):
        selector = f'{metric}{{{profile.label("deployment")}="{profile.deployment}"}}'
        for item in ds.query_range(selector, start, end, 30).result:
            stamps = [int(float(t) * 1000) for t, _ in item["values"]]
            values = [float(v) for _, v in item["values"]]
            for node in ("lc-node-00", "lc-node-04"):
                labels = {
                    **item["metric"],
                    "__name__": metric,
                    profile.label("deployment"): HA,
                    profile.label("node"): node,
                    "instance": f"{node}:9003",
                }
                series.append({"metric": labels, "values": values, "timestamps": stamps})
    # the node inventory (recorded by the rule file) of the same deployment: segment host -> node -> replica
    selector = f'node:dashgen_inventory:info{{{profile.label("deployment")}="{profile.deployment}"}}'
    for item in ds.query_range(selector, start, end, 30).result:
        labels = {**item["metric"], "__name__": "node:dashgen_inventory:info", profile.label("deployment"): HA}
        series.append(
            {
                "metric": labels,
                "values": [float(v) for _, v in item["values"]],
                "timestamps": [int(float(t) * 1000) for t, _ in item["values"]],
            }
        )
    ds.import_series(series)
    ds.flush()


def test_s17_store_per_replica_is_256_gib_and_ha_copies_are_read_once(victoriametrics, demo_windows):
    """long-context-64's healthy window with the master's series exported by both targets of its HA pair: per
    replica the mounted Store is still the global_segment_size (256 GiB), 32 segments each, served by master
    'store'; the master's active clients are 64 once, not 128."""
    from dataclasses import replace

    window = demo_windows[("long-context-64", "healthy")]
    ds = Datasource(victoriametrics.url)
    _ha_pair(ds, window.profile, window.end)
    profile = replace(window.profile, deployment=HA)
    topology = Topology(profile)

    def run(expr: str) -> dict:
        result = ds.query(expr.replace("$node", ".+"), window.end).result
        return {
            (item["metric"].get("replica", item["metric"].get("master")), item["metric"].get("master")): float(
                item["value"][1]
            )
            for item in result
        }

    gib = 2**30
    assert len(ds.query(mc.master(profile, "master_active_clients"), window.end).result) == 2  # both copies stored
    assert run(mc.per_master(profile, "master_active_clients")) == {("store", "store"): 64}
    assert run(mc.per_replica(profile, topology, mc.CAPACITY, op="count")) == {
        ("main-0", "store"): 32,
        ("main-1", "store"): 32,
    }
    assert run(mc.per_replica(profile, topology, mc.CAPACITY)) == {
        ("main-0", "store"): 256 * gib,
        ("main-1", "store"): 256 * gib,
    }
    assert profile.capacity.global_segment_size == 256 * gib
