"""A Grafana whose ``libraryelementsKubernetesLibraryPanels`` flag is on stores library panels in its
``librarypanels`` resource, which keeps fewer model keys than the legacy table and gives back empty ones (the
stand-in follows Grafana's ``libraryElementsK8sHandler``). dashgen's elements prove the same there as on the legacy
table; a key the resource cannot hold is named when the read-back does not prove the build; and a ledger line
recorded before empty values counted as absent still proves an element nobody edited."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from library_work import LIB, PROFILE, UID, library_lines, rescrape, share
from publishing import TOKEN, ledger, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin
from standin.library import k8s_round_trip

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.library import LibraryElements, model_difference
from dashgen.publish.export import connect
from dashgen.publish.library import run_library
from dashgen.publish.library_plan import LibraryItem
from dashgen.publish.resource_outcome import ResourceRelease
from dashgen.render.library import element_sha, element_sha_before_empties

work = pytest.fixture(work_folder)


def test_a_shared_panel_publishes_and_proves_its_sha_where_grafana_keeps_it_in_its_librarypanels_resource(work):
    share(work)
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        grafana.simulate_kubernetes_library_panels()
        result = run(work, grafana, profile=PROFILE)
        assert result.exit_code == 0, result.output
        (line,) = [r for r in library_lines(work) if r["uid"] == LIB]
        stored = grafana.library_element(LIB)
        assert "transparent" not in stored["model"] and stored["model"]["pluginVersion"] == ""  # what it gave back
        assert line["outcome"] == "published" and line["stored_sha"] == line["build_sha"]
        assert grafana.stored(UID) is not None
        again = run(work, grafana, profile=PROFILE)
        assert again.exit_code == 0 and library_lines(work)[-1]["outcome"] == "unchanged", again.output


def test_model_difference_names_keys_the_resource_cannot_hold():
    built = {"title": "t", "type": "timeseries", "interval": "30s", "maxDataPoints": 500, "targets": [{"expr": "up"}]}
    stored = k8s_round_trip(built)
    assert element_sha("n", stored) != element_sha("n", built)
    text = model_difference(built, stored)
    assert text.startswith("dropped interval, maxDataPoints (") and "loses interval, maxDataPoints" in text
    assert model_difference(built, {**built, "title": "u"}) == "changed title"
    same = {"title": "t", "type": "stat", "transparent": False, "description": "", "targets": [{"expr": "up"}]}
    assert element_sha("n", k8s_round_trip(same)) == element_sha("n", same)


def test_a_ledger_line_with_the_sha_before_empties_counted_as_absent_still_proves_an_unedited_element(work):
    share(work)
    with GrafanaStandin(token=TOKEN) as grafana:
        assert run(work, grafana, profile=PROFILE).exit_code == 0
        stored = grafana.library_element(LIB)
        old_sha = element_sha_before_empties(stored["name"], stored["model"])
        assert old_sha != element_sha(stored["name"], stored["model"])  # the element has transparent: false
        lines = ledger(work)
        for line in lines:
            if line.get("uid") == LIB:
                line["stored_sha"] = line["build_sha"] = old_sha
        (work / "ledger.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        rescrape(work, "60s")  # the shared panel changes: the plan compares the live element with the ledger
        updated = run(work, grafana, "--format", "json", "--approve", "*", profile=PROFILE)
        assert updated.exit_code == 0, updated.output
        assert library_lines(work)[-1]["outcome"] == "published"
        assert not any(k.startswith("overwrite-live:") for k in library_lines(work)[-1]["approvals_used"])


def test_a_save_after_the_export_is_a_conflict_where_grafana_does_not_compare_the_patch_version(work, tmp_path):
    share(work)
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        grafana.simulate_kubernetes_library_panels()
        assert run(work, grafana, profile=PROFILE).exit_code == 0
        profile = next(p for p in load_profiles([PROFILE], work / "profiles") if p.name == PROFILE)
        (element,) = build_profile(profile)[0].library
        element = replace(element, model={**element.model, "description": "a new description"})
        with GrafanaClient(grafana.url, token=TOKEN, trust_env=False) as client:
            connection = connect(client, None, 1)
            live = LibraryElements(client).get(LIB)  # the export
            grafana.simulate_library_edit(LIB, lambda model: model.update(title="a person's title"))
            item = LibraryItem(LIB, PROFILE, "update", element, live)
            release = ResourceRelease(connection, tmp_path / "ledger.jsonl", tmp_path / "backups", "c0ffee", "t")
            (outcome,) = run_library((item,), release, phase="write", held=False, folder_uid=None)
        assert outcome.outcome == "conflict" and "nothing was written" in outcome.detail
        assert grafana.library_element(LIB)["model"]["title"] == "a person's title"
