"""KV cache and NVMe group, rendered for every profile: S17 (nominal disk size and filesystem size
are separate numbers; Store quota from the profile), S3 (KV slots per stage never summed across
pp_rank), profile-driven disks, and source-status panels. The checks every panel passes (S5, S7,
parsing, catalogue names, units) are in test_every_panel.py."""

from __future__ import annotations

import pytest
from dashgen_panels import GROUPS, kv_cache_nvme, reference
from group_checks import (
    PROFILE_NAMES,
    PROFILES,
    TEXT_PROFILE_NAMES,
    aggregations,
    group_panels,
    names,
    targets,
)

from dashgen.build import build_profile
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels
from dashgen.exporters.availability import flag_text
from dashgen.exporters.table import ENGINE_METRICS, GATEWAY, MAX_CONCURRENT

TITLE = kv_cache_nvme.TITLE


def _panels(name: str) -> list[dict]:
    """The group's panels; a deployment without text-generation pools titles it for what it shows (S25)."""
    return group_panels(name, TITLE if name in TEXT_PROFILE_NAMES else kv_cache_nvme.VIDEO_TITLE)


# Profiles with a KV cache disk tier ([disks] cache_mountpoint); the others show no cache-disk panel.
TIERED = [name for name in PROFILE_NAMES if PROFILES[name].disks.has_cache_tier]


def _unit(panel: dict) -> str:
    return panel["fieldConfig"]["defaults"].get("unit", "")


def test_s34_cache_tier_and_disk_health_localise_after_gpu_health_before_the_review() -> None:
    """Requests, the P:D balance, GPU health and the per-GPU table, then the disks / Store / node health of this
    group, then the cache-evidence review (S34); inside the group the disks come first, the KV pools last."""
    order = [module.TITLE for module in GROUPS]
    assert order.index("Requests and gateway") < order.index("Prefill and decode balance (P:D)") < order.index(TITLE)
    assert order.index("GPU health") < order.index("Per-GPU window statistics") < order.index(TITLE)
    assert order.index(TITLE) < order.index("Cache evidence")
    profile = PROFILES["long-context-64"]
    rows = [row.title for row in kv_cache_nvme.build(profile, Topology(profile)).shown_rows()]
    assert rows[0] == "Cache disks" and rows[-1].startswith("KV cache")


@pytest.mark.parametrize("name", [n for n in TIERED if PROFILES[n].capacity.disk_nominal_size])
def test_s17_nominal_disk_size_and_filesystem_size_are_separate_numbers(name: str) -> None:
    nominal = PROFILES[name].capacity.disk_nominal_size
    panels = [*_panels(name), *group_panels(name, reference.TITLE)]  # the sizes: reference material (S34)
    nominal_panels = [p for p in panels if any(t["expr"] == f"vector({nominal})" for t in p.get("targets", []))]
    fs_panels = [
        p
        for p in panels
        if p["type"] == "stat" and any("node_filesystem_size_bytes" in names(t["expr"]) for t in p["targets"])
    ]
    assert len(nominal_panels) == 1 and len(fs_panels) == 1
    assert nominal_panels[0] is not fs_panels[0]
    assert _unit(nominal_panels[0]) == "decbytes"  # as sold: 3.84 TB
    assert _unit(fs_panels[0]) == "bytes"  # as the filesystem shows it: ~3.44 TiB
    for panel in panels:  # an axis maximum is neither capacity nor usage
        assert panel.get("fieldConfig", {}).get("defaults", {}).get("max") in (None, 1, 100), panel["title"]


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # KV / HiCache / Store: text only (S25)
def test_s17_store_quota_comes_from_the_profile_or_a_status_panel(name: str) -> None:
    panels = _panels(name)
    capacity = Topology(PROFILES[name]).capacity
    if PROFILES[name].exported("mooncake_master"):
        (quota,) = [p for p in panels if p["title"].startswith("Store quota")]
        values = {t["expr"] for t in quota["targets"]}
        assert {
            f"vector({capacity.store_per_rank})",
            f"vector({capacity.store_per_node})",
            f"vector({capacity.store_per_replica})",
        } <= values
        allocated = [p for p in panels if "segment_allocated_bytes" in p["description"]]
        assert allocated and quota not in allocated
    else:
        assert not any(n.startswith(("segment_", "master_")) for _, t in targets(panels) for n in names(t["expr"]))
        assert any(p["type"] == "text" and "Store" in p["title"] for p in panels)


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # KV / HiCache / Store: text only (S25)
def test_s3_kv_slots_never_aggregated_across_pp_rank(name: str) -> None:
    checked = 0
    for panel, target in targets(_panels(name)):
        if not any(n.startswith("sglang:") for n in names(target["expr"])):
            continue
        checked += 1
        for agg in aggregations(target["expr"]):
            if str(agg.op) == "group":  # S27 pool membership by node (queries.pd.pool_of_node), not a quantity
                continue
            assert agg.modifier and "pp_rank" in agg.modifier.labels, f"{panel['title']}: {target['expr']}"
            if "le" not in agg.modifier.labels:
                assert str(agg.op) == "max", f"{panel['title']}: logical slots are not summed over ranks"
    assert checked >= 8


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # KV / HiCache / Store: text only (S25)
def test_kv_pool_table_has_one_row_per_rank_and_states_the_all_schedulers_flag(name: str) -> None:
    (table,) = [p for p in _panels(name) if p["type"] == "table"]
    assert "--enable-metrics-for-all-schedulers" in table["description"]
    for target in table["targets"]:
        for agg in aggregations(target["expr"]):
            assert {"node", "pp_rank", "tp_rank"} <= set(agg.modifier.labels)


