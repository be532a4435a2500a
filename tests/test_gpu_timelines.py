"""Per-GPU timelines group, rendered for every profile: S18 (one quantity per timeline panel, the
title names the source), legends and aggregations keep node and GPU, GPM preferred over DCGM,
the collapsed row. The checks every panel passes (S5, S7, parsing, catalogue names) are in
test_every_panel.py."""

from __future__ import annotations

import pytest
from dashgen_panels import GROUPS, gpu_timelines
from dashgen_queries.gpu import (
    CLOCK_EVENT_REASONS,
    GPU_SOURCE_KEYS,
    QUANTITIES,
    SOURCES,
    gpu_memory_used_share,
    gpu_source,
)
from group_checks import (
    PROFILE_NAMES,
    PROFILES,
    aggregations,
    group_panels,
    group_row,
    names,
    targets,
)

from dashgen.rules.recording import GPU_MEMORY, gpu_records

TITLE = gpu_timelines.TITLE
MEMORY = {
    "gpm_memory_used_bytes",
    "gpm_memory_total_bytes",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_RESERVED",
}


def _quantity_of(metric: str) -> str:
    """The quantity a metric measures; memory used / total / free / reserved are one quantity."""
    if metric in MEMORY:
        return "memory"
    if metric in {source.metrics[CLOCK_EVENT_REASONS] for source in SOURCES}:
        return "clock events"
    if metric in {source.validity_metric for source in SOURCES}:
        return "sample validity"
    (key,) = {k for source in SOURCES for k, m in source.metrics.items() if m == metric}
    return key


def test_every_source_names_a_metric_for_every_quantity_and_the_clock_reasons() -> None:
    assert GPU_SOURCE_KEYS == ("gpm", "dcgm"), "GPM is preferred, DCGM the fallback"
    for source in SOURCES:
        assert set(source.metrics) == {*QUANTITIES, CLOCK_EVENT_REASONS}, source.key
        assert set(source.reported_units) <= set(QUANTITIES)
        assert source.memory_total_metrics, source.key


def test_the_memory_share_is_one_builder_and_its_validity_filter_is_the_only_difference() -> None:
    """The timelines (every sample), the watermark panels (valid samples) and the recording rule (valid
    samples, no template variables) read one memory share: the same used / total, whatever the source."""
    assert len(PROFILE_NAMES) >= 4
    for name in PROFILE_NAMES:
        profile = PROFILES[name]
        source = gpu_source(profile)
        assert source is not None
        timeline = gpu_memory_used_share(profile, source)
        (record,) = [r for r in gpu_records(profile, source) if r.record == GPU_MEMORY]
        unscoped = gpu_memory_used_share(profile, source, scoped=False)
        assert record.expr.startswith(f"({unscoped})" if source.validity_metric else unscoped), name
        assert timeline.replace(', node=~"$node", gpu=~"$gpu"', "") == unscoped, name


def _panels(name: str) -> list[dict]:
    return group_panels(name, TITLE)


def test_s34_timelines_follow_the_per_gpu_tables_before_the_review() -> None:
    """Find the GPU in the tables, then open its timelines: right after the per-GPU window statistics, before the
    cache-evidence review (S34)."""
    order = [module.TITLE for module in GROUPS]
    assert order.index(TITLE) == order.index("Per-GPU window statistics") + 1
    assert order.index(TITLE) < order.index("Cache evidence")


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s18_one_quantity_per_timeline_panel_and_the_title_names_the_source(name: str) -> None:
    source = gpu_source(PROFILES[name])
    assert source is not None
    caption = source.title_caption()
    panels = _panels(name)
    assert len(panels) >= 10
    quantities_seen = []
    for panel in panels:
        if panel["type"] == "text":  # a quantity the exporter does not collect (S22)
            content = panel["options"]["content"]
            assert panel["title"].endswith(": not collected") and "not collected by this exporter" in content
            continue
        found = {n for t in panel["targets"] for n in names(t["expr"])}
        quantities = {_quantity_of(n) for n in found}
        assert len(quantities) == 1, f"{panel['title']}: mixes {quantities}"
        assert caption in panel["title"], f"{panel['title']}: title does not name {caption}"
        assert all(n.startswith("gpm_") == (source.key == "gpm") for n in found), panel["title"]
        quantities_seen.append(quantities.pop())
    for key in ("memory", "busy", "tensor_active", "temperature", "sm_clock"):
        assert key in quantities_seen
    assert ("sm_occupancy" in quantities_seen) == source.collects("sm_occupancy")


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_legends_and_aggregations_keep_node_and_gpu(name: str) -> None:
    found = list(targets(_panels(name)))
    assert len(found) >= 8, f"{name}: one target per collected quantity"
    for panel, target in found:
        assert "{{node}}" in target["legendFormat"] and "{{gpu}}" in target["legendFormat"], panel["title"]
        aggs = aggregations(target["expr"])
        assert aggs, f"{panel['title']}: exporter labels must be aggregated away to one series per GPU"
        for agg in aggs:
            assert {"node", "gpu"} <= set(agg.modifier.labels), f"{panel['title']}: {target['expr']}"
        assert 'node=~"$node"' in target["expr"] and 'gpu=~"$gpu"' in target["expr"]


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_one_colour_per_gpu(name: str) -> None:
    timelines = [panel for panel in _panels(name) if panel["type"] == "timeseries"]
    assert len(timelines) >= 8, f"{name}: one timeline per collected quantity"
    for panel in timelines:
        assert panel["fieldConfig"]["defaults"]["color"] == {"mode": "palette-classic"}, panel["title"]


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_row_is_collapsed_and_holds_its_panels(name: str) -> None:
    row = group_row(name, TITLE)
    assert row["collapsed"] is True and len(row["panels"]) >= 10


