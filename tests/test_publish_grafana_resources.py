"""All three kinds in one release, on the stand-in for Grafana 12 and 13: a profile with one shared panel and a
Grafana ruler, and a context with folder permissions, plans all three (a dry run writes nothing), publishes,
reads back by SHA and records each; a person's edit of each is refused with its own key in one plan; each is
rolled back; ``history`` lists each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from publishing import MODES, TOKEN, ledger, plan_json, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin

from dashgen.cli.app import main
from dashgen.render.library import element_uid

work = pytest.fixture(work_folder)
PROFILE = "long-context-64"
FOLDER = "llm-clusters"
KEY = "gpu_health.pcie_replays"
LIB = element_uid(PROFILE, KEY)
SLO_GROUP = f"dashgen-{PROFILE}-slo"


@pytest.fixture(params=MODES)
def grafana(request):
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        standin.add_folder(FOLDER, "LLM clusters")
        standin.directory().add_team("sre")
        yield standin


def setup(work: Path, grafana: GrafanaStandin) -> tuple[str, ...]:
    path = work / "profiles" / f"{PROFILE}.toml"
    text = path.read_text().replace("[dashboard]\n", f'[dashboard]\nruler = "grafana"\nlibrary_panels = ["{KEY}"]\n', 1)
    path.write_text(text)
    (work / "dashgen.toml").write_text(
        f'[contexts.test]\nurl = "{grafana.url}"\nfolder_uid = "{FOLDER}"\ndatasource_uid = "prom"\n\n'
        f'[contexts.test.permissions.{FOLDER}]\nedit = ["team:sre"]\n'
    )
    return ("--config", str(work / "dashgen.toml"), "--context", "test")


def kinds(work: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for record in ledger(work):
        out.setdefault(record.get("kind") or "dashboard", []).append(record)
    return out


def test_one_release_plans_publishes_guards_and_rolls_back_all_three(work, grafana):
    context = setup(work, grafana)
    dry = run(work, grafana, "--dry-run", "--format", "json", *context, profile=PROFILE, url=None)
    assert dry.exit_code == 0, dry.output
    plan = plan_json(dry)
    assert [i["action"] for i in plan["library_panels"]] == ["create"]
    assert plan["rule_groups"] and {g["action"] for g in plan["rule_groups"]} == {"create"}
    assert [i["action"] for i in plan["folder_permissions"]] == ["update"]
    assert grafana.writes() == [] and not (work / "ledger.jsonl").exists()

    published = run(work, grafana, *context, profile=PROFILE, url=None)
    assert published.exit_code == 0, published.output
    first = kinds(work)
    for kind in ("library-panel", "alert-rule-group", "folder-permissions", "dashboard"):
        assert first[kind] and all(r["outcome"] == "published" and r["stored_sha"] for r in first[kind]), kind
    assert all(r["stored_sha"] == r["build_sha"] for k in ("library-panel", "alert-rule-group") for r in first[k])

    # a person edits each
    grafana.simulate_library_edit(LIB, lambda model: model.update(title="person"))
    rule = next(r for r in grafana.rule_group(FOLDER, SLO_GROUP)["rules"] if r["title"].startswith("SloError"))
    grafana.simulate_rule_edit(rule["uid"], lambda r: r.update({"for": "30m"}))
    grafana.simulate_permission_change(FOLDER, "builtInRoles", "Editor", "Edit")
    refused = run(work, grafana, "--format", "json", *context, profile=PROFILE, url=None)
    assert refused.exit_code == 1, refused.output
    plan = plan_json(refused)
    group_uid = next(r["uid"] for r in first["alert-rule-group"] if r["name"] == SLO_GROUP)
    keys = {
        r["approve_with"]
        for part in ("library_panels", "rule_groups", "folder_permissions")
        for i in plan[part]
        for r in i["refusals"]
    }
    assert keys == {f"overwrite-live:{LIB}", f"overwrite-live:{group_uid}", f"remove-access:{FOLDER}/role:Editor"}

    # each rolled back to the first release
    lib_first = first["library-panel"][0]
    group_first = next(r for r in first["alert-rule-group"] if r["uid"] == group_uid)
    perm_first = first["folder-permissions"][0]
    for uid, to, extra in (
        (LIB, lib_first["build_sha"][:12], ("--overwrite-live", LIB)),
        (group_uid, group_first["build_sha"][:12], ("--overwrite-live", group_uid)),
        (perm_first["uid"], perm_first["stored_sha"][:12], ("--approve", f"remove-access:{FOLDER}/role:Editor")),
    ):
        rolled = run(work, grafana, uid, "--to", to, *extra, *context, command="rollback", url=None)
        assert rolled.exit_code == 0, (uid, rolled.output)
    assert grafana.library_element(LIB)["model"]["title"] != "person"
    assert next(r for r in grafana.rule_group(FOLDER, SLO_GROUP)["rules"] if r["uid"] == rule["uid"])["for"] != "30m"
    roles = [r for r in grafana.folder_permissions(FOLDER) if r.get("builtInRole") == "Editor"]
    assert roles == []

    for uid in (LIB, group_uid, perm_first["uid"]):
        argv = ["--profiles-dir", str(work / "profiles"), "history", uid, *context, "--format", "json"]
        argv += ["--ledger", str(work / "ledger.jsonl")]
        shown = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})
        assert shown.exit_code == 0, shown.output
        assert len(json.loads(shown.stdout)["results"]["versions"]) >= 2, uid
