"""Grafana-managed rule groups through the real command line against the stand-in in Grafana 12 and 13 modes: a
profile whose ruler is Grafana plans its groups (a dry run writes nothing), publishes them with provenance none to
the context's folder and data source, reads each back and proves it by SHA, records it; a person's change is
refused with its key, a group another tool owns (provenance api) is refused without a key that could approve it, a
rollback restores a recorded group, and a group no longer built is deleted only when approved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from publishing import MODES, TOKEN, ledger, plan_json, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin

from dashgen.rules.grafana import group_sha

work = pytest.fixture(work_folder)
PROFILE = "long-context-64"
FOLDER = "llm-alerts"
DATASOURCE = ("--datasource-uid", "prom-ctx", "--folder-uid", FOLDER)
SLO_GROUP = f"dashgen-{PROFILE}-slo"


@pytest.fixture(params=MODES)
def grafana(request):
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        standin.add_folder(FOLDER, "LLM alerts")
        yield standin


def ruled(work: Path, ruler: str = "grafana") -> None:
    path = work / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace("[dashboard]\n", f'[dashboard]\nruler = "{ruler}"\n', 1))


def group_lines(work: Path) -> list[dict]:
    return [r for r in ledger(work) if r.get("kind") == "alert-rule-group"]


def slo_rule(grafana: GrafanaStandin, title_start: str = "SloErrorBudgetFastBurn") -> dict:
    return next(r for r in grafana.rule_group(FOLDER, SLO_GROUP)["rules"] if r["title"].startswith(title_start))


def test_a_grafana_ruler_needs_a_data_source_uid(work, grafana):
    ruled(work)
    result = run(work, grafana, "--dry-run", "--folder-uid", FOLDER, profile=PROFILE)
    assert result.exit_code == 2 and "--datasource-uid" in result.output


def test_publish_plans_writes_with_provenance_none_reads_back_and_records_each_group(work, grafana):
    ruled(work)
    dry = run(work, grafana, "--dry-run", "--format", "json", *DATASOURCE, profile=PROFILE)
    assert dry.exit_code == 0, dry.output
    planned = plan_json(dry)["rule_groups"]
    assert planned and {g["action"] for g in planned} == {"create"} and grafana.writes() == []

    published = run(work, grafana, *DATASOURCE, profile=PROFILE)
    assert published.exit_code == 0, published.output
    puts = [r for r in grafana.writes() if r.path.startswith("/api/v1/provisioning/")]
    assert len(puts) == len(planned) and all(r.method == "PUT" for r in puts)
    assert all("X-Disable-Provenance" in r.headers for r in puts)
    group = grafana.rule_group(FOLDER, SLO_GROUP)
    assert group is not None and all("provenance" not in r for r in group["rules"])
    assert {d["datasourceUid"] for r in group["rules"] for d in r["data"]} == {"prom-ctx", "__expr__"}
    lines = group_lines(work)
    assert len(lines) == len(planned) and {r["outcome"] for r in lines} == {"published"}
    line = next(r for r in lines if r["name"] == SLO_GROUP)
    assert line["stored_sha"] == line["build_sha"] == group_sha(group) and line["folder_uid"] == FOLDER
    assert Path(line["published_file"]).exists()

    grafana.clear_log()
    again = run(work, grafana, *DATASOURCE, profile=PROFILE)
    assert again.exit_code == 0, again.output
    assert [r for r in grafana.writes() if "provisioning" in r.path] == []
    assert {r["outcome"] for r in group_lines(work)[len(lines) :]} == {"unchanged"}


def test_a_persons_change_is_refused_with_its_key_and_overwritten_when_approved(work, grafana):
    ruled(work)
    assert run(work, grafana, *DATASOURCE, profile=PROFILE).exit_code == 0
    rule = slo_rule(grafana)
    grafana.simulate_rule_edit(rule["uid"], lambda r: r.update({"for": "10m"}))
    uid = next(r["uid"] for r in group_lines(work) if r["name"] == SLO_GROUP)

    refused = run(work, grafana, "--format", "json", *DATASOURCE, profile=PROFILE)
    assert refused.exit_code == 1, refused.output
    (item,) = [g for g in plan_json(refused)["rule_groups"] if g["action"] == "refused"]
    assert [r["approve_with"] for r in item["refusals"]] == [f"overwrite-live:{uid}"]
    assert slo_rule(grafana)["for"] == "10m"  # nothing written

    approved = run(work, grafana, "--overwrite-live", uid, *DATASOURCE, profile=PROFILE)
    assert approved.exit_code == 0, approved.output
    assert slo_rule(grafana)["for"] == "2m"
    line = (
        group_lines(work)[-1]
        if group_lines(work)[-1]["uid"] == uid
        else next(r for r in reversed(group_lines(work)) if r["uid"] == uid)
    )
    assert line["outcome"] == "published" and line["approvals_used"] == [f"overwrite-live:{uid}"]


def test_a_group_whose_provenance_another_tool_set_is_refused_and_no_flag_approves_it(work, grafana):
    ruled(work)
    assert run(work, grafana, *DATASOURCE, profile=PROFILE).exit_code == 0
    grafana.simulate_rule_edit(slo_rule(grafana)["uid"], lambda r: r.update({"for": "10m"}), through_api=True)
    uid = next(r["uid"] for r in group_lines(work) if r["name"] == SLO_GROUP)
    refused = run(work, grafana, "--format", "json", "--overwrite-live", uid, *DATASOURCE, profile=PROFILE)
    assert refused.exit_code == 1, refused.output
    (item,) = [g for g in plan_json(refused)["rule_groups"] if g["action"] == "refused"]
    (refusal,) = item["refusals"]
    assert refusal["approve_with"] == f"provenance:{uid}" and "no flag approves it" in refusal["flag"]
    assert "'api'" in refusal["reason"]


def test_the_standin_refuses_a_provenance_change_as_grafana_does(grafana):
    from dashgen.grafana.alerting import RuleGroups
    from dashgen.grafana.client import GrafanaClient
    from dashgen.grafana.errors import Forbidden

    group = {
        "title": "g",
        "folderUid": FOLDER,
        "interval": 60,
        "rules": [{"uid": "r1", "title": "t", "condition": "A", "data": [{"refId": "A", "model": {}}], "for": "1m"}],
    }
    with GrafanaClient(grafana.url, token=TOKEN) as client:
        client._send("PUT", f"/api/v1/provisioning/folder/{FOLDER}/rule-groups/g", json_body=group)  # provenance api
        assert grafana.rule_group(FOLDER, "g")["rules"][0]["provenance"] == "api"
        with pytest.raises(Forbidden) as refused:
            RuleGroups(client).put(group)  # X-Disable-Provenance: none
        assert "provenance" in str(refused.value)
        bad = {**group, "rules": [{"uid": "r2", "title": "no condition", "data": []}]}
        answer = client._send("PUT", f"/api/v1/provisioning/folder/{FOLDER}/rule-groups/h", json_body=bad)
        assert answer.status == 400
        missing = client._send("GET", "/api/v1/provisioning/alert-rules/nope")
        assert (missing.status, missing.body) == (404, b"")


def test_rollback_restores_a_recorded_group_and_history_lists_it(work, grafana):
    ruled(work)
    assert run(work, grafana, *DATASOURCE, profile=PROFILE).exit_code == 0
    first = next(r for r in group_lines(work) if r["name"] == SLO_GROUP)
    original = group_sha(grafana.rule_group(FOLDER, SLO_GROUP))
    path = work / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace("objective = 0.99", "objective = 0.995", 1))
    changed = run(work, grafana, "--approve", "*", *DATASOURCE, profile=PROFILE)
    assert changed.exit_code == 0, changed.output
    assert group_sha(grafana.rule_group(FOLDER, SLO_GROUP)) != original

    rolled = run(work, grafana, first["uid"], "--to", first["build_sha"][:12], "--approve", "*", command="rollback")
    assert rolled.exit_code == 0, rolled.output
    assert group_sha(grafana.rule_group(FOLDER, SLO_GROUP)) == original
    assert (
        group_lines(work)[-1]["outcome"] == "published" and group_lines(work)[-1]["stored_sha"] == first["stored_sha"]
    )


def test_a_group_no_longer_built_is_deleted_only_when_approved(work, grafana):
    ruled(work, "both")
    assert run(work, grafana, *DATASOURCE, profile=PROFILE).exit_code == 0
    path = work / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace('ruler = "both"\n', ""))  # back to the Prometheus ruler
    refused = run(work, grafana, "--format", "json", *DATASOURCE, profile=PROFILE)
    assert refused.exit_code == 1
    keys = {r["approve_with"] for g in plan_json(refused)["rule_groups"] for r in g["refusals"]}
    assert keys and all(k.startswith("remove:rule-group:") for k in keys)
    deleted = run(work, grafana, "--approve", "remove:rule-group:*", *DATASOURCE, profile=PROFILE)
    assert deleted.exit_code == 0, deleted.output
    assert grafana.rule_group(FOLDER, SLO_GROUP) is None


def test_history_lists_the_releases_of_a_rule_group(work, grafana):
    from click.testing import CliRunner

    from dashgen.cli.app import main

    ruled(work)
    assert run(work, grafana, *DATASOURCE, profile=PROFILE).exit_code == 0
    uid = next(r["uid"] for r in group_lines(work) if r["name"] == SLO_GROUP)
    argv = ["--profiles-dir", str(work / "profiles"), "history", uid, "--grafana-url", grafana.url]
    argv += ["--ledger", str(work / "ledger.jsonl"), "--timeout", "2"]
    shown = CliRunner().invoke(main, [*argv, "--format", "json"], env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)["results"]["versions"]
    first = next(r for r in group_lines(work) if r["uid"] == uid)
    assert [(r["version"], r["build_sha"]) for r in rows] == [(1, first["build_sha"])]
    text = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": "", "COLUMNS": "200"})
    assert "(alert rule group)" in text.output


def test_a_permission_error_on_the_rules_is_reported_and_recorded_as_failed(work, grafana):
    ruled(work)
    grafana.permissions.discard("alert.provisioning:write")
    result = run(work, grafana, *DATASOURCE, profile=PROFILE)
    assert result.exit_code == 1 and "403" in result.output
    assert {r["outcome"] for r in group_lines(work)} == {"failed"}
    assert grafana.rule_group(FOLDER, SLO_GROUP) is None
