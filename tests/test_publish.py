"""The release loop against the Grafana stand-in (Grafana 12: legacy writes; 13: ``/apis`` writes), one test
per fault. In each: the backup is kept, the ledger stays consistent, and nothing is overwritten that was not
read first."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from gitrepo import commit_all, git
from publishing import (
    MODES,
    TOKEN,
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
from standin import GrafanaStandin, free_port

import dashgen.cli.publish as publish_command
from dashgen.cli.app import main
from dashgen.publish.backups import load_backup
from dashgen.render.canonical import content_sha

grafana = pytest.fixture(params=MODES)(standin_in_mode)
work = pytest.fixture(work_folder)
APIS = r"/apis/dashboard\.grafana\.app/v0alpha1/namespaces/default/dashboards"


def save_path(grafana: GrafanaStandin, existing: bool) -> tuple[str, str]:
    """The request that saves a dashboard: legacy POST on 12, ``/apis`` POST (new) or PUT (update) on 13."""
    if grafana.mode == "grafana12":
        return "POST", "/api/dashboards/db"
    return ("PUT", f"{APIS}/{UID}") if existing else ("POST", APIS)


def resource(document: dict, version: int = 1) -> dict:
    """A ``/apis`` object holding ``document`` (for injected read-backs)."""
    return {
        "apiVersion": "dashboard.grafana.app/v0alpha1",
        "kind": "Dashboard",
        "metadata": {
            "name": UID,
            "namespace": "default",
            "resourceVersion": "7",
            "generation": version,
            "annotations": {},
            "labels": {"grafana.app/deprecatedInternalID": "1"},
        },
        "spec": {k: v for k, v in document.items() if k not in ("id", "uid", "version")},
        "status": {},
    }


def test_first_publish_creates_and_verifies(work, grafana):
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    (record,) = ledger(work)
    assert record["outcome"] == "published" and record["uid"] == UID
    assert record["stored_sha"] == record["build_sha"] == content_sha(grafana.stored(UID))
    assert record["grafana_version"] == grafana.stored_version(UID) == 1
    assert record["backup_file"] is None  # nothing was live to back up
    assert Path(record["published_file"]).exists()
    assert record["grafana_url"] == grafana.url and record["org_id"] == 1
    (save,) = saves(grafana)
    method, path = save_path(grafana, existing=False)
    assert save.method == method and re.fullmatch(path, save.path)
    body = save.json()
    if grafana.mode == "grafana12":
        assert body["overwrite"] is False and "folderUid" in body
        assert body["message"].startswith(f"dashgen {record['build_sha'][:12]} ")
    else:
        assert body["metadata"]["name"] == UID and "resourceVersion" not in body["metadata"]
        assert body["metadata"]["annotations"]["grafana.app/message"].startswith(f"dashgen {record['build_sha'][:12]}")
        assert grafana.requests_to("POST", "/api/dashboards/db") == []  # Grafana 13 is written through /apis


def test_republish_unchanged_sends_no_write_and_writes_no_backup(work, grafana):
    assert run(work, grafana).exit_code == 0
    before = files(work / "backups")
    grafana.clear_log()
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert grafana.writes() == []
    assert grafana.stored_version(UID) == 1
    assert [r["outcome"] for r in ledger(work)] == ["published", "unchanged"]
    assert files(work / "backups") == before  # nothing is replaced, so nothing needs a backup


def test_changed_query_is_refused_without_approval_and_published_with_it(work, grafana):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    grafana.clear_log()
    refused = run(work, grafana)
    assert refused.exit_code == 1
    keys = required_approvals(work, grafana)
    panels = [k for k in keys if "." in k]  # stable panel keys, e.g. gpu_timelines.memory_used
    assert "var:gpu" in keys and len(panels) >= 2
    assert f"--approve {panels[0]}" in refused.output and "--approve var:gpu" in refused.output
    assert saves(grafana) == [] and grafana.stored_version(UID) == 1
    last = panels[-1]
    partly = run(work, grafana, *approve_all([k for k in keys if k != last]))
    assert partly.exit_code == 1 and saves(grafana) == []
    scoped = [f"{UID}/{k}" if k == last else k for k in keys]
    approved = run(work, grafana, *approve_all(scoped))
    assert approved.exit_code == 0, approved.output
    assert grafana.stored_version(UID) == 2
    last = ledger(work)[-1]
    assert last["outcome"] == "published"
    assert set(last["approvals_used"]) == set(keys)
    assert "gpu_index" in json.dumps(grafana.stored(UID))


def test_live_ui_edit_is_refused_untouched_then_overwritten_with_its_backup_kept(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    edited_version = grafana.stored_version(UID)
    grafana.clear_log()
    refused = run(work, grafana)
    assert refused.exit_code == 1
    assert "edited in Grafana since the last release" in refused.output
    assert f"--overwrite-live {UID}" in refused.output
    assert saves(grafana) == [] and grafana.stored(UID)["title"] == "Edited by a person"
    assert not list((work / "backups" / UID).glob(f"*-v{edited_version}.json"))  # a refused release writes none
    overwritten = run(work, grafana, "--overwrite-live", UID)
    assert overwritten.exit_code == 0, overwritten.output
    assert grafana.stored(UID)["title"] != "Edited by a person"
    backup = load_backup(sorted((work / "backups" / UID).glob(f"*-v{edited_version}.json"))[-1])
    assert backup["dashboard"]["title"] == "Edited by a person"  # the person's work is kept, as Grafana sent it
    assert ledger(work)[-1]["approvals_used"] == [f"overwrite-live:{UID}"]
    assert ledger(work)[-1]["backup_file"].endswith(f"-v{edited_version}.json")


def test_a_ui_save_without_edits_is_not_taken_for_a_person_s_edit(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID)  # opened and saved, nothing changed: only Grafana-side defaults added
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert "only by what a Grafana UI save adds" in result.output
    assert ledger(work)[-1]["outcome"] == "published" and ledger(work)[-1]["approvals_used"] == []


def test_a_provisioned_dashboard_is_refused_before_any_write_and_no_flag_approves_it(work, grafana):
    """Grafana answers 400 to every API save of a dashboard provisioned without UI updates: the export reads the
    provisioning (legacy meta or ``/apis`` manager annotations), the plan refuses it naming what to do instead,
    and neither ``--approve '*'`` nor the overwrite flags send a save."""
    assert run(work, grafana).exit_code == 0
    grafana.provision(UID)
    change_gpu_label(work)
    grafana.clear_log()
    result = run(work, grafana, "--approve", "*", "--overwrite-live", "*", "--format", "json")
    assert result.exit_code == 1, result.output
    (item,) = plan_json(result)["dashboards"]
    assert item["action"] == "refused" and item["refusals"][0]["approve_with"] == f"provisioned:{UID}"
    assert "no flag approves it" in item["refusals"][0]["flag"]
    assert saves(grafana) == [] and grafana.stored_version(UID) == 1
    assert ledger(work)[-1]["outcome"] == "refused" and ledger(work)[-1]["refusals"][0] == f"provisioned:{UID}"


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
    assert [r.status for r in saves(grafana)][-1] == expected_status
    assert grafana.stored(UID)["title"] == "Saved meanwhile"
    assert ledger(work)[-1]["outcome"] == "conflict"


def test_readback_that_differs_fails_the_release(work, grafana, monkeypatch):
    original_build = publish_command.build_all

    def build_then_break_readback(profiles):
        built = original_build(profiles)
        altered = json.loads(json.dumps(built[0].document))
        altered.update(uid=UID, version=1, id=1, refresh="5m")
        grafana.inject("GET", f"{APIS}/{UID}", 200, resource(altered))
        return built

    monkeypatch.setattr(publish_command, "build_all", build_then_break_readback)
    result = run(work, grafana)
    assert result.exit_code == 1
    assert "verify-failed" in result.output and '$.refresh: sent "1m" stored "5m"' in result.output
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


def test_500_then_success_on_get_is_retried(work, grafana):
    grafana.inject("GET", rf"/apis/dashboard\.grafana\.app/v1(beta1)?/namespaces/default/dashboards/{UID}", 500)
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert grafana.count("GET", rf"/apis/.*/dashboards/{UID}") >= 3  # failed export, retried export, read-back


def test_timeout_on_a_landed_save_is_resolved_by_reading_back(work, grafana):
    grafana.inject_delay(3.0, *save_path(grafana, existing=False), after_handling=True)
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert len(saves(grafana)) == 1  # never re-sent
    assert ledger(work)[-1]["outcome"] == "published"


@pytest.mark.parametrize("grafana", ["grafana12"], indirect=True)  # no Grafana answers: no version to vary
def test_connection_refused_is_reported(work, grafana):
    # each read still retried three times, with short waits: what is reported does not depend on them
    # (tests/test_retry_options.py holds the default's)
    result = run(work, grafana, "--retry-backoff", "0.01", url=f"http://127.0.0.1:{free_port()}")
    assert result.exit_code != 0
    assert "127.0.0.1" in result.output and ledger(work) == []
    written = [p.read_text() for p in work.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".lock")]
    assert TOKEN not in result.output and all(TOKEN not in text for text in written)  # the token stays unsaid


def test_truncated_json_body_of_a_save_is_resolved_by_reading_back(work, grafana):
    grafana.inject_truncated_body(*save_path(grafana, existing=False))
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert len(saves(grafana)) == 1 and ledger(work)[-1]["outcome"] == "published"


def test_one_of_several_dashboards_failing_mid_release(work, grafana):
    grafana.inject(*save_path(grafana, existing=False), 500, times=1)
    result = run(work, grafana, profile=None)
    assert result.exit_code == 1
    outcomes = [r["outcome"] for r in ledger(work)]
    assert len(outcomes) == 4 and outcomes.count("failed") == 1 and outcomes.count("published") == 3
    failed = next(r for r in ledger(work) if r["outcome"] == "failed")
    assert grafana.stored(failed["uid"]) is None
    assert len(saves(grafana)) == 4  # the failed save was not retried


def test_the_token_appears_in_no_output(work, grafana):
    outputs = [run(work, grafana).output]
    grafana.simulate_ui_save(UID, lambda d: d.update(title="x"))
    outputs.append(run(work, grafana).output)
    outputs.append(run(work, grafana, "--overwrite-live", UID).output)  # a refused dead port: test_connection_refused
    written = [p.read_text() for p in work.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".lock")]
    assert all(TOKEN not in text for text in outputs + written)


def test_rollback_republishes_a_recorded_release_through_the_guards(work, grafana):
    assert run(work, grafana).exit_code == 0
    first = ledger(work)[-1]
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    assert run(work, grafana, *approve_all(keys)).exit_code == 0
    base = ["--ledger", str(work / "ledger.jsonl"), "--backup-dir", str(work / "backups")]
    runner = CliRunner()
    env = {"GRAFANA_TOKEN": TOKEN}
    refused = runner.invoke(
        main, ["rollback", UID, "--to", str(first["grafana_version"]), "--grafana-url", grafana.url, *base], env=env
    )
    assert refused.exit_code == 1 and "--approve" in refused.output
    done = runner.invoke(
        main,
        ["rollback", UID, "--to", first["build_sha"][:12], "--grafana-url", grafana.url, *approve_all(keys), *base],
        env=env,
    )
    assert done.exit_code == 0, done.output
    assert content_sha(grafana.stored(UID)) == first["build_sha"]
    history = runner.invoke(
        main, ["history", UID, "--grafana-url", grafana.url, "--format", "json", *base[:2]], env=env
    )
    rows = json.loads(history.stdout)["results"]["versions"]
    assert [row["version"] for row in rows] == [1, 2, 3]
    assert all(row["in_grafana"] and row["build_sha"] for row in rows)


def test_new_queries_are_validated_against_the_data_source(work, grafana, victoriametrics, monkeypatch):
    """A query the data source rejects refuses its dashboard in planning, before any write; valid ones publish."""
    url = victoriametrics.url
    ok = run(work, grafana, "--datasource-url", url)
    assert ok.exit_code == 0, ok.output
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    original_build = publish_command.build_all

    def build_with_a_broken_query(profiles):
        built = original_build(profiles)
        panels = [c for p in built[0].document["panels"] for c in (p, *(p.get("panels") or []))]
        panel = next(p for p in panels if "gpu_index" in str(p.get("targets")))  # a change the approvals cover
        panel["targets"][0]["expr"] = "sum(rate(up[5m]) by"  # approved as a change, rejected by the data source
        return built

    monkeypatch.setattr(publish_command, "build_all", build_with_a_broken_query)
    grafana.clear_log()
    dry = run(work, grafana, "--dry-run", "--format", "json", "--datasource-url", url, *approve_all(keys))
    assert dry.exit_code == 1 and plan_json(dry)["dashboards"][0]["action"] == "invalid"  # the dry run says it too
    refused = run(work, grafana, "--datasource-url", url, *approve_all(keys))
    assert refused.exit_code == 1
    assert "invalid-queries" in refused.output and "the data source answered 422" in refused.output
    assert saves(grafana) == [] and ledger(work)[-1]["outcome"] == "invalid-queries"


def test_backups_and_the_ledger_are_fsynced_and_a_backup_is_never_overwritten(tmp_path, monkeypatch):
    """The release record survives a crash: backups are created atomically and fsynced (file and folder),
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
    assert len(synced) == 4  # each backup: the file before it is linked into place, the folder after it
    assert not list(tmp_path.rglob("*.tmp"))
    append(tmp_path / "ledger.jsonl", [LedgerRecord("t", "c", "p", "u", "published", 3, "b", "s")])
    assert len(synced) == 5 and read(tmp_path / "ledger.jsonl")[0].uid == "u"


