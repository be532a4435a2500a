"""Incident drills (S31-S35): each drill scenario of ``dashgen.demo.scenarios`` shows its fault on its entity only,
in the raw metrics of a production-like store (``tests/drills.py``: every scenario its own deployment, the same node
names, all rule groups replayed by the real vmalert); the healthy deployment fires nothing; and each drill fires an
alert naming its entity, with a severity, still firing at the end of the persistent fault."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from dashgen_panels import first_screen
from dashgen_queries import health, nodata, now
from drills import HOURS, SCENARIOS, SHARED_STORE, Drill, checked, drills_fixture, refused_unless_replayed
from fault_plan import SUITES, suite_profile

from dashgen.build import build_profile
from dashgen.demo.recorder import replayed_groups, rule_passes, rules_read
from dashgen.demo.scenarios import INCIDENTS, entity, incident
from dashgen.deployment.profile import load_profiles
from dashgen.errors import InputError
from dashgen.live.expand import Window, expand_text, globals_for, variable_values
from dashgen.rules.render import rule_groups_data

drills = drills_fixture()
pytestmark = SHARED_STORE  # the store long-context-64's fault suite reads too: one xdist group with its tests

# scenario -> the alerts that name its fault (any one of them)
EXPECTED_ALERTS = {
    "gpu-missing": {"GpuMissing", "GpuXidFatal"},
    "dcgm-lost-gpu": {"GpuMissingFromExporter"},
    "xid-no-loss": {"GpuXidFatal"},
    "replica-restart": {"EngineRestarted"},
    "stage-restart": {"EngineRestarted"},
    "replica-hung": {"EngineStalled"},
    "master-failover": {"MooncakeMasterCollectionFailed"},  # the dead leader; StoreMetadataReset: tested apart
    "disk-saturated": {"CacheDiskSaturated"},
    "host-tier-collapse": {"HostTierHitCollapsed"},
    "gateway-shedding": {"GatewayShedding"},
    "collector-dropping": {"CollectorDroppingSamples"},
    "clock-skew": {"ClockSkew"},
    "thermal-throttling": {"GpuClockThrottled", "GpuTemperatureHigh"},
}
GPU_FAULTS = {"gpu-missing", "dcgm-lost-gpu", "xid-no-loss", "thermal-throttling"}


def _values(drill: Drill, expr: str, *labels: str) -> dict[tuple[str, ...], float]:
    """``expr`` at the window's end, keyed by the given labels' values."""
    return {
        tuple(item["metric"].get(label, "") for label in labels): float(item["value"][1]) for item in drill.query(expr)
    }


def _node(drill: Drill) -> str:
    return drill.entity[drill.profile.label("node")]


def _nodes_where(drill: Drill, expr: str) -> set[str]:
    return {key[0] for key in _values(drill, expr, drill.profile.label("node"))}


# -- one raw-metric check per scenario: the fault, on its entity only -------------------------------------------


def _gpu_missing(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    gpm = _values(drill, f"count by (node) (last_over_time(gpm_power_watts{{{s}}}[150s]))", "node")
    assert gpm == {(n,): (7.0 if n == _node(drill) else 8.0) for n in drill.profile.node_names}


def _dcgm_lost_gpu(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s, gpu = drill.scoped(), drill.entity["gpu"]
    dcgm = _values(drill, f"count by (node) (last_over_time(DCGM_FI_DEV_POWER_USAGE{{{s}}}[150s]))", "node")
    assert dcgm == {(n,): (7.0 if n == _node(drill) else 8.0) for n in drill.profile.node_names}
    assert not _values(drill, f'DCGM_FI_DEV_POWER_USAGE{{{s}, node="{_node(drill)}", gpu="{gpu}"}}', "gpu")
    assert _values(drill, f'gpm_power_watts{{{s}, node="{_node(drill)}", gpu="{gpu}"}}', "gpu"), "GPM still sees it"
    assert _values(drill, f'up{{{s}, job="dcgm"}} == 0', "node") == {}, "the exporter itself stays up"


def _xid_no_loss(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    xids = _values(drill, f"DCGM_FI_DEV_XID_ERRORS{{{s}}} > 0", "node", "gpu")
    assert xids == {(_node(drill), drill.entity["gpu"]): 48.0}
    assert len(_values(drill, f"DCGM_FI_DEV_POWER_USAGE{{{s}}}", "node", "gpu")) == 64, "no GPU lost"


def _replica_restart(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    assert _nodes_where(drill, f"resets(sglang:num_requests_total{{{s}}}[15m]) > 0") == {_node(drill)}
    assert _nodes_where(drill, f"resets(sglang:realtime_tokens_total{{{s}}}[15m]) > 0") == {_node(drill)}


def _stage_restart(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    restarted = _values(drill, f"resets(sglang:realtime_tokens_total{{{s}}}[15m]) > 0", "node", "pp_rank")
    assert set(restarted) == {(_node(drill), drill.entity["pp_rank"])}
    assert drill.entity["pp_rank"] != "0", "a non-entry stage"
    assert not _nodes_where(drill, f"resets(sglang:num_requests_total{{{s}}}[15m]) > 0"), (
        "the entry node's tokenizer counters keep counting"
    )


def _replica_hung(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    stages = set(incident(drill.profile, "replica-hung").nodes)
    assert _node(drill) in stages
    assert _nodes_where(drill, f"sglang:num_queue_reqs{{{s}}} >= 15") == stages
    flat = _nodes_where(drill, f"sum by (node) (rate(sglang:realtime_tokens_total{{{s}}}[5m])) == 0")
    assert flat == stages
    assert _values(drill, f'up{{{s}, job="sglang"}} == 1', "node") == {(n,): 1.0 for n in drill.profile.node_names}, (
        "/metrics still served"
    )


def _master_failover(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s, healthy = drill.scoped(), all_drills["healthy"]
    down = _values(drill, f'up{{{s}, job="mooncake-master"}} == 0', "instance")
    assert set(down) == {(drill.entity["instance"],)}
    keys = _values(drill, f"max(master_key_count{{{s}}})")[()]
    was = _values(healthy, f"max(master_key_count{{{healthy.scoped()}}})")[()]
    assert keys < 0.1 * was, "the new leader's metadata restarted near empty"
    hits = _values(drill, f"max(rate(valid_get_nums_{{{s}}}[5m])) / max(rate(total_get_nums_{{{s}}}[5m]))")[()]
    assert hits < 0.2


def _master_copy_down(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s, healthy = drill.scoped(), all_drills["healthy"]
    standby = incident(drill.profile, "master-copy-down").instance
    assert set(_values(drill, f'up{{{s}, job="mooncake-master"}} == 0', "instance")) == {(standby,)}
    keys = _values(drill, f"max(master_key_count{{{s}}})")[()]
    was = _values(healthy, f"max(master_key_count{{{healthy.scoped()}}})")[()]
    assert 0.7 * was < keys < 1.3 * was, "the leader answers as in the healthy deployment"


def _disk_saturated(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    device = drill.entity["device"]
    busy = _values(drill, f"rate(node_disk_io_time_seconds_total{{{s}}}[5m])", "node", "device")
    queue = _values(drill, f"rate(node_disk_io_time_weighted_seconds_total{{{s}}}[5m])", "node", "device")
    for key, share in busy.items():
        if key == (_node(drill), device):
            assert share > 0.95 and queue[key] > 40, (key, share, queue[key])
        else:
            assert share < 0.9 and queue[key] < 10, (key, share, queue[key])


def _host_tier_collapse(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()

    def share(offset: str = "") -> dict[tuple[str, ...], float]:
        hit = f'sum by (node) (rate(sglang:prefill_effective_tokens_total{{{s}, mode="host_hit"}}[5m]{offset}))'
        total = f'sum by (node) (rate(sglang:prefill_effective_tokens_total{{{s}, mode="input"}}[5m]{offset}))'
        return _values(drill, f"{hit} / {total}", "node")

    now, before = share(), share(" offset 30m")
    node = (_node(drill),)
    peers = sorted(v for k, v in now.items() if k != node)
    assert now[node] < peers[len(peers) // 2] / 10, "against its peers"
    assert now[node] < before[node] / 10, "against its own baseline"
    assert all(v > before[k] / 3 for k, v in now.items() if k != node), "the peers keep their hits"


def _gateway_shedding(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s, healthy = drill.scoped(), all_drills["healthy"]

    def shed(d: Drill) -> float:
        expr = (
            f'sum(rate(smg_http_responses_total{{{d.scoped()}, status_code=~"429|5.."}}[5m])) / '
            f"sum(rate(smg_http_responses_total{{{d.scoped()}}}[5m]))"
        )
        return _values(d, f"({expr}) or vector(0)").get((), 0.0)

    assert 0.5 < shed(drill) < 0.7
    assert shed(healthy) == 0.0
    rejected = _values(drill, f'rate(smg_admission_queue_rejected_total{{{s}, reason="full"}}[5m])', "instance")
    assert set(rejected) == {(drill.entity["instance"],)} and rejected[(drill.entity["instance"],)] > 0.3
    admitted = "sum(rate(sglang:num_requests_total{%s}[5m]))"
    assert _values(drill, admitted % s)[()] < 0.6 * _values(healthy, admitted % healthy.scoped())[()], (
        "the engines see the admitted share only"
    )


def _gateway_no_backend(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s, worker = drill.scoped(), drill.entity["worker"]
    assert set(_values(drill, f"smg_worker_health{{{s}}} == 0", "worker")) == {(worker,)}
    assert set(_values(drill, f"smg_worker_cb_state{{{s}}} == 1", "worker")) == {(worker,)}
    idle = set(incident(drill.profile, "gateway-no-backend").idle)
    assert idle and _node(drill) not in idle
    assert _nodes_where(drill, f"sum by (node) (rate(sglang:realtime_tokens_total{{{s}}}[5m])) == 0") == idle


def _collector_dropping(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    samples = _values(drill, f'count_over_time(up{{{s}, job="node"}}[10m])', "node")
    node = (_node(drill),)
    assert samples[node] <= 0.5 * min(v for k, v in samples.items() if k != node), samples
    dropping = _nodes_where(drill, f"rate(vmagent_remotewrite_packets_dropped_total{{{s}}}[5m]) > 0")
    assert dropping == {_node(drill)}
    bound = drill.profile.collector.send_queue_limit_bytes
    queued = _nodes_where(drill, f"sum by (node) (vmagent_remotewrite_pending_data_bytes{{{s}}}) > {0.9 * bound}")
    assert queued == {_node(drill)}


def _clock_skew(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    offsets = _values(drill, f"node_timex_offset_seconds{{{s}}}", "node")
    assert sorted(offsets) == sorted((n,) for n in drill.profile.node_names)
    for (node,), offset in offsets.items():
        assert (abs(offset) > 50) == (node == _node(drill)), (node, offset)
        assert abs(offset) < 0.01 or node == _node(drill)
    assert _nodes_where(drill, f"node_timex_sync_status{{{s}}} == 0") == {_node(drill)}
    late = _nodes_where(drill, f'time() - timestamp(up{{{s}, job="node"}}) > 60')
    assert late == {_node(drill)}, "its newest samples are stamped in the past"


def _thermal_throttling(drill: Drill, all_drills: dict[str, Drill]) -> None:
    s = drill.scoped()
    gpu = (_node(drill), drill.entity["gpu"])
    for name in ("DCGM_FI_DEV_GPU_TEMP", "gpm_temperature_celsius"):
        assert set(_values(drill, f"{name}{{{s}}} > 88", "node", "gpu")) == {gpu}, name
    reasons = _values(drill, f"gpm_clock_event_reasons{{{s}}} > 0", "node", "gpu")
    assert set(reasons) == {gpu} and int(reasons[gpu]) & 0x40 and int(reasons[gpu]) & 0x20
    slow = _values(drill, f"DCGM_FI_DEV_SM_CLOCK{{{s}}} < 1400", "node", "gpu")
    assert set(slow) == {gpu}


CHECKS: dict[str, Callable[[Drill, dict[str, Drill]], None]] = {
    "gpu-missing": _gpu_missing,
    "dcgm-lost-gpu": _dcgm_lost_gpu,
    "xid-no-loss": _xid_no_loss,
    "replica-restart": _replica_restart,
    "stage-restart": _stage_restart,
    "replica-hung": _replica_hung,
    "master-failover": _master_failover,
    "master-copy-down": _master_copy_down,
    "disk-saturated": _disk_saturated,
    "host-tier-collapse": _host_tier_collapse,
    "gateway-shedding": _gateway_shedding,
    "gateway-no-backend": _gateway_no_backend,
    "collector-dropping": _collector_dropping,
    "clock-skew": _clock_skew,
    "thermal-throttling": _thermal_throttling,
}


# A metric a check selects (``name{{…}}`` in its f-strings).
_SELECTED = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{\{")


def test_every_metric_a_drill_check_reads_is_in_the_store(drills):
    """The store imports only what the rules read and the incidents reshape (``drills.READS``): every metric a check
    selects has series in its drill's deployment and in the healthy one, so that no check that a fault leaves
    something out (``not _values(...)``) passes on a metric the store never had."""
    checked = 0
    for scenario, check in CHECKS.items():
        for name in set(_SELECTED.findall(inspect.getsource(check))):
            for drill in (drills[scenario], drills["healthy"]):
                assert drill.query(f'count({{__name__="{name}", {drill.scoped()}}})'), (name, drill.deployment)
                checked += 1
    assert checked > 50, checked


def test_every_drill_scenario_has_a_data_check():
    assert set(CHECKS) == set(SCENARIOS) - {"healthy"}


@pytest.mark.parametrize("scenario", sorted(CHECKS))
def test_drill_shows_its_fault_on_its_entity_only(drills, scenario):
    CHECKS[scenario](drills[scenario], drills)


def test_drill_healthy_fires_no_alert(drills):
    assert drills["healthy"].firing() == []


def _fired(drill: Drill) -> set[tuple[tuple[str, str], ...]]:
    deployment = drill.profile.label("deployment")
    return {tuple(sorted((k, v) for k, v in alert.items() if k != deployment)) for alert in drill.firing()}


def test_drill_a_dead_standby_master_copy_warns_about_that_copy_only(drills):
    """A dead standby of the Mooncake master HA pair is a lost redundancy, not an outage: the only new alerts name
    that copy, as warnings; nothing pages, the Store is not reset (the leader answers)."""
    drill = drills["master-copy-down"]
    new = [dict(a) for a in _fired(drill) - _fired(drills["healthy"])]
    assert new, "the dead copy is reported"
    assert all(a["severity"] == "warning" and a.get("instance") == "lc-node-04:9003" for a in new), new
    assert not [a for a in new if a["alertname"] == "StoreMetadataReset"]


def test_drill_master_failover_reports_the_store_metadata_reset(drills):
    """The new leader starts empty: StoreMetadataReset fires for the master pair (the dead leader is named by the
    collection alert above)."""
    fired = [a for a in drills["master-failover"].firing() if a["alertname"] == "StoreMetadataReset"]
    assert fired and all(a.get("severity") for a in fired), drills["master-failover"].firing()


def test_drill_a_dead_standby_master_copy_leaves_every_layer_ok(drills):
    """S31: the recorded Now-row codes (vmalert replay of the layer-health group) of master-copy-down are healthy's."""
    drill = drills["master-copy-down"]
    assert drills["healthy"].query(f"node:dashgen_layer_reason:code{{{drills['healthy'].scoped()}}} > 0") == []
    red = drill.query(f"node:dashgen_layer_reason:code{{{drill.scoped()}}} > 0")
    assert red == [], sorted((i["metric"].get("layer", ""), i["metric"].get("node", "")) for i in red)