@pytest.mark.parametrize("name", TIERED)
def test_cache_disk_and_mount_selection_come_from_the_profile(name: str) -> None:
    disks = PROFILES[name].disks
    seen_disk = seen_fs = False
    for _, target in targets(_panels(name)):
        found = names(target["expr"])
        if any(n.startswith("node_disk_") for n in found):  # a disk by its role: the cache's or the model's mount
            seen_disk = True
            assert (
                f'mountpoint="{disks.cache_mountpoint}"' in target["expr"]
                or f'mountpoint="{disks.model_mountpoint}"' in target["expr"]
            )
        if any(n.startswith("node_filesystem_") for n in found):
            seen_fs = True
            assert (
                f'mountpoint="{disks.cache_mountpoint}"' in target["expr"]
                or f'mountpoint="{disks.model_mountpoint}"' in target["expr"]
            )
    assert seen_disk and seen_fs


@pytest.mark.parametrize("name", TIERED)
def test_s7_disk_latency_gives_no_point_when_idle(name: str) -> None:
    (latency,) = [p for p in _panels(name) if "latency per I/O" in p["title"]]
    assert all("> 0)" in t["expr"] for t in latency["targets"])


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_host_memory_cites_the_node_exporter_meminfo_collector(name: str) -> None:
    panels = [p for p, t in targets(_panels(name)) if "node_memory_MemAvailable_bytes" in t["expr"]]
    assert panels and all("node_exporter meminfo collector" in p["description"] for p in panels)


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # KV / HiCache / Store: text only (S25)
def test_hicache_host_tier_only_where_exported(name: str) -> None:
    found = {n for _, t in targets(_panels(name)) for n in names(t["expr"])}
    assert ("sglang:hicache_host_used_tokens" in found) == PROFILES[name].exported("hicache")