@pytest.mark.parametrize("mode", ["grafana12", "grafana13"])
def test_an_identical_backup_is_not_written_twice(tmp_path, mode):
    from dashgen.publish.backups import save_backup

    export = {"dashboard": {"uid": "u", "title": "T"}, "meta": {"version": 3, "mode": mode}}
    first = save_backup(tmp_path, "u", 3, "2025-01-01T00:00:00Z", export, reuse_identical=True)
    again = save_backup(tmp_path, "u", 3, "2025-01-02T00:00:00Z", export, reuse_identical=True)
    other = save_backup(tmp_path, "u", 3, "2025-01-02T00:00:00Z", {**export, "meta": {}}, reuse_identical=True)
    assert again == first and other != first and len(files(tmp_path)) == 2


def test_a_target_sends_the_very_bytes_its_sha_is_taken_of():
    from dashgen.cli.publish import target_of
    from dashgen.net.http import json_object

    document = {"uid": "u", "title": "T", "panels": [{"id": 1, "targets": [{"expr": "up > 0.5"}]}], "version": 3}
    target = target_of("p", "u", document, {})
    assert target.build_sha == target.expected_sha == content_sha(document)
    assert json.loads(target.encoded) == {k: v for k, v in document.items() if k != "version"}
    assert json.loads(json_object({"id": 9, "version": 3}, target.encoded, {"x": 1})) == {**document, "id": 9, "x": 1}
    assert json_object({"a": 1}, b"{}") == b'{"a":1}'


