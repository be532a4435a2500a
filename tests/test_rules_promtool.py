"""The generated rule files load in Prometheus (``promtool check rules``) and every alert family fires
when it should and stays silent when it should not (``promtool test rules`` with input series).

Runs the real promtool (Debian package ``prometheus``; ``make debian-deps``). Skipped only outside CI
when promtool is missing; with CI=true a missing promtool fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dashgen.profile import load_profiles
from dashgen.rules import render_rule_files, rule_groups
from dashgen.rules.model import AlertRule

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {profile.name: profile for profile in load_profiles(directory=ROOT / "profiles")}


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is required in CI (Debian package 'prometheus'; make debian-deps)")
        pytest.skip("promtool not installed (Debian package 'prometheus'; make debian-deps)")
    return path


@pytest.fixture(scope="module")
def rule_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rules")
    for path, data in render_rule_files(list(PROFILES.values()), out).items():
        path.write_bytes(data)
    return out


def alert(profile: str, name: str) -> AlertRule:
    for group in rule_groups(PROFILES[profile]):
        for rule in group.alerts():
            if rule.alert == name:
                return rule
    raise KeyError(name)


def render(template: str, labels: dict[str, str], value: str) -> str:
    """Expand the two template forms the rules use: ``$labels.x`` and ``$value`` (optionally piped)."""
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], template)
    return re.sub(r"\{\{ \$value( \| \w+)? \}\}", value, text)


def expected(profile: str, name: str, labels: dict[str, str], value: str = "") -> dict:
    rule = alert(profile, name)
    return {
        "exp_labels": {**labels, "severity": rule.severity},
        "exp_annotations": {
            "summary": render(rule.summary, labels, value),
            "description": render(rule.description, labels, value),
            "runbook": rule.runbook,
        },
    }


def run_tests(promtool: str, tmp_path: Path, rule_file: Path, tests: list[dict]) -> None:
    document = {"rule_files": [str(rule_file)], "evaluation_interval": "1m", "tests": tests}
    test_file = tmp_path / "test.yml"
    test_file.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    result = subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ", ".join(f'{key}="{value}"' for key, value in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def test_every_generated_rule_file_passes_promtool_check(promtool: str, rule_dir: Path) -> None:
    files = sorted(rule_dir.glob("*.yml"))
    assert [f.stem for f in files] == sorted(PROFILES)
    for path in files:
        result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{path.name}: {result.stdout}{result.stderr}"
        assert "SUCCESS" in result.stdout


# --- SLO burn rate (long-context-64: objective 0.99, TTFT 5 s -> le 6, E2E 120 s -> le 200) --------------

def _histograms(ttft_good: str, total: str, le: str = "6.0") -> list[dict[str, str]]:
    base = {"job": "sglang", "model_name": "m", "engine_type": "unified", "is_streaming": "true",
            "node": "lc-node-00"}
    prefill = {**base, "engine_type": "prefill", "node": "lc-node-01"}
    return [
        series("sglang:time_to_first_token_seconds_bucket", {**base, "le": le}, ttft_good),
        series("sglang:time_to_first_token_seconds_count", base, total),
        series("sglang:e2e_request_latency_seconds_bucket", {**base, "le": "200.0"}, total),
        series("sglang:e2e_request_latency_seconds_count", base, total),
        # A prefill server of a PD pair, every request slow: excluded, so it never fires anything.
        series("sglang:time_to_first_token_seconds_bucket", {**prefill, "le": le}, "0x180"),
        series("sglang:time_to_first_token_seconds_count", prefill, total),
    ]


def test_slo_burn_alerts_fire_at_high_error_rate_and_not_at_low(promtool: str, rule_dir: Path,
                                                                 tmp_path: Path) -> None:
    ttft = {"model_name": "m", "slo": "ttft"}
    high = {  # half the requests over the TTFT bound: error ratio 0.5 > 14.4 x 0.01 and > 6 x 0.01
        "interval": "1m",
        "input_series": _histograms("0+50x180", "0+100x180"),
        "alert_rule_test": [
            {"eval_time": "10m", "alertname": "SloErrorBudgetFastBurn",
             "exp_alerts": [expected("long-context-64", "SloErrorBudgetFastBurn", ttft)]},
            {"eval_time": "30m", "alertname": "SloErrorBudgetSlowBurn",
             "exp_alerts": [expected("long-context-64", "SloErrorBudgetSlowBurn", ttft)]},
        ],
    }
    moderate = {  # error ratio 0.1: above the slow threshold 0.06, below the fast 0.144; Prometheus 3 'le' spelling
        "interval": "1m",
        "input_series": _histograms("0+90x180", "0+100x180", le="6"),
        "alert_rule_test": [
            {"eval_time": "30m", "alertname": "SloErrorBudgetFastBurn", "exp_alerts": []},
            {"eval_time": "30m", "alertname": "SloErrorBudgetSlowBurn",
             "exp_alerts": [expected("long-context-64", "SloErrorBudgetSlowBurn", ttft)]},
        ],
    }
    low = {  # error ratio 0.001, well within the budget
        "interval": "1m",
        "input_series": _histograms("0+999x180", "0+1000x180"),
        "alert_rule_test": [
            {"eval_time": t, "alertname": name, "exp_alerts": []}
            for t in ("10m", "30m", "3h")
            for name in ("SloErrorBudgetFastBurn", "SloErrorBudgetSlowBurn")
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [high, moderate, low])


# --- GPU alerts, DCGM (h20-16) and GPM (long-context-64) ------------------------------------------------

def _dcgm_memory(node: str, gpu: str, used: int, free: int) -> list[dict[str, str]]:
    labels = {"job": "dcgm", "node": node, "gpu": gpu, "UUID": f"GPU-{node}-{gpu}", "modelName": "H20"}
    return [series("DCGM_FI_DEV_FB_USED", labels, f"{used}x10"),
            series("DCGM_FI_DEV_FB_FREE", labels, f"{free}x10"),
            series("DCGM_FI_DEV_FB_RESERVED", labels, "1x10")]


def _gpm(node: str, gpu: str, metric: str, values: str, valid: str = "1x10") -> list[dict[str, str]]:
    labels = {"job": "gpm", "node": node, "gpu": gpu, "uuid": f"GPU-{node}-{gpu}"}
    return [series(metric, labels, values), series("gpm_sample_valid", labels, valid)]


def test_gpu_memory_alert_dcgm_fires_at_96_percent_not_90(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    node = "h20-node-00"
    case = {
        "interval": "1m",
        "input_series": _dcgm_memory(node, "0", 96, 3) + _dcgm_memory(node, "1", 90, 9),
        "alert_rule_test": [
            {"eval_time": "2m", "alertname": "GpuMemoryNearlyFull",
             "exp_alerts": [expected("h20-16", "GpuMemoryNearlyFull", {"node": node, "gpu": "0"}, "96%")]},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "h20-16.yml", [case])


def test_gpu_memory_alert_gpm_ignores_invalid_samples(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    node = "lc-node-03"
    total = [series("gpm_memory_total_bytes", {"job": "gpm", "node": node, "gpu": g, "uuid": f"GPU-{node}-{g}"},
                    "100x10") for g in ("0", "1", "2")]
    case = {
        "interval": "1m",
        "input_series": total + _gpm(node, "0", "gpm_memory_used_bytes", "96x10")
        + _gpm(node, "1", "gpm_memory_used_bytes", "90x10")
        + _gpm(node, "2", "gpm_memory_used_bytes", "99x10", valid="0x10"),
        "alert_rule_test": [
            {"eval_time": "2m", "alertname": "GpuMemoryNearlyFull",
             "exp_alerts": [expected("long-context-64", "GpuMemoryNearlyFull", {"node": node, "gpu": "0"}, "96%")]},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [case])


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_gpu_temperature_alert_needs_two_minutes_above_85(promtool: str, rule_dir: Path, tmp_path: Path,
                                                         profile: str) -> None:
    node = PROFILES[profile].node_names[0]
    if profile == "h20-16":
        def temp(gpu: str, values: str) -> list[dict[str, str]]:
            return [series("DCGM_FI_DEV_GPU_TEMP", {"job": "dcgm", "node": node, "gpu": gpu}, values)]
    else:
        def temp(gpu: str, values: str) -> list[dict[str, str]]:
            return _gpm(node, gpu, "gpm_temperature_celsius", values)
    case = {
        "interval": "1m",
        # GPU 0: 86 °C for 3 minutes and more; GPU 1: 86 °C for 1 minute, then 80 °C.
        "input_series": temp("0", "86x10") + temp("1", "86 86 80x8"),
        "alert_rule_test": [
            {"eval_time": "1m", "alertname": "GpuTemperatureHigh", "exp_alerts": []},
            {"eval_time": "3m", "alertname": "GpuTemperatureHigh",
             "exp_alerts": [expected(profile, "GpuTemperatureHigh", {"node": node, "gpu": "0"}, "86")]},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_clock_throttle_alert_ignores_idle_bit(promtool: str, rule_dir: Path, tmp_path: Path, profile: str) -> None:
    node = PROFILES[profile].node_names[0]
    metric = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" if profile == "h20-16" else "gpm_clock_event_reasons"

    def reasons(gpu: str, values: str) -> list[dict[str, str]]:
        if profile == "h20-16":
            return [series(metric, {"job": "dcgm", "node": node, "gpu": gpu}, values)]
        return _gpm(node, gpu, metric, values, valid="1x10")

    case = {
        "interval": "1m",
        # 0x1 idle only, 0x0 nothing: silent. 0x4 SW power cap: fires. 0x41 idle + HW thermal: fires.
        "input_series": reasons("0", "1x10") + reasons("1", "0x10") + reasons("2", "4x10") + reasons("3", "65x10"),
        "alert_rule_test": [
            {"eval_time": "7m", "alertname": "GpuClockThrottled",
             "exp_alerts": [expected(profile, "GpuClockThrottled", {"node": node, "gpu": "2"}, "4"),
                            expected(profile, "GpuClockThrottled", {"node": node, "gpu": "3"}, "65")]},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_collection_and_engine_alerts_fire_on_up_zero(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    def up(job: str, node: str, values: str) -> dict[str, str]:
        return series("up", {"job": job, "instance": f"{node}:9400", "node": node}, values)

    down, ok = "h20-node-00", "h20-node-01"
    case = {
        "interval": "1m",
        "input_series": [up("dcgm", down, "0x10"), up("dcgm", ok, "1x10"), up("node", ok, "1x10"),
                         up("sglang", down, "1 1 0x8"), up("sglang", ok, "1x10")],
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "DcgmCollectionFailed", "exp_alerts": []},  # for 5m: still pending
            {"eval_time": "7m", "alertname": "DcgmCollectionFailed", "exp_alerts": [
                expected("h20-16", "DcgmCollectionFailed", {"job": "dcgm", "instance": f"{down}:9400", "node": down})]},
            {"eval_time": "7m", "alertname": "NodeExporterCollectionFailed", "exp_alerts": []},
            {"eval_time": "5m", "alertname": "EngineHealthProbeFailing", "exp_alerts": [
                expected("h20-16", "EngineHealthProbeFailing",
                         {"job": "sglang", "instance": f"{down}:9400", "node": down})]},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "h20-16.yml", [case])


def test_every_alert_has_summary_description_severity_and_a_documented_runbook() -> None:
    docs = (ROOT / "docs" / "alerts.md").read_text(encoding="utf-8")
    anchors = {re.sub(r"[^a-z0-9-]", "", heading.strip().lower().replace(" ", "-"))
               for heading in re.findall(r"^#+ (.+)$", docs, re.M)}
    for profile in PROFILES.values():
        node, gpu = profile.label("node"), profile.label("gpu")
        for group in rule_groups(profile):
            for rule in group.alerts():
                assert rule.summary and rule.severity in ("critical", "warning")
                assert f"{{{{ $labels.{node} }}}}" in rule.description or "Node and GPU:" in rule.description
                if rule.alert.startswith("Gpu"):
                    assert f"{{{{ $labels.{gpu} }}}}" in rule.description
                section = rule.runbook.split("#", 1)[1]
                assert rule.runbook.startswith("docs/alerts.md#") and section in anchors, rule.alert
                assert f"`{rule.alert}`" in docs, rule.alert


def test_only_exported_sources_get_alerts() -> None:
    for profile in PROFILES.values():
        names = {rule.alert for group in rule_groups(profile) for rule in group.alerts()}
        for name, source in profile.sources.items():
            camel = "".join(part.capitalize() for part in name.split("_"))
            if name != "sglang" and source.job != profile.source("sglang").job:
                assert (f"{camel}CollectionFailed" in names) == source.exported, (profile.name, name)


def test_rule_files_are_deterministic() -> None:
    profiles = list(PROFILES.values())
    assert render_rule_files(profiles) == render_rule_files(profiles)
    for path, data in render_rule_files(profiles).items():
        assert (ROOT / path).read_bytes() == data, f"{path} is stale: run dashgen rules"
