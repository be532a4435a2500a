"""``dashgen check`` and ``dashgen diff --base`` over what a release keeps in Grafana besides dashboards: the
library-panel element files are checked like dashboards (stale, missing, extra); a committed Grafana rule file is
checked fresh against the options it was written with; and the pull request's comment shows each changed
Grafana-managed alert once (whichever files hold it) and each changed folder permission of ``dashgen.toml``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from dashgen.cli.app import main
from dashgen.diff.permission_changes import permission_changes
from dashgen.render.library import element_uid

ROOT = Path(__file__).resolve().parent.parent
PROFILE = "long-context-64"
KEY = "gpu_health.pcie_replays"
LIB = element_uid(PROFILE, KEY)

pytestmark = pytest.mark.slow  # each test builds and checks a profile (a few seconds)


def make_repo(tmp_path: Path, *, ruler: str = "prometheus", shared: bool = False) -> Path:
    root = tmp_path / "repo"
    (root / "profiles").mkdir(parents=True)
    text = (ROOT / "profiles" / f"{PROFILE}.toml").read_text()
    extra = f'ruler = "{ruler}"\n' + (f'library_panels = ["{KEY}"]\n' if shared else "")
    (root / "profiles" / f"{PROFILE}.toml").write_text(text.replace("[dashboard]\n", "[dashboard]\n" + extra, 1))
    return root


def dg(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--profiles-dir", str(root / "profiles"), *args])


def regenerate(root: Path, *rule_args: str) -> None:
    built = dg(root, "build", "--out", str(root / "d"))
    assert built.exit_code == 0, built.output
    rules = dg(root, "rules", "--out", str(root / "r"), *rule_args)
    assert rules.exit_code == 0, rules.output


def commit(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=60)

    if not (root / ".git").exists():
        git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "base")


def check(root: Path, *extra: str) -> Result:
    return dg(root, "check", "--dashboards", str(root / "d"), "--rules-dir", str(root / "r"), *extra)


def set_objective(root: Path, objective: str) -> None:
    path = root / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace("objective = 0.99\n", f"objective = {objective}\n", 1))


def test_check_fails_on_a_stale_missing_or_extra_library_panel_file(tmp_path):
    root = make_repo(tmp_path, shared=True)
    regenerate(root)
    element = root / "d" / PROFILE / "library-panels" / f"{LIB}.json"
    assert element.is_file()
    assert "library-panels" not in check(root).output  # (the copied profile has lint findings of its own)
    document = json.loads(element.read_text())
    document["model"]["title"] = "edited by hand"
    element.write_text(json.dumps(document, indent=2))
    stale = check(root)
    assert stale.exit_code == 1 and f"stale: {element} differs from a fresh build" in stale.output
    assert "edited by hand" in stale.output  # the diff of the element, as for a dashboard
    element.unlink()
    missing = check(root)
    assert missing.exit_code == 1 and f"missing: {element}" in missing.output
    regenerate(root)
    other = element.with_name("dgl-gone.json")
    other.write_text(element.read_text())
    extra = check(root)
    assert extra.exit_code == 1 and f"extra: {other}" in extra.output


def test_a_committed_grafana_rule_file_is_checked_fresh_with_the_options_it_was_written_with(tmp_path):
    root = make_repo(tmp_path, ruler="grafana")
    options = ("--datasource-uid", "vm-eu", "--folder-uid", "llm-alerts", "--folder-title", "LLM alerts")
    regenerate(root, "--format", "prometheus", "--format", "grafana", "--format", "grafana-operator", *options)
    path = root / "r" / f"{PROFILE}.grafana-alerting.yaml"
    fresh = check(root)
    assert "rules: " not in fresh.output and path.is_file(), fresh.output
    path.write_text(path.read_text().replace('for: "5m"', 'for: "1m"', 1).replace("for: 5m", "for: 1m", 1))
    stale = check(root)
    assert stale.exit_code == 1 and f"rules: {path}: stale" in stale.output


def test_the_pr_comment_shows_a_grafana_managed_alert_change_after_plain_dashgen_rules(tmp_path):
    root = make_repo(tmp_path, ruler="grafana")
    regenerate(root)
    commit(root)
    set_objective(root, "0.995")
    regenerate(root)
    result = check(root, "--base", "HEAD", "--format", "json")
    results = json.loads(result.output)["results"]
    assert results["rules_not_shown"] == [] and results["rules"] == []
    changes = results["rule_changes"]
    assert changes and all(f"{PROFILE}.grafana-alerting.yaml" in line for line in changes), changes


def test_the_pr_comment_shows_a_grafana_managed_alert_change_once(tmp_path):
    root = make_repo(tmp_path, ruler="grafana")
    regenerate(root, "--format", "prometheus", "--format", "grafana", "--format", "grafana-operator")
    commit(root)
    set_objective(root, "0.995")
    regenerate(root, "--format", "prometheus", "--format", "grafana", "--format", "grafana-operator")
    result = check(root, "--base", "HEAD", "--format", "json")
    changes = json.loads(result.output)["results"]["rule_changes"]
    assert changes, result.output
    both = f"{PROFILE}.grafana-alerting.yaml, {PROFILE}.grafanaalertrulegroup.yaml"
    assert all(both in line and " changed: " in line for line in changes), changes
    alerts = [line.split(" (", 1)[0] for line in changes]
    assert len(alerts) == len(set(alerts))  # each alert once, though two files hold it
    assert any("threshold" in line and "0.995" not in line.split("threshold", 1)[0] for line in changes)
    comment = check(root, "--base", "HEAD", "--format", "markdown").output
    assert f"Alert rules changed against `HEAD`: {len(changes)}" in comment


def test_plain_dashgen_rules_writes_the_grafana_rule_file_of_a_grafana_ruled_profile(tmp_path):
    for ruler in ("grafana", "both"):
        root = make_repo(tmp_path / ruler, ruler=ruler)
        regenerate(root)
        path = root / "r" / f"{PROFILE}.grafana-alerting.yaml"
        assert path.is_file() and 'condition: "C"' in path.read_text(), ruler
        assert (root / "r" / f"{PROFILE}.yml").is_file()
        assert "rules: " not in check(root).output
    # the file keeps the data source and folder it was written with; options given again replace them
    regenerate(root, "--format", "grafana", "--datasource-uid", "vm-eu", "--folder-title", "LLM alerts")
    written = path.read_text()
    assert 'datasourceUid: "vm-eu"' in written and 'folder: "LLM alerts"' in written
    regenerate(root)
    assert path.read_text() == written
    regenerate(root, "--datasource-uid", "vm-us")
    assert 'datasourceUid: "vm-us"' in path.read_text() and 'folder: "LLM alerts"' in path.read_text()
    # back to the Prometheus ruler: the file dashgen wrote goes, and check says so until it is gone
    profile = root / "profiles" / f"{PROFILE}.toml"
    profile.write_text(profile.read_text().replace('ruler = "both"', 'ruler = "prometheus"', 1))
    left = check(root)
    assert left.exit_code == 1 and f"rules: {path}: its profile's ruler is prometheus" in left.output
    removed = dg(root, "rules", "--out", str(root / "r"))
    assert not path.exists() and "removed (its profile's ruler is prometheus)" in removed.output
    assert "rules: " not in check(root).output
    # a profile that no longer exists: its Grafana rule file goes with its .yml
    profile.write_text(profile.read_text().replace('ruler = "prometheus"', 'ruler = "grafana"', 1))
    regenerate(root)
    assert path.is_file()
    profile.with_name("renamed.toml").write_text(
        profile.read_text().replace(f'name = "{PROFILE}"', 'name = "renamed"', 1)
    )
    profile.unlink()
    gone = dg(root, "rules", "--out", str(root / "r"))
    assert gone.exit_code == 0 and not path.exists() and (root / "r" / "renamed.grafana-alerting.yaml").is_file()


def test_a_corrupt_grafana_rule_file_is_an_input_error_naming_it(tmp_path):
    root = make_repo(tmp_path, ruler="grafana")
    regenerate(root)
    path = root / "r" / f"{PROFILE}.grafana-alerting.yaml"
    path.write_text("groups: [unclosed\n")
    result = dg(root, "rules", "--out", str(root / "r"))
    assert result.exit_code == 2 and str(path) in result.output and "Traceback" not in result.output


def test_grafana_managed_alerts_without_a_committed_file_are_named_as_not_shown(tmp_path):
    root = make_repo(tmp_path, ruler="grafana")
    regenerate(root)
    path = root / "r" / f"{PROFILE}.grafana-alerting.yaml"
    path.unlink()
    commit(root)
    result = check(root, "--base", "HEAD", "--format", "json")
    results = json.loads(result.output)["results"]
    (note,) = results["rules_not_shown"]
    assert "Grafana-managed" in note and f"{PROFILE}.grafana-alerting.yaml is not committed" in note
    assert results["rule_changes"] == []
    assert f"{path}: missing; run dashgen rules and commit it" in results["rules"]
    comment = check(root, "--base", "HEAD", "--format", "markdown").output
    assert "Alert rules this comment cannot show: 1" in comment and "Alert rules changed" not in comment


CONFIG = """[contexts.prod]
url = "https://grafana.example"