@pytest.mark.parametrize("grafana", ["grafana13"], indirect=True)  # refused before any request
def test_a_dirty_profiles_repository_is_refused_unless_allowed(work, grafana):
    """The ledger names the commit a release was built from: with uncommitted changes to tracked files no
    commit holds it, so publish refuses (exit 1, nothing sent) unless --allow-dirty; a dry run only plans."""
    git(work, "init", "-q")
    commit_all(work, "profiles")
    profile = work / "profiles" / "h20-16.toml"
    profile.write_text(profile.read_text(encoding="utf-8") + "\n# an uncommitted edit\n", encoding="utf-8")
    refused = run(work, grafana)
    assert refused.exit_code == 1 and "publish refused" in refused.output and "--allow-dirty" in refused.output
    assert not saves(grafana) and not ledger(work)
    assert run(work, grafana, "--dry-run").exit_code == 0
    allowed = run(work, grafana, "--allow-dirty")
    assert allowed.exit_code == 0, allowed.output
    (record,) = ledger(work)
    assert record["outcome"] == "published" and record["git_commit"].endswith("-dirty")


@pytest.mark.parametrize("grafana", ["grafana12"], indirect=True)
def test_the_ledger_publish_appended_to_does_not_make_the_next_publish_dirty(work, grafana):
    """A team that publishes by hand commits the ledger; the next publish appends to it, and the one after is
    not refused for that uncommitted record (it is no part of what a release builds)."""
    git(work, "init", "-q")
    commit_all(work, "profiles")
    assert run(work, grafana).exit_code == 0
    commit_all(work, "the ledger")
    assert run(work, grafana).exit_code == 0  # unchanged: one more ledger line, not committed
    again = run(work, grafana)
    assert again.exit_code == 0, again.output
    assert not ledger(work)[-1]["git_commit"].endswith("-dirty")


