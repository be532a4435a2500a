"""Writing files: the one atomic replace (temporary file + rename), write-if-changed, and durable append.

Every file dashgen writes (dashboards, rule files, release backups, the ledger) goes through
here, so the guarantees are stated once: a reader sees the old bytes or the new ones, never a
mix, and with ``fsync=True`` the bytes are on disk before the call returns.
"""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Replace ``path`` by ``data`` through ``<name>.tmp`` beside it and a rename (parents are created).

    With ``fsync``, the temporary file is fsynced before the rename and the directory after it, so a
    crash leaves either the old file or the complete new one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.tmp")
    try:
        with temporary.open("wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if fsync:
        _fsync_directory(path.parent)


def write_if_changed(path: Path, data: bytes, *, fsync: bool = False) -> bool:
    """``atomic_write`` unless ``path`` already holds exactly ``data``; True when it wrote."""
    if path.is_file() and path.read_bytes() == data:
        return False
    atomic_write(path, data, fsync=fsync)
    return True


def append_durably(path: Path, text: str) -> None:
    """Append ``text`` (UTF-8) to ``path``, flushed and fsynced, so a crash loses at most what was being written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; elsewhere directories cannot be opened)."""
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