def test_pd_kv_transfer_only_for_pd_pools() -> None:
    pools = [PROFILES[name].has_pools for name in TEXT_PROFILE_NAMES]
    assert len(pools) >= 3 and any(pools) and not all(pools), "profiles with and without PD pools are checked"
    for name in TEXT_PROFILE_NAMES:
        found = {n for _, t in targets(_panels(name)) for n in names(t["expr"])}
        assert ("sglang:kv_transfer_latency_ms_bucket" in found) == PROFILES[name].has_pools


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # KV / HiCache / Store: text only (S25)
def test_stage_legends_name_the_dp_rank_where_the_aggregation_keeps_it(name: str) -> None:
    checked = 0
    for panel, target in targets(_panels(name)):
        kept = [a for a in aggregations(target["expr"]) if a.modifier and "dp_rank" in a.modifier.labels]
        if not kept or "tp_rank" in target["expr"]:
            continue
        checked += 1
        # with PP "PP<stage> [dp<rank>]"; without PP an instance, "[dp<rank>]", never "PP0" (S27)
        want = "PP{{stage_name}}" if PROFILES[name].has_pp else "}} {{stage_name}}"
        assert want in target["legendFormat"] and (PROFILES[name].has_pp or "PP" not in target["legendFormat"]), (
            panel["title"],
            target["legendFormat"],
        )
    assert checked >= 5


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)  # KV / HiCache / Store: text only (S25)
def test_evictions_state_tokens_per_second(name: str) -> None:
    panels = [p for p in _panels(name) if p["title"].startswith("GPU KV evictions")]
    assert len(panels) == (2 if PROFILES[name].has_pools else 1)  # one per pool in a PD deployment (S27)
    for evictions in panels:
        assert evictions["fieldConfig"]["defaults"]["unit"] == "count:tok/s"
        assert "rate() starts from a series' first stored sample" in evictions["description"]


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_cache_disks_are_the_device_behind_the_cache_mount_and_absent_without_a_cache_tier(name: str) -> None:
    """Issue 13.6: a profile without a KV cache disk tier (h20-16, pd-128) shows no cache-disk or cache-filesystem
    panel (they would draw the OS and model disks); with one, every disk query joins diskstats to the device
    mounted at the cache mount point instead of matching a device-name pattern."""
    profile = PROFILES[name]
    titles = [p["title"] for p in _panels(name)]
    disk = [
        p
        for p in _panels(name)  # a video pool's are scratch disks (S25), the same panels otherwise
        if p["type"] != "text"
        and p["title"].startswith(("Cache disk", "Cache filesystem", "Scratch disk", "Scratch filesystem"))
    ]
    if not profile.disks.has_cache_tier:
        assert not disk and "Cache disks: not deployed" in titles
        return
    assert disk
    for panel in disk:
        for target in panel.get("targets") or []:
            if "node_disk_" in target["expr"]:
                assert f'mountpoint="{profile.disks.cache_mountpoint}"' in target["expr"], panel["title"]
                assert "device=~" not in target["expr"], panel["title"]


def test_s35_the_kv_transfer_is_read_on_the_prefill_side_only() -> None:
    """SGLang records sglang:kv_transfer_* on the prefill side only (disaggregation/prefill.py): no panel or target
    of pd-128 reads it from the decode pool, where it can never match (issue 28)."""
    (built,) = build_profile(PROFILES["pd-128"])
    readers = [
        (site.raw["title"], t["expr"])
        for site in iter_panels(built.document)
        for t in site.raw.get("targets", [])
        if "kv_transfer_" in t.get("expr", "") and "smg_" not in t["expr"]
    ]
    assert readers, "the prefill side's transfer panels exist"
    assert not [(title, expr) for title, expr in readers if 'engine_type="decode"' in expr], readers
    assert not [title for title, _ in readers if "decode pool" in title], readers


def test_s35_gateway_panels_name_the_flag_their_series_need() -> None:
    (built,) = build_profile(PROFILES["long-context-64"])
    panels = {site.raw["title"]: site.raw for site in iter_panels(built.document)}
    for title in (
        "Gateway admission: requests in flight (layer 1)",
        "Gateway admission: queue depth (layer 1)",
        "Gateway admission rejections by reason (req/s)",
    ):
        assert flag_text(GATEWAY, MAX_CONCURRENT) in panels[title]["description"], title
    for title in (
        "Gateway view: engine running requests per backend",
        "Gateway view: engine waiting requests per backend",
    ):
        assert flag_text(GATEWAY, ENGINE_METRICS) in panels[title]["description"], title
