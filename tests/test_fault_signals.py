"""Issue 32, item 10: SIGINT and SIGTERM at each step of a release (Grafana 12 stand-in, four dashboards).

Whenever the signal comes — before the export, during it, after the backups, while a save is in flight, right after
a ledger append — the run exits 130 (SIGINT) or 143 (SIGTERM) without a traceback, every save that landed in Grafana
has its ledger line, the lock is released, and the next run finishes the release (exit 0, Grafana stores the build).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from publishing import TOKEN, ledger, run, work_folder
from standin import GrafanaStandin

import dashgen.publish.execute as execute
import dashgen.publish.ledger as ledger_module
import dashgen.publish.release as release
from dashgen.render.canonical import content_sha

work = pytest.fixture(work_folder)
SAVE_PATH = r"/api/dashboards/db"


@pytest.fixture
def grafana() -> Iterator[GrafanaStandin]:
    with GrafanaStandin(mode="grafana12", token=TOKEN) as standin:
        yield standin


def _signal_soon(signum: int, seconds: float = 0.0) -> None:
    if seconds:
        threading.Timer(seconds, os.kill, (os.getpid(), signum)).start()
    else:
        os.kill(os.getpid(), signum)


def _before(module: object, name: str, signum: int, monkeypatch: pytest.MonkeyPatch, once: bool = True) -> None:
    real: Callable = getattr(module, name)
    fired: list[bool] = []

    def signal_then_call(*args, **kwargs):
        if not (once and fired):
            fired.append(True)
            _signal_soon(signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, signal_then_call)


def _after(module: object, name: str, signum: int, monkeypatch: pytest.MonkeyPatch) -> None:
    real: Callable = getattr(module, name)
    fired: list[bool] = []

    def call_then_signal(*args, **kwargs):
        result = real(*args, **kwargs)
        if not fired:
            fired.append(True)
            _signal_soon(signum)
        return result

    monkeypatch.setattr(module, name, call_then_signal)


def _in_flight(grafana: GrafanaStandin, signum: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first save lands in Grafana, its answer comes 1.5 s later; the signal comes 0.5 s into that wait."""
    grafana.inject_delay(1.5, "POST", SAVE_PATH, after_handling=True)
    real, fired = execute.push_one, []

    def push(item, context):
        if not fired:
            fired.append(True)
            _signal_soon(signum, 0.5)
        return real(item, context)

    monkeypatch.setattr(execute, "push_one", push)


STEPS: dict[str, Callable[[GrafanaStandin, int, pytest.MonkeyPatch], None]] = {
    "before the ledger is read": lambda g, s, m: _before(ledger_module, "load", s, m),
    "during the export": lambda g, s, m: _before(release, "export_and_prepare", s, m),
    "after the backups": lambda g, s, m: _after(release, "write_backups", s, m),
    "while a save is in flight": _in_flight,
    "right after a ledger append": lambda g, s, m: _after(execute, "append", s, m),
}


@pytest.mark.parametrize("step", list(STEPS))
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_issue32_a_signal_at_any_step_records_every_save_releases_the_lock_and_the_next_run_finishes(
    work: Path, grafana: GrafanaStandin, monkeypatch: pytest.MonkeyPatch, step: str, signum: int, code: int
) -> None:
    STEPS[step](grafana, signum, monkeypatch)
    result = run(work, grafana, "--jobs", "1", profile=None)
    output = result.output
    assert result.exit_code == code, (step, output)
    assert "Traceback" not in output and "internal error" not in output, output
    assert "interrupted" in output, output
    recorded = {r["uid"] for r in ledger(work) if r["outcome"] not in ("held",)}
    landed = {uid for uid in sorted(grafana.org().dashboards) if grafana.stored_version(uid) is not None}
    assert landed <= recorded, (step, landed - recorded, output)
    locks = work / "locks"
    assert not (locks.exists() and list(locks.glob("*.lock"))), "the lock was left behind"
    monkeypatch.undo()
    grafana.clear_faults()
    again = run(work, grafana, "--jobs", "1", profile=None)
    assert again.exit_code == 0, again.output
    final = {r["uid"]: r for r in ledger(work) if r["outcome"] in ("published", "unchanged")}
    assert len(final) == 4 and all(content_sha(grafana.stored(uid)) == r["stored_sha"] for uid, r in final.items())
