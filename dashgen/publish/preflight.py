"""Before any write of a release: can the record of it be kept? (I/O edge; writes nothing itself.)

The ledger's folder and the backup folder must exist or be creatable and be writable, the ledger
itself writable, and the file systems must have room for every backup, read-back copy and ledger line
the release will write, with a margin. A failure refuses the release before the first write to
Grafana, naming the path: a full disk found after a save would leave that save unrecorded.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dashgen.errors import CheckFailed

MARGIN_BYTES = 4 * 1024 * 1024  # file-system slack beyond the estimate (metadata, a torn-line side file)


class PreflightFailed(CheckFailed):
    """The release record could not be kept: refused before any write. Exit code 1."""


def free_bytes(path: Path) -> int:
    """Free bytes for an unprivileged writer on the file system holding ``path``."""
    return shutil.disk_usage(path).free


def _existing_ancestor(path: Path) -> Path:
    current = path
    while not current.exists():
        if current.parent == current:
            break
        current = current.parent
    return current


def _writable_dir(path: Path, what: str) -> Path:
    """The existing folder that will hold ``path`` once it is created; refused when that cannot happen."""
    anchor = _existing_ancestor(path)
    if not anchor.is_dir():
        raise PreflightFailed(f"{what} {path}: cannot be created, {anchor} is not a folder; nothing was written")
    if not os.access(anchor, os.W_OK | os.X_OK):
        raise PreflightFailed(f"{what} {path}: {anchor} is not writable; nothing was written")
    return anchor


def check(ledger_path: Path, backup_dir: Path, needed_bytes: int) -> None:
    """Raise ``PreflightFailed`` unless the ledger and backups can be written with ``needed_bytes`` to spare."""
    if ledger_path.exists() and (ledger_path.is_dir() or not os.access(ledger_path, os.W_OK)):
        raise PreflightFailed(f"ledger {ledger_path}: not a writable file; nothing was written")
    ledger_anchor = _writable_dir(ledger_path.parent, "ledger folder")
    backup_anchor = _writable_dir(backup_dir, "backup folder")
    wanted: dict[int, tuple[Path, int]] = {}
    for anchor, share in ((ledger_anchor, 64 * 1024), (backup_anchor, needed_bytes)):
        device = anchor.stat().st_dev
        path, total = wanted.get(device, (anchor, 0))
        wanted[device] = (path, total + share)
    for anchor, total in wanted.values():
        free = free_bytes(anchor)
        if free < total + MARGIN_BYTES:
            raise PreflightFailed(
                f"not enough space on the file system of {anchor}: {free / 1_048_576:.1f} MiB free, the release "
                f"needs about {(total + MARGIN_BYTES) / 1_048_576:.1f} MiB for backups and the ledger; nothing was "
                "written"
            )
