"""S32 end to end on the real evaluator: faults written into VictoriaMetrics, the profile's layer-health group replayed
by ``vmalert -replay`` (as the demo's recorder and the drills do, the group alone), and the recorded health state
of each layer names the faulted node and nothing else. VictoriaMetrics' PromQL (MetricsQL) differs from
Prometheus' in rates, subqueries and look-back, so the promtool cases alone do not prove the recorded matrix."""

from __future__ import annotations

import time
from dataclasses import replace

from dashgen_queries import health
from dashgen_queries.nodata import LAYER_LABEL
from dashgen_queries.promql import in_deployment
from promtool_rules import PROFILES

from dashgen.demo import recorder
from dashgen.demo.series import inventory_series
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource

PROFILE = replace(PROFILES["long-context-64"], deployment="incident-drill")
NODES = PROFILE.node_names
STEP = 60.0
HISTORY = 180  # minutes of data before the end
FAULT = 40  # the faults start this many minutes before the end (the baselines end an hour back: clean)


def _series(metric: str, labels: dict[str, str], values: list[float], end: float) -> dict:
    stamps = [int((end - (len(values) - 1 - i) * STEP) * 1000) for i in range(len(values))]
    return {
        "metric": {"__name__": metric, "cluster": PROFILE.deployment, **labels},
        "values": values,
        "timestamps": stamps,
    }


def _counter(healthy: float, faulted: float | None = None) -> list[float]:
    """Per-minute increments: ``healthy``, then ``faulted`` over the last ``FAULT`` minutes."""
    values, total = [], 0.0
    for minute in range(HISTORY):
        total += faulted if faulted is not None and minute >= HISTORY - FAULT else healthy
        values.append(total)
    return values


def _gauge(healthy: float, faulted: float | None = None, last: int = FAULT) -> list[float]:
    return [faulted if faulted is not None and m >= HISTORY - last else healthy for m in range(HISTORY)]


def _faults(end: float) -> list[dict]:
    out = []
    for index, node in enumerate(NODES[:5]):
        disk = {"job": "node", "instance": f"{node}:9100", "node": node, "device": "nvme0n1"}
        saturated = index == 0
        out += [
            _series("node_disk_io_time_seconds_total", disk, _counter(27, 59.7 if saturated else None), end),
            _series("node_disk_io_time_weighted_seconds_total", disk, _counter(150, 3600 if saturated else None), end),
            _series("node_disk_read_time_seconds_total", disk, _counter(54, 1440 if saturated else None), end),
            _series("node_disk_reads_completed_total", disk, _counter(180_000, 60_000 if saturated else None), end),
        ]
        exporter = {"job": "node", "instance": f"{node}:9100", "node": node}
        # the cache disk is the device mounted at the profile's cache mount point, as node_exporter says
        mount = {**exporter, "device": "/dev/nvme0n1", "mountpoint": PROFILE.disks.cache_mountpoint, "fstype": "xfs"}
        out.append(_series("node_filesystem_size_bytes", mount, _gauge(3.84e12), end))
        out.append(_series("node_timex_offset_seconds", exporter, _gauge(0.001, -100.0 if index == 1 else None), end))
        gpu = {"job": "gpm", "node": node, "gpu": "0", "uuid": f"GPU-{node}-0"}
        out += [
            _series("gpm_clock_event_reasons", gpu, _gauge(0, 0x60 if index == 2 else None), end),
            _series("gpm_sample_valid", gpu, _gauge(1), end),
        ]
        stage = {"job": "sglang", "node": node, "pp_rank": str(index % 4), "tp_rank": "0", "engine_type": "unified"}
        out += [
            _series("sglang:prefill_effective_tokens_total", {**stage, "mode": "input"}, _counter(6000), end),
            _series(
                "sglang:prefill_effective_tokens_total",
                {**stage, "mode": "host_hit"},
                _counter(2400, 120 if index == 3 else None),
                end,
            ),
        ]
        agent = {"job": "vmagent", "instance": f"{node}:8429", "node": node}
        out.append(
            _series("vmagent_remotewrite_packets_dropped_total", agent, _counter(0, 5 if index == 4 else None), end)
        )
    master = {"job": "mooncake-master", "instance": f"{NODES[0]}:9003", "node": NODES[0]}
    standby = {"job": "mooncake-master", "instance": f"{NODES[4]}:9003", "node": NODES[4]}
    out += [
        _series("master_key_count", master, _gauge(2_000_000, 0, last=10), end),
        _series("master_key_count", standby, _gauge(0, 500, last=10), end),
    ]
    return out


def test_s32_vmalert_records_each_faulted_nodes_health_state_and_nothing_for_healthy_ones(
    victoriametrics, demo_windows
) -> None:
    del demo_windows  # the session's imports (and its vmalert check) first; the own deployment label keeps apart
    end = (time.time() // 60) * 60 - 600
    datasource = Datasource(victoriametrics.url, timeout=60)
    datasource.import_series(_faults(end))
    datasource.import_series(inventory_series(PROFILE, Topology(PROFILE), end - HISTORY * 60, end))
    datasource.flush()
    recorder.replay(victoriametrics.url, [PROFILE], end - recorder.REPLAY_SECONDS, end)
    datasource.flush()
    found: dict[str, dict[str, int]] = {}
    for sample in datasource.query(f"last_over_time({in_deployment(PROFILE, health.LAYER_HEALTH)}[300s])", end).result:
        found.setdefault(sample["metric"][LAYER_LABEL], {})[sample["metric"]["node"]] = int(float(sample["value"][1]))
    assert found == {
        "disk": {NODES[0]: health.DISK_SATURATED.code},
        "clock": {NODES[1]: health.CLOCK_OFF.code},
        "gpm": {NODES[2]: health.GPU_THERMAL.code},
        "dcgm": {NODES[2]: health.GPU_THERMAL.code},
        "hicache_host": {NODES[3]: health.TIER_COLLAPSED.code},
        "collector": {NODES[4]: health.COLLECTOR_DROPPING.code},
        "mooncake": {node: health.STORE_RESET.code for node in NODES},
    }
