"""Merge-to-apply on a team repository and the Grafana stand-in: the pull request's check builds a release bundle
(``check --bundle``) and plans it (``publish --dry-run --bundle --approvals-out``); a reviewer commits that plan;
the publish on main pushes the bundle (no panel module runs) and applies exactly the approved plan — refusing,
naming the dashboard, a build that changed since the plan, a Grafana that changed since the plan, and a key the
reviewer did not approve."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from gitrepo import commit_all, git
from publishing import TOKEN, grafana12_standin, saves

from dashgen.cli.app import COMMANDS, main
from dashgen.publish import approved_plan

grafana = pytest.fixture()(grafana12_standin)
UID = "dg-h20-16-cluster"
MARKER = "team-code-ran"


def dashgen(cwd: Path, *args: str):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), env={"GRAFANA_URL": "", "GRAFANA_TOKEN": TOKEN})
    finally:
        os.chdir(old)


@pytest.fixture()
def team(tmp_path: Path) -> Path:
    """A team repository with a panel module that leaves a mark whenever it is imported (team code ran)."""
    assert dashgen(tmp_path, "init", "team", "--from", "h20-16").exit_code == 0  # a small profile
    repo = tmp_path / "team"
    example = (repo / "panels" / "example_panels.py").read_text(encoding="utf-8")
    (repo / "panels" / "marked.py").write_text(
        example + f"\nfrom pathlib import Path as _Path\n\n_Path(__file__).with_name({MARKER!r}).write_text('ran')\n",
        encoding="utf-8",
    )
    profile = repo / "profiles" / "h20-16.toml"
    text = profile.read_text(encoding="utf-8")
    listed = 'extra_modules = ["marked"]'
    profile.write_text(
        text.replace("[dashboard]\n", f"[dashboard]\n{listed}\n", 1)
        if "[dashboard]\n" in text
        else text + f"\n[dashboard]\n{listed}\n",
        encoding="utf-8",
    )
    assert dashgen(repo, "build").exit_code == 0
    assert dashgen(repo, "rules").exit_code == 0
    (repo / "panels" / MARKER).unlink()
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + f"\npanels/{MARKER}\n*.bundle.json\n")
    git(repo, "init", "-q")
    commit_all(repo, "dashboards as code")
    return repo


def pr_check(repo: Path, name: str) -> Path:
    """What the pull request's build job does: check, and keep the checked build as a bundle."""
    bundle = repo / f"{name}.bundle.json"
    checked = dashgen(repo, "check", "--bundle", str(bundle))
    assert checked.exit_code == 0, checked.output[-3000:]
    assert bundle.exists()
    return bundle


def plan(repo: Path, grafana, bundle: Path) -> tuple[str, str]:
    """What the pull request's plan job does (no team code): the plan text, and the approvals file to commit."""
    (repo / "panels" / MARKER).unlink(missing_ok=True)
    out = repo / "releases" / "approvals.toml"
    result = dashgen(
        repo, "publish", "--grafana-url", grafana.url, "--bundle", str(bundle), "--dry-run", "--approvals-out", str(out)
    )
    assert result.exit_code in (0, 1), result.output[-3000:]
    assert not (repo / "panels" / MARKER).exists(), "planning a bundle ran a panel module"
    return result.output, out.read_text(encoding="utf-8")


def publish_on_main(repo: Path, grafana, bundle: Path):
    (repo / "panels" / MARKER).unlink(missing_ok=True)
    result = dashgen(
        repo,
        "publish",
        "--grafana-url",
        grafana.url,
        "--bundle",
        str(bundle),
        "--approved-plan",
        "releases/approvals.toml",
    )
    assert not (repo / "panels" / MARKER).exists(), "the publish job ran a panel module"
    return result


def change_queries(repo: Path) -> None:
    path = repo / "profiles" / "h20-16.toml"
    path.write_text(path.read_text(encoding="utf-8") + '\n[labels]\ngpu = "gpu_index"\n', encoding="utf-8")
    assert dashgen(repo, "build").exit_code == 0 and dashgen(repo, "rules").exit_code == 0


