"""``dashgen check``: a fresh tree passes; a stale, missing or extra dashboard fails with the diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dashgen.cli.app import main

ROOT = Path(__file__).resolve().parent.parent


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
    return CliRunner().invoke(main, ["--profiles-dir", str(ROOT / "profiles"), "check", "--dashboards",
                                     str(directory / "d"), "--rules-dir", str(directory / "r"), *extra])


def copy_tree(source: Path, target: Path) -> Path:
    for path in source.rglob("*"):
        if path.is_file():
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes())
    return target


def test_a_fresh_build_passes(fresh):
    result = check(fresh, "--format", "json")
    report = json.loads(result.output)
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
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert report["missing"] == ["video-200/dg-video-200-cluster.json"]
    assert report["extra"] == ["video-200/dg-video-200-old.json"]
