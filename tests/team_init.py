"""A team's own repository as ``dashgen init`` writes it, in git (the :func:`team` fixture), dashgen run inside
it (:func:`dashgen`), and a panel module listed in a profile's ``extra_modules`` (:func:`list_module`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from gitrepo import commit_all, git

from dashgen.cli.app import main


def dashgen(cwd: Path, *args: str, env: dict[str, str] | None = None):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), env={"GRAFANA_URL": "", **(env or {})})
    finally:
        os.chdir(old)


def list_module(repo: Path, profile: str, *names: str) -> None:
    path = repo / "profiles" / f"{profile}.toml"
    text = path.read_text(encoding="utf-8")
    listed = "extra_modules = [" + ", ".join(f'"{n}"' for n in names) + "]"
    text = (
        text.replace("[dashboard]\n", f"[dashboard]\n{listed}\n", 1)
        if "[dashboard]\n" in text
        else (text + f"\n[dashboard]\n{listed}\n")
    )
    path.write_text(text, encoding="utf-8")


@pytest.fixture()
def team(tmp_path: Path) -> Path:
    repo = tmp_path / "team"
    result = dashgen(tmp_path, "init", "team", "--from", "h20-16")  # a small profile
    assert result.exit_code == 0, result.output
    git(repo, "init", "-q")
    commit_all(repo, "dashboards as code")
    return repo
