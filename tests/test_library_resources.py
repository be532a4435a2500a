"""Library panels through Grafana's ``librarypanels`` resource of ``/apis`` where it is served (the stand-in's
Grafana 13 flavour, following ``libraryElementsK8sHandler``'s object shape), and the legacy
``/api/library-elements`` where it is not (Grafana 12): publish learns which from the first answer, writes with the
``resourceVersion`` read (a save since is a 409 conflict, nothing overwritten) and proves the element by SHA on
both."""

from __future__ import annotations

from dataclasses import replace

import pytest
from library_work import LIB, PROFILE, UID, library_lines, share
from publishing import TOKEN, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import VersionConflict
from dashgen.grafana.library_resources import LibraryPanelResources, model_to_spec, spec_to_model
from dashgen.render.library import element_sha

work = pytest.fixture(work_folder)
RESOURCES = r"/apis/dashboard\.grafana\.app/v0alpha1/namespaces/default/librarypanels"
LEGACY = r"/api/library-elements"


def test_grafana_13_publishes_and_proves_a_library_panel_through_the_librarypanels_resource(work):
    share(work)
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        result = run(work, grafana, profile=PROFILE)
        assert result.exit_code == 0, result.output
        assert grafana.count("POST", RESOURCES) == 1 and grafana.count("GET", f"{RESOURCES}/{LIB}") >= 2
        assert grafana.count("POST", f"{LEGACY}.*") == 0 and grafana.count("GET", f"{LEGACY}/{LIB}") == 0
        (line,) = [r for r in library_lines(work) if r["uid"] == LIB]
        assert line["outcome"] == "published" and line["stored_sha"] == line["build_sha"]
        stored = grafana.library_element(LIB)  # the legacy view of what the resource holds proves the same
        assert element_sha(stored["name"], stored["model"]) == line["build_sha"]
        assert grafana.stored(UID) is not None
        grafana.clear_log()
        again = run(work, grafana, profile=PROFILE)
        assert again.exit_code == 0 and library_lines(work)[-1]["outcome"] == "unchanged", again.output
        assert grafana.writes() == []


def test_grafana_12_falls_back_to_the_legacy_route_after_one_unserved_answer(work):
    share(work)
    with GrafanaStandin(mode="grafana12", token=TOKEN) as grafana:
        result = run(work, grafana, profile=PROFILE)
        assert result.exit_code == 0, result.output
        assert grafana.count("*", f"{RESOURCES}.*") == 1  # the first read learns it is not served
        assert grafana.count("POST", LEGACY) == 1 and grafana.count("GET", f"{LEGACY}/{LIB}") >= 2
        assert library_lines(work)[-1]["outcome"] == "published"


def test_a_put_with_the_resource_version_read_is_a_conflict_once_someone_saved_since(work):
    share(work)
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        assert run(work, grafana, profile=PROFILE).exit_code == 0
        profile = next(p for p in load_profiles([PROFILE], work / "profiles") if p.name == PROFILE)
        (element,) = build_profile(profile)[0].library
        element = replace(element, model={**element.model, "description": "a new description"})
        with GrafanaClient(grafana.url, token=TOKEN, trust_env=False) as client:
            api = LibraryPanelResources(client, "default")
            live = api.get(LIB)
            assert live is not None and live.resource_version and live.name == element.name
            assert api.get("dgl-none") is None
            grafana.simulate_library_edit(LIB, lambda model: model.update(title="a person's title"))
            with pytest.raises(VersionConflict, match=f"resourceVersion {live.resource_version}"):
                api.update(element, live.folder_uid, live)
            assert grafana.library_element(LIB)["model"]["title"] == "a person's title"  # nothing overwritten
            now = api.get(LIB)
            assert now is not None and now.version == live.version + 1
            stored = api.update(element, now.folder_uid, now)
        assert stored.version == now.version + 1 and stored.sha == element.sha
        assert grafana.library_element(LIB)["model"]["description"] == "a new description"


def test_the_spec_holds_the_element_name_as_title_and_the_panel_title_as_panel_title():
    model = {"title": "PCIe replays", "type": "timeseries", "targets": [{"expr": "up"}], "interval": "30s"}
    spec = model_to_spec("dashgen shared panel", model)
    assert spec["title"] == "dashgen shared panel" and spec["panelTitle"] == "PCIe replays"
    assert "interval" not in spec  # a key the resource cannot hold is not sent
    assert spec_to_model(spec) == {k: v for k, v in model.items() if k != "interval"}
