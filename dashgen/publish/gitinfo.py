"""What git says about the working tree: the commit a release is built from (I/O edge)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path


def _git(cwd: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=10).stdout


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
        status = _git(cwd, "status", "--porcelain", "--untracked-files=no")  # paths from the top
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    own = {name for name in (_from_top(Path(f), top) for f in own_files) if name}
    changed = [line[3:] for line in status.splitlines() if line.strip()]
    return f"{sha}-dirty" if any(path not in own for path in changed) else sha
