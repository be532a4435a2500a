"""The demo generator keeps the metric catalogue's label contract and counter semantics, covers every
metric the dashboards query, and imports into a real VictoriaMetrics with the contract intact."""

from __future__ import annotations

import functools
import math

import pytest
from click.testing import CliRunner
from dashgen_queries.inventory import INVENTORY

from dashgen.cli.app import main
from dashgen.demo.endpoints import cache_devices
from dashgen.demo.pd_models import CATALOGUE, lookup
from dashgen.demo.run import demo_models, demo_plan
from dashgen.demo.scenarios import INCIDENTS, INSUFFICIENT_SAMPLES, faults
from dashgen.demo.scopes import mounts
from dashgen.demo.series import generate
from dashgen.deployment.profile import load_profiles
from dashgen.errors import InputError
from dashgen.live.datasource import Datasource
from dashgen.live.sources import METRIC_SOURCES, source_of

PROFILES = load_profiles()
END = 1_790_000_000.0


def _series(profile, scenario="healthy", hours=0.25, samples=True):
    models, _ = demo_models(profile)
    return list(generate(demo_plan(profile, scenario, END, hours), models, samples))


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_dashboard_metric_has_a_demo_model(profile):
    _models, unknown = demo_models(profile)
    assert not unknown, f"metrics the dashboards query but the demo cannot generate: {unknown}"


def test_the_deployments_of_one_profile_read_its_queries_once_and_resolve_the_same_models():
    """The fault suite imports fifteen deployments of long-context-64, each with its own drill or faults: what the
    profile's dashboards and rules query is read once for all (the deployment's value is a contract label's, left
    to the scope), and each gets the models it resolves afresh, a drill's and a fault's metrics added to its own
    copy only."""
    from dataclasses import replace

    from dashgen.demo import run, wanted

    profile = next(p for p in PROFILES if p.name == "long-context-64")
    run._QUERIED.clear()
    before = run._QUERIED.misses
    healthy = demo_models(replace(profile, deployment="suite-a"))
    drill = demo_models(replace(profile, deployment="suite-b"), INCIDENTS[0])
    fault = demo_models(profile, "healthy", ["fault:gateway-errors", "fault:gpu-pcie-replays"])
    again = demo_models(replace(profile, deployment="suite-c"))
    assert run._QUERIED.misses == before + 1, "a second deployment read the profile's queries again"
    # each resolved afresh (the memo emptied) from another deployment's dashboards than the one the memo read: the
    # profile's own (long-context-64), whose build the other tests share
    fresh, selected = [], 0
    for scenario, more in (
        ("healthy", []),
        (INCIDENTS[0], []),
        ("healthy", ["fault:gateway-errors", "fault:gpu-pcie-replays"]),
    ):
        run._QUERIED.clear()
        fresh.append(demo_models(profile, scenario, more))
        selected = selected or wanted._SELECTED.misses
    assert healthy == again == fresh[0] and drill == fresh[1] and fault == fresh[2]
    assert wanted._SELECTED.misses == selected, "the same queries read again walked their trees again"
    names = {model.name for model, _ in healthy[0]}
    assert names < {model.name for model, _ in drill[0]} and names <= {model.name for model, _ in fault[0]}


def test_a_store_read_by_the_rules_and_known_queries_imports_their_metrics_each_series_as_the_full_import_has_it():
    """``reads`` (the fault suite's and the drills' stores): the models are the rules' metrics and those the given
    expressions select, fewer than every dashboard's; each series kept is byte for byte the full import's (the same
    labels, samples and JSON line: sha256 of the lines), so the left-out metrics change nothing of what is read."""
    import hashlib

    from dashgen.demo.run import demo_series
    from dashgen.demo.wanted import Wanted, add_rule_expressions
    from dashgen.live.datasource import import_line
    from dashgen.rules.render import rule_groups_data

    profile = next(p for p in PROFILES if p.name == "h20-16")  # the smallest: what holds is the same on every profile
    extra = "sglang:num_requests_total"  # a metric no rule of the profile reads
    ruled = Wanted()
    add_rule_expressions(ruled, rule_groups_data(profile))
    assert extra not in ruled.metrics
    full, _ = demo_models(profile)
    read, unknown = demo_models(profile, reads=(f"rate({extra}[5m])",))
    assert not unknown
    names = {model.name for model, _ in read}
    assert names == {model.name for model, _ in demo_models(profile, reads=())[0]} | {extra}
    assert names < {model.name for model, _ in full} and len(names) < 0.7 * len(full)
    # a label value only a dashboard asks for (``priority=""``) stays on the rules' metrics: their series are seeded
    # from their labels, so the values too are the full import's
    rules_only = {model.name: extra for model, extra in demo_models(profile, reads=())[0]}
    assert any("priority" in extra for extra in rules_only.values()), rules_only
    plan = demo_plan(
        profile, "healthy", END, 0.02, 30.0
    )  # three samples a series: the labels and bytes, not the length, are compared
    lines = {}
    for models in (full, read):
        lines[len(models)] = {tuple(sorted(i["metric"].items())): import_line(i) for i in demo_series(plan, models, ())}
    whole, kept = lines[len(full)], lines[len(read)]
    assert len(kept) < len(whole) and {key[0] for key in kept} >= {("__name__", extra)}
    digest = [hashlib.sha256(b"".join(rows[key] for key in sorted(kept))).hexdigest() for rows in (whole, kept)]
    assert digest[0] == digest[1]


