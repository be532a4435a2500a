"""Grafana-managed alert rules from the rendered rule groups: the ruler split never evaluates a rule twice, the
conversion is generic over whatever rules the groups hold, and the file-provisioning and grafana-operator outputs
are valid (the operator's real CRD)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from crds import crd_problems

from dashgen.cli.app import main
from dashgen.deployment.profile import load_profiles
from dashgen.render import yamlcheck
from dashgen.rules.grafana import grafana_groups, group_sha, prometheus_side
from dashgen.rules.render import rule_groups_data

ROOT = Path(__file__).resolve().parent.parent
PROFILE = "long-context-64"


@pytest.fixture(scope="module")
def groups() -> list[dict]:
    return rule_groups_data(load_profiles([PROFILE])[0])


def names(groups: list[dict], kind: str) -> list[str]:
    return sorted(str(r[kind]) for g in groups for r in g["rules"] if kind in r)


@pytest.mark.parametrize("ruler", ["prometheus", "grafana", "both"])
def test_every_rule_is_evaluated_by_exactly_one_ruler(groups, ruler):
    kept = prometheus_side(groups, ruler)
    moved = grafana_groups(groups, ruler, profile=PROFILE, folder_uid="f", datasource_uid="ds")
    grafana_alerts = sorted(r["title"].split(" (")[0] for g in moved for r in g["rules"] if not r.get("record"))
    grafana_records = sorted(r["record"]["metric"] for g in moved for r in g["rules"] if r.get("record"))
    assert sorted(names(kept, "alert") + grafana_alerts) == names(groups, "alert")
    assert sorted(names(kept, "record") + grafana_records) == names(groups, "record")
    assert (ruler == "prometheus") == (moved == [])


def test_an_alert_fires_in_grafana_for_exactly_the_series_its_expression_returns():
    raw = [
        {
            "name": "g",
            "rules": [
                {"alert": "Low", "expr": 'up{job="x"} < 0.5', "for": "5m", "labels": {"severity": "warning"}},
                {"alert": "Low", "expr": "vector(0)", "for": "1m", "annotations": {"summary": "s"}},
                {"record": "job:up:sum", "expr": "sum(up)"},
            ],
        }
    ]
    (group,) = grafana_groups(raw, "grafana", profile="p", folder_uid="f", datasource_uid="prom-uid")
    low, second, record = group["rules"]
    assert low["data"][0]["model"]["expr"] == '(up{job="x"} < 0.5) * 0 + 1'  # a returned 0 still fires
    assert low["data"][0]["datasourceUid"] == "prom-uid" and low["condition"] == "C"
    assert low["data"][1]["model"]["conditions"][0]["evaluator"] == {"type": "gt", "params": [0]}
    assert low["for"] == "5m" and low["labels"] == {"severity": "warning"} and low["noDataState"] == "OK"
    assert [low["title"], second["title"]] == ["Low (p)", "Low (p) #2"] and low["uid"] != second["uid"]
    assert record["record"] == {"metric": "job:up:sum", "from": "A", "targetDatasourceUid": "prom-uid"}
    again = grafana_groups(raw, "grafana", profile="p", folder_uid="f", datasource_uid="prom-uid")
    assert group_sha(again[0]) == group_sha(group)
    other = grafana_groups(raw, "grafana", profile="p", folder_uid="f", datasource_uid="other")
    assert group_sha(other[0]) != group_sha(group)


def with_ruler(tmp_path: Path, ruler: str) -> Path:
    folder = tmp_path / "profiles"
    folder.mkdir()
    text = (ROOT / "profiles" / f"{PROFILE}.toml").read_text()
    (folder / f"{PROFILE}.toml").write_text(text.replace("[dashboard]\n", f'[dashboard]\nruler = "{ruler}"\n', 1))
    return folder


def rules(profiles: Path, out: Path, *args: str):
    argv = ["--profiles-dir", str(profiles), "rules", "--profile", PROFILE, "--out", str(out), *args]
    return CliRunner().invoke(main, argv)


def test_recording_rules_in_grafana_operator_crs_are_valid_too(tmp_path, groups):
    out = tmp_path / "rules"
    assert rules(with_ruler(tmp_path, "grafana"), out, "--format", "grafana-operator").exit_code == 0
    items = yamlcheck.load((out / f"{PROFILE}.grafanaalertrulegroup.yaml").read_text())["items"]
    records = [r for item in items for r in item["spec"]["rules"] if "record" in r]
    assert len(records) == len(names(groups, "record")) and all(crd_problems(item) == [] for item in items)


def test_rules_format_grafana_and_grafana_operator_hold_what_the_ruler_gives_grafana(tmp_path, groups):
    profiles = with_ruler(tmp_path, "both")
    out = tmp_path / "rules"
    result = rules(
        profiles,
        out,
        "--format",
        "prometheus",
        "--format",
        "grafana",
        "--format",
        "grafana-operator",
        "--datasource-uid",
        "prom-ctx",
        "--folder-uid",
        "llm-alerts",
    )
    assert result.exit_code == 0, result.output
    prometheus = yamlcheck.load((out / f"{PROFILE}.yml").read_text())
    assert names(prometheus["groups"], "alert") == [] and names(prometheus["groups"], "record") == names(
        groups, "record"
    )
    provisioning = yamlcheck.load((out / f"{PROFILE}.grafana-alerting.yaml").read_text())
    assert provisioning["apiVersion"] == 1
    titles = [r["title"] for g in provisioning["groups"] for r in g["rules"]]
    assert len(titles) == len(names(groups, "alert")) == len(set(titles))
    assert {g["folder"] for g in provisioning["groups"]} == {"dashgen alerts"}
    listed = yamlcheck.load((out / f"{PROFILE}.grafanaalertrulegroup.yaml").read_text())
    assert listed["kind"] == "List" and listed["items"]
    for item in listed["items"]:
        assert crd_problems(item) == [], item["metadata"]["name"]
        assert item["spec"]["folderUID"] == "llm-alerts" and "folderRef" not in item["spec"]  # exactly one (CEL rule)
        assert {d["datasourceUid"] for r in item["spec"]["rules"] for d in r["data"]} == {"prom-ctx", "__expr__"}


def test_an_unknown_ruler_is_an_input_error_naming_the_field(tmp_path):
    result = rules(with_ruler(tmp_path, "alertmanager"), tmp_path / "rules")
    assert result.exit_code == 2 and "ruler" in result.output and "alertmanager" in result.output
