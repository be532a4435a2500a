"""Issue 30, item 4: a v2 build published through ``/apis/dashboard.grafana.app/<v2…>`` against the stand-in in
Grafana 13 mode: created and updated with ``metadata.resourceVersion``, read back in v2, its ledger SHA the stored
spec's; a person's save in between is refused with its approval key; a dry run writes nothing; a v1-stored
dashboard becoming v2 is a change the plan names and that needs approval."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from publishing import TOKEN, ledger, plan_json, run, saves
from publishing import work_folder as work_folder
from standin import GrafanaStandin
from v2_work import PROFILE, UID, as_v2, retitle

from dashgen.cli.app import main
from dashgen.render.canonical import content_sha

work = pytest.fixture(work_folder)
APIS_V2 = rf"/apis/dashboard\.grafana\.app/v2/namespaces/default/dashboards(/{UID})?"


def drift(work: Path, grafana: GrafanaStandin):
    argv = ["--profiles-dir", str(work / "profiles"), "drift", "--grafana-url", grafana.url, "--timeout", "2"]
    argv += ["--ledger", str(work / "ledger.jsonl")]
    return CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})


@pytest.fixture
def grafana13():
    with GrafanaStandin(mode="grafana13", token=TOKEN) as standin:
        yield standin


def test_a_v2_build_is_created_and_updated_through_apis_v2_and_its_stored_spec_is_what_the_ledger_proves(
    work, grafana13
):
    as_v2(work)
    created = run(work, grafana13, profile=PROFILE)
    assert created.exit_code == 0, created.output
    assert [(r.method, r.path.split("/")[3]) for r in saves(grafana13)] == [("POST", "v2")]
    stored = grafana13.stored_v2(UID)
    assert grafana13.stored_api_version(UID) == "v2" and stored["layout"]["kind"] == "TabsLayout"
    record = ledger(work)[-1]
    assert record["outcome"] == "published" and record["stored_sha"] == record["build_sha"]
    assert record["api_version"] == "dashboard.grafana.app/v2" and record["resource_version"]
    assert record["stored_sha"] == content_sha({"apiVersion": "dashboard.grafana.app/v2", "spec": stored})

    grafana13.clear_log()
    again = run(work, grafana13, profile=PROFILE)
    assert again.exit_code == 0 and ledger(work)[-1]["outcome"] == "unchanged" and saves(grafana13) == []

    retitle(work, "Long-context replica group, retitled")
    generation = grafana13.stored_version(UID)
    updated = run(work, grafana13, profile=PROFILE)
    assert updated.exit_code == 0, updated.output
    (put,) = saves(grafana13)
    assert put.method == "PUT" and put.path.endswith(f"/v2/namespaces/default/dashboards/{UID}")
    assert put.json()["metadata"]["resourceVersion"]  # the export's: a save in between would be a 409
    assert grafana13.stored_v2(UID)["title"] == "Long-context replica group, retitled"
    assert grafana13.stored_version(UID) == generation + 1
    assert ledger(work)[-1]["outcome"] == "published" and ledger(work)[-1]["grafana_version"] == generation + 1
    assert ledger(work)[-1]["resource_version"] != record["resource_version"]


def test_a_persons_save_of_the_v2_dashboard_is_refused_with_its_key_and_a_dry_run_writes_nothing(work, grafana13):
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    grafana13.simulate_ui_save(UID, lambda spec: spec.update(title="Edited by a person"))
    person = grafana13.stored_v2(UID)
    assert person["layout"]["kind"] == "TabsLayout"  # edited as v2: the tabs kept
    grafana13.clear_log()
    dry = run(work, grafana13, "--dry-run", "--format", "json", profile=PROFILE)
    keys = [r["approve_with"] for d in plan_json(dry)["dashboards"] for r in d["refusals"]]
    assert keys == [f"overwrite-live:{UID}"] and saves(grafana13) == []
    refused = run(work, grafana13, profile=PROFILE)
    assert refused.exit_code == 1 and saves(grafana13) == [] and grafana13.stored_v2(UID) == person
    approved = run(work, grafana13, "--overwrite-live", UID, profile=PROFILE)
    assert approved.exit_code == 0, approved.output
    assert grafana13.stored_v2(UID)["title"] != "Edited by a person"
    assert ledger(work)[-1]["approvals_used"] == [f"overwrite-live:{UID}"]


def test_a_v1_stored_dashboard_becoming_v2_is_named_and_needs_approval(work, grafana13):
    assert run(work, grafana13, profile=PROFILE).exit_code == 0  # v1, stored as v0alpha1
    assert grafana13.stored_api_version(UID) == "v0alpha1"
    as_v2(work)
    grafana13.clear_log()
    refused = run(work, grafana13, profile=PROFILE)
    assert refused.exit_code == 1 and saves(grafana13) == []
    assert f"schema-v2:{UID}" in refused.output and "dashboard.grafana.app/v2" in refused.output
    approved = run(work, grafana13, "--approve", f"schema-v2:{UID}", profile=PROFILE)
    assert approved.exit_code == 0, approved.output
    assert grafana13.stored_api_version(UID) == "v2" and grafana13.stored_v2(UID)["layout"]["kind"] == "TabsLayout"


def test_a_v2beta1_build_for_grafana_12_is_written_through_apis_v2beta1(work):
    as_v2(work, "12.3")
    with GrafanaStandin(mode="grafana12", token=TOKEN) as grafana12:
        published = run(work, grafana12, profile=PROFILE)
        assert published.exit_code == 0, published.output
        assert [(r.method, r.path.split("/")[3]) for r in saves(grafana12)] == [("POST", "v2beta1")]
        assert grafana12.stored_api_version(UID) == "v2beta1"
        assert ledger(work)[-1]["stored_sha"] == ledger(work)[-1]["build_sha"]


def test_rollback_restores_a_recorded_v2_release_through_apis_v2(work, grafana13):
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    first = ledger(work)[-1]
    original = grafana13.stored_v2(UID)
    retitle(work, "Long-context replica group, retitled")
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    assert grafana13.stored_v2(UID)["title"] != original["title"]
    grafana13.clear_log()
    rolled = run(work, grafana13, UID, "--to", first["build_sha"][:12], command="rollback")
    assert rolled.exit_code == 0, rolled.output
    (put,) = saves(grafana13)
    assert put.method == "PUT" and "/v2/namespaces/default/dashboards/" in put.path
    assert grafana13.stored_v2(UID) == original
    record = ledger(work)[-1]
    assert record["outcome"] == "published" and record["stored_sha"] == first["stored_sha"]


def test_drift_of_a_v2_release_is_clean_untouched_and_diffs_a_persons_v2_edit(work, grafana13):
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    clean = drift(work, grafana13)
    assert clean.exit_code == 0, clean.output
    assert f"clean         {UID}" in clean.output
    grafana13.simulate_ui_save(UID, lambda spec: spec.update(title="Edited by a person"))
    drifted = drift(work, grafana13)
    assert drifted.exit_code == 1, drifted.output
    assert f"edited        {UID}" in drifted.output and "Edited by a person" in drifted.output
    assert "not diffable" not in drifted.output


def test_history_shows_the_v2_releases_beside_grafanas_versions(work, grafana13):
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    retitle(work, "Long-context replica group, retitled")
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    argv = ["--profiles-dir", str(work / "profiles"), "history", UID, "--grafana-url", grafana13.url]
    argv += ["--ledger", str(work / "ledger.jsonl"), "--timeout", "2", "--format", "json"]
    shown = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})
    assert shown.exit_code == 0, shown.output
    assert [r["build_sha"] for r in ledger(work)][-1][:12] in shown.output


def test_diff_live_of_a_v2_dashboard_compares_by_stable_key(work, grafana13):
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    argv = ["--profiles-dir", str(work / "profiles"), "diff", "--live", UID, "--grafana-url", grafana13.url]
    same = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})
    assert same.exit_code == 0, same.output
    grafana13.simulate_ui_save(UID, lambda spec: spec.update(title="Edited by a person"))
    edited = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})
    assert edited.exit_code == 1 and "Edited by a person" in edited.output, edited.output
