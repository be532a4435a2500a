"""Only our distribution is ever installed: ``dashgen`` on PyPI is another project, ours is ``dashgen-grafana``.

Every install command in the repository's files and in what ``dashgen init`` writes names our distribution (or a
local path, a declared dependency, pip itself); the workflow init writes refuses, in its first step, a spec that is
not ours or not pinned — the same verdicts as ``dashgen.install_spec.problem`` — and init fills the spec from its
options, or writes a placeholder that step refuses."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dashgen.cli import install_spec
from dashgen.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
SHA = "0123456789abcdef0123456789abcdef01234567"
INSTALL = re.compile(r"(?:\bpipx|\bpip3?|-m pip|\buv pip)\s+install\s+((?:[^\n;&|#`),]|\\\n)*)")
THIS = "tests/test_install_spec.py"  # holds a stranger's specs on purpose: the scan must catch them
TEMPLATE = "dashgen/data/init/workflow.yml"  # its spec is filled in by init: tested on init's outputs
OPTIONS_WITH_VALUE = {"-r", "-c", "-e", "-i", "--index-url", "--extra-index-url", "-w", "--python", "--target"}


def _name(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return re.sub(r"[-_.]+", "-", found.group(0)).lower() if found else ""


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {_name(r) for r in requirements}


# Named beside an install command for reasons of their own: pip upgrading itself; the independent v2 decoder a
# test docstring tells how to install (grafana's own SDK).
OTHERS = {"pip", "grafana-foundation-sdk"}


def installed_names(text: str, env: dict[str, str]) -> list[str]:
    """The distribution names the install commands in ``text`` name (a path, ``.`` or ``.[test]``: none)."""
    names = []
    for match in INSTALL.finditer(text):
        words = match.group(1).replace("\\\n", " ")
        for var, value in env.items():
            words = words.replace(f"${var}", value).replace(f"${{{var}}}", value)
        try:
            tokens = shlex.split(words)
        except ValueError:
            tokens = words.split()
        skip = False
        for token in tokens:
            if skip:
                skip = False
                continue
            if token == "@":  # name @ url: the name was read, the url is where it comes from
                skip = True
                continue
            if token.startswith("-"):
                skip = token in OPTIONS_WITH_VALUE and token != "-e"
                continue
            token = token.strip("'\"")
            if not token or token.startswith((".", "/", "$", "<", "{")) or token in {"python", "python3"}:
                continue  # a path, or a variable not set in this file
            names.append(_name(token))
    return names


def spec_values(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"\b(DASHGEN_SPEC):\s*\"([^\"]*)\"", text)}


def check_files(files: dict[str, str]) -> list[str]:
    allowed = {install_spec.DISTRIBUTION} | declared() | OTHERS
    wrong = []
    for name, text in files.items():
        env = spec_values(text)
        if name == TEMPLATE:
            assert env == {"DASHGEN_SPEC": "__DASHGEN_SPEC__"}, "init fills the spec in (tested below)"
            continue
        for value in env.values():
            if _name(value) != install_spec.DISTRIBUTION:
                wrong.append(f"{name}: DASHGEN_SPEC {value!r}")
        wrong += [f"{name}: installs {n!r}" for n in installed_names(text, env) if n not in allowed]
    return wrong


def repository_files() -> dict[str, str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = {}
    for name in listed.splitlines():
        path = ROOT / name
        if name == THIS or name.startswith("dashboards/") or not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            files[name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return files


def init(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["init", "team", *args])
    finally:
        os.chdir(old)
    return result.exit_code, result.output, tmp_path / "team"


def written(repo: Path) -> dict[str, str]:
    return {
        str(p.relative_to(repo)): p.read_text(encoding="utf-8")
        for p in repo.rglob("*")
        if p.is_file() and p.suffix in {".yml", ".yaml", ".md", ".toml", ".py", ""}
    }


def test_the_wheel_is_ours_and_the_scan_catches_a_stranger():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == install_spec.DISTRIBUTION
    assert project["scripts"] == {"dashgen": "dashgen.cli:main"}  # the command keeps its name
    # the scan itself: each of these is a stranger's package and must be caught
    for text in (
        'env:\n  DASHGEN_SPEC: "dashgen==0.1.0"\n',
        "# dashgen must be installed (pipx install dashgen)\n",
        "run: python -m pip install --quiet dashgen[preview]\n",
        "pip3 install -U requests dashgen\n",
    ):
        assert check_files({"x": text}), text


def test_no_install_spec_in_the_repository_names_another_distribution():
    files = repository_files()
    assert ".github/workflows/dashboards.yml" in files and "README.md" in files
    assert check_files(files) == []


@pytest.mark.parametrize(
    ("spec", "ok"),
    [
        (f"dashgen-grafana @ git+https://git.example/sre/dashgen.git@{SHA}", True),
        ("dashgen-grafana==0.4.1", True),
        (install_spec.PLACEHOLDER, False),
        ("dashgen==0.1.0", False),
        ("dashgen", False),
        ("dashgen-grafana", False),  # not pinned
        ("dashgen-grafana>=0.1", False),
        (f"dashgen-grafana @ git+https://git.example/sre/dashgen.git@{SHA[:12]}", False),  # a short sha may move
        ("dashgen-grafana @ git+https://git.example/sre/dashgen.git@main", False),
        (f"dashgen-grafana @ git+http://git.example/sre/dashgen.git@{SHA}", False),
        (f"dashgen-grafana @ git+https://git.example/a b@{SHA}", False),
        # what GitHub or YAML would read in the workflow: an expression (a secret sent to the host), a quote
        (f"dashgen-grafana @ git+https://evil.example/${{{{secrets.GRAFANA_TOKEN}}}}@{SHA}", False),
        (f'dashgen-grafana @ git+https://git.example/a"b@{SHA}', False),
        (f"dashgen-grafana @ git+https://git.example/a\\u000a@{SHA}", False),
        ("dashgen-grafana==0.1.0 dashgen==0.1.0", False),
    ],
)
def test_the_workflow_step_and_problem_agree_on_a_spec(tmp_path, spec, ok):
    code, output, repo = init(
        tmp_path, "--dashgen-repo", "https://git.example/sre/dashgen.git", "--dashgen-commit", SHA
    )
    assert code == 0, output
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "dashboards.yml").read_text(encoding="utf-8"))
    steps = [s for job in workflow["jobs"].values() for s in job["steps"] if s.get("name", "").startswith("Refuse")]
    assert steps, "every job that installs dashgen refuses a foreign spec first"
    for step in steps:
        run = subprocess.run(
            ["bash", "-c", step["run"]],
            env={"PATH": os.environ["PATH"], "DASHGEN_SPEC": spec},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert (run.returncode == 0) is ok, run.stdout + run.stderr
    assert (install_spec.problem(spec) is None) is ok


def test_init_pins_the_commit_it_is_told_and_the_workflow_installs_it_after_the_check(tmp_path):
    code, output, repo = init(
        tmp_path, "--dashgen-repo", "https://git.example/sre/dashgen.git", "--dashgen-commit", SHA
    )
    assert code == 0, output
    text = (repo / ".github" / "workflows" / "dashboards.yml").read_text(encoding="utf-8")
    assert f'DASHGEN_SPEC: "dashgen-grafana @ git+https://git.example/sre/dashgen.git@{SHA}"' in text
    workflow = yaml.safe_load(text)
    installing = 0
    for job in workflow["jobs"].values():
        names = [s.get("name", "") for s in job["steps"]]
        if "Install dashgen" in names:
            installing += 1
            assert names[names.index("Install dashgen") - 1].startswith("Refuse an install spec")
    assert installing >= 2
    assert check_files(written(repo)) == []


def test_init_without_an_origin_writes_the_placeholder_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(install_spec, "installed_from", lambda: None)
    code, output, repo = init(tmp_path)
    assert code == 0, output
    text = (repo / ".github" / "workflows" / "dashboards.yml").read_text(encoding="utf-8")
    assert f'DASHGEN_SPEC: "{install_spec.PLACEHOLDER}"' in text
    assert "DASHGEN_SPEC" in output and "placeholder" in output
    assert check_files(written(repo)) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--dashgen-repo", "https://git.example/x.git", "--dashgen-commit", "main"), "40 hex"),
        (("--dashgen-repo", "https://git.example/x.git"), "go together"),
        (("--dashgen-version", "0.1", "--dashgen-commit", SHA), "give one"),
        (("--dashgen-version", ">=0.1"), "pinned"),
    ],
)
def test_init_refuses_a_spec_that_is_not_ours_pinned(tmp_path, args, fragment):
    code, output, repo = init(tmp_path, *args)
    assert code == 2, output
    assert fragment in output
    assert not repo.exists()


def test_a_refused_repository_url_s_credentials_are_not_echoed(tmp_path):
    """A token in --dashgen-repo must not reach CI (refused: not pinnable) nor the terminal that refuses it."""
    url = "https://deploy:s3cr3t-token@git.example/x.git"
    code, output, repo = init(tmp_path, "--dashgen-repo", url, "--dashgen-commit", SHA)
    assert code == 2 and not repo.exists(), output
    assert "s3cr3t-token" not in output and "https://***@git.example/x.git" in output, output


def test_the_refusal_s_example_spec_survives_redaction_in_the_json_envelope(tmp_path):
    """The envelope's errors are redacted: an example written ``https://REPO@COMMIT`` read as a URL's user-info
    and came out ``https://***@COMMIT``."""
    result = CliRunner().invoke(
        main, ["init", str(tmp_path / "team"), "--dashgen-version", ">=0.1", "--format", "json"]
    )
    (error,) = json.loads(result.stdout)["errors"]
    assert (
        result.exit_code == 2 and "git+https://HOST/REPO@COMMIT" in error["message"] and "***" not in error["message"]
    )