def test_the_reviewed_plan_is_what_main_applies(team, grafana):
    first = pr_check(team, "first")
    text, approvals = plan(team, grafana, first)
    assert UID in text
    planned = approved_plan.parse(approvals, "approvals.toml").dashboards[UID]
    assert planned.live_version == 0 and planned.approve == ()  # new: nothing to approve
    commit_all(team, "approve the first release")
    published = publish_on_main(team, grafana, first)
    assert published.exit_code == 0, published.output[-3000:]
    stored = grafana.stored(UID)
    assert stored is not None and grafana.stored_version(UID) == 1

    # a change of existing queries: the plan names the keys; the old approved plan does not apply to the new build
    change_queries(team)
    commit_all(team, "gpu label")
    second = pr_check(team, "second")
    stale = publish_on_main(team, grafana, second)
    assert stale.exit_code == 1
    assert f"plan:{UID}" in stale.output and "changed after the plan was reviewed" in stale.output
    assert len(saves(grafana)) == 1  # only the first release wrote
    text, approvals = plan(team, grafana, second)
    keys = approved_plan.parse(approvals, "approvals.toml").dashboards[UID].approve
    assert keys and all(key in text for key in keys)

    # the reviewer approves all but one key: that change stays refused, naming its key
    held_back, *rest = keys
    (team / "releases" / "approvals.toml").write_text(
        approvals.replace(f'"{held_back}", ', "").replace(f', "{held_back}"', "").replace(f'"{held_back}"', ""),
        encoding="utf-8",
    )
    commit_all(team, "approve all but one")
    partial = publish_on_main(team, grafana, second)
    assert partial.exit_code == 1 and held_back in partial.output and len(saves(grafana)) == 1

    # all approved, but a person saves in Grafana after the plan: refused, naming the dashboard and the versions
    (team / "releases" / "approvals.toml").write_text(approvals, encoding="utf-8")
    commit_all(team, "approve the gpu label change")
    grafana.simulate_ui_save(UID, lambda d: d.update(title="edited by a person"))
    moved = publish_on_main(team, grafana, second)
    assert moved.exit_code == 1
    assert f"{UID}: Grafana changed since the plan: it held version 1 when planned and holds version 2" in moved.output
    assert len(saves(grafana)) == 1

    # planned again (the overwrite is now in the plan, for the reviewer to see) and applied as approved
    text, approvals = plan(team, grafana, second)
    assert f"overwrite-live:{UID}" in approvals
    commit_all(team, "approve again, overwriting the person's edit")
    applied = publish_on_main(team, grafana, second)
    assert applied.exit_code == 0, applied.output[-3000:]
    assert grafana.stored(UID)["title"] != "edited by a person"
    lines = [json.loads(line) for line in (team / "releases" / "ledger.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in lines if r["outcome"] != "refused"] == ["published", "published"]
    assert lines[-1]["outcome"] == "published"  # each refusal above was recorded, and wrote nothing
    assert lines[-1]["git_commit"] == json.loads(second.read_text())["commit"]


def test_the_first_push_after_init_publishes_nothing_and_says_the_first_release_goes_through_a_pull_request(
    team, grafana
):
    # init commits the empty approved plan; pushing main straight away runs the publish job on it
    bundle = pr_check(team, "first")
    first = publish_on_main(team, grafana, bundle)
    assert first.exit_code == 0, first.output[-3000:]
    lines = [line for line in first.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "pull request" in lines[0] and "releases/approvals.toml" in lines[0], first.output
    assert saves(grafana) == [] and not (team / "releases" / "ledger.jsonl").exists()  # no ledger line to commit
    words = ["publish", "--grafana-url", grafana.url, "--bundle", str(bundle), "--approved-plan"]
    as_json = dashgen(team, *words, "releases/approvals.toml", "--format", "json")
    envelope = json.loads(as_json.stdout)
    assert as_json.exit_code == 0 and envelope["ok"] and envelope["results"]["outcomes"] == [], as_json.output
    # the first push may come before the repository's GRAFANA_URL variable is set: nothing needs it yet
    unset = dashgen(team, "publish", "--bundle", str(bundle), "--approved-plan", "releases/approvals.toml")
    assert unset.exit_code == 0 and "pull request" in unset.output, unset.output
    assert not (team / "releases" / "ledger.jsonl").exists()


def test_an_emptied_approved_plan_after_a_release_still_refuses_the_changed_dashboards(team, grafana):
    first = pr_check(team, "first")
    plan(team, grafana, first)
    commit_all(team, "approve the first release")
    assert publish_on_main(team, grafana, first).exit_code == 0
    change_queries(team)
    (team / "releases" / "approvals.toml").write_text(approved_plan.render_empty(), encoding="utf-8")
    commit_all(team, "gpu label, and the approved plan as init wrote it")
    refused = publish_on_main(team, grafana, pr_check(team, "second"))
    assert refused.exit_code == 1 and f"plan:{UID}" in refused.output, refused.output[-3000:]
    assert len(saves(grafana)) == 1


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("commit = 1\n", "commit must be a string"),
        ("[[dashboard]]\nuid = 'x'\nbuild_sha = 'abc'\nlive_version = 1\n", "64-hex"),
        ("[[dashboard]]\nuid = 'x'\nbuild_sha = '" + "a" * 64 + "'\nlive_version = -1\n", "live_version"),
        ("[[dashboard]]\nuid = 'x'\nbuild_sha = '" + "a" * 64 + "'\nlive_version = 1\nfoo = 2\n", "unknown field"),
        (
            "[[dashboard]]\nuid = 'x'\nbuild_sha = '" + "a" * 64 + "'\nlive_version = 1\napprove = ['plan:x']\n",
            "cannot be approved",
        ),
        ("[[dashboard]]\nuid = 'x'\nbuild_sha = '" + "a" * 64 + "'\nlive_version = 1\n" * 2, "not TOML"),
        ("release = 1\n", "unknown key"),
    ],
)
def test_a_malformed_approved_plan_is_an_input_error_naming_the_file(tmp_path, text, fragment):
    path = tmp_path / "approvals.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(
        main,
        ["publish", "--grafana-url", "http://127.0.0.1:9", "--approved-plan", str(path)],
        env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""},
    )
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and fragment in result.output


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"{", "not JSON"),
        (b'{"format": "other"}', "not a release bundle"),
        (b'{"format": "dashgen-release-bundle", "version": 9}', "version 9"),
        (
            b'{"format": "dashgen-release-bundle", "version": 1, "commit": "c", "dashboards": [{"profile": "p", '
            b'"uid": "a", "min_refresh_interval": "5s", "panel_keys": {}, "document": {"uid": "b"}}]}',
            "not 'a'",
        ),
    ],
)
def test_a_malformed_bundle_is_an_input_error_naming_the_file(tmp_path, data, fragment):
    path = tmp_path / "release.bundle.json"
    path.write_bytes(data)
    result = CliRunner().invoke(
        main,
        ["publish", "--grafana-url", "http://127.0.0.1:9", "--bundle", str(path)],
        env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""},
    )
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and fragment in result.output


