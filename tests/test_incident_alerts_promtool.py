"""The incident alerts (``dashgen.rules.incident``, S31-S33) under the real promtool: each fires on its fault with
the labels of what is wrong, and stays quiet on a healthy and on an idle cluster; the Now row's recorded health
state (``node:dashgen_layer_health:code``) names the faulted node's state and writes nothing for healthy nodes.
Uses the promtool harness of ``test_rules_promtool``; the faults are the demo drills' (disk busy 99.5 %, queue 60,
await x80; host hit share 20x down; ~60 % of answers 429 / 504; a Store master failover; a clock 100 s behind; GPU
thermal-slowdown bits)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dashgen_queries.health import (
    CLOCK_OFF,
    DISK_SATURATED,
    ENGINE_STALLED,
    GPU_HW_SLOWDOWN,
    GPU_POWER,
    GPU_THERMAL,
    LAYER_HEALTH,
    STORE_RESET,
    TIER_COLLAPSED,
)
from promtool_rules import PROFILES, expected, run_tests, series, written_rule_files

PROFILE = "long-context-64"
NODES = PROFILES[PROFILE].node_names
FAULT_AT = 120  # minutes of healthy history before each fault (the disk and host baselines end 1 h back)


@pytest.fixture(scope="module")
def rule_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return written_rule_files(tmp_path_factory, [PROFILES[PROFILE]])


def counter(healthy: float, faulted: float | None = None, minutes: int = 180) -> str:
    """A counter's values at 1 m steps: ``healthy`` per minute, then ``faulted`` per minute from ``FAULT_AT``."""
    if faulted is None:
        return f"0+{healthy:g}x{minutes}"
    start = healthy * FAULT_AT
    return f"0+{healthy:g}x{FAULT_AT} {start + faulted:g}+{faulted:g}x{minutes - FAULT_AT - 1}"


def recorded(layer: str, codes: dict[str, int]) -> list[dict]:
    """The expected recorded health series of one layer: exactly these nodes, with these codes."""
    deployment = PROFILES[PROFILE]
    scope = f'{deployment.label("deployment")}="{deployment.deployment}"'
    return [
        {"labels": f'{LAYER_HEALTH}{{{scope}, layer="{layer}", node="{node}"}}', "value": code}
        for node, code in codes.items()
    ]


def health_query(layer: str) -> str:
    return f'{LAYER_HEALTH}{{layer="{layer}"}}'


# --- CacheDiskSaturated ---------------------------------------------------------------------------------------


def _disk(
    node: str,
    busy: tuple[float, float | None],
    queue: tuple[float, float | None],
    time: tuple[float, float | None],
    ops: tuple[float, float | None],
    *,
    device: str = "nvme0n1",
    mountpoint: str | None = None,
    partition: str = "p1",
) -> list[dict[str, str]]:
    """A disk's diskstats counters, and the filesystem node_exporter reports on it (``/dev/<device><partition>``
    mounted at ``mountpoint``, the profile's cache mount point unless told)."""
    labels = {"job": "node", "instance": f"{node}:9100", "node": node, "device": device}
    mounted = {**labels, "device": f"/dev/{device}{partition}", "fstype": "xfs"}
    mounted["mountpoint"] = PROFILES[PROFILE].disks.cache_mountpoint if mountpoint is None else mountpoint
    return [
        series("node_filesystem_size_bytes", mounted, f"{2**40}x180"),
        series("node_disk_io_time_seconds_total", labels, counter(*busy)),
        series("node_disk_io_time_weighted_seconds_total", labels, counter(*queue)),
        series("node_disk_read_time_seconds_total", labels, counter(*time)),
        series("node_disk_reads_completed_total", labels, counter(*ops)),
    ]


