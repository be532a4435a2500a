"""S22, GPU hardware health: the group's panels per profile (DCGM whatever the utilisation source; a field the
exporter's field list does not collect is a "not collected" text, never an empty column or chart), and on a real
VictoriaMetrics the lost GPU of the gpu-missing scenario keeping its row with its last Xid 79."""

from __future__ import annotations

import dataclasses

import pytest
from dashgen_panels import GROUPS, gpu_health, gpu_window_stats
from dashgen_queries import dcgm
from group_checks import PROFILE_NAMES, PROFILES, group_panels, names

from dashgen.build import build_profile
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_text, globals_for, variable_values

NVLINK = {field for field, _ in dcgm.NVLINK_ERRORS}


def _with_fields(name: str, *fields: str, status: str = "exported"):
    profile = PROFILES[name]
    source = dataclasses.replace(profile.source("dcgm"), fields=dcgm.DEFAULT_FIELDS + fields, status=status)
    return dataclasses.replace(profile, sources={**profile.sources, "dcgm": source})


def test_s34_gpu_health_opens_right_before_the_per_gpu_window_statistics():
    """In an incident the GPU health table (open) comes first, then the per-GPU table with temperature, clock and
    throttle columns (S34)."""
    order = [module.TITLE for module in GROUPS]
    assert order.index(gpu_window_stats.TITLE) == order.index(gpu_health.TITLE) + 1


def test_dcgm_default_fields_and_collects():
    assert dcgm.XID in dcgm.DEFAULT_FIELDS and dcgm.ROW_REMAP_FAILURE in dcgm.DEFAULT_FIELDS
    assert not NVLINK & set(dcgm.DEFAULT_FIELDS)  # commented out in default-counters.csv
    assert (
        "DCGM_FI_PROF_SM_ACTIVE" not in dcgm.DEFAULT_FIELDS
        and "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" not in dcgm.DEFAULT_FIELDS
    )
    for name in PROFILE_NAMES:  # no shipped profile is known to collect more than the default list
        assert PROFILES[name].source("dcgm").fields is None
        assert dcgm.collects(PROFILES[name], dcgm.XID) and not dcgm.collects(PROFILES[name], next(iter(NVLINK)))
    assert dcgm.collects(_with_fields("h20-16", *sorted(NVLINK)), next(iter(NVLINK)))


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s22_health_reads_dcgm_per_gpu_with_node_gpu_and_uuid(name: str) -> None:
    panels = {p["title"]: p for p in group_panels(name, gpu_health.TITLE)}
    (faults,) = [p for t, p in panels.items() if t.startswith("Xid and row remapping per GPU (DCGM")]
    renamed = faults["transformations"][1]["options"]["renameByName"]
    assert list(renamed.values())[:3] == ["Node", "GPU", "UUID"]
    assert {
        "Last Xid code",
        "Xid code changes in window",
        "Correctable remapped rows",
        "Uncorrectable remapped rows",
        "Row remap failed (1 = yes)",
        "PCIe replays in window",
    } <= set(renamed.values())
    for target in faults["targets"]:
        assert names(target["expr"]) <= set(dcgm.DEFAULT_FIELDS) and 'job="dcgm"' in target["expr"]
        assert "by (node, gpu, UUID)" in target["expr"] and target["instant"]
    assert "changes(DCGM_FI_DEV_XID_ERRORS" in str(faults["targets"])
    for code in (48, 79, 94, 95):
        assert f"{code} " in faults["description"]
    (pcie,) = [p for t, p in panels.items() if t.startswith("PCIe replays per GPU (DCGM")]
    assert "rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER" in pcie["targets"][0]["expr"]
    # NVLink error counters are commented out in the default CSV: the table still asks the store (a deployment whose
    # exporter collects them shows them) and, with no series there, says so naming the list it assumed and the fix
    (nvlink,) = [p for t, p in panels.items() if t.startswith("NVLink errors per GPU in window")]
    assert nvlink["type"] == "table" and len(nvlink["targets"]) == 1
    assert all(field in nvlink["targets"][0]["expr"] for field in NVLINK)
    content = nvlink["fieldConfig"]["defaults"]["noValue"]
    assert content.startswith("No NVLink error series in the store")
    assert all(f"`{field}`" in content for field in NVLINK)
    assert "default-counters.csv" in content and "[sources.dcgm] fields" in content
    assert "uncomment" in content and "--collectors" in content


