"""What git says about the working tree: the commit a release is built from (I/O edge)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def current_commit(directory: Path | None = None) -> str:
    """``HEAD``'s full SHA, with ``-dirty`` when tracked files differ; ``unknown`` outside git."""
    cwd = str(directory or Path.cwd())
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}-dirty" if dirty else sha