def workflows(tmp_path: Path) -> dict[str, str]:
    assert dashgen(tmp_path, "init", "team").exit_code == 0
    repository = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "dashboards.yml"
    return {
        "init": (tmp_path / "team" / ".github" / "workflows" / "dashboards.yml").read_text(encoding="utf-8"),
        "repository": repository.read_text(encoding="utf-8"),
    }


def test_every_action_is_pinned_by_a_commit_with_its_tag_named(tmp_path):
    found = workflows(tmp_path)
    assert len(found) >= 2  # the repository's own workflow and the one init writes
    for name, text in found.items():
        uses = [line.strip() for line in text.splitlines() if line.strip().lstrip("- ").startswith("uses:")]
        assert uses, name
        for line in uses:
            assert re.fullmatch(r"(- )?uses: [\w.-]+/[\w.-]+@[0-9a-f]{40}  # v\d+(\.\d+)*", line), f"{name}: {line}"


def test_the_job_holding_the_write_token_runs_no_team_code(tmp_path):
    """Team code (panel modules) runs only where dashgen builds: check, build, rules... — never in a job that
    holds a Grafana token; the publish job pushes the bundle the build job checked, the plan job plans it."""
    workflow = yaml.safe_load(workflows(tmp_path)["init"])
    building = {"check", "build", "rules", "export", "preview", "index", "lint", "diff", "import", "validate-queries"}
    holders = {}
    for name, job in workflow["jobs"].items():
        text = yaml.safe_dump(job)
        secrets = set(re.findall(r"secrets\.(\w+)", text))
        commands = [
            (m.group(1), m.group(2))
            for step in job["steps"]
            for m in re.finditer(r"\bdashgen ([a-z-]+)([^\n]*(?:\\\n[^\n]*)*)", step.get("run", ""))
            if m.group(1) in COMMANDS
        ]
        if secrets:
            holders[name] = secrets
            assert not {c for c, _ in commands} & building, f"{name} holds {secrets} and builds"
            assert all("--bundle" in rest for c, rest in commands if c == "publish"), name
            assert not re.search(r"pip\s+install\s+(-e\s+)?\.", text), name  # the clone's code: never here
        if "GRAFANA_TOKEN" in secrets:
            assert {c for c, _ in commands} == {"publish"}, name
    assert holders == {"plan": {"GRAFANA_READ_TOKEN"}, "publish": {"GRAFANA_TOKEN"}}
    assert workflow["jobs"]["publish"]["needs"] == "build" and workflow["jobs"]["plan"]["needs"] == "build"
    build = yaml.safe_dump(workflow["jobs"]["build"])
    assert "--bundle release.bundle.json" in build and "secrets." not in build


