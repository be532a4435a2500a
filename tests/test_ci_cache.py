"""The CI workflows keep dashgen's cache folder between runs: the workflow ``dashgen init`` writes and the
repository's own set ``DASHGEN_CACHE_DIR`` (the folder dashgen then writes) before any dashgen command that builds,
restore it with actions/cache keyed by the hash of the test and panel modules with a prefix to fall back on (a
pull request's check is warm except for the modules it changed), and only in the job that holds no Grafana token."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml
from click.testing import CliRunner

from dashgen.cli.app import main
from dashgen.files import cache_dir

ROOT = Path(__file__).resolve().parent.parent


def _workflows(tmp_path: Path, monkeypatch) -> dict[str, dict]:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["init", "team"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {
        name: yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, path in (
            ("init", tmp_path / "team" / ".github" / "workflows" / "dashboards.yml"),
            ("repository", ROOT / ".github" / "workflows" / "dashboards.yml"),
        )
    }


def test_the_check_job_restores_and_keeps_the_cache_folder_dashgen_writes(tmp_path, monkeypatch):
    workflows = _workflows(tmp_path, monkeypatch)
    assert sorted(workflows) == ["init", "repository"]
    for name, workflow in workflows.items():
        cached = []
        for job_name, job in workflow["jobs"].items():
            steps = job["steps"]
            caches = [i for i, step in enumerate(steps) if str(step.get("uses", "")).startswith("actions/cache@")]
            builds = [i for i, step in enumerate(steps) if "dashgen check" in step.get("run", "")]
            if not caches:
                assert not builds, f"{name}: {job_name} checks without the cache folder"
                continue
            assert "secrets." not in yaml.safe_dump(job), f"{name}: {job_name} holds a token and restores a cache"
            (at,) = caches
            assert builds and at < min(builds), f"{name}: the cache is restored after the check"
            setting = [i for i, step in enumerate(steps[:at]) if "DASHGEN_CACHE_DIR" in step.get("run", "")]
            assert setting, f"{name}: DASHGEN_CACHE_DIR is not set before the cache step"
            # the step's own shell line, run as the runner runs it: the folder it names is the one dashgen uses
            runner_temp, env_file = tmp_path / f"{name}-temp", tmp_path / f"{name}-env"
            env = {**os.environ, "RUNNER_TEMP": str(runner_temp), "GITHUB_ENV": str(env_file)}
            subprocess.run(["bash", "-c", steps[setting[-1]]["run"]], env=env, check=True, timeout=10)
            variable, _, value = env_file.read_text(encoding="utf-8").strip().partition("=")
            assert variable == "DASHGEN_CACHE_DIR"
            with_ = steps[at]["with"]
            assert with_["path"].replace("${{ runner.temp }}", str(runner_temp)) == value
            monkeypatch.setenv("DASHGEN_CACHE_DIR", value)
            assert cache_dir() == Path(value)
            key, restore = with_["key"], with_["restore-keys"]
            assert "hashFiles('tests/**/*.py', 'panels/**/*.py')" in key, f"{name}: {key}"
            assert key.startswith(restore) and restore.endswith("-") and "hashFiles" not in restore, (
                f"{name}: {restore}"
            )
            cached.append(job_name)
        assert cached, f"{name}: no job keeps dashgen's cache folder"