def test_the_sources_table_and_the_demo_catalogue_list_the_same_metrics():
    """validate-queries and the demo read one metric -> source table; every listed metric has a model."""
    listed = {name for exports in METRIC_SOURCES.values() for name in (*exports.metrics, *exports.histograms)}
    # SGLang Diffusion (S25) is simulated job by job in dashgen.demo.diffusion_series, not modelled per metric
    from dashgen_queries.diffusion import METRICS as DIFFUSION

    from dashgen.demo.diffusion_series import is_diffusion
    from dashgen.demo.incidents import TIMEX_NAMES  # the clock series the incidents model, beside the offset

    assert {name for name in listed if not is_diffusion(name)} - (TIMEX_NAMES - set(CATALOGUE)) == set(CATALOGUE)
    assert {name for name in listed if is_diffusion(name)} == set(DIFFUSION)
    assert source_of("sglang:time_to_first_token_seconds_bucket") == "sglang"
    assert source_of("sglang:num_running_reqs_count") is None  # a gauge has no histogram series
    assert source_of("up") is None


@pytest.fixture(scope="module")
def lc64():
    """long-context-64's healthy series without their values: the tests below read labels (the counters' test
    generates the series whose values it reads)."""
    (profile,) = load_profiles(["long-context-64"])
    return profile, _series(profile, samples=False)


def test_label_contract_node_job_instance_on_every_series(lc64):
    profile, series = lc64
    recorded = [item["metric"] for item in series if item["metric"]["__name__"] == INVENTORY]
    # the inventory is a recording rule's output (no scrape target): one series per node, no job / instance
    assert sorted(m[profile.label("node")] for m in recorded) == sorted(profile.node_names)
    for item in series:
        labels = item["metric"]
        if labels["__name__"] == INVENTORY:
            continue
        for role in ("node", "job", "instance"):
            assert labels.get(profile.label(role)), f"{labels['__name__']} lacks {role}: {labels}"


def test_gpu_series_carry_gpu_and_uuid_per_source(lc64):
    profile, series = lc64
    gpm = [s["metric"] for s in series if s["metric"]["__name__"].startswith("gpm_")]
    assert gpm
    assert all(m.get(profile.label("gpu")) and m.get(profile.label("gpm_uuid")) for m in gpm)
    assert {(m["node"], m["gpu"]) for m in gpm} == {
        (n, str(g)) for n in profile.node_names for g in range(profile.gpus_per_node)
    }


def test_rank_series_follow_the_topology_and_scheduler_series_the_logging_rank(lc64):
    from dashgen.deployment.topology import Topology

    profile, series = lc64
    topology = Topology(profile)
    ranks = {(r.node, str(r.tp_rank), str(r.pp_rank)) for r in topology.ranks}
    radix = {
        (m["node"], m["tp_rank"], m["pp_rank"])
        for s in series
        if (m := s["metric"])["__name__"] == "sglang:hicache_backup_bytes_total"
    }
    assert radix == ranks
    logging = {(r.node, str(r.tp_rank), str(r.pp_rank)) for r in topology.ranks if r.tp_rank == 0}
    scheduler = {
        (m["node"], m["tp_rank"], m["pp_rank"])
        for s in series
        if (m := s["metric"])["__name__"] == "sglang:num_running_reqs"
    }
    assert scheduler == logging
    assert len(scheduler) == profile.nodes  # TP8 x PP4 over 8 nodes: one stage, one logging rank per node