def test_the_plan_job_s_script_appends_the_plan_and_the_file_to_commit(team, grafana):
    """The plan step of init's workflow, run by bash as the runner would (the installed dashgen on PATH, the
    build job's bundle and comment beside it): the comment gets the plan and the approvals file in inert fences,
    and one hidden marker at its top."""
    import subprocess
    import sys

    bundle = pr_check(team, "release")
    bundle.rename(team / "release.bundle.json")
    (team / "dashgen-comment.md").write_text("<!-- dashgen-diff -->\n**dashgen check: ok**\n", encoding="utf-8")
    workflow = yaml.safe_load((team / ".github" / "workflows" / "dashboards.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in workflow["jobs"]["plan"]["steps"] if s.get("name", "").startswith("The release plan")]
    summary = team / "summary.md"
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(team),
        "GRAFANA_URL": grafana.url,
        "GRAFANA_TOKEN": TOKEN,
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=team, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    comment = (team / "dashgen-comment.md").read_text(encoding="utf-8")
    assert (
        comment.startswith("<!-- dashgen-diff -->\n**dashgen check: ok**") and comment.count("<!-- dashgen-diff") == 1
    )
    assert "### Release plan" in comment and "**Release plan: not approved yet.**" in comment
    assert f'uid = "{UID}"' in comment and "~~~~~~~~~~" in comment
    assert "### Release plan" in summary.read_text(encoding="utf-8")
    assert not saves(grafana)


def test_a_refused_dry_run_s_json_error_names_the_dashboards(team, grafana):
    """The plan job reads the envelope, which has no plan text above it: its error names what was refused."""
    bundle = pr_check(team, "first")
    result = dashgen(
        team,
        *["publish", "--grafana-url", grafana.url, "--bundle", str(bundle), "--dry-run"]
        + ["--approved-plan", "releases/approvals.toml", "--format", "json"],
    )
    answer = json.loads(result.stdout)
    assert result.exit_code == 1 and answer["exit_code"] == 1
    assert [e["message"] for e in answer["errors"]] == [f"the plan has refusals: 1 dashboard(s) refused: {UID}"]
