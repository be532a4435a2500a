"""Folder permissions of dashgen.toml through the real command line against the stand-in in Grafana 12 and 13
modes: planned (a dry run writes nothing), applied one assignment at a time, read back and proven by SHA,
recorded; access dashgen did not grant is removed or lowered only with its approval; a principal Grafana lacks is
refused; a permission error is reported; a rollback restores a recorded state."""

from __future__ import annotations

from pathlib import Path

import pytest
from publishing import MODES, TOKEN, ledger, plan_json, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin

work = pytest.fixture(work_folder)
PROFILE = "long-context-64"
FOLDER = "llm-clusters"
UID = f"dgp-{FOLDER}"


@pytest.fixture(params=MODES)
def grafana(request):
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        standin.add_folder(FOLDER, "LLM clusters")
        people = standin.directory()
        people.add_team("sre")
        people.add_team("support")
        people.add_service_account("dashgen-ci")
        people.add_user("alice")
        yield standin


def configure(work: Path, grafana: GrafanaStandin, body: str) -> tuple[str, ...]:
    (work / "dashgen.toml").write_text(
        f'[contexts.test]\nurl = "{grafana.url}"\nfolder_uid = "{FOLDER}"\n\n'
        f"[contexts.test.permissions.{FOLDER}]\n{body}"
    )
    return ("--config", str(work / "dashgen.toml"), "--context", "test")


WANTED = 'view = ["role:Viewer", "team:support"]\nedit = ["team:sre"]\nadmin = ["serviceaccount:dashgen-ci"]\n'


def managed(grafana: GrafanaStandin) -> dict[str, str]:
    rows = grafana.folder_permissions(FOLDER)
    out = {}
    for r in rows:
        if r["isManaged"] and not r["isInherited"]:
            who = r.get("builtInRole") or r.get("team") or r.get("userLogin")
            out[str(who)] = r["permission"]
    return out


def lines(work: Path) -> list[dict]:
    return [r for r in ledger(work) if r.get("kind") == "folder-permissions"]


def test_permissions_are_planned_applied_read_back_and_recorded(work, grafana):
    context = configure(work, grafana, WANTED)
    dry = run(work, grafana, "--dry-run", "--format", "json", *context, profile=PROFILE, url=None)
    assert dry.exit_code == 0, dry.output
    (item,) = plan_json(dry)["folder_permissions"]
    assert item["action"] == "update" and len(item["changes"]) == 4 and managed(grafana) == {}
    assert not [r for r in grafana.writes() if "access-control" in r.path]

    published = run(work, grafana, *context, profile=PROFILE, url=None)
    assert published.exit_code == 0, published.output
    assert managed(grafana) == {"Viewer": "View", "support": "View", "sre": "Edit", "sa-1-dashgen-ci": "Admin"}
    (line,) = lines(work)
    assert line["outcome"] == "published" and line["stored_sha"] == line["build_sha"] and line["uid"] == UID
    assert dict(line["grants"])["team:sre"] == "Edit"

    grafana.clear_log()
    again = run(work, grafana, *context, profile=PROFILE, url=None)
    assert again.exit_code == 0 and lines(work)[-1]["outcome"] == "unchanged"
    assert not [r for r in grafana.writes() if "access-control" in r.path]


def test_access_dashgen_did_not_grant_is_removed_only_with_its_approval(work, grafana):
    context = configure(work, grafana, WANTED)
    assert run(work, grafana, *context, profile=PROFILE, url=None).exit_code == 0
    alice = grafana.directory().directory.users["alice"]
    grafana.simulate_permission_change(FOLDER, "users", str(alice), "Edit")  # a person grants alice
    sre = grafana.directory().directory.teams["sre"]
    grafana.simulate_permission_change(FOLDER, "teams", str(sre), "Admin")  # and raises sre

    refused = run(work, grafana, "--format", "json", *context, profile=PROFILE, url=None)
    assert refused.exit_code == 1, refused.output
    (item,) = plan_json(refused)["folder_permissions"]
    keys = sorted(r["approve_with"] for r in item["refusals"])
    assert keys == [f"remove-access:{FOLDER}/team:sre", f"remove-access:{FOLDER}/user:alice"]
    assert managed(grafana)["alice"] == "Edit"  # nothing was written

    approve = [a for k in keys for a in ("--approve", k)]
    approved = run(work, grafana, *approve, *context, profile=PROFILE, url=None)
    assert approved.exit_code == 0, approved.output
    assert "alice" not in managed(grafana) and managed(grafana)["sre"] == "Edit"


def test_removing_a_grant_dashgen_made_needs_no_approval(work, grafana):
    context = configure(work, grafana, WANTED)
    assert run(work, grafana, *context, profile=PROFILE, url=None).exit_code == 0
    configure(work, grafana, 'edit = ["team:sre"]\nadmin = ["serviceaccount:dashgen-ci"]\n')
    result = run(work, grafana, *context, profile=PROFILE, url=None)
    assert result.exit_code == 0, result.output
    assert set(managed(grafana)) == {"sre", "sa-1-dashgen-ci"}


def test_an_unknown_principal_is_refused_and_no_flag_approves_it(work, grafana):
    context = configure(work, grafana, 'edit = ["team:nobody"]\n')
    result = run(work, grafana, "--format", "json", "--approve", "*", *context, profile=PROFILE, url=None)
    assert result.exit_code == 1
    (item,) = plan_json(result)["folder_permissions"]
    assert [r["approve_with"] for r in item["refusals"]] == ["principal:team:nobody"]
    assert "no flag approves it" in item["refusals"][0]["flag"]


def test_a_bad_principal_in_dashgen_toml_is_an_input_error_naming_the_field(work, grafana):
    context = configure(work, grafana, 'edit = ["sre"]\n')
    result = run(work, grafana, "--dry-run", *context, profile=PROFILE, url=None)
    assert result.exit_code == 2 and f"contexts.test.permissions.{FOLDER}.edit" in result.output


def test_a_permission_error_is_reported_and_recorded_as_failed(work, grafana):
    context = configure(work, grafana, WANTED)
    grafana.permissions.discard("folders.permissions:write")
    result = run(work, grafana, *context, profile=PROFILE, url=None)
    assert result.exit_code == 1
    assert "403" in result.output and lines(work)[-1]["outcome"] == "failed"


def test_rollback_restores_the_recorded_permissions(work, grafana):
    context = configure(work, grafana, WANTED)
    assert run(work, grafana, *context, profile=PROFILE, url=None).exit_code == 0
    first = lines(work)[-1]
    configure(work, grafana, 'edit = ["team:sre"]\n')
    assert run(work, grafana, *context, profile=PROFILE, url=None).exit_code == 0
    assert set(managed(grafana)) == {"sre"}
    rolled = run(work, grafana, UID, "--to", first["stored_sha"][:12], *context, command="rollback", url=None)
    assert rolled.exit_code == 0, rolled.output
    assert managed(grafana) == {"Viewer": "View", "support": "View", "sre": "Edit", "sa-1-dashgen-ci": "Admin"}