def test_rollback_to_a_version_matches_it_whole_and_refuses_an_empty_target(tmp_path):
    """``--to 1`` is version 1, never the backup of v11 (whose name also holds "-v1"); ``--to ""`` is refused."""
    from dashgen.cli.history import find_backup
    from dashgen.errors import InputError
    from dashgen.publish.backups import save_backup
    from dashgen.publish.ledger import LedgerRecord

    eleven = save_backup(tmp_path, UID, 11, "20261206T010000Z", {"dashboard": {"title": "v11"}, "meta": {}})

    def record(backup: Path, version: int) -> LedgerRecord:
        line = {"uid": UID, "outcome": "published", "backup_file": str(backup), "grafana_version": version}
        read = LedgerRecord.from_json(line)
        assert read is not None
        return read

    records = [record(eleven, 12)]

    class History:
        def get_version(self, uid, version):
            return type("Kept", (), {"data": {"title": f"Grafana's v{version}"}})()

    document, source = find_backup(UID, "1", records, tmp_path, History())
    assert document == {"title": "Grafana's v1"} and source == "Grafana version 1"
    one = save_backup(tmp_path, UID, 1, "20261206T000000Z", {"dashboard": {"title": "v1"}, "meta": {}})
    records.append(record(one, 2))
    assert find_backup(UID, "1", records, tmp_path, History())[0] == {"title": "v1"}
    assert find_backup(UID, "11", records, tmp_path, History())[0] == {"title": "v11"}
    with pytest.raises(InputError, match="not an empty value"):
        find_backup(UID, " ", records, tmp_path, History())


