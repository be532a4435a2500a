"""What git says about the working tree: the commit a release is built from (I/O edge)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path


def _git(cwd: str, *args: str) -> str:
    # a path that is not UTF-8 read as its bytes (surrogateescape), as Python names files, never a decoding error
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True, timeout=10)
    return done.stdout.decode("utf-8", "surrogateescape")


def _changed_paths(status: str) -> list[str]:
    """The paths of ``git status --porcelain -z``: NUL-separated ``XY path`` entries, unquoted (without ``-z`` a path
    with a space or a non-ASCII character comes back quoted and escaped); a rename or copy is followed by its
    source path."""
    fields = status.split("\0")
    paths: list[str] = []
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC" and index < len(fields):
            paths.append(fields[index])
            index += 1
    return paths


def _from_top(path: Path, top: str) -> str | None:
    try:
        return path.resolve().relative_to(Path(top).resolve()).as_posix()
    except (OSError, ValueError):
        return None  # outside the repository: never in its status


def current_commit(directory: Path | None = None, own_files: Iterable[Path] = ()) -> str:
    """``HEAD``'s full SHA, with ``-dirty`` when tracked files differ; ``unknown`` outside git. A change to one of
    ``own_files`` (the release ledger, which every publish appends to) does not count: it is no part of what a
    release builds, and counting it refused the next publish until the last one's record was committed."""
    cwd = str(directory or Path.cwd())
    try:
        sha = _git(cwd, "rev-parse", "HEAD").strip()
        top = _git(cwd, "rev-parse", "--show-toplevel").strip()
        status = _git(cwd, "status", "--porcelain", "-z", "--untracked-files=no")  # paths from the top
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    own = {name for name in (_from_top(Path(f), top) for f in own_files) if name}
    return f"{sha}-dirty" if any(path not in own for path in _changed_paths(status)) else sha
