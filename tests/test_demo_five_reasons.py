"""The demo's faulted windows, long-context-64's five-reasons generated once for this module: its faults and rare
first events in the generated series, the six nodes it needs, a series made without its samples (the label
checks') equal to the full series less its values, and an import line reading back as the ``json`` line it
replaces."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from dashgen_queries.inventory import INVENTORY

from dashgen.cli.app import main
from dashgen.demo.pd_models import lookup
from dashgen.demo.run import demo_models, demo_plan
from dashgen.demo.scenarios import INSUFFICIENT_SAMPLES, faults
from dashgen.demo.series import generate
from dashgen.deployment.profile import load_profiles
from dashgen.errors import InputError

END = 1_790_000_000.0


def _series(profile, scenario="healthy", hours=0.25, samples=True):
    models, _ = demo_models(profile)
    return list(generate(demo_plan(profile, scenario, END, hours), models, samples))


@pytest.fixture(scope="module")
def five_reasons():
    """long-context-64's five-reasons series (a quarter of an hour, every sample)."""
    (profile,) = load_profiles(["long-context-64"])
    return profile, _series(profile, "five-reasons")


def test_a_series_generated_without_samples_is_the_full_series_less_its_values(five_reasons):
    """``generate(samples=False)`` (the label checks above, the fault suite's): the same series in the same order,
    each with its labels and timestamps, under faults that end, thin, cut and delay series (five-reasons' down,
    sparse and idle nodes, the rare counters' first events; a lost GPU); the models' series have no values, what
    the demo writes beside them (up, the inventory) keeps its own."""
    lc64, series = five_reasons
    (h20,) = load_profiles(["h20-16"])  # a GPU lost on a DCGM profile (its Xid cut too), the smaller one
    shapes = 0
    for profile, scenario, full in ((lc64, "five-reasons", series), (h20, "gpu-missing", None)):
        plan = demo_plan(profile, scenario, END, 0.25 if full else 0.1, 0.0 if full else 60.0)
        models, _ = demo_models(profile)
        full = full or list(generate(plan, models))
        bare = list(generate(plan, models, samples=False))
        assert [(s["metric"], s["timestamps"]) for s in bare] == [(s["metric"], s["timestamps"]) for s in full]
        modelled = {s["metric"]["__name__"] for s in bare if s["values"] is None}
        assert modelled and not modelled & {"up", INVENTORY}
        assert all(s["values"] is not None for s in full)
        shapes += len({len(s["timestamps"]) for s in bare})
    assert shapes > 6, "series of several lengths"


def test_rare_first_event_counters_appear_mid_window_and_never_on_an_idle_node():
    (profile,) = load_profiles(["long-context-64"])
    plan = demo_plan(profile, "five-reasons", END, 1.0)
    models, _ = demo_models(profile)
    models = [(m, e) for m, e in models if m.name == "sglang:hicache_dropped_tokens_total"] or [
        (lookup("sglang:hicache_dropped_tokens_total")[0], {})
    ]
    series = [s for s in generate(plan, models) if s["metric"]["__name__"] not in ("up", INVENTORY)]
    idle = next(node for node, fault in plan.faults.items() if fault.no_traffic)
    assert series and all(s["metric"]["node"] != idle for s in series)
    assert all(s["timestamps"][0] > plan.start * 1000 for s in series)


def test_five_reasons_faults_in_the_generated_series(five_reasons):
    profile, series = five_reasons
    by_reason = {fault.reason: node for node, fault in faults(profile, "five-reasons").items()}
    up = {(s["metric"]["node"], s["metric"]["job"]): s["values"] for s in series if s["metric"]["__name__"] == "up"}
    down = by_reason[5]
    assert all(set(v) == {0.0} for (n, _), v in up.items() if n == down)
    assert (down, profile.source("gpm").job) not in up
    # the recorded inventory still lists the down node: it is what the profile expects, not what was scraped
    assert not [s for s in series if s["metric"]["node"] == down and s["metric"]["__name__"] not in ("up", INVENTORY)]
    assert not [s for s in series if s["metric"]["node"] == by_reason[4] and s["metric"].get("storage_backend")]
    sparse = [
        s for s in series if s["metric"]["node"] == by_reason[3] and s["metric"]["__name__"] not in ("up", INVENTORY)
    ]
    assert sparse and all(len(s["values"]) <= INSUFFICIENT_SAMPLES for s in sparse)
    flat = [
        s["values"]
        for s in series
        if s["metric"]["node"] == by_reason[1] and s["metric"]["__name__"] == "sglang:realtime_tokens_total"
    ]
    assert flat and all(len(set(v)) == 1 for v in flat)
    disk = [
        s["values"]
        for s in series
        if s["metric"]["node"] == by_reason[2]
        and s["metric"]["__name__"] == "node_disk_reads_completed_total"
        and s["metric"]["device"] != "sda"
    ]
    assert disk and all(len(set(v)) == 1 for v in disk)


def test_five_reasons_needs_six_nodes():
    (profile,) = load_profiles(["h20-16"])
    with pytest.raises(InputError, match="at least 6 nodes"):
        faults(profile, "five-reasons")
    result = CliRunner().invoke(
        main, ["demo-data", "--profile", "h20-16", "--url", "http://127.0.0.1:9", "--scenario", "five-reasons"]
    )
    assert result.exit_code == 2, result.output


def test_an_import_line_reads_back_as_the_json_line_it_replaces(five_reasons):
    """``Datasource.import_series`` writes each object with orjson, and with ``json`` what orjson would refuse or
    write as null: every line reads back as the ``json`` line did (NaN and infinities as NaN / Infinity, a
    non-string key, a 65-bit integer), and the demo's own series take the fast path."""
    import json

    import orjson

    from dashgen.live.datasource import import_line

    def same(a: object, b: object) -> bool:  # NaN == NaN, as the store reads it
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    _profile, demo = five_reasons
    assert len(demo) > 1000
    for item in demo:
        line = import_line(item)
        assert line == orjson.dumps(item) and json.loads(line) == item
    odd = [
        {"metric": {"__name__": "m"}, "values": [float("nan"), float("inf"), -float("inf"), 1e-05], "timestamps": [1]},
        {"metric": {"__name__": "m", "v": "null"}, "values": [1], "timestamps": [1]},
        {"metric": {1: "x"}, "values": [1], "timestamps": [1]},
        {"metric": {"__name__": "m"}, "values": [2**65], "timestamps": [1]},
    ]
    for item in odd:
        line = import_line(item)
        assert b"\n" not in line and same(json.loads(line), json.loads(json.dumps(item))), line
    assert b"NaN" in import_line(odd[0]) and b"Infinity" in import_line(odd[0])
