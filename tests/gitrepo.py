"""Git in the tests' throw-away repositories: a command with a fixed author (no user config needed), and "commit
everything"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

AUTHOR = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **AUTHOR}, check=True, capture_output=True, timeout=60)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
