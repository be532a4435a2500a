"""Shared helpers of the publish tests: the stand-in fixtures in both modes, a throw-away profiles folder,
running a release through the real command line, and reading what it left behind."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from standin import GrafanaStandin, LoggedRequest

from dashgen.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "glsa_test_Secret_Token_0123456789abcdef"
UID = "dg-h20-16-cluster"
SAVE_PATHS = (
    ("POST", "/api/dashboards/db"),
    ("PUT", r"/apis/dashboard\.grafana\.app/[^/]+/namespaces/[^/]+/dashboards/[^/]+"),
    ("POST", r"/apis/dashboard\.grafana\.app/[^/]+/namespaces/[^/]+/dashboards/?"),
)


MODES = ["grafana12", "grafana13"]


def standin_in_mode(request: pytest.FixtureRequest):
    """Body of a ``grafana`` fixture: ``grafana = pytest.fixture(params=MODES)(standin_in_mode)``."""
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        yield standin


def grafana12_standin():
    """Body of a one-mode ``grafana`` fixture: ``grafana = pytest.fixture(scope="module")(grafana12_standin)``."""
    with GrafanaStandin(mode="grafana12", token=TOKEN) as standin:
        yield standin


def work_folder(tmp_path: Path) -> Path:
    """Body of a ``work`` fixture: a folder with a copy of the profiles."""
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def run(
    work: Path,
    grafana: GrafanaStandin | None,
    *args: str,
    token: str = TOKEN,
    profile: str | None = "h20-16",
    url: str | None = None,
    command: str = "publish",
    env: dict[str, str] | None = None,
    ledger_path: Path | None = None,
) -> Result:
    """``dashgen publish`` (or ``command``) with the work folder's profiles, ledger and backups."""
    argv = ["--profiles-dir", str(work / "profiles"), command]
    if url is not None or grafana is not None:
        argv += ["--grafana-url", url or grafana.url]  # type: ignore[union-attr]
    argv += [
        "--ledger",
        str(ledger_path or work / "ledger.jsonl"),
        "--backup-dir",
        str(work / "backups"),
        "--timeout",
        "2",
    ]
    if profile and command == "publish":
        argv += ["--profile", profile]
    environment = {"GRAFANA_TOKEN": token, "GRAFANA_URL": ""}
    environment.update(env or {})
    return CliRunner().invoke(main, [*argv, *args], env=environment)


def plan_json(result: Result) -> dict[str, Any]:
    return json.loads(result.stdout)["results"]


def ledger(work: Path) -> list[dict[str, Any]]:
    path = work / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def saves(grafana: GrafanaStandin) -> list[LoggedRequest]:
    """Every request that saves a dashboard (legacy or ``/apis``), server-side dry runs left out."""
    patterns = [(method, re.compile(path)) for method, path in SAVE_PATHS]
    return [
        r
        for r in grafana.requests_to("*")
        if r.query.get("dryRun") != ["All"]
        and any(r.method == method and pattern.fullmatch(r.path) for method, pattern in patterns)
    ]


def files(folder: Path) -> set[str]:
    """Every file under ``folder``, relative (hidden ones too)."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


def change_gpu_label(work: Path, profile: str = "h20-16") -> None:
    """A profile change that alters the queries of existing panels and the $gpu variable's definition."""
    path = work / "profiles" / f"{profile}.toml"
    path.write_text(path.read_text() + '\n[labels]\ngpu = "gpu_index"\n')


def required_approvals(work: Path, grafana: GrafanaStandin, *args: str, profile: str | None = "h20-16") -> list[str]:
    """The approval keys the plan asks for, read from a dry run's JSON."""
    plan = plan_json(run(work, grafana, "--dry-run", "--format", "json", *args, profile=profile))
    return [r["approve_with"] for d in plan["dashboards"] for r in d["refusals"]]


def approve_all(keys: list[str]) -> list[str]:
    flags = []
    for key in keys:
        if key.startswith("overwrite-live:"):
            flags += ["--overwrite-live", key.split(":", 1)[1]]
        elif key.startswith("overwrite-v2:"):
            flags += ["--overwrite-v2", key.split(":", 1)[1]]
        else:
            flags += ["--approve", key]
    return flags
