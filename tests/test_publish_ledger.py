"""Issue 16 point 6: a ledger that survives faults. Preflight before any write; appends that are cut back when
they fail; a torn last line quarantined with a clear message; and a save the ledger could not record is still
reported (with its line, for a hand append) and fails the release."""

from __future__ import annotations

import errno
import json
from dataclasses import replace

import pytest
from click.testing import CliRunner
from publishing import MODES, TOKEN, UID, files, run, saves, standin_in_mode, work_folder

import dashgen.files
import dashgen.publish.execute as execute_module
import dashgen.publish.preflight as preflight_module
from dashgen.cli.app import main
from dashgen.publish.ledger import LedgerRecord, append, load, read

grafana = pytest.fixture(params=MODES)(standin_in_mode)
work = pytest.fixture(work_folder)
TORN = b'{"build_sha": "abc", "git_commit": "c", "outcome": "publ'


def test_a_torn_last_line_is_quarantined_and_the_release_goes_on(work, grafana):
    assert run(work, grafana).exit_code == 0
    path = work / "ledger.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + TORN)  # a crash in the middle of an append
    dry = run(work, grafana, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "is torn" in dry.output and path.read_bytes() == good + TORN  # a dry run repairs nothing
    history = CliRunner().invoke(
        main, ["history", UID, "--grafana-url", grafana.url, "--ledger", str(path)], env={"GRAFANA_TOKEN": TOKEN}
    )
    assert history.exit_code == 0 and "is torn" in history.output
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    (side,) = [f for f in files(work) if f.startswith("ledger.jsonl.torn-")]
    assert f"moved to {work / side}" in result.output
    assert (work / side).read_bytes() == TORN
    assert path.read_bytes().startswith(good) and [r.outcome for r in read(path)] == ["published", "unchanged"]
    assert load(path).torn == b""


def test_a_malformed_line_in_the_middle_is_an_input_error_naming_the_line(work, grafana):
    assert run(work, grafana).exit_code == 0
    path = work / "ledger.jsonl"
    path.write_bytes(b"not json\n" + path.read_bytes())
    result = run(work, grafana)
    assert result.exit_code == 2 and f"{path}:1: not a JSON ledger record" in result.output
    assert "Traceback" not in result.output


def test_a_full_disk_before_the_save_refuses_before_any_write(work, grafana, monkeypatch):
    monkeypatch.setattr(preflight_module, "free_bytes", lambda path: 64 * 1024)
    result = run(work, grafana)
    assert result.exit_code == 1
    assert "not enough space" in result.output and "nothing was written" in result.output
    assert grafana.writes() == []
    assert not (work / "ledger.jsonl").exists() and not files(work / "backups")


def test_a_ledger_that_cannot_be_created_refuses_before_any_write(work, grafana):
    (work / "releases").write_text("a file where the ledger folder should be")
    result = run(work, grafana, ledger_path=work / "releases" / "ledger.jsonl")
    assert result.exit_code == 1
    assert "is not a folder; nothing was written" in result.output and "Traceback" not in result.output
    assert grafana.writes() == []


def test_a_ledger_write_failing_after_a_save_reports_the_save_and_stops_the_release(work, grafana, monkeypatch):
    def full_disk(path, records):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(execute_module, "append", full_disk)
    result = run(work, grafana, "--jobs", "1", profile=None)
    assert result.exit_code == 1
    assert "NOT RECORDED: the ledger could not be written" in result.output
    assert "append these lines to it by hand" in result.output
    lines = [json.loads(line) for line in result.output.splitlines() if line.startswith('{"approvals_used"')]
    published = [r for r in lines if r["outcome"] == "published"]
    assert len(published) == 1 and grafana.stored(published[0]["uid"]) is not None
    assert len(saves(grafana)) == 1  # no further dashboard was started once the record broke
    assert {r["outcome"] for r in lines} == {"published", "held"} and len(lines) == 4


def test_an_append_that_fails_is_cut_back_and_leaves_no_torn_line(tmp_path, monkeypatch):
    path = tmp_path / "ledger.jsonl"
    append(path, [LedgerRecord("t", "c", "p", "u", "published", 1, "b", "s")])
    before = path.read_bytes()
    real_write = dashgen.files.os.write

    def half_then_full(fd, data):
        real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(dashgen.files.os, "write", half_then_full)
    with pytest.raises(OSError):
        append(path, [LedgerRecord("t2", "c", "p", "u", "published", 2, "b", "s")])
    monkeypatch.undo()
    assert path.read_bytes() == before and load(path).torn == b""


def test_the_ledger_reads_back_typed_records_with_every_outcome_a_release_writes(tmp_path):
    """What is written is read back as the same ``LedgerRecord``, its outcome an ``OutcomeKind`` (diverged and
    overwritten included), lists as tuples; a line with an outcome no release writes is a hand edit (exit 2)."""
    from dashgen.errors import InputError
    from dashgen.publish.actions import OutcomeKind

    path = tmp_path / "ledger.jsonl"
    written = [
        LedgerRecord(
            "2026-12-06T00:00:00Z",
            "c0ffee",
            "h20-16",
            f"u{n}",
            kind_,
            3,
            "b",
            "s",
            approvals_used=("a:1",),
            grants=(("team:sre", "Edit"),) if n == 0 else None,
        )
        for n, kind_ in enumerate(OutcomeKind)
    ]
    append(path, written)
    back = read(path)
    assert back == written and len(back) == len(OutcomeKind) >= 11
    assert {type(r.outcome) for r in back} == {OutcomeKind}
    assert {OutcomeKind.DIVERGED, OutcomeKind.OVERWRITTEN} <= {r.outcome for r in back}

    old = json.dumps({"uid": "u", "outcome": "published", "stored_sha": "s", "grafana_url": "https://g"})
    path.write_text(old + "\n" + json.dumps({"uid": "u", "outcome": "pubilshed"}) + "\n" + old + "\n")
    with pytest.raises(InputError, match=r"ledger.jsonl:2: not a JSON ledger record"):
        read(path)
    path.write_text(old + "\n")
    (record,) = read(path)
    assert (record.org_id, record.outcome, record.approvals_used, record.kind) == (1, OutcomeKind.PUBLISHED, (), None)


def test_a_ledger_line_holds_no_raw_control_or_bidi_character_and_reads_back_the_same(tmp_path):
    """A refusal names a live panel by its title (Grafana's): its C1 CSI and bidi override are written escaped."""
    from dashgen.publish.actions import OutcomeKind

    title = 'panel "x\x9b2J\u202egnp.exe\x1b[8m" is live but not in the build (clean-up)'
    record = LedgerRecord("2026-12-06T00:00:00Z", "c", "h20-16", "u", OutcomeKind.REFUSED, None, "b", None)
    record = replace(record, refusals=(title,))
    line = record.to_json()
    assert "\n" not in line and not any(ch in line for ch in "\x9b\u202e\x1b"), line
    path = tmp_path / "ledger.jsonl"
    append(path, [record])
    assert read(path) == [record]


def test_history_shows_a_grafana_version_message_as_text_not_markup(work):
    """A person's save message is Grafana's text: '[/bold]' stopped the table (rich read it as markup) and
    '[link=…]' became a terminal link."""
    from standin import GrafanaStandin

    message = "[/bold] [link=https://evil.example]open[/link] \x1b]8;;https://evil.example\x07x"
    with GrafanaStandin(token=TOKEN) as grafana:
        assert run(work, grafana).exit_code == 0
        grafana.simulate_ui_save(UID, lambda d: d.update(title=d["title"] + " edited"), message=message)
        history = CliRunner().invoke(
            main,
            ["history", UID, "--grafana-url", grafana.url, "--ledger", str(work / "ledger.jsonl")],
            env={"GRAFANA_TOKEN": TOKEN, "COLUMNS": "400"},
        )
    assert history.exit_code == 0, history.output
    assert "[/bold] [link=https://evil.example]open[/link] \\x1b]8;;https://evil.example\\x07x" in history.output