@pytest.mark.parametrize("scenario", sorted(EXPECTED_ALERTS))
def test_drill_fires_an_alert_naming_its_entity(drills, scenario):
    drill = drills[scenario]
    p = drill.profile
    want = {p.label("node"): drill.entity[p.label("node")]}
    if scenario in GPU_FAULTS:
        want[p.label("gpu")] = drill.entity[p.label("gpu")]
    firing = drill.firing()
    naming = [
        a
        for a in firing
        if a["alertname"] in EXPECTED_ALERTS[scenario]
        and all(a.get(k) == v for k, v in want.items())
        and a.get("severity")
    ]
    assert naming, f"{scenario}: want one of {sorted(EXPECTED_ALERTS[scenario])} on {want}; firing: {firing}"


# -- the scenarios' statement of their entity (no store) ------------------------------------------------------


def test_every_incident_faults_one_entity_off_the_shared_node_unless_it_lives_there():
    (profile,) = load_profiles(["long-context-64"])
    first = profile.node_names[0]
    off_first = 0
    for scenario in INCIDENTS:
        named = entity(profile, scenario)
        if scenario == "master-copy-down":
            assert named == {}
            continue
        assert named[profile.label("node")] in profile.node_names
        if scenario not in ("master-failover", "gateway-shedding", "gateway-no-backend"):  # on node 0 by nature
            assert named[profile.label("node")] != first, scenario
            off_first += 1
    assert off_first == len(INCIDENTS) - 4 >= 10, "all but master-copy-down and the three on node 0"


