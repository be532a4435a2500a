"""Issue 16 point 5: a release lock per instance + org (two releases cannot interleave), and unique temporary
names for every atomic write (two writers of one path never share a temporary file)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from publishing import ROOT, TOKEN, UID, change_gpu_label, ledger, run, work_folder
from standin import GrafanaStandin

from dashgen.files import atomic_write
from dashgen.publish.backups import save_backup
from dashgen.publish.ledger import Instance
from dashgen.publish.lock import lock_path, stale_reason

work = pytest.fixture(work_folder)


def lock_of(work, grafana) -> os.PathLike:
    return lock_path(work / "ledger.jsonl", Instance(grafana.url, 1))


def write_lock(path, **holder) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "user": "ci",
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "command": "x",
                "time": "2026-01-01T00:00:00Z",
                "epoch": time.time(),
                **holder,
            }
        )
    )


@pytest.mark.parametrize("mode", ["grafana13"])  # the lock is a file of the checkout: no Grafana version to vary
def test_a_second_concurrent_release_is_refused_by_the_lock(work, mode):
    with GrafanaStandin(mode=mode, token=TOKEN) as grafana:
        grafana.inject_delay(2.0, "GET", r"/apis/.*/dashboards/.*")  # the first release's export is slow
        argv = [
            sys.executable,
            "-m",
            "dashgen",
            "--profiles-dir",
            str(work / "profiles"),
            "publish",
            "--grafana-url",
            grafana.url,
            "--ledger",
            str(work / "ledger.jsonl"),
            "--backup-dir",
            str(work / "backups"),
            "--profile",
            "h20-16",
            "--timeout",
            "5",
        ]
        first = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={**os.environ, "GRAFANA_TOKEN": TOKEN},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            deadline = time.monotonic() + 20
            while not lock_of(work, grafana).exists() and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert lock_of(work, grafana).exists(), "the first release never took the lock"
            second = run(work, grafana)
            out, _ = first.communicate(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
        assert second.exit_code == 1
        assert f"another release to {grafana.url} org 1 is in progress" in second.output
        assert f"pid {first.pid}" in second.output
        assert first.returncode == 0, out
        assert [r["outcome"] for r in ledger(work)] == ["published"]  # the second recorded nothing
        assert not lock_of(work, grafana).exists()  # released at the end


def test_a_lock_of_a_dead_process_on_this_host_is_taken_over_with_a_warning(work):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with GrafanaStandin(token=TOKEN) as grafana:
        write_lock(lock_of(work, grafana), pid=dead.pid)
        result = run(work, grafana)
        assert result.exit_code == 0, result.output
        assert "took over the stale release lock" in result.output and f"process {dead.pid}" in result.output
        assert not lock_of(work, grafana).exists()


def test_a_live_lock_refuses_and_a_dry_run_only_notes_it(work):
    with GrafanaStandin(token=TOKEN) as grafana:
        assert run(work, grafana).exit_code == 0
        change_gpu_label(work)
        write_lock(lock_of(work, grafana))  # this very process: alive
        refused = run(work, grafana)
        assert refused.exit_code == 1 and "is in progress" in refused.output
        dry = run(work, grafana, "--dry-run")
        assert "a release to" in dry.output and "is in progress" in dry.output
        assert lock_of(work, grafana).exists() and len(ledger(work)) == 1
        other = GrafanaStandin(token=TOKEN).start()
        try:
            assert run(work, other).exit_code == 0  # another instance has its own lock
        finally:
            other.stop()
        assert grafana.stored_version(UID) == 1


def test_a_lock_is_stale_after_the_bound_and_live_before_it():
    holder = {"host": "elsewhere", "pid": 1, "epoch": time.time() - 7200}
    assert stale_reason(holder, 3600.0) == "its lease was not renewed for over 3600 s"
    assert stale_reason(holder, 3600.0, renewed=time.time()) == ""  # renewed: a live holder on another host
    # on this host a live process is never taken over by age (a long release, or a clock that jumped)
    mine = {"host": socket.gethostname(), "pid": os.getpid(), "epoch": 0.0}
    assert stale_reason(mine, 1.0, renewed=0.0) == ""


def test_two_writers_of_one_path_never_share_a_temporary_file(tmp_path):
    target = tmp_path / "shared.json"
    errors: list[BaseException] = []

    def writer(tag: int) -> None:
        try:
            for index in range(40):
                atomic_write(target, f"{tag}-{index}\n".encode() * 2000, fsync=False)
        except BaseException as exc:  # noqa: BLE001 - the test collects every failure of every thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    text = target.read_text()
    assert len(set(text.splitlines())) == 1  # one writer's whole content, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["shared.json"]  # no temporary file left behind


def test_concurrent_backups_of_one_version_get_distinct_files(tmp_path):
    paths: list = []
    lock = threading.Lock()

    def backup(tag: int) -> None:
        path = save_backup(tmp_path, "u", 3, "2026-01-01T00:00:00Z", {"dashboard": {"tag": tag}, "meta": {}})
        with lock:
            paths.append(path)

    threads = [threading.Thread(target=backup, args=(tag,)) for tag in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(set(paths)) == 8
    assert sorted(json.loads(p.read_text())["dashboard"]["tag"] for p in paths) == list(range(8))


def test_lock_stale_after_takes_over_an_old_lock_of_another_host_and_refuses_a_younger_one(work, monkeypatch):
    """``--lock-stale-after``: the bound is the operator's; a lock of another host is judged by its lease: not renewed
    for that long, and still not renewed while the taker watches it."""
    import dashgen.publish.lock as lock_module

    monkeypatch.setattr(lock_module, "RENEW_SECONDS", 0.3)
    with GrafanaStandin(token=TOKEN) as grafana:
        write_lock(lock_of(work, grafana), host="elsewhere", pid=1, epoch=time.time() - 600)
        old = time.time() - 600
        os.utime(lock_of(work, grafana), (old, old))  # its lease last renewed 10 minutes ago
        refused = run(work, grafana)  # default bound 1h: a 10-minute-old lease is live
        assert refused.exit_code == 1 and "is in progress" in refused.output, refused.output
        assert grafana.stored_version(UID) is None
        taken = run(work, grafana, "--lock-stale-after", "5m")
        assert taken.exit_code == 0, taken.output
        assert "took over the stale release lock" in taken.output and "not renewed for over 300 s" in taken.output
        assert not lock_of(work, grafana).exists()
        bad = run(work, grafana, "--lock-stale-after", "soon")
        assert bad.exit_code == 2 and "--lock-stale-after" in bad.output


def test_a_lease_renewed_while_the_taker_watches_is_never_taken_over(work, monkeypatch):
    """Issue 32: a live holder on another host whose lease looks old (a clock 2 h apart, a long release) keeps
    renewing it; the taker watches for longer than one renewal, sees it renewed, and refuses."""
    import threading

    import dashgen.publish.lock as lock_module

    monkeypatch.setattr(lock_module, "RENEW_SECONDS", 0.3)
    with GrafanaStandin(token=TOKEN) as grafana:
        path = lock_of(work, grafana)
        write_lock(path, host="elsewhere", pid=1, epoch=time.time() - 7200)
        old = time.time() - 7200
        os.utime(path, (old, old))
        stop = threading.Event()

        def holder_renews() -> None:  # the other host's release, alive, with its clock 2 h behind
            while not stop.wait(0.1):
                behind = time.time() - 7200
                os.utime(path, (behind, behind))

        renewing = threading.Thread(target=holder_renews, daemon=True)
        renewing.start()
        try:
            refused = run(work, grafana, "--lock-stale-after", "5m")
        finally:
            stop.set()
            renewing.join()
        assert refused.exit_code == 1 and "is in progress" in refused.output, refused.output
        assert grafana.stored_version(UID) is None


def test_a_held_lock_renews_its_lease(tmp_path, monkeypatch):
    import dashgen.publish.lock as lock_module
    from dashgen.publish.ledger import Instance

    monkeypatch.setattr(lock_module, "RENEW_SECONDS", 0.1)
    held = lock_module.ReleaseLock(tmp_path / "locks" / "x.lock", Instance("http://127.0.0.1:3000", 1)).acquire()
    try:
        old = time.time() - 600
        os.utime(held.path, (old, old))
        deadline = time.monotonic() + 5  # renewed every 0.1 s: looked at until it is, not after a fixed half second
        while held.path.stat().st_mtime <= old and time.monotonic() < deadline:
            time.sleep(0.01)
        assert held.path.stat().st_mtime > time.time() - 5
    finally:
        held.release()
    assert not held.path.exists()


def test_a_lock_holder_s_control_sequences_are_shown_as_text(work):
    """The lock file names another person's release (user, host, command): shown as text in the dry run's note
    and in the refusal."""
    hostile = "publish \x1b]8;;https://evil.example\x07x\x1b[2J\u202e"
    with GrafanaStandin(token=TOKEN) as grafana:
        write_lock(lock_of(work, grafana), command=hostile, user="ci\x9b31m")
        dry = run(work, grafana, "--dry-run")
        refused = run(work, grafana)
    for result in (dry, refused):
        assert "is in progress" in result.output and "\\x1b]8;;https://evil.example\\x07x" in result.output
        assert not any(ch in result.output for ch in "\x1b\x07\x9b\u202e"), result.output
