"""S25: the video-generation pool's rules under the real promtool (``promtool test rules``): the job SLO's
multiwindow burn-rate alerts fire on a high share of failed or slow jobs and stay silent on a healthy pool
(warm-up jobs excluded), and the stuck alerts fire for an instance (or the whole pool) with jobs waiting
and none finished over twice the job-latency bound, never for an instance that finishes jobs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from promtool_rules import PROFILES, expected, run_tests, series

from dashgen.rules import render_rule_files, rule_groups

PROFILE = "video-200"  # objective 0.95 (budget 0.05), slo.job_latency_seconds = 600 -> le 600


@pytest.fixture(scope="module")
def rule_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("video-rules")
    for path, data in render_rule_files([PROFILES[PROFILE]], out).items():
        path.write_bytes(data)
    return out / f"{PROFILE}.yml"


def _jobs(node: str, good: str, success: str, errors: str) -> list[dict[str, str]]:
    base = {"job": "sglang", "node": node, "role": "monolithic", "replica": f"tcp://{node}:30010"}
    cold, warm = {**base, "is_warmup": "false"}, {**base, "is_warmup": "true"}
    return [
        series("sglang:diffusion_request_latency_seconds_bucket", {**cold, "status": "success", "le": "600.0"}, good),
        series("sglang:diffusion_request_latency_seconds_count", {**cold, "status": "success"}, success),
        series("sglang:diffusion_request_latency_seconds_count", {**cold, "status": "error"}, errors),
        # a warm-up job per minute, every one slow: excluded from the SLI, so it never burns the budget
        series(
            "sglang:diffusion_request_latency_seconds_bucket", {**warm, "status": "success", "le": "600.0"}, "0x300"
        ),
        series("sglang:diffusion_request_latency_seconds_count", {**warm, "status": "success"}, "0+1x300"),
    ]


def test_s25_video_rule_file_has_no_ttft_tpot_or_token_rule():
    rules = [rule for group in rule_groups(PROFILES[PROFILE]) for rule in group.rules]
    names = {getattr(rule, "alert", "") for rule in rules}
    assert {"VideoJobSloFastBurn", "VideoJobSloSlowBurn", "VideoInstanceStuck", "VideoPoolStuck"} <= names
    assert not names & {"SloErrorBudgetFastBurn", "SloErrorBudgetSlowBurn", "EngineStalled", "EngineRestarted"}
    read = {name for rule in rules for name in re.findall(r"\bsglang:[a-z_]+", rule.expr)}
    assert read and all(name.startswith("sglang:diffusion_") for name in read), read
    assert not [rule for rule in rules if re.search(r"token|ttft|tpot|time_to_first|per_output", rule.expr.lower())]


def test_s25_no_video_alert_explains_itself_with_a_kv_cache():
    """A video pool has no KV pool: no alert text of its rule file talks about one (GpuMemoryNearlyFull's too)."""
    alerts = [rule for group in rule_groups(PROFILES[PROFILE]) for rule in group.alerts()]
    assert "GpuMemoryNearlyFull" in {a.alert for a in alerts}
    assert not [a.alert for a in alerts if re.search(r"\bKV\b|mem-fraction-static", f"{a.summary} {a.description}")]


def test_s25_job_slo_burn_alerts_fire_on_failed_or_slow_jobs_and_not_on_a_healthy_pool(
    promtool: str, rule_file: Path, tmp_path: Path
) -> None:
    job = {"slo": "job"}
    high = {  # 10 jobs/min, 2 within 600 s: error ratio 0.8 > 14.4 x 0.05 = 0.72 and > 6 x 0.05
        "interval": "1m",
        "input_series": _jobs("vid-node-00", "0+2x300", "0+10x300", "0x300"),
        "alert_rule_test": [
            {
                "eval_time": "10m",
                "alertname": "VideoJobSloFastBurn",
                "exp_alerts": [expected(PROFILE, "VideoJobSloFastBurn", job)],
            },
            {
                "eval_time": "40m",
                "alertname": "VideoJobSloSlowBurn",
                "exp_alerts": [expected(PROFILE, "VideoJobSloSlowBurn", job)],
            },
        ],
    }
    errors = {  # every success fast, but half the jobs fail: 0.5 > 0.3 (slow) and < 0.72 (fast)
        "interval": "1m",
        "input_series": _jobs("vid-node-00", "0+5x300", "0+5x300", "0+5x300"),
        "alert_rule_test": [
            {"eval_time": "40m", "alertname": "VideoJobSloFastBurn", "exp_alerts": []},
            {
                "eval_time": "40m",
                "alertname": "VideoJobSloSlowBurn",
                "exp_alerts": [expected(PROFILE, "VideoJobSloSlowBurn", job)],
            },
        ],
    }
    healthy = {  # 1 slow job in 100: within the budget
        "interval": "1m",
        "input_series": _jobs("vid-node-00", "0+99x300", "0+100x300", "0x300"),
        "alert_rule_test": [
            {"eval_time": t, "alertname": name, "exp_alerts": []}
            for t in ("10m", "40m", "4h")
            for name in ("VideoJobSloFastBurn", "VideoJobSloSlowBurn")
        ],
    }
    run_tests(promtool, tmp_path, rule_file, [high, errors, healthy])


def _instance(node: str, queued: str, running: str, finished: str) -> list[dict[str, str]]:
    labels = {"job": "sglang", "node": node, "role": "monolithic", "replica": f"tcp://{node}:30010"}
    return [
        series("sglang:diffusion_num_queue_reqs", labels, queued),
        series("sglang:diffusion_num_running_reqs", labels, running),
        series("sglang:diffusion_requests_total", {**labels, "status": "success", "is_warmup": "false"}, finished),
    ]


def test_s25_stuck_instance_fires_after_twice_the_bound_without_a_finished_job(
    promtool: str, rule_file: Path, tmp_path: Path
) -> None:
    """vid-node-03 finishes a job a minute until 10m, then holds 2 queued + 1 running and finishes none: stuck
    once 20m (2 x 600 s) pass without a finished job (30m) plus the alert's 5m. vid-node-04 keeps finishing."""
    stuck = {"node": "vid-node-03", "replica": "tcp://vid-node-03:30010"}
    case = {
        "interval": "1m",
        "input_series": [
            *_instance("vid-node-03", "2x90", "1x90", "0+1x10 10x80"),
            *_instance("vid-node-04", "1x90", "1x90", "0+1x90"),
        ],
        "alert_rule_test": [
            {"eval_time": "29m", "alertname": "VideoInstanceStuck", "exp_alerts": []},
            {
                "eval_time": "40m",
                "alertname": "VideoInstanceStuck",
                "exp_alerts": [expected(PROFILE, "VideoInstanceStuck", stuck, "3")],
            },
            {"eval_time": "40m", "alertname": "VideoPoolStuck", "exp_alerts": []},
        ],
    }
    pool = {  # both instances stop finishing at 10m with jobs queued: the pool is stuck
        "interval": "1m",
        "input_series": [
            *_instance("vid-node-03", "2x90", "1x90", "0+1x10 10x80"),
            *_instance("vid-node-04", "1x90", "0x90", "0+1x10 10x80"),
        ],
        "alert_rule_test": [
            {"eval_time": "29m", "alertname": "VideoPoolStuck", "exp_alerts": []},
            {
                "eval_time": "40m",
                "alertname": "VideoPoolStuck",
                "exp_alerts": [expected(PROFILE, "VideoPoolStuck", {}, "3")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_file, [case, pool])
