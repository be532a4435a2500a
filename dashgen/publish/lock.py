"""The release lock: one release at a time per Grafana instance and organisation.

A lock file next to the ledger (``<ledger dir>/locks/<host>-<port>-org<N>.lock``) is created
exclusively and holds who took it and when (user, host, pid, command, time). While it exists, another
release to the same instance is refused, naming the holder; a dry run takes no lock (it writes
nothing) but says when a release is in progress.

The lock is a lease: while a release runs, it renews the file's modification time every ``RENEW_SECONDS``.
It is taken over (with a warning) only when its holder is provably gone — on this host, its process is dead
(a release killed with ``kill -9``); on another host, the lease was not renewed for ``stale_after`` seconds
*and* stays unrenewed while the taker watches it for longer than one renewal (so neither a long release nor a
clock jump on either side lets a live lock be taken). A live holder on this host is never taken over by age.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dashgen.errors import CheckFailed
from dashgen.files import create_exclusive, read_regular_text
from dashgen.files.parsers import parse_json
from dashgen.publish.ledger import Instance

DEFAULT_STALE_AFTER = 3600.0
RENEW_SECONDS = 10.0  # how often a held lock renews its lease (the file's modification time)


class ReleaseLocked(CheckFailed):
    """Another release to the same Grafana instance and organisation holds the lock. Exit code 1."""


def lock_path(ledger_path: Path, instance: Instance) -> Path:
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", instance.url.split("://", 1)[-1]).strip("-")
    return ledger_path.parent / "locks" / f"{slug}-org{instance.org_id}.lock"


def _holder(command: str, instance: Instance) -> dict[str, Any]:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return {
        "user": user,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "command": command,
        "instance": instance.label,
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "epoch": time.time(),
    }


def read_holder(path: Path) -> dict[str, Any] | None:
    """The holder recorded in a lock file; None when there is no lock (an unreadable one is a holder too)."""
    try:
        data = parse_json(read_regular_text(path))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {
            "user": "unknown",
            "host": "unknown",
            "pid": 0,
            "time": "unknown",
            "epoch": path.stat().st_mtime if path.exists() else 0.0,
        }
    return data if isinstance(data, dict) else {"epoch": 0.0}


def describe(holder: dict[str, Any]) -> str:
    return (
        f"{holder.get('user', '?')}@{holder.get('host', '?')} pid {holder.get('pid', '?')} since "
        f"{holder.get('time', '?')} ({holder.get('command', 'a release')})"
    )


def stale_reason(
    holder: dict[str, Any], stale_after: float, now: float | None = None, renewed: float | None = None
) -> str:
    """Why a held lock may be taken over, or "" when it is live. On this host only a dead process makes it stale;
    on another host, a lease (``renewed``: the file's modification time, else when it was taken) older than
    ``stale_after`` (:meth:`ReleaseLock.acquire` then also watches it stay unrenewed)."""
    pid = holder.get("pid")
    if holder.get("host") == socket.gethostname() and isinstance(pid, int) and pid > 0:
        return "" if _alive(pid) else f"its process {pid} on this host is gone"
    now = time.time() if now is None else now
    epoch = renewed if renewed is not None else holder.get("epoch")
    age = now - epoch if isinstance(epoch, int | float) else float("inf")
    if age > stale_after:
        return f"its lease was not renewed for over {stale_after:g} s"
    return ""


def _renewed(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class ReleaseLock:
    """Held for one release; a context manager. ``notes`` holds the warning of a taken-over stale lock."""

    path: Path
    instance: Instance
    command: str = "dashgen publish"
    stale_after: float = DEFAULT_STALE_AFTER
    held: bool = False
    note: str = ""
    renew_seconds: float = field(default_factory=lambda: RENEW_SECONDS)
    _stop: threading.Event | None = None

    def _keep_renewing(self) -> None:
        """Renew the lease until released: touch the lock file every ``renew_seconds``."""
        stop = self._stop = threading.Event()

        def renew() -> None:
            while not stop.wait(self.renew_seconds):
                try:
                    os.utime(self.path)
                except OSError:
                    return

        threading.Thread(target=renew, name="dashgen-lock-lease", daemon=True).start()

    def _still_unrenewed(self, holder: dict[str, Any]) -> bool:
        """Watch another host's lock for longer than one renewal: a live holder touches it in that time."""
        if holder.get("host") == socket.gethostname():
            return True  # this host's verdict is the process itself
        before = _renewed(self.path)
        time.sleep(self.renew_seconds + 1.0)
        return before is not None and _renewed(self.path) == before

    def acquire(self) -> ReleaseLock:
        data = json.dumps(_holder(self.command, self.instance), sort_keys=True).encode()
        for _ in range(3):
            try:
                created = create_exclusive(self.path, data)
            except OSError as exc:
                raise ReleaseLocked(
                    f"cannot take the release lock {self.path}: {exc.strerror or exc}; nothing was written"
                ) from None
            if created:
                self.held = True
                self._keep_renewing()
                return self
            holder = read_holder(self.path)
            if holder is None:
                continue  # released in between
            reason = stale_reason(holder, self.stale_after, renewed=_renewed(self.path))
            if reason and not self._still_unrenewed(holder):
                reason = ""
            if not reason:
                raise ReleaseLocked(
                    f"another release to {self.instance.label} is in progress: {describe(holder)}; "
                    f"wait for it, or remove {self.path} if you are sure it is dead"
                )
            self.note = f"took over the stale release lock {self.path} ({reason}): {describe(holder)}"
            stale = self.path.with_name(f"{self.path.name}.stale-{os.getpid()}")
            try:
                os.replace(self.path, stale)  # only one taker wins the rename of this file
                stale.unlink(missing_ok=True)
            except FileNotFoundError:
                continue
        raise ReleaseLocked(f"could not take the release lock {self.path}: it keeps changing hands")

    def release(self) -> str | None:
        """Remove the lock if this process holds it. A failure (a read-only remount, a vanished folder) is
        returned as a note, never raised: it must not hide what went wrong in the release itself."""
        if not self.held:
            return None
        self.held = False
        if self._stop is not None:
            self._stop.set()
        try:
            holder = read_holder(self.path)
            if holder is not None and holder.get("pid") == os.getpid():
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            return f"the release lock {self.path} could not be removed ({exc.strerror or exc}): remove it by hand"
        return None

    def __enter__(self) -> ReleaseLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def in_progress(ledger_path: Path, instance: Instance, stale_after: float = DEFAULT_STALE_AFTER) -> str:
    """For a dry run: a note when a live release to ``instance`` holds the lock, else ""."""
    path = lock_path(ledger_path, instance)
    holder = read_holder(path)
    if holder is None or stale_reason(holder, stale_after, renewed=_renewed(path)):
        return ""
    return f"a release to {instance.label} is in progress ({describe(holder)}): this plan may be outdated soon"
