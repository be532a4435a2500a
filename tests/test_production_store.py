"""S24: the dashboards read a store as production runs it. A second real VictoriaMetrics runs with
long-context-64's ``[store]`` settings (``-dedup.minScrapeInterval=30s``, the 30 s latency offset not
disabled); the demo cluster is imported at its real scrape intervals (GPM 1 s, SGLang 5 s) and the store
keeps one sample per 30 s of each. A healthy cluster reads no reason at all — in particular not
*insufficient samples*, which a profile expecting 1 s GPM samples would show on every node — and each of
the five reasons still shows on exactly its node and layer."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from dashgen_queries import nodata
from demo_queries import expected_code
from victoriametrics import DemoWindow, start_production_store

from dashgen.build import build_profile
from dashgen.demo.run import import_demo
from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_text, globals_for, variable_values

PROFILE = "long-context-64"
SCENARIOS = {"healthy": 0, "five-reasons": 3}  # hours before the anchor its window ends
# Half an hour at the real scrape intervals (1 s GPM samples: most of the fixture's CPU). What the tests read does not
# depend on the length: the reasons and freshness at the window's end look back minutes (the ranges the dashboard
# reads scale with the window, $__range), every fault of the scenario holds from the window's start, and the count
# of deduplicated samples is checked against the window's length.
HOURS = 0.5
DEDUP_SECONDS = 30.0  # long-context-64's [store] resolution


@pytest.fixture(scope="module")
def production_store():
    (profile,) = load_profiles([PROFILE])
    server = start_production_store(profile)
    try:
        anchor = (time.time() // 3600) * 3600 - 3600
        datasource = Datasource(server.url, timeout=120)
        windows = {}
        for scenario, hours_before in SCENARIOS.items():
            end = anchor - hours_before * 3600
            import_demo(datasource, profile, scenario, end, HOURS)
            windows[scenario] = DemoWindow(profile, Topology(profile), scenario, end, HOURS)
        datasource.flush()
        yield server, windows
    finally:
        server.stop()


def test_s24_the_production_store_keeps_one_sample_per_resolution(production_store):
    server, windows = production_store
    window = windows["healthy"]
    ds = Datasource(server.url)
    node = window.profile.node_names[0]
    seconds = int(window.hours * 3600)
    (item,) = ds.query(f'count_over_time(gpm_power_watts{{node="{node}", gpu="0"}}[{seconds}s])', window.end).result
    kept = seconds / DEDUP_SECONDS
    assert window.profile.store.resolution == f"{DEDUP_SECONDS:g}s"
    assert kept - 10 <= float(item["value"][1]) <= kept + 1, "a 1 s GPM series deduplicated to one sample per 30 s"


@pytest.mark.parametrize("scenario", ["healthy", "five-reasons"])
def test_s24_reasons_on_a_deduplicated_store_name_the_right_node_and_layer(production_store, scenario):
    server, windows = production_store
    window = windows[scenario]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 120),
    }
    ds = Datasource(server.url)
    wrong = {}
    for layer in nodata.layers(profile):
        result = ds.query(expand_text(nodata.reason_code(profile, layer), values), window.end).result
        got = {item["metric"][profile.label("node")]: int(float(item["value"][1])) for item in result}
        assert sorted(got) == sorted(profile.node_names), f"{layer.key}: one row per node"
        for node in profile.node_names:
            want = expected_code(nodata, profile, node, layer) if scenario != "healthy" else nodata.OK
            if got[node] != want:
                wrong[(node, layer.key)] = (got[node], want)
    assert not wrong, f"(node, layer): (got, expected) {wrong}"


def test_s24_a_profile_that_ignores_the_store_reads_insufficient_samples_on_every_node(production_store):
    """The fault this family guards against: expecting one GPM sample per second of a 30 s store."""
    server, windows = production_store
    window = windows["healthy"]
    naive = replace(
        window.profile,
        sources={
            name: replace(
                source, sample_interval=source.scrape_interval, sample_interval_seconds=source.scrape_interval_seconds
            )
            for name, source in window.profile.sources.items()
        },
    )
    (built,) = build_profile(naive)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 120),
    }
    gpm = next(layer for layer in nodata.layers(naive) if layer.key == "gpm")
    result = Datasource(server.url).query(expand_text(nodata.reason_code(naive, gpm), values), window.end).result
    assert {int(float(item["value"][1])) for item in result} == {nodata.INSUFFICIENT}


def test_s24_freshness_on_a_healthy_deduplicated_store_stays_within_the_expected_lag(production_store):
    from dashgen_panels.cache_evidence import expected_lag, freshness_table

    server, windows = production_store
    window = windows["healthy"]
    profile = window.profile
    (built,) = build_profile(profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(window.end, window.hours * 3600), 60, 120),
    }
    ds = Datasource(server.url)
    table = freshness_table(profile)
    assert len(table.targets) == len(nodata.layers(profile)) >= 3, "one freshness column per layer"
    for layer, target in zip(nodata.layers(profile), table.targets, strict=True):
        result = ds.query(expand_text(target.expr, values), window.end).result
        ages = {item["metric"][profile.label("node")]: float(item["value"][1]) for item in result}
        assert sorted(ages) == sorted(profile.node_names), layer.key
        assert all(0 <= age <= expected_lag(profile, layer) for age in ages.values()), (layer.key, ages)