@pytest.mark.parametrize(
    ("scenario", "source"), [("gateway-shedding", "gateway"), ("master-failover", "mooncake_master")]
)
def test_an_incident_without_its_source_is_refused_by_name(scenario, source):
    (profile,) = load_profiles(["h20-16"])
    with pytest.raises(InputError, match=f"{scenario}.*{source}"):
        entity(profile, scenario)


def test_replay_runs_a_rule_after_the_records_it_reads():
    """vmalert -replay evaluates a rule over the whole range before the next and writes asynchronously: an alert on
    a recorded series of its own group must run in a later pass, or it reads nothing."""
    groups = [
        {
            "name": "g",
            "rules": [
                {"record": "node:x:ratio", "expr": "sum by (node) (a)"},
                {"record": "node:x:max_ratio", "expr": "max(node:x:ratio)"},
                {"alert": "XHigh", "expr": "node:x:ratio > 1 or node:x:max_ratio > 2", "for": "1m"},
                {"alert": "APlain", "expr": "a > 1"},
                {"record": "node:x:ratio_other", "expr": "node:x:ratio_otherwise"},  # a prefix is not a read
            ],
        }
    ]
    passes = [
        [rule.get("record") or rule.get("alert") for group in p for rule in group["rules"]] for p in rule_passes(groups)
    ]
    assert passes == [["node:x:ratio", "APlain", "node:x:ratio_other"], ["node:x:max_ratio"], ["XHigh"]]