def test_gpm_preferred_dcgm_fallback_says_what_dcgm_lacks() -> None:
    for name in PROFILE_NAMES:
        source = gpu_source(PROFILES[name])
        assert source is not None and source.key == ("gpm" if PROFILES[name].exported("gpm") else "dcgm")
    dcgm = [n for n in PROFILE_NAMES if not PROFILES[n].exported("gpm")]
    assert dcgm, "expected at least one profile without GPM"
    for name in dcgm:
        (occupancy,) = [p for p in _panels(name) if p["title"].startswith("SM occupancy")]
        assert occupancy["type"] == "text" and occupancy["title"] == "SM occupancy per GPU: not collected"
        content = occupancy["options"]["content"]
        assert "`DCGM_FI_PROF_SM_OCCUPANCY` is not collected by this exporter's field list" in content
        assert "where it is commented out" in content and "[sources.dcgm] fields" in content
        assert not any(p["title"].startswith("Valid samples") for p in _panels(name))


def test_s22_a_field_the_dcgm_exporter_does_not_collect_is_a_not_collected_text_never_an_empty_chart() -> None:
    """h20-16 runs the default CSV: SM active, SM occupancy and the clock-event reasons are texts naming the field
    and how to add it. With those fields in its field list the same profile draws the charts."""
    import dataclasses

    from dashgen_queries import dcgm

    from dashgen.deployment.topology import Topology

    profile = PROFILES["h20-16"]
    texts = {p["title"]: p for p in _panels("h20-16") if p["type"] == "text"}
    assert set(texts) == {
        "SM active per GPU: not collected",
        "SM occupancy per GPU: not collected",
        "Clock-event (throttle) reasons per GPU: not collected",
    }
    assert (
        "`DCGM_FI_DEV_CLOCKS_EVENT_REASONS` is not collected"
        in texts["Clock-event (throttle) reasons per GPU: not collected"]["options"]["content"]
    )
    added = ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    wider = dataclasses.replace(profile.source("dcgm"), fields=dcgm.DEFAULT_FIELDS + added)
    collecting = dataclasses.replace(profile, sources={**profile.sources, "dcgm": wider})
    group = gpu_timelines.build(collecting, Topology(collecting))
    assert not [p for p in group.panels if p.kind == "text"]
    assert {"gpu_timelines.sm_active", "gpu_timelines.sm_occupancy", "gpu_timelines.clock_event_reasons"} <= {
        p.key for p in group.panels
    }


@pytest.mark.parametrize("name", [n for n in PROFILE_NAMES if PROFILES[n].capacity.gpu_tdp_watts])
def test_power_reference_line_is_the_profiles_tdp(name: str) -> None:
    (power,) = [p for p in _panels(name) if p["title"].startswith("Power")]
    steps = power["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert steps[-1]["value"] == PROFILES[name].capacity.gpu_tdp_watts
    assert power["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"] == {"mode": "line"}
    assert power["fieldConfig"]["defaults"].get("max") is None
