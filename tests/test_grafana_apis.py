"""The ``/apis`` resource API and the v2 conversion of a UI save, in the stand-in (grafana-api.md §9, §13) and
through dashgen's client: raw HTTP first (the stand-in's contract), then ``ResourceApi`` and the server info."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from standin import GrafanaStandin
from standin.v2 import auto_grid, rows_to_tabs, to_v1, to_v2

from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import ApiNotServed, StoredAsV2, VersionConflict
from dashgen.grafana.v2 import v2_losses

TOKEN = "glsa_apis_contract_token"
BASE = "/apis/dashboard.grafana.app/{v}/namespaces/{ns}/dashboards"


def dashboard(uid: str = "d1") -> dict[str, Any]:
    return {
        "uid": uid,
        "title": "Overview",
        "schemaVersion": 39,
        "panels": [
            {
                "id": 1,
                "type": "row",
                "title": "Row A",
                "collapsed": False,
                "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1},
            },
            {
                "id": 2,
                "type": "timeseries",
                "title": "Load",
                "gridPos": {"x": 0, "y": 1, "w": 12, "h": 8},
                "targets": [{"refId": "A", "expr": "up"}],
            },
            {
                "id": 3,
                "type": "row",
                "title": "Row B",
                "collapsed": False,
                "gridPos": {"x": 0, "y": 9, "w": 24, "h": 1},
            },
            {
                "id": 4,
                "type": "stat",
                "title": "Count",
                "gridPos": {"x": 0, "y": 10, "w": 6, "h": 4},
                "targets": [{"refId": "A", "expr": "count(up)"}],
            },
        ],
    }


class Api:
    def __init__(self, standin: GrafanaStandin) -> None:
        self.standin = standin
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.headers["Authorization"] = f"Bearer {TOKEN}"

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, self.standin.url + path, timeout=5, **kwargs)

    def path(self, version: str, uid: str | None = None, ns: str = "default") -> str:
        return BASE.format(v=version, ns=ns) + (f"/{uid}" if uid else "")


@pytest.fixture(params=["grafana12", "grafana13"])
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    with GrafanaStandin(mode=request.param, token=TOKEN, dynamic_dashboards=True) as standin:
        standin.seed_dashboard(dashboard())
        yield Api(standin)


def test_a_legacy_save_is_stored_v0alpha1_and_reading_it_through_v1_says_it_converted(api: Api) -> None:
    converted = api.call("GET", api.path("v1beta1", "d1")).json()
    assert converted["status"]["conversion"] == {"failed": False, "storedVersion": "v0alpha1"}
    assert converted["spec"]["schemaVersion"] == api.standin.settings.latest_schema_version  # migrated
    stored = api.call("GET", api.path("v0alpha1", "d1")).json()
    assert stored["status"] == {} and stored["spec"]["schemaVersion"] == 39
    assert "uid" not in stored["spec"] and stored["metadata"]["name"] == "d1"
    assert stored["metadata"]["generation"] == 1 and stored["metadata"]["resourceVersion"].isdigit()


def test_missing_dashboard_is_a_kubernetes_not_found_naming_it(api: Api) -> None:
    answer = api.call("GET", api.path("v1beta1", "nope"))
    assert answer.status_code == 404
    assert answer.json()["reason"] == "NotFound" and answer.json()["details"]["name"] == "nope"


def test_the_namespace_must_be_the_callers_org(api: Api) -> None:
    assert api.call("GET", api.path("v1beta1", "d1", ns="org-2")).status_code == 403


def test_put_with_a_stale_resource_version_is_409_and_without_one_is_unconditional(api: Api) -> None:
    current = api.call("GET", api.path("v0alpha1", "d1")).json()
    stale = dict(current, metadata=dict(current["metadata"], resourceVersion="1"))
    stale["spec"] = dict(current["spec"], title="Stale write")
    conflict = api.call("PUT", api.path("v0alpha1", "d1"), json=stale)
    assert conflict.status_code == 409 and conflict.json()["reason"] == "Conflict"
    assert api.standin.stored("d1")["title"] == "Overview"
    fresh = dict(current, spec=dict(current["spec"], title="Fresh write"))
    ok = api.call("PUT", api.path("v0alpha1", "d1"), json=fresh)
    assert ok.status_code == 200 and ok.json()["metadata"]["generation"] == 2
    blind = {"metadata": {"name": "d1"}, "spec": dict(current["spec"], title="Blind write")}
    assert api.call("PUT", api.path("v0alpha1", "d1"), json=blind).status_code == 200  # no RV: unconditional
    assert api.standin.stored("d1")["title"] == "Blind write"


def test_an_identical_put_changes_neither_generation_nor_resource_version(api: Api) -> None:
    current = api.call("GET", api.path("v0alpha1", "d1")).json()
    again = api.call("PUT", api.path("v0alpha1", "d1"), json=current).json()
    assert again["metadata"]["generation"] == 1
    assert again["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]


def test_post_of_an_existing_name_is_409_already_exists(api: Api) -> None:
    body = {"metadata": {"name": "d1"}, "spec": {"title": "Again"}}
    answer = api.call("POST", api.path("v0alpha1"), json=body)
    assert answer.status_code == 409 and answer.json()["reason"] == "AlreadyExists"


def test_dry_run_answers_what_would_be_stored_and_stores_nothing(api: Api) -> None:
    api.standin.settings.min_refresh_interval = "1m"
    current = api.call("GET", api.path("v0alpha1", "d1")).json()
    body = dict(current, spec=dict(current["spec"], title="  Padded  ", refresh="10s"))
    preview = api.call("PUT", api.path("v0alpha1", "d1"), params={"dryRun": "All"}, json=body).json()
    assert preview["spec"]["title"] == "Padded" and preview["spec"]["refresh"] == "1m"
    assert preview["metadata"]["generation"] == 2
    created = api.call(
        "POST",
        api.path("v0alpha1"),
        params={"dryRun": "All"},
        json={"metadata": {"name": "d2"}, "spec": {"title": "New"}},
    )
    assert created.status_code == 201
    assert api.standin.stored("d1")["title"] == "Overview" and api.standin.stored("d2") is None


def test_a_ui_save_with_dynamic_dashboards_stores_v2_and_the_legacy_get_is_lossy_or_406(api: Api) -> None:
    api.standin.simulate_ui_save("d1", v2_edit=rows_to_tabs)
    stored = api.standin.stored_v2("d1")
    assert stored["layout"]["kind"] == "TabsLayout"
    seen = api.call("GET", api.path("v1beta1", "d1")).json()
    assert seen["status"]["conversion"]["storedVersion"].startswith("v2")
    real = api.call("GET", api.path(seen["status"]["conversion"]["storedVersion"], "d1")).json()
    assert real["spec"] == stored
    legacy = api.call("GET", "/api/dashboards/uid/d1")
    if api.standin.mode == "grafana12":
        assert legacy.status_code == 406 and "/apis/dashboard.grafana.app/v2beta1/" in legacy.json()["message"]
    else:
        assert legacy.status_code == 200  # 13: a down-conversion: the tabs are expanded rows now
        rows = [p for p in legacy.json()["dashboard"]["panels"] if p["type"] == "row"]
        assert [r["title"] for r in rows] == ["Row A", "Row B"] and not any(r["collapsed"] for r in rows)


def test_the_v2_down_conversion_loses_what_section_13_says() -> None:
    spec = to_v2(dashboard())
    assert to_v1(spec)["panels"][1]["gridPos"] == {"x": 0, "y": 1, "w": 12, "h": 8}
    tabs = to_v1(rows_to_tabs(to_v2(dashboard())))
    assert "conditionalRendering" not in str(tabs)
    grid = to_v1(auto_grid(to_v2(dashboard()), columns=2))
    assert [(p["gridPos"]["w"], p["gridPos"]["h"]) for p in grid["panels"]] == [(12, 9), (12, 9)]
    assert not any(p["type"] == "row" for p in grid["panels"])  # the rows are gone


def test_v2_losses_names_tabs_auto_grid_and_conditional_rendering() -> None:
    tabs = v2_losses(rows_to_tabs(to_v2(dashboard())))
    assert any(t.startswith("2 tabs") for t in tabs) and any("conditional rendering on 1" in t for t in tabs)
    grid = v2_losses(auto_grid(to_v2(dashboard())))
    assert any("auto-grid" in t for t in grid) and not any("tabs" in t for t in grid)


def test_the_client_reads_what_is_stored_and_sees_stale_writes_as_conflicts(api: Api) -> None:
    with GrafanaClient(api.standin.url, token=TOKEN, trust_env=False) as client:
        info = client.server_info()
        assert info.reads_apis and info.writes_apis == (api.standin.mode == "grafana13")
        resources = client.resources(1)
        stored = resources.read_stored("d1", info.detect_version)
        assert stored is not None and stored.stored_version == "v0alpha1" and stored.spec["schemaVersion"] == 39
        assert resources.read_stored("nope", info.detect_version) is None
        saved = resources.write(
            "d1",
            dict(stored.spec, title="Mine"),
            None,
            "m",
            stored.resource_version,
            create=False,
            generation=stored.generation,
        )
        assert saved.generation == 2
        with pytest.raises(VersionConflict):
            resources.write(
                "d1",
                dict(stored.spec, title="Stale"),
                None,
                "m",
                stored.resource_version,
                create=False,
                generation=stored.generation,
            )
        assert api.standin.stored("d1")["title"] == "Mine"
        with pytest.raises(ApiNotServed):
            resources.get("d1", "v9")


def test_the_legacy_406_is_stored_as_v2_for_the_client() -> None:
    with GrafanaStandin(mode="grafana12", token=TOKEN, dynamic_dashboards=True) as standin:
        standin.seed_dashboard(dashboard())
        standin.simulate_ui_save("d1")
        with GrafanaClient(standin.url, token=TOKEN, trust_env=False) as client, pytest.raises(StoredAsV2):
            client.get_dashboard("d1")