def test_a_replay_cut_to_what_is_read_keeps_every_alert_and_the_records_read_transitively():
    """``rules_read``: reading ``ALERTS`` keeps every alert and each record an alert reads, through records reading
    records; a record nothing reads is left out, a group left empty dropped; a read by name pattern is refused."""
    groups = [
        {
            "name": "g",
            "rules": [
                {"record": "node:a:sum", "expr": "sum by (node) (a)"},
                {"record": "node:a:twice", "expr": "node:a:sum * 2"},
                {"record": "node:b:sum", "expr": "sum by (node) (b)"},
                {"alert": "AHigh", "expr": "node:a:twice > 1"},
                {"alert": "BPlain", "expr": "b > 1"},
            ],
        },
        {"name": "h", "rules": [{"record": "node:c:one", "expr": "vector(1)"}]},
        {"name": "k", "rules": [{"record": "job:alerts:count", "expr": "count(ALERTS)"}]},
    ]

    def kept(reads: list[str]) -> list[tuple[str, list[str]]]:
        cut = rules_read(groups, reads)
        return [(group["name"], [rule.get("record") or rule["alert"] for rule in group["rules"]]) for group in cut]

    assert kept(['ALERTS{alertstate="firing"}']) == [("g", ["node:a:sum", "node:a:twice", "AHigh", "BPlain"])]
    assert kept(["ALERTS_FOR_STATE"]) == kept(["ALERTS"])
    assert kept(["max(node:c:one)"]) == [("h", ["node:c:one"])]
    # a record kept that reads ALERTS keeps every alert, as a read of ALERTS itself does
    assert kept(["job:alerts:count"]) == [*kept(["ALERTS"]), ("k", ["job:alerts:count"])]
    assert kept(["node:b:sum_other", "node:c:on"]) == [], "a name is read whole, not by a prefix"
    with pytest.raises(ValueError, match="name pattern"):
        rules_read(groups, ['{__name__=~"node:b:.*"}'])


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_record_a_store_check_names_is_replayed(name):
    """The stores replay only the rules whose output ``drills.checked`` reads: every recorded series the checks of
    the drills and the fault suite name literally is one of those (a check reading any other record would read
    nothing), and the records no check reads (the per-GPU window statistics) are the ones left out."""
    profile = replace(suite_profile(name), deployment="drill-healthy")
    recorded = {rule["record"] for group in rule_groups_data(profile) for rule in group["rules"] if "record" in rule}
    replayed = {
        rule["record"]
        for group in replayed_groups([profile], every_group=True, reads=checked(profile))
        for rule in group["rules"]
        if "record" in rule
    }
    here = Path(__file__)
    files = ("drills.py", "test_fault_suite.py", here.name)
    sources = [(here.parent / file).read_text(encoding="utf-8") for file in files]
    named = {run for text in sources for run in re.findall(r"[\w:]+", text)} & recorded
    assert nodata.LAYER_REASON in named and named <= replayed, sorted(named - replayed)
    window = {record for record in recorded if ":dashgen_gpu_window_" in record}
    assert window and not window & replayed, sorted(window & replayed)
    # and a check naming a record some other way (a constant, an expanded variable) is refused when it queries
    left_out = min(window)
    with pytest.raises(AssertionError, match=re.escape(left_out)):
        refused_unless_replayed(profile, f"max by (node) ({left_out})")
    assert refused_unless_replayed(profile, f"max({nodata.LAYER_REASON})") == f"max({nodata.LAYER_REASON})"