def test_tokenizer_series_only_on_each_replicas_first_node_without_rank_labels(lc64):
    from dashgen.deployment.topology import Topology

    profile, series = lc64
    heads = {replica.nodes[0] for replica in Topology(profile).replicas}
    tokenizer = [s["metric"] for s in series if s["metric"]["__name__"] == "sglang:generation_tokens_total"]
    assert {m["node"] for m in tokenizer} == heads
    assert all("tp_rank" not in m and "pp_rank" not in m for m in tokenizer)


def test_up_per_target_per_node_and_mooncake_segments_per_rank(lc64):
    profile, series = lc64
    up = {(s["metric"]["node"], s["metric"]["job"]) for s in series if s["metric"]["__name__"] == "up"}
    for node in profile.node_names:
        for source in ("sglang", "dcgm", "gpm", "node_exporter"):
            assert (node, profile.source(source).job) in up
    masters = {node for node, job in up if job == profile.source("mooncake_master").job}
    assert len(masters) == 1
    segments = [s["metric"] for s in series if s["metric"]["__name__"] == "segment_total_capacity_bytes"]
    assert {m["node"] for m in segments} == masters  # the exporter's node, not the data's (S11)
    hosts = [m["segment"].rsplit(":", 1)[0] for m in segments]
    # S11: segments carry the node's address from the profile (IPs in long-context-64), not its name
    addresses = [profile.node_address(n) for n in profile.node_names]
    assert addresses == [f"10.12.0.{10 + i}" for i in range(profile.nodes)]
    assert sorted(set(hosts)) == sorted(addresses)
    assert all(hosts.count(a) == profile.gpus_per_node for a in addresses)


def test_disk_and_filesystem_series_use_the_profiles_disks(lc64):
    profile, series = lc64
    devices = {s["metric"]["device"] for s in series if s["metric"]["__name__"] == "node_disk_reads_completed_total"}
    assert set(cache_devices(profile)) <= devices
    mountpoints = {s["metric"]["mountpoint"] for s in series if s["metric"]["__name__"] == "node_filesystem_size_bytes"}
    assert {profile.disks.cache_mountpoint, profile.disks.model_mountpoint} <= mountpoints
    assert {m[1] for m in mounts(profile, None)} == mountpoints


def _counted(name: str) -> bool:
    """Whether a series is a modelled counter's or histogram's."""
    found = lookup(name)
    return found is not None and found[0].kind != "gauge"


def test_counters_and_histograms_are_monotonic_and_buckets_cumulative(lc64):
    profile, bare = lc64
    models, _ = demo_models(profile)
    # the counters' and histograms' series only, each the series the whole import holds (seeded from its own labels,
    # so with the fixture's labels and timestamps)
    series = list(generate(demo_plan(profile, "healthy", END, 0.25), [(m, e) for m, e in models if m.kind != "gauge"]))
    counted = [(s["metric"], s["timestamps"]) for s in series if _counted(s["metric"]["__name__"])]
    assert counted == [(s["metric"], s["timestamps"]) for s in bare if _counted(s["metric"]["__name__"])]
    buckets: dict[tuple, dict[float, list[float]]] = {}
    checked = 0
    for item in series:
        name = item["metric"]["__name__"]
        if not _counted(name):
            continue
        values = item["values"]
        assert all(b >= a for a, b in zip(values, values[1:], strict=False)), name
        assert item["timestamps"] == sorted(item["timestamps"])
        checked += 1
        if name.endswith("_bucket"):
            key = (name, tuple(sorted((k, v) for k, v in item["metric"].items() if k != "le")))
            le = item["metric"]["le"]
            buckets.setdefault(key, {})[math.inf if le == "+Inf" else float(le)] = values
    assert checked > 100 and buckets
    for key, by_le in buckets.items():
        bounds = sorted(by_le)
        assert bounds[-1] == math.inf, key
        for low, high in zip(bounds, bounds[1:], strict=False):
            assert all(a <= b for a, b in zip(by_le[low], by_le[high], strict=True)), (key, low, high)


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


