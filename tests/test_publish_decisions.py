"""Issue 16 point 4: one decision before any write. Export, build, diff, folder checks and query validation
all happen in planning; a release with any refusal pushes nothing (unless ``--partial``); a dry run prints the
same plan and writes nothing at all — no backup, no ledger line, no lock, no save."""

from __future__ import annotations

import pytest
from publishing import (
    MODES,
    UID,
    approve_all,
    change_gpu_label,
    files,
    ledger,
    plan_json,
    required_approvals,
    run,
    saves,
    standin_in_mode,
    work_folder,
)

import dashgen.publish.execute as execute_module

grafana = pytest.fixture(params=MODES)(standin_in_mode)
work = pytest.fixture(work_folder)
OTHER = "dg-pd-128-cluster"


def retitle(work, profile: str, title: str) -> None:
    path = work / "profiles" / f"{profile}.toml"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(f'title = "{title}"' if line.startswith("title = ") else line for line in lines) + "\n")


def test_dry_run_writes_no_file_and_sends_no_write(work, grafana):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    grafana.simulate_ui_save(UID, lambda d: d.update(description="a person's note"))
    keys = required_approvals(work, grafana)
    before, version = files(work), grafana.stored_version(UID)
    grafana.clear_log()
    result = run(work, grafana, "--dry-run", *approve_all(keys), "--format", "json")
    assert result.exit_code == 0, result.output
    plan = plan_json(result)
    assert plan["dry_run"] is True and plan["dashboards"][0]["action"] == "update"
    assert f"overwrite-live:{UID}" in plan["dashboards"][0]["approvals_used"]
    assert grafana.writes() == [] and saves(grafana) == [] and grafana.stored_version(UID) == version
    assert files(work) == before  # no backup of the live copy, no ledger line, no lock file, no temp file


@pytest.mark.parametrize("grafana", ["grafana12"], indirect=True)  # the plan is version-independent
def test_a_refusal_of_one_dashboard_pushes_no_other(work, grafana):
    assert run(work, grafana, profile=None).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    retitle(work, "pd-128", "PD pool, retitled")  # a change that needs no approval
    grafana.clear_log()
    refused = run(work, grafana, profile=None)
    assert refused.exit_code == 1
    assert "nothing will be written" in refused.output
    assert saves(grafana) == [] and grafana.stored(UID)["title"] == "Edited by a person"
    assert grafana.stored(OTHER)["title"] != "PD pool, retitled"
    outcomes = {r["uid"]: r["outcome"] for r in ledger(work)[-4:]}
    assert outcomes[UID] == "refused" and outcomes[OTHER] == "held"
    assert sorted(outcomes.values()).count("unchanged") == 2


@pytest.mark.parametrize("grafana", ["grafana13"], indirect=True)  # the plan is version-independent
def test_partial_publishes_what_is_not_refused(work, grafana):
    assert run(work, grafana, profile=None).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    retitle(work, "pd-128", "PD pool, retitled")
    result = run(work, grafana, "--partial", profile=None)
    assert result.exit_code == 1  # something was still refused
    assert grafana.stored(OTHER)["title"] == "PD pool, retitled"
    assert grafana.stored(UID)["title"] == "Edited by a person"
    outcomes = {r["uid"]: r["outcome"] for r in ledger(work)[-4:]}
    assert outcomes[UID] == "refused" and outcomes[OTHER] == "published"


def test_backups_are_written_after_planning_and_before_the_first_write(work, grafana, monkeypatch):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    seen: list[str] = []
    real_push = execute_module.push_one

    def push_checking_the_backup(item, context):
        backup = context.backups.get(item.target.uid)
        assert backup is not None and (work / "backups").exists()
        seen.append(backup)
        return real_push(item, context)

    monkeypatch.setattr(execute_module, "push_one", push_checking_the_backup)
    result = run(work, grafana, *approve_all(keys))
    assert result.exit_code == 0, result.output
    (backup,) = seen
    assert ledger(work)[-1]["backup_file"] == backup and backup.endswith("-v1.json")


@pytest.mark.parametrize("grafana", ["grafana12"], indirect=True)  # the plan is version-independent
def test_a_dry_run_of_a_refused_plan_says_so_and_exits_1(work, grafana):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    result = run(work, grafana, "--dry-run")
    assert result.exit_code == 1
    assert "REFUSED" in result.output and "--approve var:gpu" in result.output
    assert "dry run: nothing was written" in result.output
    assert len(ledger(work)) == 1