# -- the first screen (issue 26): each fault named on the Now row, nothing red on the healthy deployments --------

# scenario -> (matrix column, the state its cell must read) for the classes the matrix has a state for
MATRIX_STATES = {
    "disk-saturated": ("Cache disk", {health.DISK_SATURATED.code}),
    "host-tier-collapse": ("HiCache Host tier", {health.TIER_COLLAPSED.code}),
    "thermal-throttling": ("GPU (GPM", {health.GPU_THERMAL.code}),
    "xid-no-loss": ("GPU (DCGM", {health.GPU_XID_FATAL.code}),
    "replica-hung": ("Engine", {health.ENGINE_STALLED.code}),
    "replica-restart": ("Engine", {health.ENGINE_RESTARTED.code}),
    "stage-restart": ("Engine", {health.ENGINE_RESTARTED.code}),
    "clock-skew": ("Clock", {health.CLOCK_OFF.code}),
    "collector-dropping": ("Collector", {health.COLLECTOR_DROPPING.code, health.COLLECTOR_QUEUE_FULL.code}),
    "gpu-missing": ("GPU (GPM", {nodata.gpu_missing_code(7, 8)}),
    "dcgm-lost-gpu": ("GPU (DCGM", {nodata.gpu_missing_code(7, 8)}),
}