[contexts.prod.permissions.llm-clusters]
{body}
"""


def test_the_pr_comment_and_diff_show_folder_permission_changes(tmp_path):
    root = make_repo(tmp_path)
    regenerate(root)
    config = root / "dashgen.toml"
    config.write_text(CONFIG.format(body='view = ["role:Viewer"]\nedit = ["team:sre"]'))
    commit(root)
    config.write_text(CONFIG.format(body='edit = ["team:support"]\nadmin = ["team:sre"]'))
    result = check(root, "--base", "HEAD", "--config", str(config), "--format", "json")
    (line,) = json.loads(result.output)["results"]["permission_changes"]
    assert line.startswith("folder llm-clusters (context prod): ")
    assert "team:sre Edit → Admin" in line and "team:support no access → Edit" in line
    assert "role:Viewer View → no access (lowered" in line
    comment = check(root, "--base", "HEAD", "--config", str(config), "--format", "markdown").output
    assert "Folder permissions changed against `HEAD`: 1" in comment and "team:sre Edit → Admin" in comment
    diff = dg(root, "diff", "--base", "HEAD", str(root / "d"), "--config", str(config))
    assert diff.exit_code == 1 and "folder permissions: folder llm-clusters (context prod)" in diff.output
    as_json = dg(root, "diff", "--base", "HEAD", str(root / "d"), "--config", str(config), "--format", "json")
    assert json.loads(as_json.output)["results"]["permission_changes"] == [line]


def test_permission_changes_name_each_folder_once_and_what_is_no_longer_managed():
    old = {"prod": {"a": {"team:sre": "Edit"}, "b": {"role:Viewer": "View"}}}
    new = {"prod": {"a": {"team:sre": "Edit"}, "c": {}}, "eu": {"a": {"team:sre": "View"}}}
    assert permission_changes(old, new) == [
        "folder a (context eu): permissions now managed: team:sre no access → View",
        "folder b (context prod): no longer managed by dashgen.toml (Grafana keeps what it stores)",
        "folder c (context prod): permissions now managed: no entry",
    ]
    assert permission_changes(new, new) == []