def test_installed_from_reads_the_commit_pip_recorded(monkeypatch):
    class Distribution:
        def __init__(self, text: str) -> None:
            self.text = text

        def read_text(self, name: str) -> str:
            assert name == "direct_url.json"
            return self.text

    recorded = '{"url": "https://git.example/sre/dashgen.git", "vcs_info": {"vcs": "git", "commit_id": "%s"}}'
    monkeypatch.setattr(install_spec.metadata, "distribution", lambda name: Distribution(recorded % SHA))
    assert install_spec.installed_from() == f"dashgen-grafana @ git+https://git.example/sre/dashgen.git@{SHA}"
    monkeypatch.setattr(install_spec.metadata, "distribution", lambda name: Distribution('{"url": "file:///x"}'))
    assert install_spec.installed_from() is None  # a local folder: nothing CI could install


def test_init_starts_from_a_live_profile_and_warns_on_a_retired_one(tmp_path):
    from dashgen.deployment.profile import load_profile

    code, output, repo = init(tmp_path, "--dashgen-version", "0.1.0")
    assert code == 0, output
    (profile,) = (repo / "profiles").glob("*.toml")
    loaded = load_profile(profile)
    assert not loaded.retired and "retired" not in output
    assert 'severity: "critical"' in next((repo / "rules").glob("*.yml")).read_text(encoding="utf-8")
    old = tmp_path / "old"
    old.mkdir()
    code, output, _ = init(old, "--dashgen-version", "0.1.0", "--from", "h20-16")
    assert code == 0 and "h20-16 is retired" in output and "never page" in output
