"""``dashgen check``: a fresh tree passes; a stale, missing or extra dashboard fails with the diff."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from diff_documents import generated, panel

from dashgen.cli.app import main
from dashgen.render.memo import MEMOS

ROOT = Path(__file__).resolve().parent.parent

# every test runs ``dashgen check`` (a build and a lint of every profile) over a copied tree: 1-5 s each, about
# a third of the fast set's time; ``make test`` runs them
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("check")
    runner = CliRunner()
    built = runner.invoke(main, ["--profiles-dir", str(ROOT / "profiles"), "build", "--out", str(out / "d")])
    assert built.exit_code == 0, built.output
    result = runner.invoke(main, ["--profiles-dir", str(ROOT / "profiles"), "rules", "--out", str(out / "r")])
    assert result.exit_code == 0, result.output
    return out


def check(directory: Path, *extra: str):
    return CliRunner().invoke(
        main,
        [
            "--profiles-dir",
            str(ROOT / "profiles"),
            "check",
            "--dashboards",
            str(directory / "d"),
            "--rules-dir",
            str(directory / "r"),
            *extra,
        ],
    )


def copy_tree(source: Path, target: Path) -> Path:
    for path in source.rglob("*"):
        if path.is_file():
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes())
    return target


def test_a_fresh_build_passes(fresh):
    result = check(fresh, "--format", "json")
    report = json.loads(result.output)["results"]
    assert report["stale"] == [] and report["missing"] == [] and report["extra"] == [] and report["rules"] == []
    assert result.exit_code == (0 if report["ok"] else 1)
    assert report["ok"] == (not [f for f in report["lint"] if f["severity"] == "error"])


def test_a_stale_dashboard_fails_with_the_panel_diff(fresh, tmp_path):
    tree = copy_tree(fresh, tmp_path)
    path = tree / "d" / "h20-16" / "dg-h20-16-cluster.json"
    document = json.loads(path.read_text())
    panel = next(p for p in document["panels"] if p.get("targets"))
    panel["targets"][0]["expr"] = "up"
    path.write_text(json.dumps(document))
    result = check(tree)
    assert result.exit_code == 1
    assert "stale: " in result.output and "h20-16/dg-h20-16-cluster.json" in result.output
    assert panel["title"] in result.output


def test_missing_and_extra_dashboards_fail(fresh, tmp_path):
    tree = copy_tree(fresh, tmp_path)
    (tree / "d" / "video-200" / "dg-video-200-cluster.json").unlink()
    (tree / "d" / "video-200" / "dg-video-200-old.json").write_text("{}")
    result = check(tree, "--format", "json")
    report = json.loads(result.output)["results"]
    assert result.exit_code == 1
    assert report["missing"] == ["video-200/dg-video-200-cluster.json"]
    assert report["extra"] == ["video-200/dg-video-200-old.json"]


def test_a_file_name_s_control_sequences_are_shown_as_text(fresh, tmp_path):
    tree = copy_tree(fresh, tmp_path)
    (tree / "d" / "video-200" / "\x1b]8;;https:evil\x1b\\x\x9b2J\u202e.json").write_text("{}")
    result = check(tree)
    assert result.exit_code == 1
    extra = [line for line in result.output.splitlines() if line.startswith("extra: ")]
    assert len(extra) == 1 and "\\x1b]8;;https:evil\\x1b\\x\\x9b2J\\u202e.json" in extra[0], result.output
    shown = [ch for ch in result.output if (ch < " " and ch != "\n") or "\x7f" <= ch <= "\x9f" or ch == "\u202e"]
    assert shown == [], result.output


# --- the pull-request comment (issue 17) ---------------------------------------------------------------------


def renamed_profiles(target: Path) -> Path:
    """Every profile with its node label renamed: nearly every query of every dashboard changes."""
    target.mkdir()
    for path in sorted((ROOT / "profiles").glob("*.toml")):
        (target / path.name).write_text(path.read_text() + '\n[labels]\nnode = "hostname"\n')
    return target


@pytest.fixture(scope="module")
def label_rename(fresh, tmp_path_factory):
    """``dashgen check --format markdown --report`` of the committed (old) build against renamed profiles."""
    work = tmp_path_factory.mktemp("rename")
    profiles = renamed_profiles(work / "profiles")
    report = work / "report.md"
    result = CliRunner().invoke(
        main,
        [
            "--profiles-dir",
            str(profiles),
            "check",
            "--dashboards",
            str(fresh / "d"),
            "--rules-dir",
            str(fresh / "r"),
            "--format",
            "markdown",
            "--report",
            str(report),
        ],
    )
    return result, report.read_text(encoding="utf-8"), profiles


@pytest.fixture(scope="module")
def expected_diff(fresh: Path, label_rename):
    """The diff of the committed build and the renamed profiles' build, computed apart from ``check`` (once: the
    tests only read it)."""
    from dashgen.build import build_all
    from dashgen.cli.diff_cmd import compare
    from dashgen.deployment.profile import load_profiles

    _result, _report, profiles = label_rename
    new = {b.relative_path().as_posix(): b.document for b in build_all(load_profiles(directory=profiles))}
    old = {name: json.loads((fresh / "d" / name).read_text()) for name in new}
    return compare(old, new)


def test_a_label_rename_across_all_profiles_gives_a_comment_github_accepts(label_rename, expected_diff):
    result, _report, _profiles = label_rename
    assert result.exit_code == 1  # stale
    comment = result.output
    assert len(comment) <= 60_000
    files = expected_diff
    assert len(files) == 4 and all(f.diff and f.diff.has_semantic_changes for f in files)
    for f in files:
        assert f"| {f.name.split('/')[0]} | `{f.diff.uid}` | {f.diff.change_count} |" in comment
    total = sum(f.diff.change_count for f in files)
    left = re.search(r"\*\*(\d+) of (\d+) changes left out\*\*", comment)
    assert left and int(left.group(2)) == total and 0 < int(left.group(1)) < total, comment[-600:]
    assert "has every change" in comment and "the same change in 4 profiles" in comment
    from dashgen.diff.comment import RANKS

    ranks = [min(RANKS[k] for k in kind.split(", ")) for kind in re.findall(r"<b>(.*?)</b> · ", comment)]
    assert ranks and ranks == sorted(ranks) and ranks[0] == RANKS["query"]  # the most important first


def test_the_report_holds_every_change(label_rename, expected_diff):
    _result, report, _profiles = label_rename
    assert "left out" not in report and "details in the full report" not in report
    summaries = [html.unescape(s) for s in re.findall(r"<summary>(.*?)</summary>", report)]
    for f in expected_diff:
        profile = f.name.split("/")[0]
        for pc in f.diff.changed_panels:
            label = f'panel "{pc.title}" (id {pc.id}) · {len(pc.changes)} field change(s)'
            assert any(label in s and profile in s.rsplit(" · ", 1)[1] for s in summaries), (profile, label)
        for vc in f.diff.changed_variables:
            assert any(f"variable ${vc.name}" in s and profile in s for s in summaries), (profile, vc.name)
    assert report.count("```diff") >= 100


def test_check_markdown_with_base_shows_the_pull_request_s_change(fresh, tmp_path):
    tree = copy_tree(fresh, tmp_path / "repo")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tree, check=True, capture_output=True, timeout=60)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "base")
    clean = check(tree, "--format", "markdown", "--base", "HEAD")
    assert "### Changes against `HEAD`" in clean.output and "No semantic changes" in clean.output
    bad = check(tree, "--format", "markdown", "--base", "no-such-ref")
    assert bad.exit_code == 2 and "no-such-ref" in bad.output


@pytest.mark.parametrize(
    "path", [ROOT / ".github" / "workflows" / "dashboards.yml", ROOT / "dashgen" / "data" / "init" / "workflow.yml"]
)
def test_the_workflow_posts_the_bounded_comment_and_keeps_the_full_report(path):
    workflow = path.read_text()
    assert "dashgen check --base" in workflow and "--format markdown" in workflow and "--report " in workflow
    assert "actions/upload-artifact" in workflow and "GITHUB_STEP_SUMMARY" in workflow
    assert "<!-- dashgen-diff -->" in workflow and "updateComment" in workflow
    assert "fork" in workflow and "error.status === 403" in workflow  # a read-only token falls back to the summary
    # only its own bot's comment is updated: anyone can post a comment that starts with the marker (issue 32)
    find = next(line for line in workflow.splitlines() if "comments.find(" in line)
    assert "github-actions[bot]" in find and "'Bot'" in find


# --- the bounded markdown, synthetic --------------------------------------------------------------------------


def _profile_files(changes: int, query_chars: int = 3000) -> dict[str, dict[str, Any]]:
    """Four "profiles" of one dashboard, each with ``changes`` panels whose long queries all change."""
    sides: dict[str, dict[str, Any]] = {"old": {}, "new": {}}
    for profile in ("alpha-1", "beta-22", "gamma-333", "delta-4444"):
        for side in sides:
            doc = generated()
            doc["uid"] = f"dg-{profile}-cluster"
            label = "node" if side == "old" else "hostname"
            doc["panels"] = [
                panel(
                    i,
                    f"panel {i}",
                    " or ".join(
                        f'max by ({label}) (m_{i}_{k}{{cluster="{profile}", {label}=~"${label}"}})'
                        for k in range(query_chars // 60)
                    ),
                    y=i * 8,
                )
                for i in range(1, changes + 1)
            ]
            sides[side][f"{profile}/dg-{profile}-cluster.json"] = doc
    return sides


def test_markdown_stays_within_the_limit_whatever_the_change() -> None:
    from dashgen.cli.diff_cmd import compare
    from dashgen.diff.comment import COMMENT_LIMIT, Section, render_comment, render_markdown

    # 30 changed panels a profile: the full report is about 7x the limit (the assertion below holds it above 4x);
    # each changed query's block diff costs ~10 ms of difflib, so 120 a profile took ~6 s for the same property
    sides = _profile_files(changes=30)
    files = compare(sides["old"], sides["new"])
    full = render_markdown(files, limit=None)
    assert len(full) > 4 * COMMENT_LIMIT
    bounded = render_markdown(files)
    assert len(bounded) <= COMMENT_LIMIT
    for name in sides["new"]:
        assert f"`{name.split('/')[1][:-5]}`" in bounded  # the summary table names every dashboard
    assert "the same change in 4 profiles: alpha-1, beta-22, delta-4444, gamma-333" in bounded
    for limit in (3_000, 12_000):
        text = render_comment([Section("Changes", files)], limit=limit, preface=["x" * 200] * 40)
        assert len(text) <= limit


def test_identical_changes_are_grouped_and_the_most_important_come_first() -> None:
    from dashgen.cli.diff_cmd import compare
    from dashgen.diff.comment import group_items

    old_docs, new_docs = {}, {}
    for profile in ("aaa", "bbb", "ccc"):
        old, new = generated(), generated()
        old["uid"] = new["uid"] = f"dg-{profile}"
        new["panels"][1]["fieldConfig"]["defaults"]["unit"] = "reqps"  # the same in all three
        new["panels"][2]["gridPos"]["y"] = 99
        if profile == "bbb":
            new["panels"].pop(0)  # a removed panel: first
        else:
            new["panels"][0]["targets"][0]["expr"] = f'max by (node) (x{{cluster="{profile}"}})'  # same, normalised
        old_docs[f"{profile}/d.json"], new_docs[f"{profile}/d.json"] = old, new
    items = group_items(compare(old_docs, new_docs))
    assert [(i.kind, len(i.members)) for i in items] == [("panel removed", 1), ("query", 2), ("unit", 3), ("layout", 3)]


# --- what check does once (issue 42: check at 10,000 GPUs within 1.5 x the build) ---------------------------------


def test_check_composes_each_profile_once_and_reads_back_only_rule_files_that_changed(fresh, tmp_path, monkeypatch):
    """The build, the rule files' dashboard links and the panel index read the same dashboards: each profile is
    composed once. A rule file equal to the committed one is not read back again (dashgen rules read those bytes
    back before writing them); one that differs is, so an emitter fault is still refused."""
    import dashgen.dashboard
    import dashgen.render.yamlemit
    from dashgen.errors import BuildValidationError

    composed: list[str] = []
    topology_of = dashgen.dashboard.topology_of
    monkeypatch.setattr(dashgen.dashboard, "topology_of", lambda p: composed.append(p.name) or topology_of(p))
    read_back: list[str] = []
    reads_back = dashgen.render.yamlemit.check_reads_back
    monkeypatch.setattr(
        dashgen.render.yamlemit,
        "check_reads_back",
        lambda text, value: read_back.append(text) or reads_back(text, value),
    )
    committed = {path.name: path.read_text() for path in (fresh / "r").glob("*.yml")}
    assert committed

    for (
        memo
    ) in MEMOS:  # the process's memos hold the fixture's build: check starts from nothing, as its own process does
        memo.clear()
    result = check(fresh, "--format", "json")
    assert json.loads(result.output)["results"]["rules"] == [], result.output
    profiles = sorted(p.stem for p in (ROOT / "profiles").glob("*.toml"))
    assert sorted(composed) == profiles  # once each (three times each before)
    assert not set(read_back) & set(committed.values())

    tree = copy_tree(fresh, tmp_path)
    name, text = sorted(committed.items())[0]
    (tree / "r" / name).write_text(text + "# edited\n")
    read_back.clear()
    result = check(tree, "--format", "json")
    assert json.loads(result.output)["results"]["rules"] == [
        f"{tree / 'r' / name}: stale; run dashgen rules and commit it"
    ]
    assert [t for t in read_back if t in committed.values()] == [text]

    def refused(text, value):
        raise BuildValidationError(["generated YAML does not read back as written: a fault"])

    monkeypatch.setattr(dashgen.render.yamlemit, "check_reads_back", refused)
    result = check(tree)
    assert result.exit_code != 0 and "does not read back as written: a fault" in result.output
    assert "Traceback" not in result.output