def test_s22_collected_nvlink_counters_get_a_per_gpu_table_and_a_partial_list_says_what_is_dropped():
    full = _with_fields("long-context-64", *sorted(NVLINK))
    (table,) = [p for p in gpu_health.build(full, Topology(full)).panels if p.key == "gpu_health.nvlink_errors"]
    assert table.kind == "table" and len(table.targets) == 4
    assert all("increase(" in t.expr and "sum by (node, gpu, UUID)" in t.expr for t in table.targets)
    part = _with_fields("long-context-64", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL")
    (table,) = [p for p in gpu_health.build(part, Topology(part)).panels if p.key == "gpu_health.nvlink_errors"]
    assert len(table.targets) == 1 and "Columns dropped" in table.evidence.limit
    assert "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL" in table.evidence.limit


def test_s22_without_dcgm_the_group_says_not_available_and_an_uncollected_table_is_text():
    gone = _with_fields("long-context-64", status="not-exported")
    (panel,) = gpu_health.build(gone, Topology(gone)).panels
    assert panel.kind == "text" and panel.title == "GPU health: not available" and "DCGM" in panel.content
    profile = PROFILES["h20-16"]
    none = dataclasses.replace(profile.source("dcgm"), fields=("DCGM_FI_DEV_POWER_USAGE",))
    bare = dataclasses.replace(profile, sources={**profile.sources, "dcgm": none})
    panels = {p.key: p for p in gpu_health.build(bare, Topology(bare)).panels}
    assert panels["gpu_health.faults_not_collected"].title == "Xid and row remapping per GPU: not collected"
    assert "`DCGM_FI_DEV_XID_ERRORS`" in panels["gpu_health.faults_not_collected"].content
    assert panels["gpu_health.pcie_replays_not_collected"].kind == "text"
    assert "profiles/h20-16.toml" in panels["gpu_health.pcie_replays_not_collected"].content


def test_s22_window_tables_drop_an_uncollected_dcgm_column_and_say_so():
    profile = PROFILES["h20-16"]
    source = gpu_window_stats.gpu_source(profile)
    table = gpu_window_stats.window_table(profile, Topology(profile), source)
    assert "sm_active" not in gpu_window_stats.columns(source)
    assert "SM active" not in str(table.transformations)
    assert "No SM active column: `DCGM_FI_PROF_SM_ACTIVE` is not collected" in table.evidence.limit
    wide = _with_fields("h20-16", "DCGM_FI_PROF_SM_ACTIVE")
    assert "sm_active" in gpu_window_stats.columns(gpu_window_stats.gpu_source(wide))


@pytest.mark.parametrize("scenario", ["gpu-missing", "healthy"])
def test_s22_the_lost_gpu_keeps_its_row_with_its_last_xid(victoriametrics, demo_windows, scenario):
    from dashgen.demo.scenarios import LOST_XID, lost_gpu

    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 60),
    }
    (faults,) = [p for p in group_panels(profile.name, gpu_health.TITLE) if p["title"].startswith("Xid and row")]
    ds = Datasource(victoriametrics.url)
    last_xid, changes = (faults["targets"][0]["expr"], faults["targets"][1]["expr"])
    got = {
        (i["metric"]["node"], i["metric"]["gpu"]): float(i["value"][1])
        for i in ds.query(expand_text(last_xid, values), window.end).result
    }
    assert len(got) == profile.total_gpus  # the lost GPU's row is still there, with what it last sent
    moved = {
        k: float(i["value"][1])
        for i in ds.query(expand_text(changes, values), window.end).result
        if (k := (i["metric"]["node"], i["metric"]["gpu"]))
    }
    if scenario == "gpu-missing":
        node, gpu = lost_gpu(profile)
        assert {k: v for k, v in got.items() if v} == {(node, str(gpu)): LOST_XID}
        assert {k for k, v in moved.items() if v} == {(node, str(gpu))}
    else:
        assert not any(got.values()) and not any(moved.values())