def test_imported_demo_keeps_the_contract_in_victoriametrics(victoriametrics, demo_windows):
    window = demo_windows[("long-context-64", "healthy")]
    ds = Datasource(victoriametrics.url)
    # every demo series names its node; recorded series aggregated above the nodes (deployment:… / cluster:… /
    # pool:…, e.g. the client-side SLO and the stage bands tests replay into this shared store; job:… / replica:…,
    # the first screen's targets up per job and replica states) name none
    above = "(deployment|cluster|pool|job|replica):.+"
    unlabelled = ds.query(f'count({{__name__=~".+", __name__!~"{above}", node=""}})', window.end).result
    assert not unlabelled, unlabelled
    gpus = ds.query("count(count by (node, gpu, uuid) (last_over_time(gpm_power_watts[5m])))", window.end).result
    assert int(gpus[0]["value"][1]) == window.profile.total_gpus
    dcgm = demo_windows[("h20-16", "healthy")]
    uuids = ds.query("count(count by (node, gpu, UUID) (last_over_time(DCGM_FI_DEV_POWER_USAGE[5m])))", dcgm.end).result
    assert int(uuids[0]["value"][1]) == dcgm.profile.total_gpus
    samples = ds.query("max(count_over_time(gpm_power_watts[1h]))", window.end).result
    interval = window.profile.source("gpm").scrape_interval_seconds
    assert int(samples[0]["value"][1]) == window.hours * 3600 / interval  # real 1 s sampling (left-open window)


@pytest.mark.parametrize("name", ["long-context-64", "h20-16"])
def test_s22_gpu_missing_scenario_loses_one_gpu_after_its_xid_and_keeps_every_other_series(name):
    """gpu-missing: one GPU's series (GPM and DCGM) end at LOST_AT after a last Xid of 79 from XID_AT; every other
    GPU and every exporter's up stay whole, so the node reads GPU missing and nothing else."""
    from dashgen.demo.scenarios import LOST_AT, LOST_XID, XID_AT, assignments, lost_gpu
    from dashgen.demo.series import XID_METRIC

    (profile,) = load_profiles([name])
    plan = demo_plan(profile, "gpu-missing", END, 1.0, step=30)
    models, _ = demo_models(profile)
    node, gpu = lost_gpu(profile)
    cut = (plan.start + (plan.end - plan.start) * LOST_AT) * 1000
    gpu_series, lost = 0, []
    for item in generate(plan, models, samples=False):  # which series end when (up keeps its values)
        labels = item["metric"]
        if labels["__name__"] == "up":
            assert set(item["values"]) == {1.0}
            continue
        if profile.label("gpu") not in labels:
            continue
        gpu_series += 1
        if (labels["node"], labels[profile.label("gpu")]) == (node, str(gpu)):
            lost.append(item)
            assert item["timestamps"][-1] < cut
        else:
            assert item["timestamps"][-1] > (plan.end - 30) * 1000  # to the window end, on the 30 s grid
    assert lost and gpu_series > len(lost)
    (bare,) = [s for s in lost if s["metric"]["__name__"] == XID_METRIC]
    # the lost GPU's Xid with its values: the same series among the Xid metric's, generated with samples
    (xid,) = [
        s for s in generate(plan, [(m, e) for m, e in models if m.name == XID_METRIC]) if s["metric"] == bare["metric"]
    ]
    assert xid["timestamps"] == bare["timestamps"]
    xid_at = (plan.start + (plan.end - plan.start) * XID_AT) * 1000
    assert {v for v, t in zip(xid["values"], xid["timestamps"], strict=True) if t >= xid_at} == {LOST_XID}
    assert {v for v, t in zip(xid["values"], xid["timestamps"], strict=True) if t < xid_at} == {0}
    (row,) = assignments(profile, "gpu-missing")
    assert row.node == node and row.reason_name == "GPU missing" and f"Xid {LOST_XID}" in row.detail


def test_a_server_that_fails_to_start_is_stopped_and_its_log_tail_says_why(tmp_path):
    """``vmlauncher.launch``, which starts every throw-away server (VictoriaMetrics, Prometheus, vmagent): a
    process that exits during start-up gives a LaunchError naming it, its exit code and its own log lines."""
    import sys

    from dashgen.demo.vmlauncher import LaunchError, free_port, launch

    script = "import sys; print('flag provided but not defined: -nonsense'); sys.exit(3)"
    with pytest.raises(LaunchError) as raised:
        launch(
            "fake-server",
            [sys.executable, "-c", script],
            tmp_path / "log",
            f"http://127.0.0.1:{free_port()}/health",
            10,
        )
    message = str(raised.value)
    assert message.startswith("fake-server exited with code 3 during start-up:")
    assert "flag provided but not defined: -nonsense" in message


