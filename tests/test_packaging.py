"""The built wheel works without the repository: installed into a fresh virtualenv (with its dependencies),
``dashgen --profiles-dir <a copy of the profiles> build`` run from another folder writes the same dashboards as
the repository's, and the installed files hold no generic top-level ``panels`` or ``queries`` package (they
install as ``dashgen_panels`` / ``dashgen_queries``). Also: the pre-commit hooks, ``python -m dashgen`` and
the shell completion the README documents.

Building and installing use this Python's pip (its isolated build environment, and the package index or pip's
cache for the dependencies: about 10 s with a warm cache); the virtualenv gets no pip of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gitrepo import commit_all, git

from dashgen.cli.app import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("dashgen", "panels", "queries", "profiles", "setup.py", "pyproject.toml", "README.md", "LICENSE")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(base / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and "No matching distribution" in built.stderr + built.stdout:
        pytest.skip(f"setuptools for the isolated build is not reachable: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (base / "dist").glob("dashgen_grafana-*.whl")
    venv = base / "venv"
    # a virtualenv without pip of its own, the wheel installed into it by this pip (``--python``): the same files
    # and dependencies, without bootstrapping a second pip (ensurepip: ~5 s of CPU) only to run it once
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True, timeout=300
    )
    assert made.returncode == 0, made.stderr
    # --no-compile: the dependencies' modules (pygments' hundreds of lexers among them) are not byte-compiled ahead of
    # time, ~4 s of CPU; the commands below compile what they import on first use (``_environment`` lets them write it)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-compile",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


def _site(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python3*/site-packages")
    return site


def _environment() -> dict[str, str]:
    """This process's environment less what would point the installed wheel's Python elsewhere; bytecode written (the
    virtualenv is installed without it and is this module's own)."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = _environment()
    return subprocess.run(
        [str(venv / "bin" / "python"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_installs_no_generic_top_level_package(installed):
    site = _site(installed)
    ours = {p.name for p in site.iterdir() if p.name.startswith(("dashgen", "panels", "queries"))}
    assert not {"panels", "queries", "profiles"} & {p.name for p in site.iterdir()}, sorted(ours)
    assert {"dashgen", "dashgen_panels", "dashgen_queries", "dashgen_profiles"} <= ours, sorted(ours)
    record = next(site.glob("dashgen_grafana-*.dist-info")) / "RECORD"
    tops = {line.split("/", 1)[0] for line in record.read_text().splitlines() if "/" in line.split(",", 1)[0]}
    # every file the wheel installed: under our three packages, its dist-info, or the script (``../../../bin``)
    others = {t for t in tops if not t.endswith(".dist-info")} - {
        "dashgen",
        "dashgen_panels",
        "dashgen_queries",
        "dashgen_profiles",
        "..",
    }
    assert not others, tops
    assert (site / "dashgen" / "data" / "json-envelope.schema.json").exists()


def test_the_wheel_ships_the_preview_s_pinned_uplot_with_its_licence(installed):
    """The preview works offline: uPlot (MIT), Grafana's @grafana/data bundle (Apache-2.0) and the page's own
    script and style are package data."""
    data = _site(installed) / "dashgen" / "data"
    for name in ("uplot/uPlot.iife.min.js", "uplot/uPlot.min.css", "uplot/LICENSE", "preview/preview.js"):
        assert (data / name).stat().st_size > 0, name
    assert "MIT" in (data / "uplot" / "LICENSE").read_text() and "1.6.32" in (data / "uplot" / "VERSION").read_text()
    for minor in ("11.6", "12.3"):
        bundle = data / "grafana-data" / minor
        assert (bundle / "grafana-data.iife.min.js").stat().st_size > 100_000
        assert "Apache License" in (bundle / "LICENSE").read_text()
        assert f"@grafana/data {minor}." in (bundle / "VERSION").read_text()
    shown = _run(
        installed, data, "-c", "from dashgen.preview.page import asset; print(len(asset('preview/preview.css')))"
    )
    assert shown.returncode == 0 and int(shown.stdout) > 0, shown.stderr


def test_the_installed_wheel_builds_from_outside_the_repository(installed, tmp_path):
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    where = _run(
        installed,
        tmp_path,
        "-c",
        "import dashgen, dashgen_panels; print(dashgen.__file__); "
        "print(dashgen_panels.__file__); print(dashgen.__version__)",
    )
    assert where.returncode == 0, where.stderr
    dashgen_file, panels_file, version = where.stdout.split()
    assert Path(dashgen_file).is_relative_to(installed) and Path(panels_file).is_relative_to(installed)
    result = subprocess.run(
        [str(installed / "bin" / "dashgen"), "build", "--profiles-dir", "profiles", "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for path in (ROOT / "dashboards").glob("*/*.json"):
        assert (tmp_path / "out" / path.relative_to(ROOT / "dashboards")).read_bytes() == path.read_bytes()
    shown = _run(installed, tmp_path, "-m", "dashgen", "--version")
    assert shown.stdout.strip() == f"dashgen, version {version}", shown.stdout


def test_pre_commit_hooks_run_existing_dashgen_commands():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {h["id"] for h in hooks} == {"dashgen-check", "dashgen-lint"}
    for hook in hooks:
        assert {"id", "name", "entry", "language"} <= set(hook) and hook["language"] == "python"
        program, command = hook["entry"].split()[:2]
        assert program == "dashgen" and command in COMMANDS
    check = next(h for h in hooks if h["id"] == "dashgen-check")
    assert check["pass_filenames"] is False, "dashgen check takes no file arguments"


def test_python_m_dashgen_is_the_same_command_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dashgen", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and result.stdout.startswith("Usage: dashgen "), result.stdout[:200]


def test_bash_completion_script_is_what_the_readme_evaluates(tmp_path):
    """click's completion, under the variable the README names (``_DASHGEN_COMPLETE``)."""
    env = {**os.environ, "_DASHGEN_COMPLETE": "bash_source"}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dashgen")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "complete -o" in result.stdout and "_dashgen_completion" in result.stdout, (
        result.stdout[:300]
    )


def _dashgen(
    venv: Path, cwd: Path, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = _environment() | (extra_env or {})
    return subprocess.run(
        [str(venv / "bin" / "dashgen"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def team_template(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A team's own repository as ``dashgen init`` writes it from the installed wheel (one profile, its dashboards
    and rules, no docs/panels.md), then ``git init`` and ``dashgen build``, committed: made once for the module."""
    where = tmp_path_factory.mktemp("team-template")
    made = _dashgen(installed, where, "init", "team", "--from", "h20-16")  # a small profile
    assert made.returncode == 0, made.stdout + made.stderr
    repo = where / "team"
    git(repo, "init", "-q")
    built = _dashgen(installed, repo, "build")
    assert built.returncode == 0 and "unchanged" in built.stdout, built.stdout + built.stderr
    commit_all(repo, "our cluster")
    return repo


@pytest.fixture()
def team_repo(team_template: Path, tmp_path: Path) -> Path:
    """A copy of the team's repository, its git history included, for one test to change (the same files as
    ``init`` and ``build`` write there: the repository holds no absolute path)."""
    repo = tmp_path / "team"
    shutil.copytree(team_template, repo, symlinks=True)
    return repo


def test_the_installed_wheel_checks_and_indexes_a_team_repository(installed, team_repo):
    """``check`` and ``index`` read the installed panel modules, never a path under site-packages that does not
    exist; a repository without docs/panels.md is not asked for one."""
    checked = _dashgen(installed, team_repo, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Traceback" not in checked.stderr and "index" not in checked.stdout, checked.stdout
    assert "0 lint errors, 0 other findings" in checked.stdout, checked.stdout  # dashgen's exclusions ship with it
    indexed = _dashgen(installed, team_repo, "index", "--out", "panels.md")
    assert indexed.returncode == 0, indexed.stdout + indexed.stderr
    text = (team_repo / "panels.md").read_text(encoding="utf-8")
    assert "`panels.first_screen." in text and "queries.sglang" in text, text[:2000]
    asked = _dashgen(installed, team_repo, "check", "--index", "docs/panels.md")
    assert asked.returncode == 1 and "run dashgen index" in asked.stdout, asked.stdout + asked.stderr


def test_pre_commit_runs_the_generated_config_with_the_installed_command(installed, team_repo):
    """``pre-commit run --all-files`` with the ``.pre-commit-config.yaml`` dashgen init wrote passes."""
    pre_commit = Path(sys.executable).parent / "pre-commit"
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed beside this Python (pip install -e '.[test]')")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PATH": f"{installed / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(team_repo.parent / "pre-commit-home"),
    }
    done = subprocess.run(
        [str(pre_commit), "run", "--all-files"], cwd=team_repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "dashgen check" in done.stdout, done.stdout + done.stderr


def _in_process(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``dashgen *args`` run in this process from ``cwd`` (click's runner), answered as ``_dashgen`` answers."""
    from team_init import dashgen

    result = dashgen(cwd, *args)
    return subprocess.CompletedProcess(["dashgen", *args], result.exit_code, result.stdout, result.stderr)


def _pr_comments(venv: Path, repo: Path, old: Path) -> list[subprocess.CompletedProcess[str]]:
    """``check --base`` and each ``diff`` the pull request's comment can come from: from the installed wheel's
    command, and the other formats of the same two-folder diff in this process (what the wheel adds, its files and
    its entry point, the markdown run has shown; the formats are the same code either way)."""
    return [
        _dashgen(venv, repo, "check", "--base", "HEAD", "--format", "markdown"),
        _dashgen(venv, repo, "diff", "--base", "HEAD", "--format", "markdown"),
        _dashgen(venv, repo, "diff", str(old), "dashboards", "--format", "markdown"),
        *(_in_process(repo, "diff", str(old), "dashboards", "--format", fmt) for fmt in ("text", "json")),
    ]


def test_the_pr_comment_names_an_added_dashboard(installed, team_repo, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(team_repo / "dashboards", old)
    shutil.copy2(ROOT / "profiles" / "pd-128.toml", team_repo / "profiles")
    assert _dashgen(installed, team_repo, "build").returncode == 0
    assert _dashgen(installed, team_repo, "rules").returncode == 0
    check, *diffs = _pr_comments(installed, team_repo, old)
    assert check.returncode == 0 and "dashboard added" in check.stdout, check.stdout + check.stderr
    assert "dg-pd-128-cluster.json" in check.stdout
    for diff in diffs:
        assert diff.returncode == 1, diff.stdout + diff.stderr
        assert "dg-pd-128-cluster.json" in diff.stdout and "Traceback" not in diff.stderr, diff.stderr


def test_the_pr_comment_names_a_removed_dashboard(installed, team_repo, tmp_path):
    shutil.copy2(ROOT / "profiles" / "pd-128.toml", team_repo / "profiles")
    assert _dashgen(installed, team_repo, "build").returncode == 0
    assert _dashgen(installed, team_repo, "rules").returncode == 0
    commit_all(team_repo, "a second cluster")
    old = tmp_path / "old"
    shutil.copytree(team_repo / "dashboards", old)
    (team_repo / "profiles" / "pd-128.toml").unlink()
    shutil.rmtree(team_repo / "dashboards" / "pd-128")
    # as the README says: rules removes what a deleted profile left (its rule file, its runbooks in docs/alerts.md)
    assert _dashgen(installed, team_repo, "rules").returncode == 0
    assert not (team_repo / "rules" / "pd-128.yml").exists()
    check, *diffs = _pr_comments(installed, team_repo, old)
    assert check.returncode == 0 and "dashboard removed" in check.stdout, check.stdout + check.stderr
    for diff in diffs:
        assert diff.returncode == 1, diff.stdout + diff.stderr
        assert "dg-pd-128-cluster.json" in diff.stdout and "Traceback" not in diff.stderr, diff.stderr


def test_a_wheel_install_building_in_a_clone_warns_that_its_panels_are_not_used(installed, tmp_path):
    """Issue 29: with ``pip install .`` a build in the clone ignored edits to ./panels without a word; now it says
    where the panels come from (a team repository's own panels/ folder is not a clone and gets no warning)."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "panels", clone / "panels")
    shutil.copytree(ROOT / "profiles", clone / "profiles")
    built = _dashgen(installed, clone, "build", "--profile", "h20-16")
    assert built.returncode == 0 and "edits there are not used" in built.stderr, built.stderr


def test_the_installed_wheel_runs_merge_to_apply_on_the_standin(installed, team_repo):
    """The pull request's build job (check, the bundle), its plan job (the plan to approve, with a read token),
    the reviewer's commit of that plan, and the publish job (the bundle, the approved plan) — each the command the
    workflow init wrote runs, from the wheel — and Grafana holds the build, read back and in the ledger."""
    from publishing import TOKEN
    from standin import GrafanaStandin

    with GrafanaStandin(mode="grafana12", token=TOKEN) as grafana:
        env = {"GRAFANA_URL": grafana.url, "GRAFANA_TOKEN": TOKEN}
        checked = _dashgen(
            installed, team_repo, "check", "--base", "HEAD", "--format", "markdown", "--bundle", "release.bundle.json"
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        plan_args = ("publish", "--bundle", "release.bundle.json", "--approved-plan", "releases/approvals.toml")
        planned = _dashgen(
            installed, team_repo, *plan_args, "--dry-run", "--approvals-out", "approvals.proposed.toml", extra_env=env
        )
        # the empty plan init wrote approves nothing: the new dashboard is refused, naming it, with the file to commit
        assert planned.returncode == 1, planned.stdout + planned.stderr
        assert "dg-h20-16-cluster is not in the approved plan" in planned.stdout, planned.stdout
        assert "Traceback" not in planned.stderr
        proposed = (team_repo / "approvals.proposed.toml").read_text(encoding="utf-8")
        assert 'uid = "dg-h20-16-cluster"' in proposed and "live_version = 0" in proposed
        assert not saves_of(grafana)
        (team_repo / "releases" / "approvals.toml").write_text(proposed, encoding="utf-8")
        (team_repo / "approvals.proposed.toml").unlink()
        (team_repo / ".gitignore").write_text(
            (team_repo / ".gitignore").read_text(encoding="utf-8") + "\nrelease.bundle.json\n", encoding="utf-8"
        )
        commit_all(team_repo, "approve the first release")
        published = _dashgen(installed, team_repo, *plan_args, extra_env=env)
        assert published.returncode == 0, published.stdout + published.stderr
        stored = grafana.stored("dg-h20-16-cluster")
        assert stored is not None and len(saves_of(grafana)) == 1
        ledger = (team_repo / "releases" / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
        assert '"outcome":"published"' in ledger[-1].replace(" ", "")


def saves_of(grafana) -> list[object]:
    from publishing import saves

    return saves(grafana)
