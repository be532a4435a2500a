"""Issue 32, item 1 on real file systems: the release record lives on a small tmpfs that is too small from the
start, fills up right after a save, or is remounted read-only right after a save. The ledger line (or, where the
ledger's own disk refuses it, the recovery lines printed to append by hand) names every save that landed, the lock
error never hides the first error, exit 1, and the next run on a healthy disk reconciles.

These tests mount file systems: they run as root (CI runs as root) and skip elsewhere, saying why."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from publishing import TOKEN, run, saves, work_folder
from standin import GrafanaStandin

import dashgen.publish.execute as execute

work = pytest.fixture(work_folder)


@pytest.fixture
def grafana() -> Iterator[GrafanaStandin]:
    with GrafanaStandin(mode="grafana12", token=TOKEN) as standin:
        yield standin


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=10, check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 MiB tmpfs: room for the preflight (estimate + 4 MiB margin) of one profile, not much more."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs the suite as root)")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = _mount("-t", "tmpfs", "-o", "size=12m,mode=0755", "tmpfs", str(disk))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=10, check=False)


def _fill(disk: Path) -> None:
    """Write zeros until the file system itself says ENOSPC (no simulated error)."""
    with open(disk / "filler", "wb", buffering=0) as handle:
        chunk = b"\0" * 65536
        try:
            while True:
                handle.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    assert os.statvfs(disk).f_bavail == 0


def _publish(work: Path, disk: Path, grafana: GrafanaStandin):
    return run(work, grafana, "--jobs", "1", ledger_path=disk / "ledger.jsonl")


def _publish_in_a_new_process(work: Path, disk: Path, grafana: GrafanaStandin) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "dashgen", "--profiles-dir", str(work / "profiles"), "publish"]
    argv += [
        "--grafana-url",
        grafana.url,
        "--ledger",
        str(disk / "ledger.jsonl"),
        "--backup-dir",
        str(work / "backups"),
    ]
    argv += ["--timeout", "2", "--profile", "h20-16", "--jobs", "1"]
    env = {**os.environ, "GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""}
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)


def _recovery_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith('{"approvals_used"')]


def _after_first_save(monkeypatch: pytest.MonkeyPatch, fault) -> list[str]:
    """Run ``fault`` right after the first dashboard's save landed in Grafana; returns the saved uids."""
    real, saved = execute.push_one, []

    def push_then_fault(item, context):
        result = real(item, context)
        saved.append(item.target.uid)
        if len(saved) == 1:
            fault()
        return result

    monkeypatch.setattr(execute, "push_one", push_then_fault)
    return saved


def _backups_on(work: Path, disk: Path) -> None:
    """Point the publish run's backups at the small disk as well (the run() helper puts them in work/)."""
    backups = work / "backups"
    if backups.exists() or backups.is_symlink():
        backups.unlink()
    (disk / "backups").mkdir(exist_ok=True)
    backups.symlink_to(disk / "backups")


def test_issue32_a_disk_too_small_for_the_record_refuses_before_any_write(work, grafana, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs the suite as root)")
    disk = tmp_path / "tiny"
    disk.mkdir()
    if _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        _backups_on(work, disk)
        result = _publish(work, disk, grafana)
        assert result.exit_code == 1, result.output
        assert "not enough space on the file system" in result.output and "nothing was written" in result.output
        assert saves(grafana) == [] and "Traceback" not in result.output
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=10, check=False)


def test_issue32_a_disk_that_fills_right_after_a_save_still_records_it_and_the_next_run_reconciles(
    work, grafana, small_disk, monkeypatch
):
    _backups_on(work, small_disk)
    saved = _after_first_save(monkeypatch, lambda: _fill(small_disk))
    result = _publish(work, small_disk, grafana)
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output and "Traceback" not in result.output
    assert len(saved) >= 1
    first = saved[0]
    on_disk = [r for r in ledger_at(small_disk) if r["uid"] == first]
    printed = [r for r in _recovery_lines(result.output) if r["uid"] == first]
    # the save is recorded: in the ledger, or printed to append by hand where the ledger's disk refused the line
    assert [r["outcome"] for r in on_disk + printed][:1] == ["published"], result.output
    assert grafana.stored_version(first) is not None
    assert f"saved in Grafana but not fully recorded (see above): {first}" in result.output
    monkeypatch.undo()
    (small_disk / "filler").unlink()
    again = _publish(work, small_disk, grafana)
    assert again.exit_code == 0, again.output
    records = ledger_at(small_disk)
    assert {r["uid"] for r in records} >= set(saved) and "Traceback" not in again.output


def test_issue32_a_read_only_remount_after_a_save_is_reported_and_the_lock_error_does_not_hide_it(
    work, grafana, small_disk, monkeypatch
):
    _backups_on(work, small_disk)

    def read_only() -> None:
        remounted = _mount("-o", "remount,ro", str(small_disk))
        assert remounted.returncode == 0, remounted.stderr

    saved = _after_first_save(monkeypatch, read_only)
    try:
        result = _publish(work, small_disk, grafana)
    finally:
        _mount("-o", "remount,rw", str(small_disk))
    assert result.exit_code == 1, result.output
    assert "Read-only file system" in result.output and "Traceback" not in result.output
    first = saved[0]
    printed = [r for r in _recovery_lines(result.output) if r["uid"] == first]
    on_disk = [r for r in ledger_at(small_disk) if r["uid"] == first]
    assert [r["outcome"] for r in on_disk + printed][:1] == ["published"], result.output
    # the lock that could not be removed afterwards is a note; the run's error is the save that was not recorded
    assert "release lock" in result.output and "could not be removed (Read-only file system)" in result.output
    assert f"saved in Grafana but not fully recorded (see above): {first}" in result.output
    assert "dashboards not published" not in result.output
    # The lock stayed behind on the read-only disk. Its holder is this test's process, which lives on; after a real
    # run the holder has exited, so the lock names a process that is gone, as here.
    lock_file = next((small_disk / "locks").glob("*.lock"))
    holder = json.loads(lock_file.read_text())
    finished = subprocess.Popen(["true"])
    finished.wait()
    holder["pid"] = finished.pid
    lock_file.write_text(json.dumps(holder))
    again = _publish_in_a_new_process(work, small_disk, grafana)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "is gone" in again.stdout + again.stderr, again.stdout + again.stderr


def ledger_at(disk: Path) -> list[dict]:
    path = disk / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
