"""Library panels through the real command line against the stand-in in Grafana 12 and 13 modes: a profile that
shares one panel builds a reference and the element, publishes the element before the dashboard, reads it back
and proves it by SHA, records it, refuses a person's edit with its key, refuses to delete one a dashboard dashgen
does not manage uses, and a rollback restores a recorded release."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from crds import crd_problems
from library_work import KEY, LIB, PROFILE, UID, library_lines, rescrape, share
from publishing import MODES, TOKEN, plan_json, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin
from standin.library import library_of

from dashgen.build import build_profile
from dashgen.cli.app import main
from dashgen.deployment.profile import load_profiles
from dashgen.render import yamlread
from dashgen.render.library import element_sha

work = pytest.fixture(work_folder)
LIBRARY_WRITES = r"/api/library-elements.*"
RESOURCES = "/apis/dashboard.grafana.app/v0alpha1/namespaces/default/librarypanels"


def element_path(grafana: GrafanaStandin) -> str:
    """Where publish writes library panels: the librarypanels resource where Grafana serves it (13), else the
    legacy route."""
    return RESOURCES if grafana.mode == "grafana13" else "/api/library-elements"


@pytest.fixture(params=MODES)
def grafana(request):
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        yield standin


def test_a_shared_panel_builds_a_v1_reference_and_its_element(work):
    share(work)
    profile = next(p for p in load_profiles([PROFILE], work / "profiles") if p.name == PROFILE)
    (built,) = build_profile(profile)
    (element,) = built.library
    assert element.uid == LIB and element.key == KEY and element.dashboards == (UID,)
    refs = [p for p in built.document["panels"] if "libraryPanel" in p]
    assert refs == [
        {"id": refs[0]["id"], "gridPos": refs[0]["gridPos"], "libraryPanel": {"uid": LIB, "name": element.name}}
    ]
    assert "id" not in element.model and "gridPos" not in element.model and element.model["targets"]


def build(work: Path, *args: str):
    argv = ["--profiles-dir", str(work / "profiles"), "build", "--profile", PROFILE, "--out", str(work / "out")]
    return CliRunner().invoke(main, [*argv, *args])


def test_build_writes_the_element_beside_the_dashboard_in_v1_and_v2(work):
    share(work)
    assert build(work).exit_code == 0
    element = json.loads((work / "out" / PROFILE / "library-panels" / f"{LIB}.json").read_text())
    assert element["uid"] == LIB and element["kind"] == 1 and element["dashgen"]["dashboards"] == [UID]
    path = work / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace('grafana_version = "12.3"', 'grafana_version = "13.0"\nschema = "v2"'))
    result = build(work)
    assert result.exit_code == 0, result.output
    spec = json.loads((work / "out" / PROFILE / f"{UID}.json").read_text())["spec"]
    assert spec["elements"][KEY] == {
        "kind": "LibraryPanel",
        "spec": {
            "id": spec["elements"][KEY]["spec"]["id"],
            "title": element["model"]["title"],
            "libraryPanel": {"name": element["name"], "uid": LIB},
        },
    }


def test_a_library_panels_key_no_dashboard_has_is_an_input_error_naming_the_field(work):
    share(work, ("gpu_health.no_such_panel",))
    result = build(work)
    assert result.exit_code == 2, result.output
    assert "library_panels" in result.output and "gpu_health.no_such_panel" in result.output
    assert not (work / "out").exists()


def test_publish_creates_the_element_before_the_dashboard_reads_it_back_and_records_it(work, grafana):
    share(work)
    dry = run(work, grafana, "--dry-run", "--format", "json", profile=PROFILE)
    assert dry.exit_code == 0, dry.output
    (planned,) = plan_json(dry)["library_panels"]
    assert planned["action"] == "create" and planned["uid"] == LIB and planned["dashboards"] == [UID]
    assert grafana.writes() == [] and not (work / "ledger.jsonl").exists()

    published = run(work, grafana, profile=PROFILE)
    assert published.exit_code == 0, published.output
    order = [(r.method, r.path) for r in grafana.writes()]
    assert order[0] == ("POST", element_path(grafana)) and len(order) == 2  # the element, then the dashboard
    stored = grafana.library_element(LIB)
    assert stored is not None and stored["version"] == 1
    assert stored["meta"]["connectedDashboards"] == 1
    (line,) = library_lines(work)
    assert line["outcome"] == "published" and line["uid"] == LIB and line["grafana_version"] == 1
    assert line["stored_sha"] == line["build_sha"] == element_sha(stored["name"], stored["model"])
    assert Path(line["published_file"]).exists()

    grafana.clear_log()
    again = run(work, grafana, profile=PROFILE)
    assert again.exit_code == 0, again.output
    assert grafana.writes() == [] and library_lines(work)[-1]["outcome"] == "unchanged"


def test_a_persons_edit_of_the_element_is_refused_with_its_key_then_overwritten_when_approved(work, grafana):
    share(work)
    assert run(work, grafana, profile=PROFILE).exit_code == 0
    grafana.simulate_library_edit(LIB, lambda model: model.update(title="Edited by a person"), user="alice")

    refused = run(work, grafana, "--format", "json", profile=PROFILE)
    assert refused.exit_code == 1, refused.output
    (item,) = plan_json(refused)["library_panels"]
    assert item["action"] == "refused"
    assert [r["approve_with"] for r in item["refusals"]] == [f"overwrite-live:{LIB}"]
    assert "alice" in item["refusals"][0]["reason"]
    assert grafana.library_element(LIB)["model"]["title"] == "Edited by a person"  # nothing was written
    assert library_lines(work)[-1]["outcome"] == "refused"

    approved = run(work, grafana, "--overwrite-live", LIB, profile=PROFILE)
    assert approved.exit_code == 0, approved.output
    stored = grafana.library_element(LIB)
    assert stored["model"]["title"] != "Edited by a person" and stored["version"] == 3
    line = library_lines(work)[-1]
    assert line["outcome"] == "published" and line["approvals_used"] == [f"overwrite-live:{LIB}"]
    assert json.loads(Path(line["backup_file"]).read_text())["result"]["model"]["title"] == "Edited by a person"


def test_a_save_between_the_export_and_the_patch_is_a_conflict_not_an_overwrite(work, grafana):
    share(work)
    assert run(work, grafana, profile=PROFILE).exit_code == 0
    line = library_lines(work)[-1]
    grafana.simulate_library_edit(LIB, lambda model: model.update(title="Someone else"))
    body = {"uid": LIB, "kind": 1, "version": 1, "model": {"title": "stale"}}
    import urllib.request

    request = urllib.request.Request(
        f"{grafana.url}/api/library-elements/{LIB}",
        data=json.dumps(body).encode(),
        method="PATCH",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=5)
    assert answer.value.code == 412
    assert json.loads(answer.value.read()) == {
        "message": "the library element has been changed by someone else",
        "traceID": "",
    }
    assert line["grafana_version"] == 1


def test_an_element_no_longer_built_is_deleted_with_approval_unless_a_foreign_dashboard_uses_it(work, grafana):
    share(work)
    assert run(work, grafana, profile=PROFILE).exit_code == 0
    name = grafana.library_element(LIB)["name"]
    grafana.seed_dashboard(
        {
            "uid": "team-own",
            "title": "A team's own dashboard",
            "panels": [
                {"id": 1, "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8}, "libraryPanel": {"uid": LIB, "name": name}}
            ],
        }
    )
    path = work / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace(f'library_panels = ["{KEY}"]\n', ""))

    refused = run(work, grafana, "--format", "json", "--approve", "*", profile=PROFILE)
    assert refused.exit_code == 1, refused.output
    (item,) = plan_json(refused)["library_panels"]
    assert item["action"] == "refused" and [r["approve_with"] for r in item["refusals"]] == [f"connected:{LIB}"]
    assert "team-own" in item["refusals"][0]["reason"] and "no flag approves it" in item["refusals"][0]["flag"]
    assert grafana.library_element(LIB) is not None

    grafana.org().dashboards.pop("team-own")
    unapproved = run(work, grafana, "--format", "json", profile=PROFILE)
    (item,) = plan_json(unapproved)["library_panels"]
    assert [r["approve_with"] for r in item["refusals"]] == [f"remove:library-panel:{LIB}"]

    deleted = run(work, grafana, "--approve", f"remove:library-panel:{LIB}", profile=PROFILE)
    assert deleted.exit_code == 0, deleted.output
    assert grafana.library_element(LIB) is None
    assert library_lines(work)[-1]["outcome"] == "deleted"


def test_an_update_patches_with_the_version_read_and_a_rollback_restores_the_recorded_release(work, grafana):
    share(work)
    assert run(work, grafana, profile=PROFILE).exit_code == 0
    first = library_lines(work)[-1]
    original = grafana.library_element(LIB)["model"]
    read = str(library_of(grafana.org(1)).elements[LIB].resource_version)
    rescrape(work, "60s")
    grafana.clear_log()
    updated = run(work, grafana, "--approve", "*", profile=PROFILE)  # the other DCGM panels' queries change too
    assert updated.exit_code == 0, updated.output
    patch = next(r for r in grafana.writes() if r.method in ("PATCH", "PUT") and "dashboards" not in r.path)
    assert patch.path == f"{element_path(grafana)}/{LIB}"
    if grafana.mode == "grafana13":  # the resourceVersion read at the export, Kubernetes' optimistic lock
        assert patch.json()["metadata"]["resourceVersion"] == read
    else:
        assert patch.json()["version"] == 1
    assert grafana.library_element(LIB)["model"] != original and library_lines(work)[-1]["grafana_version"] == 2
    assert (
        "60s" in library_lines(work)[-1]["message"]
        or grafana.library_element(LIB)["model"]["title"] != original["title"]
    )

    rolled = run(work, grafana, LIB, "--to", first["build_sha"][:12], command="rollback")
    assert rolled.exit_code == 0, rolled.output
    stored = grafana.library_element(LIB)
    assert stored["model"] == original and stored["version"] == 3
    line = library_lines(work)[-1]
    assert line["outcome"] == "published" and line["stored_sha"] == first["stored_sha"]

    argv = ["--profiles-dir", str(work / "profiles"), "history", LIB, "--grafana-url", grafana.url]
    argv += ["--ledger", str(work / "ledger.jsonl"), "--timeout", "2", "--format", "json"]
    shown = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": TOKEN, "GRAFANA_URL": ""})
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)["results"]["versions"]
    assert [r["version"] for r in rows] == [1, 2, 3] and rows[0]["build_sha"] == first["build_sha"]


def test_a_v2_dashboard_references_the_element_and_grafana_13_connects_it(work):
    share(work)
    path = work / "profiles" / f"{PROFILE}.toml"
    path.write_text(path.read_text().replace('grafana_version = "12.3"', 'grafana_version = "13.0"\nschema = "v2"'))
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        published = run(work, grafana, profile=PROFILE)
        assert published.exit_code == 0, published.output
        assert grafana.stored_v2(UID)["elements"][KEY]["kind"] == "LibraryPanel"
        assert grafana.library_element(LIB)["meta"]["connectedDashboards"] == 1
        assert library_lines(work)[-1]["outcome"] == "published"


def test_the_diff_and_pr_comment_show_a_library_panel_change_once_with_the_dashboards_using_it(work):
    share(work)
    assert build(work).exit_code == 0
    old = work / "old"
    shutil.copytree(work / "out", old)
    element_file = work / "out" / PROFILE / "library-panels" / f"{LIB}.json"
    element = json.loads(element_file.read_text())
    element["model"]["targets"][0]["expr"] = "sum(DCGM_FI_DEV_PCIE_REPLAY_COUNTER)"
    element_file.write_text(json.dumps(element))
    argv = ["diff", str(old), str(work / "out"), "--format", "markdown"]
    shown = CliRunner().invoke(main, argv)
    assert shown.exit_code == 1, shown.output
    assert shown.output.count("sum(DCGM_FI_DEV_PCIE_REPLAY_COUNTER)") == 1
    assert f"(used by {UID})" in shown.output and "library panel PCIe replays" in shown.output
    text = CliRunner().invoke(main, ["diff", str(old), str(work / "out")])
    assert text.exit_code == 1 and text.output.count("sum(DCGM_FI_DEV_PCIE_REPLAY_COUNTER)") == 1
    assert f"library-panels/{LIB}.json (library panel used by {UID})" in text.output
    assert f"{PROFILE}/{UID}.json" not in text.output  # the dashboard holds only the reference: no change there


def test_sharing_a_panel_of_a_published_dashboard_is_no_query_change_of_the_dashboard(work, grafana):
    assert run(work, grafana, profile=PROFILE).exit_code == 0
    share(work)
    shared = run(work, grafana, "--format", "json", profile=PROFILE)
    assert shared.exit_code == 0, shared.output
    (dashboard,) = plan_json(shared)["dashboards"]
    assert dashboard["action"] == "update" and dashboard["refusals"] == []
    assert plan_json(shared)["library_panels"][0]["action"] == "create"
    assert [p for p in grafana.stored(UID)["panels"] if "libraryPanel" in p]


@pytest.mark.parametrize("folder", [("--folder", "LLM clusters"), ("--folder-uid", "llm")])
def test_export_grafana_operator_writes_the_element_as_a_valid_grafana_library_panel_before_the_dashboard(work, folder):
    share(work)
    out = work / "export"
    argv = ["--profiles-dir", str(work / "profiles"), "export", "--format", "grafana-operator", *folder]
    result = CliRunner().invoke(main, [*argv, "--profile", PROFILE, "--out", str(out)])
    assert result.exit_code == 0, result.output
    docs = yamlread.load_all((out / "grafana-operator" / f"{PROFILE}.yaml").read_text())
    assert [d["kind"] for d in docs] == ["GrafanaLibraryPanel", "GrafanaDashboard"]
    panel = docs[0]
    assert crd_problems(panel) == [] and panel["spec"]["uid"] == LIB
    assert ("folderRef" in panel["spec"]) != ("folderUID" in panel["spec"])  # exactly one (the CRD's CEL rule)
    assert json.loads(panel["spec"]["json"])["targets"]
    assert json.loads(panel["spec"]["json"])["libraryPanel"]["uid"] == LIB


def test_a_permission_error_on_the_element_is_reported_and_recorded_as_failed(work, grafana):
    share(work)
    grafana.permissions.discard("library.panels:create")
    result = run(work, grafana, profile=PROFILE)
    assert result.exit_code == 1
    assert "403" in result.output and LIB in result.output
    assert library_lines(work)[-1]["outcome"] == "failed" and grafana.library_element(LIB) is None