def test_demo_data_records_the_now_rows_reason_codes_with_vmalert(victoriametrics, demo_windows):
    """demo-data --record replays the layer-health rules (real vmalert -replay) after the import: the matrix of
    the imported window then has one recorded code per profile node and layer, and says so in its JSON."""
    import json
    import time

    from dashgen_queries import nodata

    profile = next(p for p in PROFILES if p.name == "h20-16")
    end = (time.time() // 3600) * 3600 - 34 * 3600  # clear of every session window (test_video_jobs' end 29 h back)
    result = CliRunner().invoke(
        main,
        [
            "demo-data",
            "--profile",
            "h20-16",
            "--url",
            victoriametrics.url,
            "--hours",
            "0.25",
            "--end",
            str(int(end)),
            "--record",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"]["recorded_rules"] is True
    selector = f'{nodata.LAYER_REASON}{{{profile.label("deployment")}="{profile.deployment}"}}'
    rows = Datasource(victoriametrics.url).query(f"last_over_time({selector}[5m])", end).result
    expected = {(node, layer.key) for node in profile.node_names for layer in nodata.layers(profile)}
    assert {(r["metric"]["node"], r["metric"][nodata.LAYER_LABEL]) for r in rows} == expected
    # one code per rule interval (vmalert's replay steps by -datasource.queryStep, 5 m unless set), so the
    # matrix's lookback of a few intervals always finds one
    counts = Datasource(victoriametrics.url).query(f"count_over_time({selector}[5m])", end).result
    assert min(float(r["value"][1]) for r in counts) >= 300 / nodata.RULE_INTERVAL_SECONDS - 1


def _drill_series(profile, scenario: str, models) -> dict[tuple, tuple]:
    from itertools import chain

    from dashgen.demo.collector_series import collector_series
    from dashgen.demo.incidents import apply

    plan = demo_plan(profile, scenario, END, 0.25, 60.0)
    return {
        tuple(sorted(o["metric"].items())): (tuple(o["values"]), tuple(o["timestamps"]))
        for o in apply(plan, chain(generate(plan, models), collector_series(plan)))
    }


@functools.cache
def _healthy_drill_base():
    """long-context-64, the models every incident drill generates, and its healthy series with them."""
    (profile,) = load_profiles(["long-context-64"])
    models, _ = demo_models(profile, INCIDENTS[0])
    return profile, models, _drill_series(profile, "healthy", models)


@pytest.mark.slow  # generates the healthy and the incident window of long-context-64 per scenario, ~1 s each
@pytest.mark.parametrize(
    "scenario", [s for s in INCIDENTS if s != "gateway-shedding"]
)  # shedding lowers every engine's traffic
def test_an_incident_drill_leaves_every_series_off_its_nodes_as_healthy(scenario):
    """The drill's fault is on its entity's nodes only (plus the replica behind a dead backend and the standby master
    copy the master drills add): every other series is the healthy one, sample for sample."""
    from dashgen.demo.scenarios import incident, standby_master

    profile, models, healthy = _healthy_drill_base()
    found = incident(profile, scenario)
    touched = {*found.nodes, *found.idle}
    if scenario.startswith("master-"):
        touched |= {profile.node_names[0], standby_master(profile)}
    drill = _drill_series(profile, scenario, models)
    node = profile.label("node")
    off = {key for key in healthy if dict(key).get(node) not in touched}
    assert off, "series off the drill's nodes"
    changed = sorted(dict(key)["__name__"] for key in off if drill.get(key) != healthy[key])
    assert not changed, f"{scenario} changed series off its nodes: {changed[:10]}"
    added = sorted(dict(key)["__name__"] for key in set(drill) - set(healthy) if dict(key).get(node) not in touched)
    assert not added, f"{scenario} added series off its nodes: {added[:10]}"
    on = [key for key in healthy if dict(key).get(node) in found.nodes]
    assert any(drill.get(key) != healthy[key] for key in on) or set(drill) - set(healthy), "the fault shows"


def test_the_noise_draws_are_gausss_numbers_without_its_calls():
    """The demo's noise tables: ``values.gaussians`` gives what ``random.gauss(0, 1)`` gives, number for number and
    with the generator left in the same state, without a call each (the fast path holds on this Python)."""
    import random

    from dashgen.demo import values

    assert values._PAIRS_AS_GAUSS
    checked = 0
    for seed, counts in ((1, (509, 3, 0, 2, 509)), (99, (1, 1, 508, 0))):
        fast, slow = random.Random(seed), random.Random(seed)
        for count in counts:
            assert values.gaussians(fast, count) == [slow.gauss(0, 1) for _ in range(count)]
            assert fast.getstate() == slow.getstate()
            assert fast.random() == slow.random()
            checked += 1
    assert checked == 9


def test_a_short_window_computes_only_the_noise_it_walks_and_draws_the_same_numbers(monkeypatch):
    """``values.drawn_gaussians`` takes a table's uniform draws at once and computes a number only when it is read:
    each number is ``gauss``'s, the generator left as ``gauss`` leaves it (a number kept from an odd count
    included); and a gauge of a window shorter than the table is the gauge ``gauss``'s full table gives."""
    import random

    from dashgen.demo import values
    from dashgen.demo.catalogue import Wave

    checked = 0
    for seed, counts in ((1, (509, 3, 0, 2, 509)), (99, (1, 1, 508, 0, 7))):
        fast, slow = random.Random(seed), random.Random(seed)
        for count in counts:
            drawn = values.drawn_gaussians(fast, count)
            wanted = [slow.gauss(0, 1) for _ in range(count)]
            assert drawn.at(range(count)) == wanted and drawn.at([count - 1, 0][: count and 2]) == (
                [wanted[-1], wanted[0]] if count else []
            )
            assert fast.getstate() == slow.getstate() and vars(fast).get("gauss_next") == vars(slow).get("gauss_next")
            checked += 1
    assert checked == 10
    wave = Wave(base=50, amp=10, noise=3, period=600, lo=0, hi=100)
    shapes = 0
    for count in (0, 1, 12, 120, 254, 255, 600):
        stamps = [1_800_000_000_000 + 30_000 * i for i in range(count)]
        lazy = [values.gauge_values(None, wave, random.Random(seed), stamps, False) for seed in range(20)]  # type: ignore[arg-type]
        with monkeypatch.context() as patched:
            patched.setattr(values, "_PAIRS_AS_GAUSS", False)  # every table drawn by gauss itself
            full = [values.gauge_values(None, wave, random.Random(seed), stamps, False) for seed in range(20)]  # type: ignore[arg-type]
        assert lazy == full, count
        shapes += 1
    assert shapes == 7


# The sha256 of the demo's import lines for two windows of ten minutes (long-context-64's five-reasons faults, 1 s GPM
# gauges walking their whole noise table; h20-16's DCGM and histograms), as generated before the gauges' noise walk
# repeated one period and the rounding went through map(): the store holds the same bytes. CPython's random and the
# C library's sin, log and erf (glibc) define these numbers; a change of either changes the digest.
DEMO_BYTES = "bd0a129823a3c1327ef0ace4ea19bc2972dab2b3fcaa6e317cb5812d1d6b77af"


@pytest.mark.slow  # about a second of generation: 4,879 series, 624,311 samples
def test_the_demo_series_are_the_same_bytes_as_before_the_faster_noise_walk_and_rounding():
    import hashlib

    from dashgen.demo.run import demo_series
    from dashgen.live.datasource import import_line

    digest, series, samples = hashlib.sha256(), 0, 0
    for name, scenario in (("long-context-64", "five-reasons"), ("h20-16", "healthy")):
        profile = next(p for p in PROFILES if p.name == name)
        models, _ = demo_models(profile, scenario)
        for item in demo_series(demo_plan(profile, scenario, 1796000400.0, 10 / 60), models, (scenario,)):
            digest.update(import_line(item))
            series, samples = series + 1, samples + len(item["values"])
    assert (series, samples) == (4879, 624311)
    assert digest.hexdigest() == DEMO_BYTES


def test_a_gauges_noise_walk_is_the_strided_index_for_every_length_and_offset():
    """``values.walk`` repeats one period of the stride instead of indexing every sample: the same list as the
    per-sample index below, at, around and several times the table's length."""
    from dashgen.demo import values

    table = [float(i) * 0.5 for i in range(509)]
    checked = 0
    for count in (0, 1, 7, 508, 509, 510, 1018, 1019, 3600, 7201):
        for offset in (0, 1, 254, 508):
            assert values.walk(table, offset, count) == [table[(offset + 7 * i) % 509] for i in range(count)]
            checked += 1
    assert checked == 40


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
