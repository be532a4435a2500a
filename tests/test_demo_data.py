"""The demo generator keeps the metric catalogue's label contract and counter semantics, covers every
metric the dashboards query, and imports into a real VictoriaMetrics with the contract intact."""

from __future__ import annotations

import functools
import math

import pytest
from click.testing import CliRunner
from dashgen_queries.inventory import INVENTORY
from memo_state import emptied_memos

from dashgen.cli.app import main
from dashgen.demo.endpoints import cache_devices
from dashgen.demo.pd_models import CATALOGUE, lookup
from dashgen.demo.run import demo_models, demo_plan
from dashgen.demo.scenarios import INCIDENTS
from dashgen.demo.scopes import mounts
from dashgen.demo.series import generate
from dashgen.deployment.profile import load_profiles
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
    fresh, walked = [], []
    with emptied_memos():  # the first resolution walks the queries' trees, whatever the session computed before
        start = wanted._SELECTED.misses
        for scenario, more in (
            ("healthy", []),
            (INCIDENTS[0], []),
            ("healthy", ["fault:gateway-errors", "fault:gpu-pcie-replays"]),
        ):
            run._QUERIED.clear()
            fresh.append(demo_models(profile, scenario, more))
            walked.append(wanted._SELECTED.misses - start)
    assert healthy == again == fresh[0] and drill == fresh[1] and fault == fresh[2]
    assert walked[0] > 0 and walked[-1] == walked[0], f"the same queries read again walked their trees again: {walked}"
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