def test_a_full_disk_after_the_save_still_records_the_release_and_reports_it(work, grafana, monkeypatch):
    """Issue 32: the save landed in Grafana, then writing its read-back copy failed (ENOSPC). The ledger line and
    the report are still written and the run exits 1, naming what was lost; nothing is reported as not saved."""
    import errno

    import dashgen.publish.execute as execute

    real = execute.save_backup

    def full_disk(directory, uid, version, stamp, export, kind="", **kwargs):
        if kind == "published":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(directory, uid, version, stamp, export, kind, **kwargs)

    monkeypatch.setattr(execute, "save_backup", full_disk)
    result = run(work, grafana)
    assert result.exit_code == 1, result.output
    assert "read-back copy could not be written (No space left on device)" in result.output
    (record,) = ledger(work)
    assert record["outcome"] == "published" and record["stored_sha"] and not record["published_file"]
    assert grafana.stored_version(UID) == record["grafana_version"]


def test_a_lock_that_cannot_be_removed_never_hides_the_release_s_outcome(work, grafana, monkeypatch):
    import dashgen.publish.lock as lock

    def read_only(path):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(lock, "read_holder", read_only)
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert "could not be removed (Read-only file system)" in result.output and ledger(work)[0]["outcome"] == "published"


@pytest.mark.parametrize("grafana", ["grafana13"], indirect=True)  # execute's signal handling, not the API
@pytest.mark.parametrize(("signum", "code"), [(2, 130), (15, 143)])
def test_a_signal_after_a_save_still_records_it_and_holds_the_rest(work, grafana, monkeypatch, signum, code):
    """Issue 32: Ctrl-C (or SIGTERM, a cancelled CI job) right after a save dropped that save's ledger line. Now no
    new save starts, the one sent is recorded, the rest are recorded as held, and the run exits 130 / 143."""

    import dashgen.publish.execute as execute

    real, sent = execute.push_one, []

    def push_then_signal(item, context):
        result = real(item, context)
        sent.append(item.target.uid)
        if len(sent) == 1:
            os.kill(os.getpid(), signum)
        return result

    monkeypatch.setattr(execute, "push_one", push_then_signal)
    result = run(work, grafana, "--jobs", "1", profile=None)
    assert result.exit_code == code, result.output
    assert "release interrupted" in result.output
    records = ledger(work)
    assert [r["outcome"] for r in records][:1] == ["published"] and records[0]["uid"] == sent[0]
    assert len(sent) == 1 and {r["outcome"] for r in records[1:]} == {"held"} and len(records) == 4
    assert not list((work / "releases" / "locks").glob("*.lock")) if (work / "releases" / "locks").exists() else True


