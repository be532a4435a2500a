"""The release loop against the Grafana stand-in, one test per fault. In each: the backup is kept,
the ledger stays consistent, and nothing is overwritten that was not read first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from standin import GrafanaStandin, free_port

import dashgen.cli.publish as publish_command
from dashgen.cli.app import main
from dashgen.render.canonical import content_sha

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "glsa_test_Secret_Token_0123456789abcdef"
UID = "dg-h20-16-cluster"


@pytest.fixture(params=["grafana12", "grafana13"])
def grafana(request):
    standin = GrafanaStandin(mode=request.param, token=TOKEN)
    standin.start()
    yield standin
    standin.stop()


@pytest.fixture
def work(tmp_path):
    profiles = tmp_path / "profiles"
    shutil.copytree(ROOT / "profiles", profiles)
    return tmp_path


def run(work: Path, grafana: GrafanaStandin, *args: str, token: str = TOKEN, profile: str | None = "h20-16",
        url: str | None = None):
    argv = ["--profiles-dir", str(work / "profiles"), "publish", "--grafana-url", url or grafana.url,
            "--ledger", str(work / "ledger.jsonl"), "--backup-dir", str(work / "backups"), "--timeout", "2"]
    if profile:
        argv += ["--profile", profile]
    result = CliRunner().invoke(main, [*argv, *args], env={"GRAFANA_TOKEN": token})
    return result


def ledger(work: Path) -> list[dict]:
    path = work / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def posts(grafana: GrafanaStandin) -> int:
    return grafana.count("POST", "/api/dashboards/db")


def change_gpu_label(work: Path) -> None:
    """A profile change that alters the queries of existing panels and the $gpu variable's definition."""
    path = work / "profiles" / "h20-16.toml"
    path.write_text(path.read_text() + '\n[labels]\ngpu = "gpu_index"\n')


def required_approvals(work: Path, grafana: GrafanaStandin) -> list[str]:
    """The approval keys the plan asks for, read from a dry run's JSON."""
    result = run(work, grafana, "--dry-run", "--format", "json")
    plan = json.loads(result.output[: result.output.rindex("}") + 1])
    return [r["approve_with"] for d in plan["dashboards"] for r in d["refusals"]]


def approve_all(keys: list[str]) -> list[str]:
    return [arg for key in keys for arg in ("--approve", key)]


def test_first_publish_creates_and_verifies(work, grafana):
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    (record,) = ledger(work)
    assert record["outcome"] == "published" and record["uid"] == UID
    assert record["stored_sha"] == record["build_sha"] == content_sha(grafana.stored(UID))
    assert record["grafana_version"] == grafana.stored_version(UID) == 1
    assert record["backup_file"] is None  # nothing was live to back up
    assert Path(record["published_file"]).exists()
    message = grafana.requests_to("POST", "/api/dashboards/db")[0].json()
    assert message["overwrite"] is False and "folderUid" in message
    assert message["message"].startswith(f"dashgen {record['build_sha'][:12]} ")


