"""A team's own repository (issue 29): ``dashgen init`` writes one that checks clean with the installed command
alone; the team's own panel modules (``panels/<name>.py``, listed in ``[dashboard] extra_modules``) — exactly what
``dashgen import`` writes, or a ``build(profile, topology)`` module — become rows after dashgen's, validated,
linted, keyed and published like dashgen's own; ``dashgen.toml`` says where the ledger lives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gitrepo import commit_all
from publishing import TOKEN, grafana12_standin
from team_init import dashgen, list_module, team  # noqa: F401 - the team fixture

from dashgen.document import iter_panels

ROOT = Path(__file__).resolve().parent.parent
MOONCAKE = ROOT / "tests" / "fixtures" / "dashboards" / "mooncake__mooncake-master.json"
grafana = pytest.fixture(scope="module")(grafana12_standin)


def panels_of(repo: Path, profile: str = "h20-16") -> dict[str, dict]:
    document = json.loads((repo / "dashboards" / profile / f"dg-{profile}-cluster.json").read_text())
    return {site.raw["title"]: site.raw for site in iter_panels(document)}


def test_init_writes_a_repository_that_checks_clean_and_never_overwrites(team, tmp_path):  # noqa: F811
    for name in (
        "dashgen.toml",
        ".dashgen-lint.toml",
        ".github/workflows/dashboards.yml",
        ".pre-commit-config.yaml",
        ".gitignore",
        "README.md",
        "panels/README.md",
        "profiles/h20-16.toml",
        "rules/h20-16.yml",
        "dashboards/h20-16/dg-h20-16-cluster.json",
    ):
        assert (team / name).is_file(), name
    checked = dashgen(team, "check")
    assert checked.exit_code == 0, checked.output
    assert "make" not in checked.output and "0 lint errors, 0 other findings" in checked.output
    again = dashgen(tmp_path, "init", "team", "--from", "h20-16")
    assert again.exit_code == 2 and "never overwrites" in again.output
    unknown = dashgen(tmp_path, "init", "other", "--from", "nope")
    assert unknown.exit_code == 2 and "h20-16" in unknown.output and not (tmp_path / "other").exists()
    workflow = (team / ".github" / "workflows" / "dashboards.yml").read_text()
    assert "dashgen check --base" in workflow and "dashgen publish" in workflow and "releases/ledger.jsonl" in workflow


def test_init_writes_the_runbooks_every_alert_s_runbook_url_points_to(team):  # noqa: F811
    """Every alert's runbook_url (default base docs/alerts.md) names a file init wrote and an anchor in it;
    ``dashgen rules`` keeps that file current once the profile changes."""
    docs = (team / "docs" / "alerts.md").read_text(encoding="utf-8")
    urls = re.findall(r"runbook_url: (\S+)", (team / "rules" / "h20-16.yml").read_text(encoding="utf-8"))
    assert urls
    for url in urls:
        path, _, anchor = url.strip("'\"").partition("#")
        assert path == "docs/alerts.md" and anchor, url
        assert f'id="{anchor}"' in docs, url
    profile = team / "profiles" / "h20-16.toml"
    profile.write_text(profile.read_text().replace("objective = 0.95", "objective = 0.99"))
    assert dashgen(team, "rules").exit_code == 0
    assert "(objective 0.95)" in docs
    assert "(objective 0.99)" in (team / "docs" / "alerts.md").read_text(encoding="utf-8")


def test_a_module_written_by_dashgen_import_becomes_rows_checked_and_published(team, grafana):  # noqa: F811
    """The team imports a hand-made dashboard (Mooncake's public master dashboard), lists it in a profile, and
    the next release carries it: rows after dashgen's, keys prefixed, the dashboard's data source, check clean,
    published and read back, the ledger where dashgen.toml keeps it."""
    imported = dashgen(team, "import", str(MOONCAKE), "-o", "panels/mooncake_board.py")
    assert imported.exit_code == 0, imported.output
    list_module(team, "h20-16", "mooncake_board")
    assert dashgen(team, "build").exit_code == 0
    panels = panels_of(team)
    rows = [t for t, p in panels.items() if p["type"] == "row"]
    assert rows.index("Cluster Overview") > rows.index("Now")  # after dashgen's own groups
    total = panels["Total Keys"]
    assert total["datasource"]["uid"] == "${datasource}"
    assert total["targets"][0]["expr"] == 'master_key_count{cluster="h20-16"}'  # the profile's deployment only (S21)
    assert dashgen(team, "rules").exit_code == 0
    checked = dashgen(team, "check")
    assert checked.exit_code == 0, checked.output[-3000:]
    commit_all(team, "our Mooncake board")
    published = dashgen(
        team, "publish", "--grafana-url", grafana.url, "--profile", "h20-16", env={"GRAFANA_TOKEN": TOKEN}
    )
    assert published.exit_code == 0, published.output[-3000:]
    (record,) = [json.loads(line) for line in (team / "releases" / "ledger.jsonl").read_text().splitlines()]
    assert record["outcome"] == "published" and record["git_commit"] and not record["git_commit"].endswith("-dirty")
    assert Path(record["published_file"]).is_relative_to(team / "releases" / "backups")  # beside the ledger
    stored = grafana.stored(record["uid"])
    assert stored is not None and any(p.get("title") == "Cluster Overview" for p in stored["panels"])


def test_a_build_module_adds_its_row_and_a_broken_module_is_named(team):  # noqa: F811
    list_module(team, "h20-16", "example_panels")
    assert dashgen(team, "build").exit_code == 0
    row = panels_of(team)["Team panels (example)"]
    assert row["type"] == "row" and row["panels"][0]["title"] == "Node load (1 min)"
    (team / "panels" / "example_panels.py").write_text("raise RuntimeError('boom')\n")
    broken = dashgen(team, "build")
    assert broken.exit_code == 2 and "example_panels.py: the module fails to load: RuntimeError: boom" in broken.output
    (team / "panels" / "example_panels.py").unlink()
    missing = dashgen(team, "build")
    assert missing.exit_code == 2 and "no module file" in missing.output and "example_panels.py" in missing.output


def test_an_imported_variable_that_clashes_with_dashgen_s_is_renamed_for_the_module(team):  # noqa: F811
    dashboard = json.loads(MOONCAKE.read_text())
    dashboard["templating"] = {"list": [{"name": "node", "type": "custom", "query": "a,b"}]}
    (team / "board.json").write_text(json.dumps(dashboard))
    assert dashgen(team, "import", "board.json", "-o", "panels/clash.py").exit_code == 0
    list_module(team, "h20-16", "clash")
    result = dashgen(team, "build")
    assert result.exit_code == 0, result.output[-2000:]
    (board,) = [
        json.loads(p.read_text()) for p in (team / "dashboards").rglob("*.json") if "clash_node" in p.read_text()
    ]
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["clash_node"]["query"] == "a,b" and variables["node"]["query"] != "a,b"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [('["Our-Board"]', "is not a module name"), ('"our_board"', "expected a list"), ('["a", "a"]', "listed twice")],
)
def test_extra_modules_must_be_module_names(team, value, fragment):  # noqa: F811
    path = team / "profiles" / "h20-16.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("[dashboard]\n", f"[dashboard]\nextra_modules = {value}\n", 1)
        if "[dashboard]\n" in text
        else text + f"\n[dashboard]\nextra_modules = {value}\n"
    )
    result = dashgen(team, "build")
    assert result.exit_code == 2 and "dashboard.extra_modules" in result.output and fragment in result.output


@pytest.mark.parametrize("workflow", [".github/workflows/dashboards.yml", "dashgen/data/init/workflow.yml"])
def test_every_dashgen_option_a_workflow_passes_exists(workflow: str) -> None:
    """The repository's workflow and the one `dashgen init` writes call dashgen with options the CLI has (a renamed
    option would fail only on GitHub): every `--option` after `dashgen <command>` in a run block, continuation lines
    and the preview array included, is one of that command's options."""
    import re

    from dashgen.cli.app import COMMANDS, load_command

    text = (ROOT / workflow).read_text(encoding="utf-8").replace("\\\n", " ")
    preview = re.search(r"preview=\((--.*?)\)", text, re.S)
    text = text.replace('"${preview[@]}"', " ".join(preview.group(1).split()) if preview else "")
    checked = 0
    for command, rest in re.findall(r"\bdashgen ([a-z-]+)([^\n]*)", text):
        if command not in COMMANDS:
            continue
        known = {opt for param in load_command(command).params for opt in getattr(param, "opts", [])}
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
            assert option in known, f"{workflow}: dashgen {command} {option}"
            checked += 1
    assert checked >= 8
    assert "--preview-dir" in text and "dashgen demo-data --profile" in text