@pytest.mark.parametrize("grafana", ["grafana13"], indirect=True)  # execute's clock, not the API
def test_past_the_deadline_no_new_save_starts_and_every_outcome_is_recorded(work, grafana, monkeypatch):
    """Issue 32: publish has an overall --deadline. The first save, sent before it, finishes and is recorded; the
    dashboards not yet sent are recorded as held; exit 1."""
    import time as clock
    import types

    import dashgen.publish.execute as execute

    real, late = execute.push_one, [0.0]
    # The release's own clock (execute's ``time``): what it reads of the deadline. It runs on with the real one and
    # jumps past the deadline when the first save is done, as if that save had taken ten seconds: the deadline
    # stays far enough off for the export on a loaded machine (no race with it), without sleeping through it.
    release_clock = types.SimpleNamespace(monotonic=lambda: clock.monotonic() + late[0], sleep=clock.sleep)

    def slow_push(item, context):
        result = real(item, context)
        late[0] = max(late[0], context.deadline - clock.monotonic() + 0.1)  # a save that took it past its deadline
        return result

    monkeypatch.setattr(execute, "push_one", slow_push)
    monkeypatch.setattr(execute, "time", release_clock)
    result = run(work, grafana, "--jobs", "1", "--deadline", "10", profile=None)
    assert result.exit_code == 1, result.output
    outcomes = [r["outcome"] for r in ledger(work)]
    assert outcomes[0] == "published" and set(outcomes[1:]) == {"held"} and len(outcomes) == 4, outcomes
    assert "--deadline passed" in result.output


def test_another_writer_between_the_save_and_the_end_is_a_mixed_release(work, grafana, monkeypatch):
    """Issue 32: two checkouts with their own ledgers (so their own locks) released at once and Grafana ended with
    builds X, Y, X, X, unreported. The end check re-reads every dashboard the release saved: one changed since it was
    verified fails the release (exit 1) naming it; its ledger line stays (the save happened)."""
    import dashgen.publish.execute as execute

    real = execute.push_one

    def push_then_another_writer(item, context):
        result = real(item, context)
        if item.target.uid == UID:
            grafana.simulate_ui_save(UID, lambda dashboard: dashboard.update(title="written by the other checkout"))
        return result

    monkeypatch.setattr(execute, "push_one", push_then_another_writer)
    result = run(work, grafana, profile=None)
    assert result.exit_code == 1, result.output
    assert "mixed release" in result.output and UID in result.output and "overwritten" in result.output
    assert {r["uid"]: r["outcome"] for r in ledger(work)}[UID] == "published"


def _requests_per_dashboard(log: list, uids: list[str]) -> dict[str, list[str]]:
    """``method path-kind`` of each request of ``log`` that names one of ``uids`` (the legacy save names it in its
    body), by uid."""
    found: dict[str, list[str]] = {uid: [] for uid in uids}
    for entry in log:
        path = entry.path.split("?")[0]
        named = [
            uid for uid in uids if path.endswith(f"/{uid}") or (entry.method != "GET" and uid.encode() in entry.body)
        ]
        for uid in named:
            version = path.split("/")[3] if path.startswith("/apis/") else "legacy"
            found[uid].append(f"{entry.method} {version}")
    return found


def test_requests_per_changed_dashboard_are_counted(work, grafana):
    """Issue 42: what a release of a changed dashboard asks of Grafana, request by request; one more is a
    regression (the bench's changed phase counts them at 50 dashboards). Each is needed: the export reads the live
    copy before anything is written (twice: Grafana first answers through the version it detects, whose trailing
    status names the version the dashboard is stored in, read once more through it, as a conversion may lose what
    is stored); the save is
    conditional on the exported version, so nothing a person saved after the export is overwritten; the read-back
    verifies what Grafana stored; the end check re-reads it once every save is done, so another writer in between
    is reported as a mixed release (issue 32), never as published."""
    assert run(work, grafana, profile=None).exit_code == 0
    uids = sorted({r["uid"] for r in ledger(work)})
    for path in (work / "profiles").glob("*.toml"):
        path.write_text(re.sub(r'^title = "(.*)"$', r'title = "\1 (retitled)"', path.read_text(), count=1, flags=re.M))
    seen = len(grafana.request_log)
    result = run(work, grafana, profile=None)
    assert result.exit_code == 0, result.output
    assert [r["outcome"] for r in ledger(work)][len(uids) :] == ["published"] * len(uids)
    if grafana.mode == "grafana12":  # the legacy save: Grafana 12 writes v1 JSON through /api/dashboards/db
        expected = ["GET v1beta1", "GET v0alpha1", "POST legacy", "GET v0alpha1", "GET v0alpha1"]
    else:
        expected = ["GET v1", "GET v0alpha1", "PUT v0alpha1", "GET v0alpha1", "GET v0alpha1"]
    per_dashboard = _requests_per_dashboard(grafana.request_log[seen:], uids)
    assert per_dashboard == {uid: expected for uid in uids}