def test_republish_unchanged_sends_no_write(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.clear_log()
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert grafana.writes() == []
    assert grafana.stored_version(UID) == 1
    assert [r["outcome"] for r in ledger(work)] == ["published", "unchanged"]
    assert len(list((work / "backups" / UID).glob("*-v1.json"))) == 1  # the export was still backed up


def test_changed_query_is_refused_without_approval_and_published_with_it(work, grafana):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    grafana.clear_log()
    refused = run(work, grafana)
    assert refused.exit_code == 1
    assert "--approve gpu_window_stats.mean" in refused.output and "--approve var:gpu" in refused.output
    assert posts(grafana) == 0 and grafana.stored_version(UID) == 1
    keys = required_approvals(work, grafana)
    assert {"gpu_window_stats.mean", "gpu_window_stats.peak", "var:gpu"} <= set(keys)
    partly = run(work, grafana, *approve_all([k for k in keys if k != "gpu_window_stats.peak"]))
    assert partly.exit_code == 1 and posts(grafana) == 0
    scoped = [f"{UID}/{k}" if k == "gpu_window_stats.peak" else k for k in keys]
    approved = run(work, grafana, *approve_all(scoped))
    assert approved.exit_code == 0, approved.output
    assert grafana.stored_version(UID) == 2
    last = ledger(work)[-1]
    assert last["outcome"] == "published"
    assert set(last["approvals_used"]) == set(keys)
    assert "gpu_index" in json.dumps(grafana.stored(UID))


def test_live_ui_edit_is_detected_and_refused_then_adopted(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    edited_version = grafana.stored_version(UID)
    grafana.clear_log()
    refused = run(work, grafana)
    assert refused.exit_code == 1
    assert "edited in Grafana since the last release" in refused.output
    assert f"--adopt-live {UID}" in refused.output
    assert posts(grafana) == 0 and grafana.stored(UID)["title"] == "Edited by a person"
    backup = json.loads(sorted((work / "backups" / UID).glob(f"*-v{edited_version}.json"))[-1].read_text())
    assert backup["dashboard"]["title"] == "Edited by a person"  # the person's work is kept
    adopted = run(work, grafana, "--adopt-live", UID)
    assert adopted.exit_code == 0, adopted.output
    assert grafana.stored(UID)["title"] != "Edited by a person"
    assert ledger(work)[-1]["approvals_used"] == [f"adopt-live:{UID}"]


def test_a_ui_save_without_edits_is_not_taken_for_a_person_s_edit(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID)  # opened and saved, nothing changed: only Grafana-side defaults added
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert "only by what a Grafana UI save adds" in result.output
    assert ledger(work)[-1]["outcome"] == "published" and ledger(work)[-1]["approvals_used"] == []


def test_a_save_between_export_and_push_is_a_conflict_and_overwrites_nothing(work, grafana, monkeypatch):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    original_build = publish_command.build_all

    def build_while_someone_saves(profiles):
        grafana.simulate_ui_save(UID, lambda d: d.update(title="Saved meanwhile"))
        return original_build(profiles)

    keys = required_approvals(work, grafana)
    monkeypatch.setattr(publish_command, "build_all", build_while_someone_saves)
    result = run(work, grafana, *approve_all(keys))
    assert result.exit_code == 1
    assert "conflict" in result.output and "nothing was overwritten" in result.output
    expected_status = 412 if grafana.mode == "grafana12" else 409
    assert [r.status for r in grafana.requests_to("POST", "/api/dashboards/db")][-1] == expected_status
    assert grafana.stored(UID)["title"] == "Saved meanwhile"
    assert ledger(work)[-1]["outcome"] == "conflict"


def test_readback_that_differs_fails_the_release(work, grafana, monkeypatch):
    original_build = publish_command.build_all

    def build_then_break_readback(profiles):
        built = original_build(profiles)
        altered = json.loads(json.dumps(built[0].document))
        altered.update(uid=UID, version=1, id=1, refresh="5m")
        grafana.inject("GET", f"/api/dashboards/uid/{UID}", 200,
                       {"dashboard": altered, "meta": {"version": 1, "folderUid": "", "slug": "x", "url": "/d/x"}})
        return built

    monkeypatch.setattr(publish_command, "build_all", build_then_break_readback)
    result = run(work, grafana)
    assert result.exit_code == 1
    assert "verify-failed" in result.output and "$.refresh: sent '1m' stored '5m'" in result.output
    assert ledger(work)[-1]["outcome"] == "verify-failed"


def test_401_is_one_clear_line_without_the_token(work, grafana):
    result = run(work, grafana, token="glsa_wrong_token_value_987654")
    assert result.exit_code != 0
    assert "401" in result.output and "glsa_wrong_token_value_987654" not in result.output
    assert grafana.writes() == [] and ledger(work) == []


def test_403_names_the_missing_permission(work, grafana):
    grafana.permissions.discard("dashboards:write")
    grafana.permissions.discard("dashboards:create")
    result = run(work, grafana)
    assert result.exit_code == 1
    assert "403" in result.output and "dashboards:create" in result.output
    assert ledger(work)[-1]["outcome"] == "failed"


def test_404_folder_is_reported_and_nothing_is_created(work, grafana):
    result = run(work, grafana, "--folder-uid", "no-such-folder")
    assert result.exit_code == 1
    assert "no-such-folder" in result.output
    assert grafana.stored(UID) is None and ledger(work)[-1]["outcome"] == "failed"


def test_500_then_success_on_get_is_retried(work, grafana):
    grafana.inject("GET", f"/api/dashboards/uid/{UID}", 500, times=1)
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert grafana.count("GET", f"/api/dashboards/uid/{UID}") >= 3  # failed export, retried export, read-back


def test_timeout_on_a_landed_post_is_resolved_by_reading_back(work, grafana):
    grafana.inject_delay(3.0, "POST", "/api/dashboards/db", after_handling=True)
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert posts(grafana) == 1  # never re-sent
    assert ledger(work)[-1]["outcome"] == "published"


def test_connection_refused_is_reported(work, grafana):
    result = run(work, grafana, url=f"http://127.0.0.1:{free_port()}")
    assert result.exit_code != 0
    assert "127.0.0.1" in result.output and ledger(work) == []


def test_truncated_json_body_of_a_save_is_resolved_by_reading_back(work, grafana):
    grafana.inject_truncated_body("POST", "/api/dashboards/db")
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert posts(grafana) == 1 and ledger(work)[-1]["outcome"] == "published"


def test_one_of_several_dashboards_failing_mid_release(work, grafana):
    grafana.inject("POST", "/api/dashboards/db", 500, times=1)
    result = run(work, grafana, profile=None)
    assert result.exit_code == 1
    outcomes = [r["outcome"] for r in ledger(work)]
    assert len(outcomes) == 4 and outcomes.count("failed") == 1 and outcomes.count("published") == 3
    failed = next(r for r in ledger(work) if r["outcome"] == "failed")
    assert grafana.stored(failed["uid"]) is None
    assert posts(grafana) == 4  # the failed POST was not retried


def test_dry_run_sends_no_write(work, grafana):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    grafana.clear_log()
    result = run(work, grafana, "--dry-run", *approve_all(keys), "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["dry_run"] is True and plan["dashboards"][0]["action"] == "update"
    assert grafana.writes() == [] and len(ledger(work)) == 1


def test_the_token_appears_in_no_output(work, grafana):
    outputs = [run(work, grafana).output]
    grafana.simulate_ui_save(UID, lambda d: d.update(title="x"))
    outputs.append(run(work, grafana).output)
    outputs.append(run(work, grafana, url=f"http://127.0.0.1:{free_port()}").output)
    written = [p.read_text() for p in work.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")]
    assert all(TOKEN not in text for text in outputs + written)


def test_rollback_republishes_a_recorded_release_through_the_guards(work, grafana):
    assert run(work, grafana).exit_code == 0
    first = ledger(work)[-1]
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    assert run(work, grafana, *approve_all(keys)).exit_code == 0
    base = ["--ledger", str(work / "ledger.jsonl"), "--backup-dir", str(work / "backups")]
    runner = CliRunner()
    refused = runner.invoke(main, ["rollback", UID, "--to", str(first["grafana_version"]), "--grafana-url",
                                   grafana.url, *base], env={"GRAFANA_TOKEN": TOKEN})
    assert refused.exit_code == 1 and "--approve" in refused.output
    done = runner.invoke(main, ["rollback", UID, "--to", first["build_sha"][:12], "--grafana-url", grafana.url,
                                *approve_all(keys), *base], env={"GRAFANA_TOKEN": TOKEN})
    assert done.exit_code == 0, done.output
    assert content_sha(grafana.stored(UID)) == first["build_sha"]
    history = runner.invoke(main, ["history", UID, "--grafana-url", grafana.url, "--format", "json", *base[:2]],
                            env={"GRAFANA_TOKEN": TOKEN})
    rows = json.loads(history.output)["versions"]
    assert [row["version"] for row in rows] == [1, 2, 3]
    assert all(row["in_grafana"] and row["build_sha"] for row in rows)


def test_new_queries_are_validated_against_the_data_source(work, grafana, victoriametrics, monkeypatch):
    """A query the data source rejects refuses its dashboard before any write; valid ones publish."""
    url = victoriametrics.url
    ok = run(work, grafana, "--datasource-url", url)
    assert ok.exit_code == 0, ok.output
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    original_build = publish_command.build_all

    def build_with_a_broken_query(profiles):
        built = original_build(profiles)
        panel = next(p for p in built[0].document["panels"] if p["title"].startswith("Window mean per GPU"))
        panel["targets"][0]["expr"] = "sum(rate(up[5m]) by"  # approved as a change, rejected by the data source
        return built

    monkeypatch.setattr(publish_command, "build_all", build_with_a_broken_query)
    grafana.clear_log()
    refused = run(work, grafana, "--datasource-url", url, *approve_all(keys))
    assert refused.exit_code == 1
    assert "invalid-queries" in refused.output and "the data source answered 422" in refused.output
    assert posts(grafana) == 0 and ledger(work)[-1]["outcome"] == "invalid-queries"


def test_backups_and_the_ledger_are_fsynced_and_a_backup_is_never_overwritten(tmp_path, monkeypatch):
    """The release record survives a crash: backups are replaced atomically and fsynced (file and folder),
    ledger lines are appended and fsynced, and a second backup of one version gets a new name."""
    import dashgen.files
    from dashgen.publish.backups import load_backup, save_backup
    from dashgen.publish.ledger import LedgerRecord, append, read

    synced: list[int] = []
    real_fsync = dashgen.files.os.fsync
    monkeypatch.setattr(dashgen.files.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    export = {"dashboard": {"uid": "u", "title": "T"}, "meta": {"version": 3}}
    first = save_backup(tmp_path, "u", 3, "2025-01-01T00:00:00Z", export)
    second = save_backup(tmp_path, "u", 3, "2025-01-01T00:00:00Z", {**export, "meta": {"version": 4}})
    assert (first.name, second.name) == ("20250101T000000Z-v3.json", "20250101T000000Z-v3-1.json")
    assert load_backup(first) == export and load_backup(second)["meta"] == {"version": 4}
    assert len(synced) == 4  # each backup: the file before the rename, the folder after it
    assert not list(tmp_path.rglob("*.tmp"))
    append(tmp_path / "ledger.jsonl", [LedgerRecord("t", "c", "p", "u", "published", 3, "b", "s")])
    assert len(synced) == 5 and read(tmp_path / "ledger.jsonl")[0]["uid"] == "u"
