"""S21: every query, template variable, alert and recording rule is scoped to its deployment, and the
rule files of all profiles load together into one Prometheus without two rules writing the same series.

Every vector selector of every panel target, variable query and rule expression is parsed (PromQL, after
Grafana's variables are expanded) and must carry ``<deployment label>="<deployment>"``; constant vectors
(``vector(1)`` rows built from the profile's node list) have no selector and need none."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest
from promtool_rules import PROMTOOL_TIMEOUT_S, load_groups, needed_groups

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.document import iter_panels
from dashgen.lint.promql import metric_name, parse, selectors
from dashgen.rules import render_rule_files, rule_groups
from dashgen.rules.model import RecordingRule

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {profile.name: profile for profile in load_profiles(directory=ROOT / "profiles")}
GLOBALS = (("$__rate_interval", "5m"), ("$__range_s", "3600"), ("$__range", "1h"), ("$__interval", "1m"))


def _expand(expr: str) -> str:
    for name, value in GLOBALS:
        expr = expr.replace(name, value)
    return re.sub(r"\$\{?\w+(:\w+)?\}?", ".+", expr)


def unscoped(expr: str, label: str, value: str) -> list[str]:
    """The selectors of ``expr`` without ``label="value"``."""
    found = []
    for node, _parents in selectors(parse(_expand(expr))):
        matchers = {(m.name, m.value) for m in node.matchers.matchers}
        if (label, value) not in matchers:
            found.append(metric_name(node) or str(node))
    return found


def _dashboard_queries(name: str) -> list[tuple[str, str]]:
    (built,) = build_profile(PROFILES[name])
    queries = [
        (site.raw.get("title", ""), target["expr"])
        for site in iter_panels(built.document)
        for target in site.raw.get("targets") or []
    ]
    for variable in built.document["templating"]["list"]:
        match = re.match(r"^label_values\((.*),\s*\w+\)$", str(variable.get("query") or ""))
        if match:
            queries.append((f"variable {variable['name']}", match.group(1)))
    return queries


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_s21_every_dashboard_query_and_variable_reads_only_its_deployment(name: str) -> None:
    profile = PROFILES[name]
    label = profile.label("deployment")
    wrong = [
        (where, found)
        for where, expr in _dashboard_queries(name)
        if (found := unscoped(expr, label, profile.deployment))
    ]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_s21_every_rule_reads_only_its_deployment_and_labels_what_it_writes(name: str) -> None:
    profile = PROFILES[name]
    label = profile.label("deployment")
    rules = [rule for group in rule_groups(profile) for rule in group.rules]
    assert len(rules) >= 40, len(rules)  # h20-16, the smallest rule file, has 47
    for rule in rules:
        where = getattr(rule, "record", None) or getattr(rule, "alert", "")
        assert not unscoped(rule.expr, label, profile.deployment), where
        assert (label, profile.deployment) in rule.labels, where


def test_s21_rule_files_of_all_profiles_never_write_the_same_series() -> None:
    written: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
    group_names: set[str] = set()
    for name, profile in PROFILES.items():
        for group in rule_groups(profile):
            assert group.name not in group_names, group.name
            group_names.add(group.name)
            for rule in group.rules:
                if isinstance(rule, RecordingRule):
                    key = (rule.record, tuple(sorted(rule.labels)))
                    assert key not in written or written[key] == name, f"{key} written by {written[key]} and {name}"
                    written[key] = name
    assert len(group_names) >= 8 * len(PROFILES), sorted(group_names)
    assert len(written) >= 25 * len(PROFILES), len(written)


def test_s21_all_rule_files_load_together_into_one_prometheus(promtool: str, tmp_path: Path) -> None:
    files = sorted(render_rule_files(list(PROFILES.values()), tmp_path).items())
    for path, data in files:
        path.write_bytes(data)
    result = subprocess.run(
        [promtool, "check", "rules", *(str(path) for path, _ in files)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_s21_a_store_of_its_own_needs_no_deployment_label_and_the_dashboard_says_so() -> None:
    profile = dataclasses.replace(PROFILES["h20-16"], deployment="")
    (built,) = build_profile(profile)
    assert 'cluster="' not in built.data.decode()
    assert "holds this deployment alone" in built.document["description"]


def test_s21_four_rule_files_in_one_prometheus_record_each_deployments_own_error_ratio(
    promtool: str, tmp_path: Path
) -> None:
    """All four rule files evaluated together over one store holding two deployments with the same node and
    model names: each deployment's recorded TTFT error ratio is its own (0.5 and 1), never a mix, and no
    other profile writes one. Each file loads every group that writes the ratio or a series it reads (the other
    groups cannot write it; all four whole files load together in the test above)."""
    files = sorted(render_rule_files(list(PROFILES.values()), tmp_path).items())
    for path, data in files:
        path.write_bytes(data)

    def histograms(cluster: str, good: str) -> list[dict[str, str]]:
        labels = (
            f'cluster="{cluster}", job="sglang", model_name="m", engine_type="unified", '
            'is_streaming="true", node="shared-node-00"'
        )
        return [
            {"series": f'sglang:time_to_first_token_seconds_bucket{{{labels}, le="{le}"}}', "values": good}
            for le in ("2", "6", "8")
        ] + [{"series": f"sglang:time_to_first_token_seconds_count{{{labels}}}", "values": "0+100x30"}]

    record = "model_name:sglang_slo_errors_per_request:ratio_rate5m"
    observed = tmp_path / "observed"
    observed.mkdir()
    reads = [{"promql_expr_test": [{"expr": record}]}]
    writing = set()
    for path, _ in files:
        groups = load_groups(path)
        kept = [groups[index] for index in needed_groups(groups, reads)]
        writing |= {path.stem} if kept else set()
        (observed / path.name).write_text(json.dumps({"groups": kept}), encoding="utf-8")
    assert writing == {"h20-16", "long-context-64", "pd-128"}  # video-200 has no token SLOs
    document = {
        "rule_files": [str(observed / path.name) for path, _ in files],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": histograms("long-context-64", "0+50x30") + histograms("pd-128", "0x30"),
                "promql_expr_test": [
                    {
                        "expr": f'{record}{{slo="ttft"}}',
                        "eval_time": "20m",
                        "exp_samples": [
                            {
                                "labels": f'{record}{{cluster="long-context-64", model_name="m", slo="ttft"}}',
                                "value": 0.5,
                            },
                            {"labels": f'{record}{{cluster="pd-128", model_name="m", slo="ttft"}}', "value": 1},
                        ],
                    }
                ],
            }
        ],
    }
    test_file = tmp_path / "together.yml"
    test_file.write_text(json.dumps(document, indent=1), encoding="utf-8")
    result = subprocess.run(
        [promtool, "test", "rules", str(test_file)], capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT_S
    )
    assert result.returncode == 0, result.stdout + result.stderr
