"""The alerts the failure-mode catalogue writes itself (``FailureMode.expr``), each evaluated by promtool (the
Prometheus rule engine) on input series shaped like its fault: it fires naming its entity with the catalogue's labels
after its hold, and not before; and each keeps quiet on a healthy shape. ``ALERTS`` is compared (labels only, which
is what the first screen reads)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from dashgen_queries import dcgm
from promtool_rules import PROFILES, alert, run_tests, series

from dashgen.catalogue import conditions
from dashgen.deployment.profile import Profile
from dashgen.rules.render import render_rule_file

N1, N2 = "lc-node-01", "lc-node-02"
NODE = {"job": "node", "instance": f"{N1}:9100", "node": N1}
STAGE = {"job": "sglang", "node": N1, "pp_rank": "0", "tp_rank": "0", "engine_type": "unified"}
GATEWAY = {"job": "gateway", "node": "lc-node-00", "instance": "lc-node-00:29000"}
MASTER = {"job": "mooncake-master", "node": "lc-node-00", "instance": "lc-node-00:9003"}


def nvlink_profile() -> Profile:
    base = PROFILES["long-context-64"]
    fields = (*dcgm.fields(base), *conditions.NVLINK_COUNTERS)
    return dataclasses.replace(
        base, sources={**base.sources, "dcgm": dataclasses.replace(base.source("dcgm"), fields=fields)}
    )


def firing(profile: Profile, name: str, entity: dict[str, str], at: str) -> dict:
    """A promql test: ``ALERTS`` of ``name`` at ``at`` is exactly one firing alert naming ``entity``."""
    rule = alert(profile.name, name, profile)
    labels = {
        "alertname": name,
        "alertstate": "firing",
        "severity": rule.severity,
        **dict(rule.labels),
        **entity,
    }
    inner = ", ".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    return {
        "expr": f'ALERTS{{alertname="{name}"}}',
        "eval_time": at,
        "exp_samples": [{"labels": f"ALERTS{{{inner}}}", "value": 1}],
    }


def silent(name: str, at: str) -> dict:
    return {"expr": f'ALERTS{{alertname="{name}", alertstate="firing"}}', "eval_time": at, "exp_samples": []}


def case(profile: Profile, name: str, inputs: list[dict], entity: dict[str, str], before: str, after: str) -> dict:
    return {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [silent(name, before), firing(profile, name, entity, after)],
    }


LC = PROFILES["long-context-64"]
ENGINE_UP = {"job": "sglang", "node": N1, "instance": f"{N1}:30000"}
MODEL_FS = {**NODE, "mountpoint": "/models", "device": "/dev/sda3"}  # the model disk is sda: its diskstats device


def loading(reads: str) -> list[dict]:
    """The engine of N1 stops answering at 10 m while its model disk reads ``reads`` (bytes, promtool notation)."""
    return [
        series("up", ENGINE_UP, "1x10 0x30"),
        series("node_disk_read_bytes_total", {**NODE, "device": "sda"}, reads),
        series("node_filesystem_size_bytes", MODEL_FS, "2000000000000x40"),
    ]


LOADING = loading("0+9000000000x40")  # 150 MB/s
CASES = {
    "HostMemoryPressure": (
        [
            series("node_memory_MemAvailable_bytes", NODE, "900x10 10x30"),
            series("node_memory_MemTotal_bytes", NODE, "1000x40"),
        ],
        {"node": N1},
        "12m",
        "17m",
    ),
    "HostOomKill": ([series("node_vmstat_oom_kill", NODE, "0x10 1x30")], {"node": N1}, "9m", "12m"),
    "HostCpuSaturated": (
        [
            series("node_cpu_seconds_total", {**NODE, "cpu": "0", "mode": "idle"}, "0+30x10 300x40"),
            series("node_cpu_seconds_total", {**NODE, "cpu": "0", "mode": "user"}, "0+30x10 300+60x40"),
        ],
        {"node": N1},
        "20m",
        "30m",
    ),
    "HostNicErrors": (
        [series("node_network_receive_errs_total", {**NODE, "device": "eth0"}, "0x10 0+600x30")],
        {"node": N1, "device": "eth0"},
        "15m",
        "25m",
    ),
    "CacheFilesystemFull": (
        [
            series("node_filesystem_avail_bytes", {**NODE, "mountpoint": "/mnt/kvcache"}, "500x10 0x30"),
            series("node_filesystem_size_bytes", {**NODE, "mountpoint": "/mnt/kvcache"}, "1000x40"),
        ],
        {"node": N1, "mountpoint": "/mnt/kvcache"},
        "12m",
        "17m",
    ),
    "ModelFilesystemFull": (
        [
            series("node_filesystem_avail_bytes", {**NODE, "mountpoint": "/models"}, "500x10 0x30"),
            series("node_filesystem_size_bytes", {**NODE, "mountpoint": "/models"}, "1000x40"),
        ],
        {"node": N1, "mountpoint": "/models"},
        "12m",
        "17m",
    ),
    "RootFilesystemFull": (
        [
            series("node_filesystem_avail_bytes", {**NODE, "mountpoint": "/"}, "500x10 5x30"),
            series("node_filesystem_size_bytes", {**NODE, "mountpoint": "/"}, "1000x40"),
        ],
        {"node": N1, "mountpoint": "/"},
        "12m",
        "17m",
    ),
    "FilesystemFailing": (
        [series("node_filesystem_readonly", {**NODE, "mountpoint": "/mnt/kvcache"}, "0x10 1x30")],
        {"node": N1, "mountpoint": "/mnt/kvcache"},
        "11m",
        "14m",
    ),
    "GpuPcieReplays": (
        [series("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", {"job": "dcgm", "node": N1, "gpu": "2"}, "0x10 0+6000x30")],
        {"node": N1, "gpu": "2"},
        "15m",
        "25m",
    ),
    "KvPoolExhausted": (
        [
            series("sglang:token_usage", STAGE, "0.6x10 0.995x30"),
            series("sglang:num_queue_reqs", STAGE, "0x10 30x30"),
        ],
        {"node": N1, "pp_rank": "0", "engine_type": "unified"},
        "13m",
        "17m",
    ),
    "KvRetractionStorm": (
        [series("sglang:num_retracted_requests_total", STAGE, "0x10 0+300x30")],
        {"node": N1, "pp_rank": "0", "engine_type": "unified"},
        "12m",
        "22m",
    ),
    "HiCacheStorageBackupDropping": (
        [
            series("sglang:hicache_backup_dropped_tokens_total", STAGE, "0x10 0+3000x30"),
            series("sglang:backuped_tokens_total", STAGE, "0+1000x40"),
        ],
        {"node": N1, "pp_rank": "0"},
        "15m",
        "32m",
    ),
    "StoreAllocFailing": (
        [
            series("master_put_start_alloc_failures_total", MASTER, "0x10 0+600x30"),
            series("master_put_start_requests_total", MASTER, "0+6000x40"),
        ],
        {"master": LC.masters()[0].name},
        "15m",
        "32m",
    ),
    "StoreSegmentsLost": (
        [
            series("segment_total_capacity_bytes", {**MASTER, "segment": "10.12.0.11:12345"}, "100x20"),
            series("segment_total_capacity_bytes", {**MASTER, "segment": "10.12.0.12:12345"}, "100x45"),
        ],
        {"node": N1},
        "20m",
        "32m",
    ),
    "GatewayBackendsDown": (
        [
            series("smg_worker_health", {**GATEWAY, "worker": "http://a:30000"}, "1x40"),
            series("smg_worker_health", {**GATEWAY, "worker": "http://b:30000"}, "1x10 0x30"),
        ],
        {"node": "lc-node-00", "instance": "lc-node-00:29000", "worker": "http://b:30000"},
        "13m",
        "17m",
    ),
    "GatewayRoutingPolicyChanged": (
        [
            series("smg_worker_selection_total", {**GATEWAY, "policy": "cache_aware"}, "0+60x60 3600x30"),
            series("smg_worker_selection_total", {**GATEWAY, "policy": "round_robin"}, "_x60 0+60x30"),
        ],
        {"node": "lc-node-00", "instance": "lc-node-00:29000", "policy": "round_robin"},
        "60m",
        "68m",
    ),
    "GatewayEventLoopStalling": (
        [series("smg_tokio_event_loop_stalls_total", GATEWAY, "0+1x10 10+300x30")],
        {"node": "lc-node-00", "instance": "lc-node-00:29000"},
        "15m",
        "22m",
    ),
    "GatewayKvEventsFailing": (
        [
            series(
                "smg_kv_event_subscription_failures_total",
                {**GATEWAY, "worker": "http://b:30000", "reason": "join_error"},
                "0x10 0+30x40",
            )
        ],
        {"node": "lc-node-00", "instance": "lc-node-00:29000"},
        "15m",
        "32m",
    ),
    # NTP lost on N1 at 10 m: unsynchronised, its error at the kernel's 16 s limit, the offset it last knew small;
    # N2 stays synchronised (offset 1 ms, error 0.1 s) and stays quiet.
    "ClockSkew": (
        [
            series("node_timex_offset_seconds", NODE, "0.001x40"),
            series("node_timex_sync_status", NODE, "1x10 0x30"),
            series("node_timex_maxerror_seconds", NODE, "0.1x10 16x30"),
            *(
                series(name, {**NODE, "instance": f"{N2}:9100", "node": N2}, values)
                for name, values in (
                    ("node_timex_offset_seconds", "0.001x40"),
                    ("node_timex_sync_status", "1x40"),
                    ("node_timex_maxerror_seconds", "0.1x40"),
                )
            ),
        ],
        {"node": N1},
        "17m",
        "22m",
    ),
    "EngineLoadingSlow": (LOADING, {"node": N1, "replica": "main-0"}, "19m", "22m"),
    "StoreIngestionBacklog": (
        [
            series("vmagent_remotewrite_pending_data_bytes", {"job": "vmagent", "node": node}, f"0x10 {200 * 2**20}x30")
            for node in LC.node_names
        ],
        {},
        "12m",
        "22m",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_catalogue_alert_fires_on_its_fault_naming_its_entity(promtool: str, tmp_path: Path, name: str) -> None:
    inputs, entity, before, after = CASES[name]
    rule_file = tmp_path / "long-context-64.yml"
    rule_file.write_bytes(render_rule_file(LC))
    run_tests(promtool, tmp_path, rule_file, [case(LC, name, inputs, entity, before, after)])


def test_a_crashed_engine_is_not_loading(promtool: str, tmp_path: Path) -> None:
    """The engine stops answering and its model disk reads nothing: a crash (EngineMetricsScrapeFailing's), not a
    load."""
    rule_file = tmp_path / "long-context-64.yml"
    rule_file.write_bytes(render_rule_file(LC))
    quiet = {
        "interval": "1m",
        "input_series": loading("0+9000000000x10 90000000000x30"),
        "promql_expr_test": [silent("EngineLoadingSlow", "25m"), silent("EngineLoadingSlow", "38m")],
    }
    run_tests(promtool, tmp_path, rule_file, [quiet])


def test_nvlink_errors_alert_where_the_exporter_collects_the_fields(promtool: str, tmp_path: Path) -> None:
    profile = nvlink_profile()
    rule_file = tmp_path / "long-context-64.yml"
    rule_file.write_bytes(render_rule_file(profile))
    labels = {"job": "dcgm", "node": N1, "gpu": "3"}
    inputs = [
        series("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", labels, "0x10 0+60000x30"),
        series("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", labels, "0x10 0+6000x30"),
    ]
    run_tests(
        promtool,
        tmp_path,
        rule_file,
        [case(profile, "GpuNvlinkErrors", inputs, {"node": N1, "gpu": "3"}, "15m", "25m")],
    )
    assert "GpuNvlinkErrors" not in render_rule_file(LC).decode(), "S22: no alert where the fields are not collected"


def test_transfer_failures_alert_on_a_pd_deployment(promtool: str, tmp_path: Path) -> None:
    profile = PROFILES["pd-128"]
    rule_file = tmp_path / "pd-128.yml"
    rule_file.write_bytes(render_rule_file(profile))
    node = profile.node_names[1]
    stage = {
        "job": profile.source("sglang").job,
        "node": node,
        "pp_rank": "0",
        "tp_rank": "0",
        "engine_type": "prefill",
    }
    inputs = [series("sglang:num_transfer_failed_reqs_total", stage, "0x10 0+60x30")]
    entity = {"node": node, "pp_rank": "0", "engine_type": "prefill"}
    run_tests(promtool, tmp_path, rule_file, [case(profile, "KvTransferFailing", inputs, entity, "12m", "22m")])


def test_transfer_engine_falling_back_alerts_where_tent_is_exported(promtool: str, tmp_path: Path) -> None:
    """RDMA down on N1: half its transfer requests fail over to another transport, none fails; N2's engines fail
    over one request in a hundred, as healthy RDMA does, and stay quiet."""
    base = PROFILES["long-context-64"]
    tent = dataclasses.replace(base.source("mooncake_tent"), status="exported")
    profile = dataclasses.replace(base, sources={**base.sources, "mooncake_tent": tent})
    rule_file = tmp_path / "long-context-64.yml"
    rule_file.write_bytes(render_rule_file(profile))
    inputs = []
    for node, failovers in ((N1, "0+60x10 600+6000x30"), (N2, "0+120x40")):
        labels = {"job": tent.job, "node": node, "instance": f"{node}:9100"}
        inputs += [
            series("tent_read_requests_total", labels, "0+7200x40"),
            series("tent_write_requests_total", labels, "0+4800x40"),
            series("tent_transport_failover_total", labels, failovers),
        ]
    run_tests(
        promtool,
        tmp_path,
        rule_file,
        [case(profile, "TransferEngineFallingBack", inputs, {"node": N1}, "14m", "22m")],
    )
    assert "TransferEngineFallingBack" not in render_rule_file(LC).decode(), "no alert where TENT is not exported"
