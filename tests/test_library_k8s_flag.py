"""A Grafana whose ``libraryelementsKubernetesLibraryPanels`` flag is on stores library panels in its
``librarypanels`` resource, which keeps fewer model keys than the legacy table (the stand-in follows Grafana's
``libraryElementsK8sHandler``). The read-back then does not prove the build: publish says verify-failed naming what
Grafana dropped and why, and pushes no dashboard that would show the lossy element."""

from __future__ import annotations

import pytest
from publishing import TOKEN, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin
from standin.library import k8s_round_trip
from test_publish_library import LIB, PROFILE, UID, library_lines, share

from dashgen.grafana.library import model_difference

work = pytest.fixture(work_folder)


def test_publish_names_what_a_librarypanels_resource_dropped_and_pushes_no_dashboard_using_it(work):
    share(work)
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        grafana.simulate_kubernetes_library_panels()
        result = run(work, grafana, profile=PROFILE)
        assert result.exit_code == 1, result.output
        (line,) = [r for r in library_lines(work) if r["uid"] == LIB]
        assert line["outcome"] == "verify-failed"
        assert "dropped transparent" in line["message"] and "added pluginVersion" in line["message"]
        assert "libraryelementsKubernetesLibraryPanels" in line["message"]
        assert grafana.stored(UID) is None  # the dashboard would show what Grafana kept, not the build


def test_model_difference_names_keys_the_resource_cannot_hold():
    built = {"title": "t", "type": "timeseries", "interval": "30s", "maxDataPoints": 500, "targets": [{"expr": "up"}]}
    text = model_difference(built, k8s_round_trip(built))
    assert text.startswith("dropped interval, maxDataPoints; added datasource, description")
    assert "loses interval, maxDataPoints" in text
    assert model_difference(built, built) == "the name differs"
    assert model_difference(built, {**built, "title": "u"}) == "changed title"
