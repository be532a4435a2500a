"""The generated rule files load in Prometheus (``promtool check rules``) and every alert family fires
when it should and stays silent when it should not (``promtool test rules`` with input series).

Runs the real promtool (Debian package ``prometheus``; ``make debian-deps``). Skipped only outside CI
when promtool is missing; with CI=true a missing promtool fails.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest
from promtool_rules import (
    PROFILES,
    ROOT,
    expected,
    load_groups,
    needed_groups,
    needed_rules,
    restricted_rule_files,
    run_tests,
    series,
    written_rule_files,
)

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import topology_of
from dashgen.rules import render_rule_files, rule_groups
from dashgen.rules.alerts import NODES_PER_RULE, target_missing_alerts
from dashgen.rules.render import render_rule_file


@pytest.fixture(scope="module")
def rule_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return written_rule_files(tmp_path_factory, list(PROFILES.values()))


def test_every_generated_rule_file_passes_promtool_check(promtool: str, rule_dir: Path) -> None:
    files = sorted(rule_dir.glob("*.yml"))
    assert [f.stem for f in files] == sorted(PROFILES)
    for path in files:
        result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{path.name}: {result.stdout}{result.stderr}"
        assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_whole_rule_files_evaluate_in_promtool(promtool: str, rule_dir: Path, tmp_path: Path, profile: str) -> None:
    """Each profile's whole rule file, every group evaluated together at every step (the other cases load only the
    groups they can observe): with no series at all, the evaluator's heartbeat is recorded and every engine node's
    target is missing."""
    deployment = PROFILES[profile]
    engines = [role.name for role in topology_of(deployment).nodes if role.gpus]
    heartbeat = (
        f'deployment:dashgen_rule_evaluator:heartbeat{{{deployment.label("deployment")}="{deployment.deployment}"}}'
    )
    case = {
        "interval": "1m",
        "input_series": [],
        "promql_expr_test": [
            {
                "expr": "deployment:dashgen_rule_evaluator:heartbeat",
                "eval_time": "7m",
                "exp_samples": [{"labels": heartbeat, "value": 1}],
            }
        ],
        "alert_rule_test": [
            {
                "eval_time": "7m",
                "alertname": "EngineMetricsTargetMissing",
                "exp_alerts": [
                    expected(profile, "EngineMetricsTargetMissing", {"node": node, "job": "sglang"}) for node in engines
                ],
            }
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case], whole_file=True)


def test_a_failing_promtool_case_is_named_by_its_place(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    """Cases needing different rule groups run from different test files of one promtool run; a failure still names
    the case that failed (``case <n>``, its place in the list), and only it."""
    node = PROFILES["h20-16"].node_names[0]
    hot = {
        "interval": "1m",
        "input_series": [series("DCGM_FI_DEV_GPU_TEMP", {"job": "dcgm", "node": node, "gpu": "0"}, "90x6")],
        "alert_rule_test": [{"eval_time": "5m", "alertname": "GpuTemperatureHigh", "exp_alerts": []}],  # wrong
    }
    quiet = {"interval": "1m", "alert_rule_test": [{"eval_time": "5m", "alertname": "HostOomKill", "exp_alerts": []}]}
    with pytest.raises(AssertionError) as failed:
        run_tests(promtool, tmp_path, rule_dir / "h20-16.yml", [quiet, hot])
    assert "name: case 2," in str(failed.value) and "case 1" not in str(failed.value)
    assert len(list(tmp_path.glob("test-*.yml"))) == 2  # two sets of rule groups


def _group_names(rule_dir: Path, profile: str, tests: list[dict]) -> set[str]:
    groups = load_groups(rule_dir / f"{profile}.yml")
    prefix = f"dashgen-{profile}-"
    return {groups[index]["name"].removeprefix(prefix) for index in needed_groups(groups, tests)}


def test_a_promtool_case_loads_the_groups_its_assertions_read_and_what_those_read(rule_dir: Path) -> None:
    """The groups a promtool case is run with: the group of each alert it asserts on or expression it reads, and every
    group recording a series those groups read (found here by plain substring, not by the helper's tokens); not the
    groups nothing it asserts on can see."""
    assert _group_names(
        rule_dir, "long-context-64", [{"alert_rule_test": [{"alertname": "SloErrorBudgetFastBurn"}]}]
    ) == {"slo"}
    # failures reads the inventory records; the layer matrix and the absence alerts are not loaded
    assert _group_names(rule_dir, "long-context-64", [{"alert_rule_test": [{"alertname": "HostOomKill"}]}]) == {
        "failures",
        "inventory",
    }
    alerts_read = [{"promql_expr_test": [{"expr": 'ALERTS{alertname="HostOomKill"}'}]}]
    assert _group_names(rule_dir, "long-context-64", alerts_read) == {"failures", "inventory"}
    every_alert = _group_names(rule_dir, "long-context-64", [{"promql_expr_test": [{"expr": "ALERTS"}]}])
    assert {"slo", "targets", "failures", "incident", "gpu"} <= every_alert and "inventory" in every_alert
    record_read = [{"promql_expr_test": [{"expr": "max(node:dashgen_layer_health:code)"}]}]
    assert _group_names(rule_dir, "long-context-64", record_read) == {"layer-health", "inventory"}
    by_name = [{"promql_expr_test": [{"expr": '{__name__=~"node:.*"}'}]}]
    groups = load_groups(rule_dir / "long-context-64.yml")
    assert needed_groups(groups, by_name) == list(range(len(groups)))
    for profile in PROFILES:
        groups = load_groups(rule_dir / f"{profile}.yml")
        records = {rule["record"] for group in groups for rule in group["rules"] if "record" in rule}
        for group in groups:
            for rule in (rule for rule in group["rules"] if "alert" in rule):
                kept = [
                    groups[index]
                    for index in needed_groups(groups, [{"alert_rule_test": [{"alertname": rule["alert"]}]}])
                ]
                assert group in kept, rule["alert"]
                recorded = {r["record"] for g in kept for r in g["rules"] if "record" in r}
                read = {name for name in records for g in kept for r in g["rules"] if name in r["expr"]}
                assert read <= recorded, (profile, rule["alert"], read - recorded)


def _kept_rules(rule_dir: Path, profile: str, tests: list[dict]) -> list[dict]:
    groups = load_groups(rule_dir / f"{profile}.yml")
    return [
        groups[index]["rules"][position] for index, rules in needed_rules(groups, tests).items() for position in rules
    ]


def test_a_promtool_case_loads_only_the_rules_its_assertions_can_see(rule_dir: Path, tmp_path: Path) -> None:
    """Within a group, only the rules an assertion can read: a read of one layer's health record loads the one rule
    writing that layer (the nine layers' rules share the record's name and differ by their static ``layer``
    label); a read without an equality matcher on ``layer`` (none, ``!=``, ``=~``, braces that are not plain
    matchers) loads every layer's. Whatever is loaded, every recording rule that could write a series a loaded
    rule reads is loaded too (found here by plain substring and the rule's labels, not by the helper's parser)."""
    health = "node:dashgen_layer_health:code"
    one = _kept_rules(rule_dir, "long-context-64", [{"promql_expr_test": [{"expr": f'{health}{{layer="disk"}}'}]}])
    assert [(rule.get("record"), rule["labels"]["layer"]) for rule in one if rule.get("record") == health] == [
        (health, "disk")
    ]
    assert not [rule for rule in one if rule.get("record") == "node:dashgen_layer_reason:code"]
    groups = load_groups(rule_dir / "long-context-64.yml")
    layers = {rule["labels"]["layer"] for group in groups for rule in group["rules"] if rule.get("record") == health}
    assert len(layers) > 1
    for expr in (health, f'max({health}{{layer!="disk"}})', f'{health}{{layer=~"disk"}}', f"{health}{{layer=disk}}"):
        kept = _kept_rules(rule_dir, "long-context-64", [{"promql_expr_test": [{"expr": expr}]}])
        assert {rule["labels"]["layer"] for rule in kept if rule.get("record") == health} == layers, expr
    # the file promtool runs holds the cut groups, each rule as written, in the file's order
    case = {"promql_expr_test": [{"expr": f'{health}{{layer="disk"}}', "eval_time": "1m", "exp_samples": []}]}
    ((path, _),) = restricted_rule_files(tmp_path, rule_dir / "long-context-64.yml", [case])
    written = [rule for group in load_groups(path) for rule in group["rules"]]
    assert written == one and len(written) < sum(len(group["rules"]) for group in groups)
    for profile in PROFILES:
        groups = load_groups(rule_dir / f"{profile}.yml")
        records = [rule for group in groups for rule in group["rules"] if "record" in rule]
        for rule in (rule for group in groups for rule in group["rules"] if "alert" in rule):
            kept = _kept_rules(rule_dir, profile, [{"alert_rule_test": [{"alertname": rule["alert"]}]}])
            assert rule in kept, rule["alert"]
            for reader in kept:
                for record in records:
                    selectors = re.findall(re.escape(record["record"]) + r"(?![\w:])(\{[^}]*\})?", reader["expr"])
                    contradicted = all(
                        any(
                            re.search(rf'\b{label}="(?!{re.escape(value)}")', selector)
                            for label, value in (record.get("labels") or {}).items()
                        )
                        for selector in selectors
                    )
                    if selectors and not contradicted:
                        assert record in kept, (profile, rule["alert"], record["record"])


# --- SLO burn rate (long-context-64: objective 0.99, TTFT 6 s -> le 6, TPOT 0.1 s -> le 0.1, E2E 200 s) ----


def _histograms(ttft_good: str, total: str, le: str = "6.0") -> list[dict[str, str]]:
    base = {"job": "sglang", "model_name": "m", "engine_type": "unified", "is_streaming": "true", "node": "lc-node-00"}
    prefill = {**base, "engine_type": "prefill", "node": "lc-node-01"}
    return [
        series("sglang:time_to_first_token_seconds_bucket", {**base, "le": le}, ttft_good),
        series("sglang:time_to_first_token_seconds_count", base, total),
        series("sglang:request_time_per_output_token_seconds_bucket", {**base, "le": "0.1"}, total),
        series("sglang:request_time_per_output_token_seconds_count", base, total),
        series("sglang:e2e_request_latency_seconds_bucket", {**base, "le": "200.0"}, total),
        series("sglang:e2e_request_latency_seconds_count", base, total),
        # A prefill server of a PD pair, every request slow: excluded, so it never fires anything.
        series("sglang:time_to_first_token_seconds_bucket", {**prefill, "le": le}, "0x180"),
        series("sglang:time_to_first_token_seconds_count", prefill, total),
    ]


def test_slo_burn_alerts_fire_at_high_error_rate_and_not_at_low(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    ttft = {"model_name": "m", "slo": "ttft"}
    high = {  # half the requests over the TTFT bound: error ratio 0.5 > 14.4 x 0.01 and > 6 x 0.01
        "interval": "1m",
        "input_series": _histograms("0+50x180", "0+100x180"),
        "alert_rule_test": [
            {
                "eval_time": "10m",
                "alertname": "SloErrorBudgetFastBurn",
                "exp_alerts": [expected("long-context-64", "SloErrorBudgetFastBurn", ttft)],
            },
            {
                "eval_time": "30m",
                "alertname": "SloErrorBudgetSlowBurn",
                "exp_alerts": [expected("long-context-64", "SloErrorBudgetSlowBurn", ttft)],
            },
        ],
    }
    moderate = {  # error ratio 0.1: above the slow threshold 0.06, below the fast 0.144; Prometheus 3 'le' spelling
        "interval": "1m",
        "input_series": _histograms("0+90x180", "0+100x180", le="6"),
        "alert_rule_test": [
            {"eval_time": "30m", "alertname": "SloErrorBudgetFastBurn", "exp_alerts": []},
            {
                "eval_time": "30m",
                "alertname": "SloErrorBudgetSlowBurn",
                "exp_alerts": [expected("long-context-64", "SloErrorBudgetSlowBurn", ttft)],
            },
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


def test_aborted_requests_burn_every_slis_budget(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    """Every finished request is fast, but one request in five is aborted: error ratio 0.2 > 14.4 x 0.01 for TTFT,
    TPOT and E2E alike. With no aborts the same traffic is silent (the low case above)."""
    aborted = series(
        "sglang:num_aborted_requests_total",
        {"job": "sglang", "model_name": "m", "engine_type": "unified", "node": "lc-node-00"},
        "0+25x180",
    )
    prefill_aborts = series(
        "sglang:num_aborted_requests_total",  # a PD prefill server's aborts: not counted twice
        {"job": "sglang", "model_name": "m", "engine_type": "prefill", "node": "lc-node-01"},
        "0+1000x180",
    )
    case = {
        "interval": "1m",
        "input_series": _histograms("0+100x180", "0+100x180") + [aborted, prefill_aborts],
        "alert_rule_test": [
            {
                "eval_time": "10m",
                "alertname": "SloErrorBudgetFastBurn",
                "exp_alerts": [
                    expected("long-context-64", "SloErrorBudgetFastBurn", {"model_name": "m", "slo": key})
                    for key in ("ttft", "tpot", "e2e")
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [case])


def test_slow_tpot_burns_the_tpot_budget_only(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    inputs = [
        s
        for s in _histograms("0+100x180", "0+100x180")
        if "request_time_per_output_token_seconds_bucket" not in s["series"]
    ]
    inputs.append(
        series(
            "sglang:request_time_per_output_token_seconds_bucket",
            {
                "job": "sglang",
                "model_name": "m",
                "engine_type": "unified",
                "is_streaming": "true",
                "node": "lc-node-00",
                "le": "0.1",
            },
            "0+50x180",
        )
    )
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "10m",
                "alertname": "SloErrorBudgetFastBurn",
                "exp_alerts": [
                    expected("long-context-64", "SloErrorBudgetFastBurn", {"model_name": "m", "slo": "tpot"})
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [case])


# --- GPU alerts, DCGM (h20-16) and GPM (long-context-64) ------------------------------------------------


def _dcgm_memory(node: str, gpu: str, used: str, free: str) -> list[dict[str, str]]:
    labels = {"job": "dcgm", "node": node, "gpu": gpu, "UUID": f"GPU-{node}-{gpu}", "modelName": "H20"}
    return [
        series("DCGM_FI_DEV_FB_USED", labels, used),
        series("DCGM_FI_DEV_FB_FREE", labels, free),
        series("DCGM_FI_DEV_FB_RESERVED", labels, "1x40"),
    ]


def _gpm(node: str, gpu: str, metric: str, values: str, valid: str = "1x40") -> list[dict[str, str]]:
    labels = {"job": "gpm", "node": node, "gpu": gpu, "uuid": f"GPU-{node}-{gpu}"}
    return [series(metric, labels, values), series("gpm_sample_valid", labels, valid)]


def test_gpu_memory_alert_warns_on_growth_above_the_static_reservation_not_on_a_flat_96_percent(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """GPU 0 sits at a flat 96 % (SGLang's static KV reservation: healthy, silent); GPU 1 grows from 90 % to 97 %
    (a leak or a foreign process: a warning once above 95 % and 2 points above its lowest share); GPU 2 grows but
    stays below 95 % (silent)."""
    node = "h20-node-00"
    case = {
        "interval": "1m",
        "input_series": _dcgm_memory(node, "0", "96x40", "3x40")
        + _dcgm_memory(node, "1", "90x10 90+1x7 97x22", "9x10 9-1x7 2x22")
        + _dcgm_memory(node, "2", "80x10 80+1x7 87x22", "19x10 19-1x7 12x22"),
        "alert_rule_test": [
            {"eval_time": "8m", "alertname": "GpuMemoryNearlyFull", "exp_alerts": []},
            {
                "eval_time": "25m",
                "alertname": "GpuMemoryNearlyFull",
                "exp_alerts": [expected("h20-16", "GpuMemoryNearlyFull", {"node": node, "gpu": "1"}, "97%")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "h20-16.yml", [case])


def test_gpu_memory_alert_gpm_ignores_invalid_samples(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    """GPU 0 grows to 97 % on valid samples (warns); GPU 2 jumps to 99 % on samples marked invalid (silent)."""
    node = "lc-node-03"
    total = [
        series("gpm_memory_total_bytes", {"job": "gpm", "node": node, "gpu": g, "uuid": f"GPU-{node}-{g}"}, "100x40")
        for g in ("0", "1", "2")
    ]
    case = {
        "interval": "1m",
        "input_series": total
        + _gpm(node, "0", "gpm_memory_used_bytes", "90x10 97x30")
        + _gpm(node, "1", "gpm_memory_used_bytes", "90x40")
        + _gpm(node, "2", "gpm_memory_used_bytes", "90x10 99x30", valid="1x10 0x30"),
        "alert_rule_test": [
            {
                "eval_time": "20m",
                "alertname": "GpuMemoryNearlyFull",
                "exp_alerts": [expected("long-context-64", "GpuMemoryNearlyFull", {"node": node, "gpu": "0"}, "97%")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [case])


def _scheduler(node: str, pp: str, metric: str, values: str, **extra: str) -> dict[str, str]:
    return series(
        metric,
        {
            "job": "sglang",
            "node": node,
            "pp_rank": pp,
            "tp_rank": "0",
            "model_name": "m",
            "engine_type": "unified",
            **extra,
        },
        values,
    )


def test_s31_engine_restart_pages_per_pp_stage_including_a_non_entry_stage(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """stage-restart / replica-restart: long-context-64 runs PP4, one stage per node. The stage on lc-node-01 (not
    its replica's entry node, so no tokenizer counter there) restarts at 10m: its token counter drops. An idle stage
    on lc-node-02 restarts too: only its idle-time counter drops. The entry stage on lc-node-00 keeps counting and
    lc-node-03 sits idle with flat counters: silent, as everything is before the restarts."""
    tokens, idle = "sglang:realtime_tokens_total", "sglang:scheduler_idle_seconds_total"
    inputs = [
        _scheduler("lc-node-00", "0", tokens, "0+100x30", mode="decode"),
        _scheduler("lc-node-01", "1", tokens, "0+100x10 0+100x20", mode="decode"),
        _scheduler("lc-node-01", "1", idle, "0+1x30"),
        _scheduler("lc-node-02", "2", tokens, "500x30", mode="decode"),
        _scheduler("lc-node-02", "2", idle, "0+60x10 0+60x20"),
        _scheduler("lc-node-03", "3", tokens, "500x30", mode="decode"),
        _scheduler("lc-node-03", "3", idle, "7x30"),
    ]

    def restarted(node: str, pp: str) -> dict:
        return expected(
            "long-context-64", "EngineRestarted", {"node": node, "pp_rank": pp, "engine_type": "unified"}, "1"
        )

    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "9m", "alertname": "EngineRestarted", "exp_alerts": []},
            {
                "eval_time": "12m",
                "alertname": "EngineRestarted",
                "exp_alerts": [restarted("lc-node-01", "1"), restarted("lc-node-02", "2")],
            },
            {"eval_time": "28m", "alertname": "EngineRestarted", "exp_alerts": []},  # the restart left the 15m window
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [case])


def test_s21_rules_never_read_another_deployments_series(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    """The same node name and a growing GPU memory share in another deployment of the shared store: silent."""
    node = "h20-node-00"
    other = [
        {**item, "series": item["series"].replace("{", '{cluster="other-deployment", ', 1)}
        for item in _dcgm_memory(node, "1", "90x10 97x30", "9x10 2x30")
    ]
    case = {
        "interval": "1m",
        "input_series": other,
        "alert_rule_test": [{"eval_time": "25m", "alertname": "GpuMemoryNearlyFull", "exp_alerts": []}],
    }
    run_tests(promtool, tmp_path, rule_dir / "h20-16.yml", [case])


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_gpu_temperature_alert_needs_two_minutes_above_85(
    promtool: str, rule_dir: Path, tmp_path: Path, profile: str
) -> None:
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
            {
                "eval_time": "3m",
                "alertname": "GpuTemperatureHigh",
                "exp_alerts": [expected(profile, "GpuTemperatureHigh", {"node": node, "gpu": "0"}, "86")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_s31_gpu_alerts_name_the_gpu_uuid_where_the_source_reports_one(
    promtool: str, rule_dir: Path, tmp_path: Path, profile: str
) -> None:
    """S31: a hot GPU is named by node, index and UUID (from the source's presence series, DCGM ``UUID`` / GPM
    ``uuid``); a GPU whose presence series is absent still alerts, without the UUID; a cool GPU stays silent."""
    node = PROFILES[profile].node_names[0]
    dcgm = profile == "h20-16"
    uuid_label = PROFILES[profile].label("dcgm_uuid" if dcgm else "gpm_uuid")

    def gpu_series(gpu: str, temperature: str, presence: bool) -> list[dict[str, str]]:
        labels = {"job": "dcgm" if dcgm else "gpm", "node": node, "gpu": gpu, uuid_label: f"GPU-{node}-{gpu}"}
        metrics = (
            ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE")
            if dcgm
            else ("gpm_temperature_celsius", "gpm_power_watts")
        )
        out = [series(metrics[0], labels, temperature)] + ([] if dcgm else [series("gpm_sample_valid", labels, "1x10")])
        return out + ([series(metrics[1], labels, "300x10")] if presence else [])

    case = {
        "interval": "1m",
        "input_series": gpu_series("0", "90x10", True)
        + gpu_series("1", "90x10", False)
        + gpu_series("2", "60x10", True),
        "alert_rule_test": [
            {
                "eval_time": "5m",
                "alertname": "GpuTemperatureHigh",
                "exp_alerts": [
                    expected(
                        profile, "GpuTemperatureHigh", {"node": node, "gpu": "0", uuid_label: f"GPU-{node}-0"}, "90"
                    ),
                    expected(profile, "GpuTemperatureHigh", {"node": node, "gpu": "1"}, "90"),
                ],
            }
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def collecting(profile: str, *fields: str) -> Profile:
    """The profile with its dcgm-exporter field list extended by ``fields`` (the default CSV plus them)."""
    from dashgen_queries.dcgm import DEFAULT_FIELDS

    base = PROFILES[profile]
    dcgm = dataclasses.replace(base.source("dcgm"), fields=DEFAULT_FIELDS + fields)
    return dataclasses.replace(base, sources={**base.sources, "dcgm": dcgm})


def variant_rule_file(tmp_path: Path, variant: Profile) -> Path:
    """The variant's rule file, named after the profile (run_tests reads the deployment from the name)."""
    out = tmp_path / "variant"
    out.mkdir(exist_ok=True)
    path = out / f"{variant.name}.yml"
    path.write_bytes(render_rule_file(variant))
    return path


def test_s22_clock_throttle_alert_only_where_dcgm_collects_the_clock_event_reasons() -> None:
    """h20-16's exporter runs the default CSV, which has no field 112: no alert (it could never fire) and no
    recording rule; with the field in its field list both are written."""
    names = {rule.alert for group in rule_groups(PROFILES["h20-16"]) for rule in group.alerts()}
    records = {getattr(rule, "record", "") for group in rule_groups(PROFILES["h20-16"]) for rule in group.rules}
    assert "GpuClockThrottled" not in names and "node_gpu:dashgen_gpu_clock_event_reasons:bitmask" not in records
    assert "cannot fire" not in render_rule_file(PROFILES["h20-16"]).decode()
    with_field = collecting("h20-16", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    assert "GpuClockThrottled" in {rule.alert for group in rule_groups(with_field) for rule in group.alerts()}
    for name in ("long-context-64", "pd-128", "video-200"):  # GPM sends the reasons
        assert "GpuClockThrottled" in {rule.alert for group in rule_groups(PROFILES[name]) for rule in group.alerts()}


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_clock_throttle_alert_fires_on_power_and_thermal_bits_only(
    promtool: str, rule_dir: Path, tmp_path: Path, profile: str
) -> None:
    variant = collecting(profile, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") if profile == "h20-16" else None
    rule_file = variant_rule_file(tmp_path, variant) if variant else rule_dir / f"{profile}.yml"
    node = PROFILES[profile].node_names[0]
    metric = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" if profile == "h20-16" else "gpm_clock_event_reasons"

    def reasons(gpu: str, values: str) -> list[dict[str, str]]:
        if profile == "h20-16":
            return [series(metric, {"job": "dcgm", "node": node, "gpu": gpu}, values)]
        return _gpm(node, gpu, metric, values, valid="1x10")

    # Silent: 0x1 idle, 0x0, 0x2 clocks setting (locked clocks), 0x10 sync boost, 0x100 display clocks, 0x113.
    # Fire: 0x4 SW power cap, 0x40 HW thermal, 0x44 both, 0x41 idle + HW thermal, 0x80 HW power brake.
    # HW slowdown alone (0x8, 0x9 with idle) is GpuHwSlowdown's, not a power or thermal throttle; beside a thermal
    # bit (0x28) the thermal cause is named and GpuHwSlowdown stays silent.
    silent = {"0": 0x1, "1": 0x0, "2": 0x2, "3": 0x10, "4": 0x100, "5": 0x113}
    fire = {"6": 0x4, "7": 0x40, "8": 0x44, "9": 0x41, "10": 0x80, "11": 0x8 | 0x20}
    slowdown = {"12": 0x8, "13": 0x9}
    inputs = [s for gpu, value in {**silent, **fire, **slowdown}.items() for s in reasons(gpu, f"{value}x10")]
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "7m",
                "alertname": "GpuClockThrottled",
                "exp_alerts": [
                    expected(profile, "GpuClockThrottled", {"node": node, "gpu": gpu}, str(value), variant)
                    for gpu, value in fire.items()
                ],
            },
            {
                "eval_time": "7m",
                "alertname": "GpuHwSlowdown",
                "exp_alerts": [
                    expected(profile, "GpuHwSlowdown", {"node": node, "gpu": gpu}, str(value), variant)
                    for gpu, value in slowdown.items()
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_file, [case])


# --- S22: every expected GPU accounted for, and GPU hardware faults (DCGM, whatever the utilisation source) -----


def _up(job: str, node: str, values: str) -> dict[str, str]:
    return series("up", {"job": job, "instance": f"{node}:9400", "node": node}, values)


def test_s22_gpu_missing_fires_when_a_node_reports_fewer_gpus_than_the_profile(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """long-context-64 (GPM): on one node GPU 5 stops reporting at 2m (fell off the bus) -> "7 of 8" after 5m; a
    node whose sampler answers without any GPU -> 0; a full node and a node whose scrape fails stay silent."""
    profile = "long-context-64"
    lost, full, empty, failing = PROFILES[profile].node_names[:4]
    inputs = [_up("gpm", node, "1x30") for node in (lost, full, empty)] + [_up("gpm", failing, "0x30")]
    for node in (lost, full):
        for gpu in range(8):
            values = "300 300 300 _x28" if (node, gpu) == (lost, 5) else "300x30"
            inputs.append(
                series(
                    "gpm_power_watts",
                    {"job": "gpm", "node": node, "gpu": str(gpu), "uuid": f"GPU-{node}-{gpu}"},
                    values,
                )
            )
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "4m", "alertname": "GpuMissing", "exp_alerts": []},  # still pending (for 5m)
            {
                "eval_time": "15m",
                "alertname": "GpuMissing",
                "exp_alerts": [
                    expected(profile, "GpuMissing", {"node": lost, "job": "gpm"}, "7"),
                    expected(profile, "GpuMissing", {"node": empty, "job": "gpm"}, "0"),
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_s22_gpu_missing_reads_dcgm_where_there_is_no_gpm(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    profile = "h20-16"
    full, lost = PROFILES[profile].node_names
    inputs = [_up("dcgm", node, "1x30") for node in (full, lost)]
    for node in (full, lost):
        for gpu in range(8 if node == full else 7):
            inputs.append(
                series(
                    "DCGM_FI_DEV_POWER_USAGE",
                    {"job": "dcgm", "node": node, "gpu": str(gpu), "UUID": f"GPU-{node}-{gpu}"},
                    "200x30",
                )
            )
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "10m",
                "alertname": "GpuMissing",
                "exp_alerts": [expected(profile, "GpuMissing", {"node": lost, "job": "dcgm"}, "7")],
            }
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def _both_sources(node: str, gpu: int, gpm: str, dcgm: str) -> list[dict[str, str]]:
    return [
        series("gpm_power_watts", {"job": "gpm", "node": node, "gpu": str(gpu), "uuid": f"GPU-{node}-{gpu}"}, gpm),
        series(
            "DCGM_FI_DEV_POWER_USAGE", {"job": "dcgm", "node": node, "gpu": str(gpu), "UUID": f"GPU-{node}-{gpu}"}, dcgm
        ),
    ]


def test_s22_gpu_missing_counts_each_exported_source_and_names_the_exporter_that_lost_a_gpu(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """long-context-64 exports GPM and DCGM. dcgm-lost-gpu: on one node dcgm-exporter stops reporting GPU 3 at 2m
    while GPM still sees it -> GpuMissing{job=dcgm} (7 of 8) and GpuMissingFromExporter{gpu=3, job=dcgm}.
    gpu-missing: on another node GPU 6 falls off the bus (both sources lose it) -> GpuMissing for both jobs, no
    GpuMissingFromExporter. A healthy node, and every node before the faults, stay silent."""
    profile = "long-context-64"
    dcgm_lost, off_bus, healthy = PROFILES[profile].node_names[:3]
    gone = "300 300 300 _x28"
    inputs = [_up(job, node, "1x30") for job in ("gpm", "dcgm") for node in (dcgm_lost, off_bus, healthy)]
    for node in (dcgm_lost, off_bus, healthy):
        for gpu in range(8):
            gpm = gone if (node, gpu) == (off_bus, 6) else "300x30"
            dcgm = gone if (node, gpu) in ((off_bus, 6), (dcgm_lost, 3)) else "300x30"
            inputs += _both_sources(node, gpu, gpm, dcgm)
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "4m", "alertname": "GpuMissing", "exp_alerts": []},
            {"eval_time": "4m", "alertname": "GpuMissingFromExporter", "exp_alerts": []},
            {
                "eval_time": "15m",
                "alertname": "GpuMissing",
                "exp_alerts": [
                    expected(profile, "GpuMissing", {"node": dcgm_lost, "job": "dcgm"}, "7"),
                    expected(profile, "GpuMissing", {"node": off_bus, "job": "dcgm"}, "7"),
                    expected(profile, "GpuMissing", {"node": off_bus, "job": "gpm"}, "7"),
                ],
            },
            {
                "eval_time": "15m",
                "alertname": "GpuMissingFromExporter",
                "exp_alerts": [
                    expected(profile, "GpuMissingFromExporter", {"node": dcgm_lost, "gpu": "3", "job": "dcgm"}, "1")
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_s22_fatal_xid_keeps_firing_while_the_gpu_is_off_the_bus(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    """gpu-missing: GPU 0 reports Xid 79 at 2m and its series vanishes at 4m (fallen off the bus): the alert still
    fires at 20m and 2h with code 79. GPU 1: Xid 79, then the GPU is reset and reports 0 again: resolved.
    xid-no-loss: GPU 2 reports Xid 13 (an application fault) and keeps reporting: silent."""
    profile = "long-context-64"
    node = PROFILES[profile].node_names[1]
    inputs = [
        _dcgm_gpu(node, "0", "DCGM_FI_DEV_XID_ERRORS", "0 0 79 79 _x200"),
        _dcgm_gpu(node, "1", "DCGM_FI_DEV_XID_ERRORS", "0 0 79 79 _x5 0x195"),
        _dcgm_gpu(node, "2", "DCGM_FI_DEV_XID_ERRORS", "0 0 13x198"),
    ]
    off_bus = expected(profile, "GpuXidFatal", {"node": node, "gpu": "0", "UUID": f"GPU-{node}-0"}, "79")
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "1m", "alertname": "GpuXidFatal", "exp_alerts": []},
            {
                "eval_time": "3m",
                "alertname": "GpuXidFatal",
                "exp_alerts": [
                    off_bus,
                    expected(profile, "GpuXidFatal", {"node": node, "gpu": "1", "UUID": f"GPU-{node}-1"}, "79"),
                ],
            },
            {"eval_time": "20m", "alertname": "GpuXidFatal", "exp_alerts": [off_bus]},
            {"eval_time": "2h", "alertname": "GpuXidFatal", "exp_alerts": [off_bus]},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def _dcgm_gpu(node: str, gpu: str, metric: str, values: str) -> dict[str, str]:
    return series(metric, {"job": "dcgm", "node": node, "gpu": gpu, "UUID": f"GPU-{node}-{gpu}"}, values)


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_s22_fatal_xid_pages_and_an_application_xid_does_not(
    promtool: str, rule_dir: Path, tmp_path: Path, profile: str
) -> None:
    """GPM is long-context-64's utilisation source, yet its Xid alert reads DCGM. 79, 94, 95 and 48 fire at once;
    13 (an application's graphics exception), 0 and a 79 cleared by a GPU reset (and exporter restart) do not."""
    node = PROFILES[profile].node_names[1]
    codes = {"0": "79x10", "1": "13x10", "2": "0x10", "3": "94x10", "4": "95x10", "5": "48x10", "6": "79 79 0x8"}
    inputs = [_dcgm_gpu(node, gpu, "DCGM_FI_DEV_XID_ERRORS", values) for gpu, values in codes.items()]
    fire = {"0": "79", "3": "94", "4": "95", "5": "48"}
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": "5m",
                "alertname": "GpuXidFatal",
                "exp_alerts": [
                    expected(profile, "GpuXidFatal", {"node": node, "gpu": gpu, "UUID": f"GPU-{node}-{gpu}"}, value)
                    for gpu, value in fire.items()
                ],
            }
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


@pytest.mark.parametrize("profile", ["h20-16", "long-context-64"])
def test_s22_row_remap_failure_pages_and_new_uncorrectable_rows_warn(
    promtool: str, rule_dir: Path, tmp_path: Path, profile: str
) -> None:
    """GPU 0: remapping failed at 5m (pages). GPU 1: a new uncorrectable remapped row at 10m (warns); GPU 2: two old
    rows that do not grow and no failure (silent: a GPU's lifetime count alone is no news)."""
    node = PROFILES[profile].node_names[0]
    inputs = [
        _dcgm_gpu(node, "0", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "0x5 1x25"),
        _dcgm_gpu(node, "1", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "0x30"),
        _dcgm_gpu(node, "2", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "0x30"),
        _dcgm_gpu(node, "0", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "0x30"),
        _dcgm_gpu(node, "1", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "2x10 3x20"),
        _dcgm_gpu(node, "2", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "2x30"),
    ]

    def labels(gpu: str) -> dict[str, str]:
        return {"node": node, "gpu": gpu, "UUID": f"GPU-{node}-{gpu}"}

    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "GpuRowRemapFailure", "exp_alerts": []},
            {"eval_time": "3m", "alertname": "GpuUncorrectableRemappedRows", "exp_alerts": []},
            {
                "eval_time": "20m",
                "alertname": "GpuRowRemapFailure",
                "exp_alerts": [expected(profile, "GpuRowRemapFailure", labels("0"), "1")],
            },
            {
                "eval_time": "20m",
                "alertname": "GpuUncorrectableRemappedRows",
                "exp_alerts": [expected(profile, "GpuUncorrectableRemappedRows", labels("1"), "1")],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_s22_hardware_alerts_only_where_the_exporter_collects_their_field() -> None:
    from dashgen_queries.dcgm import DEFAULT_FIELDS, ROW_REMAP_FAILURE, XID

    def names(profile: Profile) -> set[str]:
        return {rule.alert for group in rule_groups(profile) for rule in group.alerts()}

    health = {"GpuXidFatal", "GpuRowRemapFailure", "GpuUncorrectableRemappedRows", "GpuMissing"}
    for profile in PROFILES.values():
        assert health <= names(profile), profile.name  # every shipped profile exports DCGM with the default CSV
    base = PROFILES["long-context-64"]
    short = dataclasses.replace(
        base.source("dcgm"), fields=tuple(f for f in DEFAULT_FIELDS if f not in (XID, ROW_REMAP_FAILURE))
    )
    without = names(dataclasses.replace(base, sources={**base.sources, "dcgm": short}))
    assert {"GpuXidFatal", "GpuRowRemapFailure"}.isdisjoint(without) and "GpuUncorrectableRemappedRows" in without
    gone = dataclasses.replace(base.source("dcgm"), status="not-exported")
    no_dcgm = names(dataclasses.replace(base, sources={**base.sources, "dcgm": gone}))
    assert not {"GpuXidFatal", "GpuRowRemapFailure", "GpuUncorrectableRemappedRows"} & no_dcgm
    assert "GpuMissing" in no_dcgm  # GPM still counts the GPUs


def test_collection_and_engine_scrape_alerts_fire_on_up_zero(promtool: str, rule_dir: Path, tmp_path: Path) -> None:
    def up(job: str, node: str, values: str) -> dict[str, str]:
        return series("up", {"job": job, "instance": f"{node}:9400", "node": node}, values)

    down, ok = PROFILES["h20-16"].node_names
    case = {
        "interval": "1m",
        "input_series": [
            up("dcgm", down, "0x10"),
            up("dcgm", ok, "1x10"),
            up("node", ok, "1x10"),
            up("node", down, "1x10"),
            up("sglang", down, "1 1 0x8"),
            up("sglang", ok, "1x10"),
        ],
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "DcgmCollectionFailed", "exp_alerts": []},  # for 5m: still pending
            {
                "eval_time": "7m",
                "alertname": "DcgmCollectionFailed",
                "exp_alerts": [
                    expected(
                        "h20-16", "DcgmCollectionFailed", {"job": "dcgm", "instance": f"{down}:9400", "node": down}
                    )
                ],
            },
            {"eval_time": "7m", "alertname": "NodeExporterCollectionFailed", "exp_alerts": []},
            {
                "eval_time": "5m",
                "alertname": "EngineMetricsScrapeFailing",
                "exp_alerts": [
                    expected(
                        "h20-16",
                        "EngineMetricsScrapeFailing",
                        {"job": "sglang", "instance": f"{down}:9400", "node": down},
                    )
                ],
            },
            # up == 0 is a failing target, not a missing one.
            {"eval_time": "9m", "alertname": "DcgmTargetMissing", "exp_alerts": []},
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "h20-16.yml", [case])


def test_target_missing_fires_for_a_node_whose_up_series_disappears(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """The node list of the profile is the truth: a node whose up series disappears (node or vmagent dead) fires;
    present nodes stay silent, including while their up is 0 (that is CollectionFailed)."""
    profile = "long-context-64"
    nodes = PROFILES[profile].node_names
    gone = nodes[3]

    def up(job: str, node: str, values: str) -> dict[str, str]:
        return series("up", {"job": job, "instance": f"{node}:9400", "node": node}, values)

    # Every node's targets present for 2 minutes; then `gone` disappears (no samples: absent after the 5m lookback).
    inputs = [
        up(job, node, "1 1 1 _x30" if node == gone else "1x33") for job in ("gpm", "sglang", "node") for node in nodes
    ]
    inputs += [up("mooncake-master", nodes[0], "1x33")]  # the master present; the gateway has no target at all
    missing = {"node": gone}
    case = {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": "6m", "alertname": "GpmTargetMissing", "exp_alerts": []},  # still inside the lookback
            {
                "eval_time": "15m",
                "alertname": "GpmTargetMissing",
                "exp_alerts": [expected(profile, "GpmTargetMissing", {**missing, "job": "gpm"})],
            },
            {
                "eval_time": "15m",
                "alertname": "EngineMetricsTargetMissing",
                "exp_alerts": [expected(profile, "EngineMetricsTargetMissing", {**missing, "job": "sglang"})],
            },
            {
                "eval_time": "15m",
                "alertname": "NodeExporterTargetMissing",
                "exp_alerts": [expected(profile, "NodeExporterTargetMissing", {**missing, "job": "node"})],
            },
            {"eval_time": "15m", "alertname": "MooncakeMasterTargetMissing", "exp_alerts": []},
            {
                "eval_time": "15m",
                "alertname": "GatewayTargetMissing",
                "exp_alerts": [expected(profile, "GatewayTargetMissing", {"job": "gateway"})],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_target_missing_rules_cover_every_node_in_readable_blocks() -> None:
    """Each per-node rule names at most NODES_PER_RULE nodes; together they name exactly the profile's nodes."""
    video = PROFILES["video-200"]
    count = 2 * NODES_PER_RULE + 3  # one engine per node, 53 nodes: three blocks
    big = dataclasses.replace(
        video,
        nodes=count,
        node_names=tuple(f"n{i:03d}" for i in range(count)),
        pools=(dataclasses.replace(video.pools[0], replicas=count),),
    )
    for candidate in (*PROFILES.values(), big):
        for alert in ("NodeExporterTargetMissing", "EngineMetricsTargetMissing"):
            rules = [r for r in target_missing_alerts(candidate) if r.alert == alert]
            named = [re.findall(r'"node", "([^"]+)"', rule.expr) for rule in rules]
            assert all(len(block) <= NODES_PER_RULE for block in named)
            assert [n for block in named for n in block] == list(candidate.node_names), (candidate.name, alert)
    assert len([r for r in target_missing_alerts(big) if r.alert == "NodeExporterTargetMissing"]) == 3
    for profile in PROFILES.values():
        cluster = [
            r
            for r in target_missing_alerts(profile)
            if r.alert in ("GatewayTargetMissing", "MooncakeMasterTargetMissing")
        ]
        assert all(r.expr.startswith("absent(up{") and "Cluster-wide" in r.description for r in cluster)


def test_engine_stalled_fires_when_requests_wait_and_no_token_is_processed(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    profile = "long-context-64"
    node = PROFILES[profile].node_names[1]

    def stage(pp: str, waiting: str, tokens: str | None) -> list[dict[str, str]]:
        labels = {
            "job": "sglang",
            "node": node,
            "pp_rank": pp,
            "tp_rank": "0",
            "model_name": "m",
            "engine_type": "unified",
        }
        out = [series("sglang:num_queue_reqs", labels, waiting)]
        if tokens is not None:
            out.append(series("sglang:realtime_tokens_total", {**labels, "mode": "decode"}, tokens))
        return out

    case = {
        "interval": "1m",
        # pp 0: 5 waiting; tokens rise for 10 minutes, then stay flat (hung at 10m). pp 1: 5 waiting, tokens
        # rising. pp 2: idle, tokens flat. pp 3: 3 waiting from 10m, the token counter never created.
        "input_series": stage("0", "5x30", "0+100x10 1000x20")
        + stage("1", "5x30", "0+100x30")
        + stage("2", "0x30", "1000+0x30")
        + stage("3", "0x10 3x20", None),
        "alert_rule_test": [
            # 12m: pp 0 still has token progress inside its 5m window; pp 3 is pending (for 5m).
            {"eval_time": "12m", "alertname": "EngineStalled", "exp_alerts": []},
            # pp 0: no token since 10m -> condition from 15m -> fires from 20m.
            {
                "eval_time": "21m",
                "alertname": "EngineStalled",
                "exp_alerts": [
                    expected(profile, "EngineStalled", {"node": node, "pp_rank": "0", "engine_type": "unified"}, "5"),
                    expected(profile, "EngineStalled", {"node": node, "pp_rank": "3", "engine_type": "unified"}, "3"),
                ],
            },
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_every_alert_has_summary_description_severity_and_a_documented_runbook() -> None:
    docs = (ROOT / "docs" / "alerts.md").read_text(encoding="utf-8")
    anchors = {
        re.sub(r"[^a-z0-9-]", "", heading.strip().lower().replace(" ", "-"))
        for heading in re.findall(r"^#+ (.+)$", docs, re.M)
    } | set(re.findall(r'<a id="([^"]+)"></a>', docs))  # the catalogue rows' sections are anchored by row id
    checked = 0
    for profile in PROFILES.values():
        node, gpu = profile.label("node"), profile.label("gpu")
        for group in rule_groups(profile):
            for rule in group.alerts():
                checked += 1
                assert rule.summary and rule.severity in ("critical", "warning")
                assert (
                    f"{{{{ $labels.{node} }}}}" in rule.description
                    or "Node and GPU:" in rule.description
                    or rule.description.startswith("Cluster-wide")
                )
                if rule.alert.startswith("Gpu") and rule.alert != "GpuMissing":  # GpuMissing is per node
                    assert f"{{{{ $labels.{gpu} }}}}" in rule.description
                section = rule.runbook.split("#", 1)[1]
                assert rule.runbook.startswith("docs/alerts.md#") and section in anchors, rule.alert
                assert f"`{rule.alert}`" in docs, rule.alert
    assert checked >= 20 * len(PROFILES) >= 80, checked


def test_only_exported_sources_get_alerts() -> None:
    collected = 0  # sources with a job of their own: they get collection alerts exactly when exported
    for profile in PROFILES.values():
        names = {rule.alert for group in rule_groups(profile) for rule in group.alerts()}
        for name, source in profile.sources.items():
            camel = "".join(part.capitalize() for part in name.split("_"))
            if name != "sglang" and source.job != profile.source("sglang").job:
                assert (f"{camel}CollectionFailed" in names) == source.exported, (profile.name, name)
                assert (f"{camel}TargetMissing" in names) == source.exported, (profile.name, name)
                collected += 1
        assert {"EngineMetricsScrapeFailing", "EngineMetricsTargetMissing"} <= names
        # S25: EngineStalled reads the token counter, which a video-generation (diffusion) engine has not
        assert ("EngineStalled" in names) == profile.has_kind("text-generation"), profile.name
    assert collected >= 5 * len(PROFILES) >= 20, collected


def test_rule_files_are_deterministic() -> None:
    profiles = list(PROFILES.values())
    assert render_rule_files(profiles) == render_rule_files(profiles)
    for path, data in render_rule_files(profiles).items():
        assert (ROOT / path).read_bytes() == data, f"{path} is stale: run dashgen rules"


# --- S33: the client-side SLO, counted at the gateway -----------------------------------------------------------


def _responses(instance: str, status: str, values: str) -> dict[str, str]:
    return series(
        "smg_http_responses_total",
        {
            "job": "gateway",
            "node": "lc-node-00",
            "instance": instance,
            "path": "/generate",
            "status_code": status,
            "error_code": "",
        },
        values,
    )


def test_s33_client_slo_burns_when_the_gateway_sheds_and_not_on_client_mistakes(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """gateway-shedding: one gateway of two answers half its requests with 429 from 10m on (deployment-wide 0.25 >
    14.4 x 0.01): fast and slow burn. Healthy: only 200s plus 404s of clients asking for a wrong path (a
    client's own mistake, neither good nor bad): silent. Idle (no request at all): silent, no ratio recorded."""
    client = {"slo": "client"}
    shedding = {
        "interval": "1m",
        "input_series": [
            _responses("gw-0:29000", "200", "0+100x10 1000+50x170"),
            _responses("gw-0:29000", "429", "0x10 0+50x170"),
            _responses("gw-1:29000", "200", "0+100x180"),
        ],
        "alert_rule_test": [
            {"eval_time": "9m", "alertname": "ClientSloErrorBudgetFastBurn", "exp_alerts": []},
            {
                "eval_time": "40m",
                "alertname": "ClientSloErrorBudgetFastBurn",
                "exp_alerts": [expected("long-context-64", "ClientSloErrorBudgetFastBurn", client)],
            },
            {
                "eval_time": "2h",
                "alertname": "ClientSloErrorBudgetSlowBurn",
                "exp_alerts": [expected("long-context-64", "ClientSloErrorBudgetSlowBurn", client)],
            },
        ],
    }
    healthy = {
        "interval": "1m",
        "input_series": [
            _responses("gw-0:29000", "200", "0+100x180"),
            _responses("gw-0:29000", "404", "0+50x180"),
            _responses("gw-1:29000", "200", "0+100x180"),
        ],
        "alert_rule_test": [
            {"eval_time": t, "alertname": name, "exp_alerts": []}
            for t in ("20m", "2h")
            for name in ("ClientSloErrorBudgetFastBurn", "ClientSloErrorBudgetSlowBurn")
        ],
    }
    idle = {
        "interval": "1m",
        "input_series": [_responses("gw-0:29000", "200", "500x180"), _responses("gw-0:29000", "503", "7x180")],
        "alert_rule_test": [
            {"eval_time": t, "alertname": name, "exp_alerts": []}
            for t in ("20m", "2h")
            for name in ("ClientSloErrorBudgetFastBurn", "ClientSloErrorBudgetSlowBurn")
        ],
        "promql_expr_test": [
            {"expr": "deployment:smg_client_errors_per_response:ratio_rate1h", "eval_time": "2h", "exp_samples": []}
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [shedding, healthy, idle])


def test_s33_client_slo_rules_only_where_the_gateway_is_exported() -> None:
    gateways = [profile.exported("gateway") for profile in PROFILES.values()]
    assert len(gateways) >= 4 and any(gateways) and not all(gateways), "profiles with and without a gateway"
    for profile in PROFILES.values():
        names = {rule.alert for group in rule_groups(profile) for rule in group.alerts()}
        client = {"ClientSloErrorBudgetFastBurn", "ClientSloErrorBudgetSlowBurn"}
        assert (client <= names) == profile.exported("gateway"), profile.name
        assert client & names in (set(), client), profile.name


def test_every_collection_alert_fires_on_up_zero_naming_its_target(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """GPM, the Mooncake master and the gateway: ``up == 0`` for 5m fires the source's CollectionFailed alert with
    the target's node and instance; a healthy target of the same job stays quiet."""
    profile = "long-context-64"
    down, ok = PROFILES[profile].node_names[3], PROFILES[profile].node_names[0]
    jobs = {
        "gpm": "GpmCollectionFailed",
        "mooncake-master": "MooncakeMasterCollectionFailed",
        "gateway": "GatewayCollectionFailed",
    }

    def up(job: str, node: str, values: str) -> dict[str, str]:
        return series("up", {"job": job, "instance": f"{node}:9400", "node": node}, values)

    case = {
        "interval": "1m",
        "input_series": [s for job in jobs for s in (up(job, down, "0x10"), up(job, ok, "1x10"))],
        "alert_rule_test": [
            *({"eval_time": "3m", "alertname": name, "exp_alerts": []} for name in jobs.values()),
            *(
                {
                    "eval_time": "7m",
                    "alertname": name,
                    "exp_alerts": [expected(profile, name, {"job": job, "instance": f"{down}:9400", "node": down})],
                }
                for job, name in jobs.items()
            ),
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / f"{profile}.yml", [case])


def test_every_alert_of_every_rule_file_has_a_promtool_case_a_severity_and_a_runbook() -> None:
    """Issue 27: each alert is named by at least one promtool case (``"alertname": "<name>"`` in a rule test of this
    repository), carries a severity and a runbook whose section exists in docs/alerts.md, and its summary names a
    label of what it is about."""
    sources = "\n".join(
        p.read_text(encoding="utf-8")
        for p in Path(__file__).parent.glob("test_*.py")
        if "promtool" in p.read_text(encoding="utf-8")
    )
    docs = (Path(__file__).resolve().parent.parent / "docs" / "alerts.md").read_text(encoding="utf-8").lower()
    untested = set()
    for profile in PROFILES.values():
        for group in rule_groups(profile):
            for alert in group.alerts():
                if f'"{alert.alert}"' not in sources:  # named in a test that runs promtool
                    untested.add(alert.alert)
                assert alert.severity in ("critical", "warning"), alert.alert
                anchor = alert.runbook.split("#", 1)[1]
                assert f'<a id="{anchor}"></a>' in docs or f"## {anchor}" in docs.replace(" ", "") or anchor in docs, (
                    alert.alert,
                    anchor,
                )
                # an alert about the whole deployment names it; an absent() alert (no series, so no labels) its job
                names = (
                    "{{ $labels." in alert.summary
                    or (profile.deployment or profile.name) in alert.summary
                    or (alert.expr.startswith("absent(") and "(job " in alert.summary)
                )
                assert names, (profile.name, alert.alert, alert.summary)
    assert not untested, sorted(untested)


def _worker_health(worker: str, values: str) -> dict[str, str]:
    labels = {"job": "gateway", "node": "lc-node-00", "instance": "gw-0:29000", "worker": worker}
    return series("smg_worker_health", labels, values)


def test_s33_client_fast_burn_keeps_firing_when_the_gateway_stops_sending_traffic(
    promtool: str, rule_dir: Path, tmp_path: Path
) -> None:
    """A backend hangs at 10m: half the responses fail (5xx) until 30m, when the gateway opens its circuit and
    sends nothing more while that backend stays unhealthy. The error ratio then has no sample over 5m, so an alert
    on the ratio alone resolves at ~35m; the fast burn keeps firing (same labels, no new hold) until the backend is
    healthy again at 60m, after which the idle, healthy gateway is silent. The same idle gateway with every backend
    healthy never fires (no traffic is not a fault by itself)."""
    from dashgen_queries.client_slo import expected_backends

    from dashgen.deployment.topology import Topology

    replicas = expected_backends(Topology(PROFILES["long-context-64"]))
    assert replicas >= 2
    workers = [f"http://lc-node-{i:02d}:30000" for i in range(replicas)]
    client = {"slo": "client"}
    fired = [expected("long-context-64", "ClientSloErrorBudgetFastBurn", client)]
    stopped = {
        "interval": "1m",
        "input_series": [
            _responses("gw-0:29000", "200", "0+100x10 1000+50x20 2000x60"),
            _responses("gw-0:29000", "500", "0x10 0+50x20 1000x60"),
            _worker_health(workers[0], "1x10 0x50 1x30"),
            *(_worker_health(w, "1x90") for w in workers[1:]),
        ],
        "alert_rule_test": [
            {"eval_time": "9m", "alertname": "ClientSloErrorBudgetFastBurn", "exp_alerts": []},
            *(
                {"eval_time": t, "alertname": "ClientSloErrorBudgetFastBurn", "exp_alerts": fired}
                for t in ("25m", "40m", "55m")
            ),
            {"eval_time": "70m", "alertname": "ClientSloErrorBudgetFastBurn", "exp_alerts": []},
        ],
    }
    quiet = {
        "interval": "1m",
        "input_series": [
            _responses("gw-0:29000", "200", "500x90"),
            *(_worker_health(w, "1x90") for w in workers),
        ],
        "alert_rule_test": [
            {"eval_time": t, "alertname": "ClientSloErrorBudgetFastBurn", "exp_alerts": []} for t in ("20m", "80m")
        ],
    }
    run_tests(promtool, tmp_path, rule_dir / "long-context-64.yml", [stopped, quiet])
