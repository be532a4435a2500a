"""Issue 16 point 3: the target folder of every dashboard is part of the plan (new, move, unchanged); a missing
folder is created only with approval, otherwise the release is refused before any write; a move is shown and
approved like a content change. Every folder decision is a row of ``test_plan_release.py``; here the folder is
looked up, created and written through each Grafana version's API."""

from __future__ import annotations

import pytest
from publishing import MODES, UID, ledger, plan_json, run, saves, standin_in_mode, work_folder

grafana = pytest.fixture(params=MODES)(standin_in_mode)
work = pytest.fixture(work_folder)


def folder_of(grafana, uid: str = UID) -> str:
    return grafana.org().dashboards[uid].folder_uid


def test_a_missing_folder_is_created_only_with_approval(work, grafana):
    dry = run(work, grafana, "--folder-uid", "llm", "--approve", "create-folder:llm", "--dry-run", "--format", "json")
    assert dry.exit_code == 0, dry.output
    assert plan_json(dry)["folders"] == [{"uid": "llm", "action": "create", "title": "llm"}]
    assert grafana.org().folders == {}  # the dry run created nothing
    result = run(
        work, grafana, "--folder-uid", "llm", "--folder-title", "LLM clusters", "--approve", "create-folder:llm"
    )
    assert result.exit_code == 0, result.output
    assert grafana.org().folders["llm"].title == "LLM clusters" and folder_of(grafana) == "llm"
    record = ledger(work)[-1]
    assert record["folder_uid"] == "llm" and "create-folder:llm" in record["approvals_used"]


def test_a_move_is_shown_and_refused_like_a_content_change_then_approved(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.add_folder("llm", "LLM clusters")
    grafana.clear_log()
    refused = run(work, grafana, "--folder-uid", "llm", "--format", "json")
    assert refused.exit_code == 1
    (item,) = plan_json(refused)["dashboards"]
    assert item["folder"] == {"from": None, "to": "llm", "action": "move"}
    assert [r["approve_with"] for r in item["refusals"]] == ["move:llm"]
    assert saves(grafana) == [] and folder_of(grafana) == ""
    moved = run(work, grafana, "--folder-uid", "llm", "--approve", f"{UID}/move:llm")
    assert moved.exit_code == 0, moved.output
    assert "MOVE" in moved.output and "move from folder (root) to 'llm'" in moved.output
    assert folder_of(grafana) == "llm" and ledger(work)[-1]["outcome"] == "published"
    assert run(work, grafana, "--folder-uid", "llm").exit_code == 0  # now it is where it belongs: unchanged
    assert ledger(work)[-1]["outcome"] == "unchanged"


def test_moving_to_the_root_is_a_move_too(work, grafana):
    grafana.add_folder("team", "Team")
    assert run(work, grafana, "--folder-uid", "team", "--approve", "create-folder:team").exit_code == 0
    refused = run(work, grafana, "--folder-uid", "")
    assert refused.exit_code == 1 and "--approve move:root" in refused.output and folder_of(grafana) == "team"
    assert run(work, grafana, "--folder-uid", "", "--approve", "move:root").exit_code == 0
    assert folder_of(grafana) == ""