def test_cache_disk_saturated_fires_on_busy_queued_and_slow_not_on_merely_busy(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """Per minute: healthy 27 s busy (45 %), queue 2.5, 180,000 reads taking 54 s (await 0.3 ms). From 120m node 0
    is busy 99.5 %, queues 60 and its await grows x80 (24 ms, 60,000 reads); node 1 is as busy and queued but as fast
    as before (working hard, not saturated); node 2 stays healthy; node 3 is idle (flat counters). The record writes
    DISK_SATURATED for node 0 only."""
    saturated, busy, healthy, idle = NODES[:4]
    inputs = (
        _disk(saturated, (27, 59.7), (150, 3600), (54, 1440), (180_000, 60_000))
        + _disk(busy, (27, 59.7), (150, 3600), (54, 54), (180_000, 180_000))
        + _disk(healthy, (27, None), (150, None), (54, None), (180_000, None))
        + _disk(idle, (0, None), (0, None), (0, None), (0, None))
    )
    labels = {"node": saturated, "device": "nvme0n1"}
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "110m", "alertname": "CacheDiskSaturated", "exp_alerts": []},
            {"eval_time": "130m", "alertname": "CacheDiskSaturated", "exp_alerts": []},  # pending (for 10m)
            {
                "eval_time": "150m",
                "alertname": "CacheDiskSaturated",
                "exp_alerts": [expected(PROFILE, "CacheDiskSaturated", labels, "99.5%")],
            },
        ],
        "promql_expr_test": [
            {"expr": health_query("disk"), "eval_time": "110m", "exp_samples": []},
            {
                "expr": health_query("disk"),
                "eval_time": "150m",
                "exp_samples": recorded("disk", {saturated: DISK_SATURATED.code}),
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


def test_cache_disk_saturated_picks_the_disk_by_mount_point_not_by_device_name(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """The profile's old device pattern (``nvme[0-9]+n1``) matches the model disk too. Node 0: its model disk
    (nvme1n1 at the model mount point) saturates while weights load, its cache disk (nvme0n1) stays healthy: no
    CacheDiskSaturated, no disk state recorded. Node 1: its cache is on sdb (a name the pattern never matched) and
    saturates: it fires naming sdb, and the record says DISK_SATURATED for node 1 only."""
    loading, sata = NODES[:2]
    models = PROFILES[PROFILE].disks.model_mountpoint
    assert models and re.fullmatch(PROFILES[PROFILE].disks.cache_device_regex, "nvme1n1")
    faulted = ((27, 59.7), (150, 3600), (54, 1440), (180_000, 60_000))
    healthy = ((27, None), (150, None), (54, None), (180_000, None))
    inputs = (
        _disk(loading, *faulted, device="nvme1n1", mountpoint=models)
        + _disk(loading, *healthy)
        + _disk(sata, *faulted, device="sdb", partition="1")
    )
    labels = {"node": sata, "device": "sdb"}
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "150m",
                "alertname": "CacheDiskSaturated",
                "exp_alerts": [expected(PROFILE, "CacheDiskSaturated", labels, "99.5%")],
            },
        ],
        "promql_expr_test": [
            {
                "expr": health_query("disk"),
                "eval_time": "150m",
                "exp_samples": recorded("disk", {sata: DISK_SATURATED.code}),
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


# --- HostTierHitCollapsed -------------------------------------------------------------------------------------


def _prefill(node: str, stage: str, inputs: str, host_hits: str) -> list[dict[str, str]]:
    labels = {"job": "sglang", "node": node, "pp_rank": stage, "tp_rank": "0", "engine_type": "unified"}
    return [
        series("sglang:prefill_effective_tokens_total", {**labels, "mode": "input"}, inputs),
        series("sglang:prefill_effective_tokens_total", {**labels, "mode": "host_hit"}, host_hits),
    ]


def test_host_tier_collapse_fires_against_baseline_and_peers_not_on_a_cluster_wide_drop(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """Healthy: 40 % of prefill input tokens hit the host tier on every stage. Case 1: from 120m node 0's share
    falls 20x (2 %) while its peers stay at 40 %: it fires, the record says TIER_COLLAPSED for node 0 only. Case 2:
    every stage falls 20x at once (a workload change, not one node's pool): silent. Case 3: an idle cluster (no
    prefill input at all): silent."""

    def stage(index: int, collapsed: bool) -> list[dict[str, str]]:
        return _prefill(NODES[index], str(index), counter(6000), counter(2400, 120 if collapsed else None))

    one = [s for i in range(4) for s in stage(i, i == 0)]
    every = [s for i in range(4) for s in stage(i, True)]
    idle = [s for i in range(4) for s in _prefill(NODES[i], str(i), counter(0), counter(0))]
    quiet = [{"eval_time": t, "alertname": "HostTierHitCollapsed", "exp_alerts": []} for t in ("100m", "160m")]
    cases = [
        {
            "interval": "1m",
            "input_series": one,
            "alert_rule_test": [
                {"eval_time": "110m", "alertname": "HostTierHitCollapsed", "exp_alerts": []},
                {
                    "eval_time": "160m",
                    "alertname": "HostTierHitCollapsed",
                    "exp_alerts": [expected(PROFILE, "HostTierHitCollapsed", {"node": NODES[0], "pp_rank": "0"}, "2%")],
                },
            ],
            "promql_expr_test": [
                {
                    "expr": health_query("hicache_host"),
                    "eval_time": "160m",
                    "exp_samples": recorded("hicache_host", {NODES[0]: TIER_COLLAPSED.code}),
                },
            ],
        },
        {"interval": "1m", "input_series": every, "alert_rule_test": quiet},
        {
            "interval": "1m",
            "input_series": idle,
            "alert_rule_test": quiet,
            "promql_expr_test": [{"expr": health_query("hicache_host"), "eval_time": "160m", "exp_samples": []}],
        },
    ]
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", cases)


# --- the gateway --------------------------------------------------------------------------------------------------


def _gateway(node: str, metric: str, values: str, **labels: str) -> dict[str, str]:
    return series(metric, {"job": "gateway", "node": node, "instance": f"{node}:29000", **labels}, values)


def test_gateway_shedding_errors_no_backend_and_open_breaker_name_the_instance_and_worker(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """Gateway on node 0: 36 % of its answers 429 and 24 % 504 (the drill's ~60 % 429 / 504), both its backends
    unhealthy. Gateway on node 4: every answer 200, backend w0 healthy and closed, backend w1 unhealthy with its
    breaker open. Gateway on node 5 rejects 30 % of its requests at admission. An idle cluster (no answers, every
    backend healthy and closed) is silent."""
    shedding, healthy, admission = NODES[0], NODES[4], NODES[5]
    inputs = [
        _gateway(shedding, "smg_http_responses_total", counter(40), status_code="200"),
        _gateway(shedding, "smg_http_responses_total", counter(36), status_code="429"),
        _gateway(shedding, "smg_http_responses_total", counter(24), status_code="504"),
        _gateway(shedding, "smg_http_responses_total", counter(5), status_code="404"),  # the client's mistake
        _gateway(healthy, "smg_http_responses_total", counter(100), status_code="200"),
        # a build that counts its sheds at admission only: 30 of 100 requests rejected
        _gateway(admission, "smg_http_requests_total", counter(100), method="POST", path="/generate"),
        _gateway(admission, "smg_admission_queue_rejected_total", counter(30), reason="full"),
        _gateway(admission, "smg_http_responses_total", counter(70), status_code="200"),
    ]
    for node, worker, health, breaker in (
        (shedding, "w0", "0x30", "0x30"),
        (shedding, "w1", "0x30", "0x30"),
        (healthy, "w0", "1x30", "0x30"),
        (healthy, "w1", "0x30", "1x30"),
    ):
        inputs += [
            _gateway(node, "smg_worker_health", health, worker=worker),
            _gateway(node, "smg_worker_cb_state", breaker, worker=worker),
        ]
    gateway, backend = (
        {"node": shedding, "instance": f"{shedding}:29000"},
        {"node": healthy, "instance": f"{healthy}:29000"},
    )
    fires = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "20m",
                "alertname": "GatewayShedding",
                "exp_alerts": [
                    expected(PROFILE, "GatewayShedding", gateway, "36%"),
                    expected(PROFILE, "GatewayShedding", {"node": admission, "instance": f"{admission}:29000"}, "30%"),
                ],
            },
            {
                "eval_time": "20m",
                "alertname": "GatewayErrors",
                "exp_alerts": [expected(PROFILE, "GatewayErrors", gateway, "24%")],
            },
            {
                "eval_time": "20m",
                "alertname": "GatewayNoHealthyBackend",
                "exp_alerts": [expected(PROFILE, "GatewayNoHealthyBackend", gateway, "0")],
            },
            {
                "eval_time": "20m",
                "alertname": "GatewayCircuitBreakerOpen",
                "exp_alerts": [expected(PROFILE, "GatewayCircuitBreakerOpen", {**backend, "worker": "w1"}, "1")],
            },
        ],
    }
    idle_inputs = [
        _gateway(node, "smg_http_responses_total", "5x30", status_code="200") for node in (shedding, healthy)
    ]
    idle_inputs += [
        _gateway(node, metric, value, worker="w0")
        for node in (shedding, healthy)
        for metric, value in (("smg_worker_health", "1x30"), ("smg_worker_cb_state", "0x30"))
    ]
    idle = {
        "interval": "1m",
        "input_series": idle_inputs,
        "alert_rule_test": [
            {"eval_time": "20m", "alertname": name, "exp_alerts": []}
            for name in ("GatewayShedding", "GatewayErrors", "GatewayNoHealthyBackend", "GatewayCircuitBreakerOpen")
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [fires, idle])


# --- StoreMetadataReset -------------------------------------------------------------------------------------------


def _master(node: str, values: str) -> dict[str, str]:
    return series("master_key_count", {"job": "mooncake-master", "node": node, "instance": f"{node}:9003"}, values)


def test_store_metadata_reset_fires_on_an_ha_failover_to_an_empty_leader(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """The master "store" runs on nodes 0 (leader, 2,000,000 keys) and 4 (standby, 0 keys). At 60m the leader dies
    and the standby takes over empty, refilling 100 keys a minute: the reset fires at once, names the master, and
    every node the master serves reads STORE_RESET; 40 minutes later the peak window holds only the refill and it
    is quiet again. A healthy pair (leader steady, standby 0) and an empty Store (0 keys) are silent."""
    failover = [_master(NODES[0], "2000000x60 stale"), _master(NODES[4], "0x60 100+100x40")]
    healthy = [_master(NODES[0], "2000000x100"), _master(NODES[4], "0x100")]
    empty = [_master(NODES[0], "0x100"), _master(NODES[4], "0x100")]
    inventory_nodes = {node: STORE_RESET.code for node in NODES}
    cases = [
        {
            "interval": "1m",
            "input_series": failover,
            "alert_rule_test": [
                {"eval_time": "59m", "alertname": "StoreMetadataReset", "exp_alerts": []},
                {
                    "eval_time": "62m",
                    "alertname": "StoreMetadataReset",
                    "exp_alerts": [expected(PROFILE, "StoreMetadataReset", {"master": "store"}, "200")],
                },
                {"eval_time": "100m", "alertname": "StoreMetadataReset", "exp_alerts": []},
            ],
            "promql_expr_test": [
                {"expr": health_query("mooncake"), "eval_time": "59m", "exp_samples": []},
                {
                    "expr": health_query("mooncake"),
                    "eval_time": "65m",
                    "exp_samples": recorded("mooncake", inventory_nodes),
                },
            ],
        },
        *(
            {
                "interval": "1m",
                "input_series": inputs,
                "alert_rule_test": [
                    {"eval_time": t, "alertname": "StoreMetadataReset", "exp_alerts": []} for t in ("30m", "62m", "99m")
                ],
            }
            for inputs in (healthy, empty)
        ),
    ]
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", cases)


# --- ClockSkew ----------------------------------------------------------------------------------------------------


def test_clock_skew_fires_on_an_offset_or_an_unsynchronised_clock(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """Node 0's clock is 100 s behind; node 1 is 1 ms off (fine); node 2's kernel reports its clock unsynchronised
    with a 16 s error; node 3 reports unsynchronised but with a 0.2 s error (node-mixin's guard: not an alert)."""

    def timex(node: str, offset: str, synced: str, error: str) -> list[dict[str, str]]:
        labels = {"job": "node", "instance": f"{node}:9100", "node": node}
        return [
            series("node_timex_offset_seconds", labels, offset),
            series("node_timex_sync_status", labels, synced),
            series("node_timex_maxerror_seconds", labels, error),
        ]

    inputs = (
        timex(NODES[0], "-100x20", "1x20", "0.1x20")
        + timex(NODES[1], "0.001x20", "1x20", "0.1x20")
        + timex(NODES[2], "0x20", "0x20", "16x20")
        + timex(NODES[3], "0x20", "0x20", "0.2x20")
    )
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "ClockSkew", "exp_alerts": []},
            {
                "eval_time": "10m",
                "alertname": "ClockSkew",
                "exp_alerts": [
                    expected(PROFILE, "ClockSkew", {"node": NODES[0]}, "100"),
                    expected(PROFILE, "ClockSkew", {"node": NODES[2]}, "16"),
                ],
            },
        ],
        "promql_expr_test": [
            {
                "expr": health_query("clock"),
                "eval_time": "10m",
                "exp_samples": recorded("clock", {NODES[0]: CLOCK_OFF.code, NODES[2]: CLOCK_OFF.code}),
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


# --- GPU thermal vs power (the recorded health state; the alert is GpuClockThrottled) ------------------------------


def test_gpu_health_state_splits_thermal_from_power_throttling(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    """GPM clock-event reasons: node 0 GPU 3 has the thermal-slowdown bits (0x20 SW + 0x40 HW, with 0x8 HW
    slowdown) -> GPU thermal; node 1 GPU 0 the SW power cap (0x4) -> GPU power; node 2 is idle (0x1); node 3 has
    locked application clocks (0x2) on GPU 0, nothing, and HW slowdown alone (0x8) on GPU 1 -> GPU HW slowdown.
    Both GPU layers of the matrix read the same state."""

    def reasons(node: str, gpu: str, value: int) -> list[dict[str, str]]:
        labels = {"job": "gpm", "node": node, "gpu": gpu, "uuid": f"GPU-{node}-{gpu}"}
        return [series("gpm_clock_event_reasons", labels, f"{value}x20"), series("gpm_sample_valid", labels, "1x20")]

    inputs = (
        reasons(NODES[0], "3", 0x68)
        + reasons(NODES[0], "4", 0)
        + reasons(NODES[1], "0", 0x4)
        + reasons(NODES[2], "0", 0x1)
        + reasons(NODES[3], "0", 0x2)
        + reasons(NODES[3], "1", 0x8)
    )
    codes = {NODES[0]: GPU_THERMAL.code, NODES[1]: GPU_POWER.code, NODES[3]: GPU_HW_SLOWDOWN.code}
    case = {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            {"expr": health_query(layer), "eval_time": "10m", "exp_samples": recorded(layer, codes)}
            for layer in ("gpm", "dcgm")
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


# --- the engine layer: a stalled stage (EngineStalled's condition) -----------------------------------------------


def test_engine_health_state_is_stalled_while_requests_wait_and_no_token_moves(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """Node 1's stage has 5 requests waiting throughout and its token counter stops from 30m to 50m; node 2's stage
    has 5 waiting and keeps processing; node 3 is idle (nothing waiting, no tokens). Only node 1 reads
    ENGINE_STALLED, and it keeps reading it for the matrix's 15 minutes after the stall ends. (The first minutes of
    a series, before a rate has two samples, read as a stall: the evaluations start after they left the window.)"""

    def stage(node: str, pp: str, waiting: str, tokens: str) -> list[dict[str, str]]:
        labels = {
            "job": "sglang",
            "node": node,
            "pp_rank": pp,
            "tp_rank": "0",
            "model_name": "m",
            "engine_type": "unified",
        }
        return [
            series("sglang:num_queue_reqs", labels, waiting),
            series("sglang:realtime_tokens_total", {**labels, "mode": "decode"}, tokens),
        ]

    inputs = (
        stage(NODES[1], "1", "5x90", "0+100x30 3000x20 3000+100x39")
        + stage(NODES[2], "2", "5x90", "0+100x90")
        + stage(NODES[3], "3", "0x90", "0x90")
    )
    stalled = recorded("engine", {NODES[1]: ENGINE_STALLED.code})
    case = {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            {"expr": health_query("engine"), "eval_time": "28m", "exp_samples": []},
            {"expr": health_query("engine"), "eval_time": "40m", "exp_samples": stalled},
            {"expr": health_query("engine"), "eval_time": "60m", "exp_samples": stalled},
            {"expr": health_query("engine"), "eval_time": "75m", "exp_samples": []},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])