def _first_row(drill: Drill) -> dict[str, str]:
    """The Now row's matrix and firing-table queries as Grafana sends them (every node selected, 1 h window)."""
    (built,) = build_profile(drill.profile)
    values = {
        **variable_values(built.document["templating"]["list"]),
        **globals_for(Window(drill.end, HOURS * 3600), 60, 120),
    }
    return {
        "matrix": expand_text(first_screen.matrix_query(drill.profile), values),
        "firing": expand_text(now.wrong_now(drill.profile), values),
    }


def _cells(drill: Drill) -> dict[tuple[str, str], int]:
    """(node, layer title) -> the code of each verdict that is not ok at the window's end (ok cells are not
    listed)."""
    node = drill.profile.label("node")
    return {
        (item["metric"][node], item["metric"][nodata.LAYER_LABEL]): int(float(item["value"][1]))
        for item in drill.query(_first_row(drill)["matrix"])
    }


@pytest.mark.parametrize("scenario", sorted(EXPECTED_ALERTS))
def test_s31_the_first_row_names_the_failing_entity(drills, scenario):
    """S31: the firing-alerts table of the Now row has a row naming the failing node (and GPU) that the healthy
    deployment does not have; where the matrix has a state for the class, the node's cell reads it."""
    drill, healthy = drills[scenario], drills["healthy"]
    p = drill.profile
    want = {p.label("node"): drill.entity[p.label("node")]}
    words = [drill.entity[p.label("node")]]
    if scenario in GPU_FAULTS:
        want[p.label("gpu")] = drill.entity[p.label("gpu")]
        words.append(f"GPU {drill.entity[p.label('gpu')]}")
    rows = [item["metric"] for item in drill.query(_first_row(drill)["firing"])]
    # the entity written out: the node first, then its GPU
    assert any(row.get(now.ENTITY, "").startswith(" ".join(words) + " ") for row in rows), (scenario, words, rows)
    healthy_rows = [item["metric"] for item in healthy.query(_first_row(healthy)["firing"])]
    assert healthy_rows == [{"alertname": "none firing"}], healthy_rows  # a fresh evaluator, nothing firing
    if scenario in MATRIX_STATES:
        column, states = MATRIX_STATES[scenario]
        cells = {title: code for (node, title), code in _cells(drill).items() if node == want[p.label("node")]}
        found = {code for title, code in cells.items() if title.startswith(column)}
        assert found & states, (scenario, column, cells)


def test_s32_the_healthy_and_the_shared_store_deployments_show_nothing_red_on_the_first_row(drills):
    """The healthy deployment shares the store and the node names with every drill: none of their faults shows on
    its matrix, every cell is ok or idle (the list of what is not ok is empty)."""
    assert _cells(drills["healthy"]) == {}
