"""S23's alerts under the real promtool: a node whose every series stops is CollectorSilent (and only it);
coverage below the profile's expected count names the job and how many are missing; memory near the lower
of vmagent's own limit and the profile's; the send queue near its bound; dropped data. Each alert also stays
silent where it should. Uses the promtool harness of ``test_rules_promtool``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from promtool_rules import PROFILES, expected, run_tests, series, written_rule_files

from dashgen.deployment.targets import expected_targets

PROFILE = "long-context-64"
MIB = 1 << 20


@pytest.fixture(scope="module")
def rule_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return written_rule_files(tmp_path_factory, [PROFILES[PROFILE]])


def _vmagent(metric: str, node: str, values: str, **labels: str) -> dict[str, str]:
    return series(metric, {"job": "vmagent", "instance": f"{node}:8429", "node": node, **labels}, values)


def test_s23_collector_silent_fires_for_the_node_whose_series_all_stop(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    nodes = PROFILES[PROFILE].node_names
    dead = nodes[2]
    inputs = [_vmagent("up", node, "1 1 1 _x30" if node == dead else "1x33") for node in nodes]
    inputs += [
        series("up", {"job": "gpm", "instance": f"{node}:9500", "node": node}, "1 1 1 _x30" if node == dead else "1x33")
        for node in nodes
    ]
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "2m", "alertname": "CollectorSilent", "exp_alerts": []},
            {"eval_time": "4m", "alertname": "CollectorSilent", "exp_alerts": []},  # 120 s old at most: not yet
            {
                "eval_time": "15m",
                "alertname": "CollectorSilent",
                "exp_alerts": [expected(PROFILE, "CollectorSilent", {"node": dead}, "1")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


def test_s23_coverage_below_expected_names_the_job_and_the_missing_count(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    inputs = []
    for entry in expected_targets(PROFILES[PROFILE]):
        for index in range(entry.count):
            values = "1x20"
            if entry.job == "gateway" and index == 0:
                values = "1 1 _x18"  # one of the four gateways gone
            if entry.job == "dcgm" and index < 2:
                values = "1 1 0x18"  # two DCGM exporters failing
            inputs.append(
                series("up", {"job": entry.job, "instance": f"t{index}:1", "node": f"lc-node-0{index % 8}"}, values)
            )
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "1m", "alertname": "TargetCoverageBelowExpected", "exp_alerts": []},
            {
                "eval_time": "15m",
                "alertname": "TargetCoverageBelowExpected",
                "exp_alerts": [
                    expected(PROFILE, "TargetCoverageBelowExpected", {"job": "dcgm"}, "2"),
                    expected(PROFILE, "TargetCoverageBelowExpected", {"job": "gateway"}, "1"),
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


def test_s23_memory_near_the_lower_limit_queue_near_its_bound_and_drops_alert(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """Node 0: 95 % of the profile's 512 MiB (vmagent sees 2 GiB). Node 1: 95 % of the 320 MiB vmagent reports
    (the cgroup is tighter than the profile). Node 2: 100 MiB of 2 GiB, silent. Node 0 also holds 900 MiB in its
    send queue (bound 1 GB) and drops blocks; node 1 holds 100 MiB and drops nothing."""
    n0, n1, n2 = PROFILES[PROFILE].node_names[:3]
    rss = {n0: 0.95 * 512 * MIB, n1: 0.95 * 320 * MIB, n2: 100 * MIB}
    limit = {n0: 2048 * MIB, n1: 320 * MIB, n2: 2048 * MIB}
    inputs = []
    for node in (n0, n1, n2):
        inputs.append(_vmagent("process_resident_memory_bytes", node, f"{rss[node]:.1f}x20"))
        inputs.append(_vmagent("process_memory_limit_bytes", node, f"{limit[node]}x20"))
    inputs.append(_vmagent("vmagent_remotewrite_pending_data_bytes", n0, f"{900 * MIB}x20", url="1:secret-url"))
    inputs.append(_vmagent("vmagent_remotewrite_pending_data_bytes", n1, f"{100 * MIB}x20", url="1:secret-url"))
    inputs.append(
        _vmagent("vmagent_remotewrite_packets_dropped_total", n0, "0 0 0 0 0 0 0 0 3 6 9 12", url="1:secret-url")
    )
    inputs.append(_vmagent("vmagent_remotewrite_packets_dropped_total", n1, "0x12", url="1:secret-url"))
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "10m",
                "alertname": "CollectorMemoryNearLimit",
                "exp_alerts": [
                    expected(PROFILE, "CollectorMemoryNearLimit", {"node": n0}, "95%"),
                    expected(PROFILE, "CollectorMemoryNearLimit", {"node": n1}, "95%"),
                ],
            },
            {
                "eval_time": "10m",
                "alertname": "CollectorSendQueueNearBound",
                "exp_alerts": [expected(PROFILE, "CollectorSendQueueNearBound", {"node": n0}, "900Mi")],
            },
            {"eval_time": "6m", "alertname": "CollectorDroppingSamples", "exp_alerts": []},
            {
                "eval_time": "10m",
                "alertname": "CollectorDroppingSamples",
                "exp_alerts": [expected(PROFILE, "CollectorDroppingSamples", {"node": n0}, "")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])


def test_s23_collector_dropping_keeps_queue_and_drop_alerts_firing_on_gappy_own_samples(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """collector-dropping: node 0's send queue sits at 950 MiB of its 1 GB bound, its memory at 95 % of the profile's
    512 MiB, and it drops blocks, but its own
    samples reach the store gappy (one every 7 minutes: longer than the store's 5m look-back, so an instant read is
    empty in between and a plain `for: 5m` would keep resetting). Both alerts still fire and stay firing. Node 1
    holds 100 MiB and drops nothing (healthy); node 2 has no traffic at all (idle, counters flat): silent."""
    n0, n1, n2 = PROFILES[PROFILE].node_names[:3]
    gappy_queue = " ".join([f"{950 * MIB} _x6"] * 6)
    gappy_drops = " ".join(f"{3 * i} _x6" for i in range(6))
    gappy_rss = " ".join([f"{0.95 * 512 * MIB:.1f} _x6"] * 6)
    inputs = [
        _vmagent("process_resident_memory_bytes", n0, gappy_rss),
        _vmagent("process_resident_memory_bytes", n1, f"{100 * MIB}x42"),
        _vmagent("vmagent_remotewrite_pending_data_bytes", n0, gappy_queue, url="1:secret-url"),
        _vmagent("vmagent_remotewrite_packets_dropped_total", n0, gappy_drops, url="1:secret-url"),
        _vmagent("vmagent_remotewrite_pending_data_bytes", n1, f"{100 * MIB}x42", url="1:secret-url"),
        _vmagent("vmagent_remotewrite_packets_dropped_total", n1, "0x42", url="1:secret-url"),
        _vmagent("vmagent_remotewrite_pending_data_bytes", n2, "0x42", url="1:secret-url"),
        _vmagent("vmagent_remotewrite_packets_dropped_total", n2, "5x42", url="1:secret-url"),
    ]
    queue = expected(PROFILE, "CollectorSendQueueNearBound", {"node": n0}, "950Mi")
    drops = expected(PROFILE, "CollectorDroppingSamples", {"node": n0}, "")
    memory = expected(PROFILE, "CollectorMemoryNearLimit", {"node": n0}, "95%")
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "CollectorSendQueueNearBound", "exp_alerts": []},  # pending (for 5m)
            *(
                {"eval_time": t, "alertname": "CollectorSendQueueNearBound", "exp_alerts": [queue]}
                for t in ("12m", "13m", "26m", "33m")
            ),  # 12m, 13m, 26m: the newest sample is 5-6 minutes old
            *(
                {"eval_time": t, "alertname": "CollectorDroppingSamples", "exp_alerts": [drops]}
                for t in ("12m", "13m", "26m", "33m")
            ),
            *(
                {"eval_time": t, "alertname": "CollectorMemoryNearLimit", "exp_alerts": [memory]}
                for t in ("12m", "13m", "26m", "33m")
            ),
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{PROFILE}.yml", [case])
