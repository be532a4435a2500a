"""The session's demo store built ahead under xdist: one process of its own, started when the first worker has
collected a test that reads ``demo_windows``, builds it (``victoriametrics.built_once``) while the workers run
the tests queued before its first reader. Built by whichever worker reads it first instead, the store held the
other worker at its lock whenever both reached a reader within the build (the cost and first-screen record tests,
queued one after the other: ~25-33 s of a worker idle per run). Should this process fail, the first reader finds
no store in the folder and builds it itself, with the error or skip it always gave."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

STARTED = "demo-windows.ahead"


def start(folder: Path) -> subprocess.Popen[bytes] | None:
    """The builder, started by the first caller of a run (the others get None); its output in ``folder``."""
    try:
        (folder / STARTED).touch(exist_ok=False)
    except FileExistsError:
        return None
    with (folder / f"{STARTED}.log").open("wb") as log:
        return subprocess.Popen([sys.executable, __file__, str(folder)], stdout=log, stderr=subprocess.STDOUT)


def stop(builder: subprocess.Popen[bytes]) -> None:
    """Reaped at the worker's end; a builder still running (the run ended before any test read the store) stops
    its VictoriaMetrics and vmalert on SIGTERM (``_exit``) and is killed only if it has not within a minute."""
    if builder.poll() is None:
        builder.terminate()
        try:
            builder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            builder.kill()
    builder.wait()


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through built_once's finally: its store stopped and removed


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _exit)  # first: a SIGTERM while dashgen is imported unwinds too
    from victoriametrics import built_once

    built_once(Path(sys.argv[1]))
