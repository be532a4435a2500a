"""The stand-in's own contract: it must answer as grafana-api.md says Grafana 12 and 13 do."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from standin import GrafanaStandin

TOKEN = "glsa_standin_contract_token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Api:
    """Raw HTTP against the stand-in (no dashgen code), so the contract is tested on its own."""

    def __init__(self, standin: GrafanaStandin) -> None:
        self.standin = standin
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.headers.update(AUTH)

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, self.standin.url + path, timeout=5, **kwargs)

    def save(self, dashboard: dict[str, Any], **body: Any) -> requests.Response:
        return self.call("POST", "/api/dashboards/db", json={"dashboard": dashboard, **body})


@pytest.fixture(params=["grafana12", "grafana13"])
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        yield Api(standin)


@pytest.fixture
def api12() -> Iterator[Api]:
    with GrafanaStandin(mode="grafana12", token=TOKEN) as standin:
        yield Api(standin)


@pytest.fixture
def api13() -> Iterator[Api]:
    with GrafanaStandin(mode="grafana13", token=TOKEN) as standin:
        yield Api(standin)


def dash(uid: str = "d1", title: str = "Dash", **extra: Any) -> dict[str, Any]:
    return {"uid": uid, "title": title, "panels": [], **extra}


# ---------------------------------------------------------------- health and auth (§6)


def test_health_needs_no_auth_and_is_pretty_printed(api: Api) -> None:
    resp = requests.get(api.standin.url + "/api/health", timeout=5)
    assert resp.status_code == 200
    assert list(resp.json()) == ["database", "version", "commit"]
    assert resp.text.startswith('{\n  "database": "ok"')
    assert requests.get(api.standin.url + "/healthz", timeout=5).text == "Ok"


def test_health_503_when_database_fails_and_version_can_be_hidden(api12: Api) -> None:
    api12.standin.database_failing = True
    api12.standin.hide_version = True
    resp = api12.call("GET", "/api/health")
    assert (resp.status_code, resp.json()) == (503, {"database": "failing"})


def test_401_bodies_follow_grafana(api12: Api) -> None:
    url = api12.standin.url + "/api/search"
    anonymous = requests.get(url, timeout=5)
    assert anonymous.status_code == 401
    assert anonymous.content == (
        b'{"extra":null,"message":"Unauthorized","messageId":"auth.unauthorized","statusCode":401,"traceID":""}'
    )
    assert len(anonymous.content) == 101
    bad = requests.get(url, headers={"Authorization": "Bearer nope"}, timeout=5).json()
    assert (bad["messageId"], bad["message"]) == ("api-key.invalid", "Invalid API key")


def test_basic_auth_and_org_header_select_the_org() -> None:
    with GrafanaStandin(basic_auth=("admin", "pw"), user_org_ids=(1, 2)) as standin:
        api = Api(standin)
        api.session.headers["Authorization"] = "Basic " + base64.b64encode(b"admin:pw").decode()
        api.session.headers["X-Grafana-Org-Id"] = "2"
        assert api.save(dash()).status_code == 200
        assert standin.stored("d1", org_id=2) is not None and standin.stored("d1", org_id=1) is None
        api.session.headers["X-Grafana-Org-Id"] = "3"
        assert api.call("GET", "/api/search").status_code == 401
        api.session.headers["Authorization"] = "Basic " + base64.b64encode(b"admin:bad").decode()
        assert api.call("GET", "/api/search").json()["messageId"] == "password-auth.failed"


def test_403_rbac_body_names_the_permissions(api12: Api) -> None:
    api12.standin.permissions.discard("dashboards:read")
    body = api12.call("GET", "/api/dashboards/uid/d1").json()
    assert body["title"] == "Access denied"
    assert re.fullmatch(r"ACE\d{10}", body["accessErrorId"])
    assert body["message"].endswith("Permissions needed: dashboards:read")


# ---------------------------------------------------------------- POST /api/dashboards/db (§3)


def test_create_ignores_sent_version_and_update_bumps_it(api: Api) -> None:
    first = api.save(dash(version=42), message="hello")
    assert first.status_code == 200
    assert first.json()["version"] == 1 and first.json()["status"] == "success"
    assert list(first.json()) == sorted(first.json())
    second = api.save(dash(version=1, title="Dash 2"))
    assert second.json()["version"] == 2 and second.json()["id"] == first.json()["id"]


def test_ids_are_sequential_on_12_and_large_on_13(api12: Api, api13: Api) -> None:
    assert api12.save(dash()).json()["id"] == 1
    assert api13.save(dash()).json()["id"] > 2**40


def test_uid_is_generated_when_missing(api: Api) -> None:
    uid = api.save({"title": "No uid"}).json()["uid"]
    assert re.fullmatch(r"[a-f][a-z0-9]{12}[a-f]", uid)
    assert api.save({"title": "No uid"}).json()["uid"] != uid  # titles are not unique since 11.3


def test_stale_or_missing_version_is_412_on_12(api12: Api) -> None:
    api12.save(dash())
    for sent in (dash(version=0), dash()):
        resp = api12.save(sent)
        assert resp.status_code == 412
        assert resp.json() == {
            "status": "version-mismatch",
            "message": "The dashboard has been changed by someone else",
        }
    assert api12.save(dash(), overwrite=True).json()["version"] == 2


def test_stale_or_missing_version_is_409_on_13(api13: Api) -> None:
    api13.save(dash())
    for sent in (dash(version=0), dash()):
        resp = api13.save(sent)
        assert resp.status_code == 409
        assert resp.json() == {"message": "Dashboard already exists. Use overwrite flag to update."}
    assert api13.save(dash(version="1")).json()["message"] == "spec.version has unsupported type string"


def test_identical_save_bumps_version_on_12_but_not_on_13(api12: Api, api13: Api) -> None:
    for api, expected in ((api12, 2), (api13, 1)):
        api.save(dash())
        assert api.save(dash(version=1)).json()["version"] == expected
        assert len(api.call("GET", "/api/dashboards/uid/d1/versions").json()["versions"]) == expected


def test_omitting_the_folder_on_update_moves_to_root(api: Api) -> None:
    api.standin.add_folder("f1", "F1")
    api.save(dash(), folderUid="f1")
    assert api.save(dash(version=1)).json()["folderUid"] == ""


def test_missing_folder_is_400_folder_not_found(api: Api) -> None:
    resp = api.save(dash(), folderUid="ghost")
    assert (resp.status_code, resp.json()) == (400, {"message": "folder not found"})


def test_folder_id_is_resolved_on_12_and_ignored_on_13(api12: Api, api13: Api) -> None:
    for api in (api12, api13):
        folder_id = api.standin.add_folder("f1", "F1")["id"]
        api.save(dash(), folderId=folder_id)
    assert api12.call("GET", "/api/dashboards/uid/d1").json()["meta"]["folderUid"] == "f1"
    assert api13.call("GET", "/api/dashboards/uid/d1").json()["meta"]["folderUid"] == ""


@pytest.mark.parametrize(
    ("body", "mode", "status", "expected"),
    [
        (
            {"dashboard": dash(title=" ")},
            "grafana12",
            400,
            {"status": "empty-name", "message": "Dashboard title cannot be empty"},
        ),
        (
            {"dashboard": dash(title="")},
            "grafana13",
            400,
            {"message": "Dashboard spec is missing required title property"},
        ),
        (
            {"dashboard": dash(), "message": "m" * 501},
            "grafana12",
            400,
            {"message": "message too long, max 500 characters"},
        ),
        ({"dashboard": dash(uid="bad uid")}, "grafana12", 400, {"message": "uid contains illegal characters"}),
        ({"dashboard": dash(uid="u" * 41)}, "grafana12", 400, {"message": "uid too long, max 40 characters"}),
        (
            {"dashboard": dash(), "isFolder": True},
            "grafana12",
            400,
            {"message": "Use folders endpoint for saving folders."},
        ),
        ({"nodashboard": 1}, "grafana12", 400, {"message": "bad request data", "traceID": ""}),
        ({"dashboard": dash(id=999)}, "grafana12", 404, {"status": "not-found", "message": "Dashboard not found"}),
    ],
)
def test_save_validation_errors(body: dict[str, Any], mode: str, status: int, expected: dict[str, Any]) -> None:
    with GrafanaStandin(mode=mode, token=TOKEN) as standin:
        resp = Api(standin).call("POST", "/api/dashboards/db", json=body)
        assert (resp.status_code, resp.json()) == (status, expected)


def test_id_and_uid_of_different_dashboards_is_400(api12: Api) -> None:
    first_id = api12.save(dash(uid="a")).json()["id"]
    api12.save(dash(uid="b"))
    resp = api12.save(dash(uid="b", id=first_id, version=1))
    assert resp.json() == {"message": "A dashboard with the same uid already exists"}


def test_provisioned_and_plugin_dashboards_refuse_api_saves(api12: Api) -> None:
    api12.standin.seed_dashboard(dash(uid="prov"), provisioned=True)
    api12.standin.seed_dashboard(dash(uid="plug"), plugin_id="Prometheus")
    assert api12.save(dash(uid="prov", version=1)).json() == {"message": "Cannot save provisioned dashboard"}
    assert api12.save(dash(uid="plug", version=1)).json() == {
        "status": "plugin-dashboard",
        "message": "The dashboard belongs to plugin Prometheus.",
    }


def test_a_provisioned_dashboard_shows_its_manager_on_both_apis_and_refuses_every_save(api: Api) -> None:
    """grafana-api.md §2, §3.4, §13: ``meta.provisioned`` / ``provisionedExternalId`` on the legacy GET, the manager
    annotations on ``/apis``, and 400 "Cannot save provisioned dashboard" for a legacy save and an ``/apis`` PUT."""
    api.standin.seed_dashboard(dash(uid="prov"))
    api.standin.provision("prov", "/etc/grafana/dashboards/prov.json")
    meta = api.call("GET", "/api/dashboards/uid/prov").json()["meta"]
    assert meta["provisioned"] is True and meta["provisionedExternalId"] == "/etc/grafana/dashboards/prov.json"
    path = "/apis/dashboard.grafana.app/v1beta1/namespaces/default/dashboards/prov"
    resource = api.call("GET", path).json()
    annotations = resource["metadata"]["annotations"]
    assert annotations["grafana.app/managedBy"] == "classic-file-provisioning"
    assert annotations["grafana.app/sourcePath"] == "/etc/grafana/dashboards/prov.json"
    assert "grafana.app/managerAllowsEdits" not in annotations
    saved = api.save(dash(uid="prov", version=1), overwrite=True)
    assert (saved.status_code, saved.json()) == (400, {"message": "Cannot save provisioned dashboard"})
    put = api.call("PUT", path, json=resource)
    assert put.status_code == 400 and put.json()["message"] == "Cannot save provisioned dashboard"
    assert api.standin.stored_version("prov") == 1


def test_refresh_below_minimum_is_raised_and_title_uid_trimmed(api12: Api) -> None:
    api12.save({"uid": " d1 ", "title": " Dash ", "refresh": "1s"})
    stored = api12.standin.stored("d1")
    assert stored is not None and (stored["refresh"], stored["title"], stored["uid"]) == ("5s", "Dash", "d1")


def test_413_when_the_body_is_over_the_limit() -> None:
    with GrafanaStandin(token=TOKEN, max_dashboard_bytes=1024) as standin:
        resp = Api(standin).save(dash(description="x" * 2048))
        assert resp.status_code == 413 and resp.json()["message"].startswith("Dashboard is too large, max is")


# ---------------------------------------------------------------- GET / DELETE (§2, §5.3)


def test_get_injects_id_uid_version_and_sorts_keys(api: Api) -> None:
    api.save({"uid": "d1", "title": "Dash", "zeta": 1, "alpha": 2})
    resp = api.call("GET", "/api/dashboards/uid/d1")
    body = resp.json()
    assert body["dashboard"]["version"] == body["meta"]["version"] == 1
    assert body["dashboard"]["id"] and list(body["dashboard"]) == sorted(body["dashboard"])
    assert body["meta"]["folderTitle"] == "General" and body["meta"]["folderUrl"] == ""
    missing = api.call("GET", "/api/dashboards/uid/nope")
    assert (missing.status_code, missing.json()) == (404, {"message": "Dashboard not found", "traceID": ""})


def test_delete_answers_with_title_and_then_404(api: Api) -> None:
    api.save(dash())
    assert api.call("DELETE", "/api/dashboards/uid/d1").json() == {
        "message": "Dashboard Dash deleted",
        "title": "Dash",
        "uid": "d1",
    }
    assert api.call("DELETE", "/api/dashboards/uid/d1").status_code == 404


# ---------------------------------------------------------------- versions and restore (§4)


def test_versions_list_shape_and_message_rewriting(api12: Api, api13: Api) -> None:
    for api in (api12, api13):
        api.save(dash(), message="created")
        api.save(dash(version=1, title="Two"), message="second")
        body = api.call("GET", "/api/dashboards/uid/d1/versions").json()
        assert body["continueToken"] == ""
        assert [(v["version"], v["message"]) for v in body["versions"]] == [(2, "second"), (1, "Initial save")]
    assert api12.call("GET", "/api/dashboards/uid/d1/versions").json()["versions"][0]["data"] is None
    assert api13.call("GET", "/api/dashboards/uid/d1/versions").json()["versions"][0]["data"]["title"] == "Two"
    single = api12.call("GET", "/api/dashboards/uid/d1/versions/1").json()
    assert single["message"] == "created" and single["data"]["version"] == 1


def test_history_keeps_20_versions_and_limit_start_page_it(api12: Api) -> None:
    api12.save(dash())
    for version in range(1, 25):
        api12.save(dash(version=version))
    versions = api12.call("GET", "/api/dashboards/uid/d1/versions").json()["versions"]
    assert [v["version"] for v in versions] == list(range(25, 5, -1))
    page = api12.call("GET", "/api/dashboards/uid/d1/versions", params={"limit": 2, "start": 1}).json()
    assert [v["version"] for v in page["versions"]] == [24, 23]
    gone = api12.call("GET", "/api/dashboards/uid/d1/versions/1")
    assert gone.status_code == 500
    assert gone.json()["message"] == f"Dashboard version 1 not found for dashboardId {versions[0]['dashboardId']}"


def test_restore_creates_a_new_version(api: Api) -> None:
    api.save(dash(), message="one")
    api.save(dash(version=1, title="Two"))
    restored = api.call("POST", "/api/dashboards/uid/d1/restore", json={"version": 1})
    assert restored.json()["version"] == 3
    newest = api.call("GET", "/api/dashboards/uid/d1/versions").json()["versions"][0]
    assert (newest["restoredFrom"], newest["message"]) == (1, "Restored from version 1")
    again = api.call("POST", "/api/dashboards/uid/d1/restore", json={"version": 1})
    assert again.json() == {"message": "Current dashboard is identical to the specified version"}
    assert api.call("POST", "/api/dashboards/uid/d1/restore", json={"version": 99}).status_code == 404


# ---------------------------------------------------------------- search and folders (§5)


def test_search_filters_sorts_and_limits(api12: Api) -> None:
    api12.standin.add_folder("f1", "Zeta folder")
    api12.save(dash(uid="a", title="beta board", tags=["x", "y"]), folderUid="f1")
    api12.save(dash(uid="b", title="Alpha board", tags=["x"]))
    titles = [h["title"] for h in api12.call("GET", "/api/search").json()]
    assert titles == ["Zeta folder", "Alpha board", "beta board"]  # folders first, then title
    hit = api12.call("GET", "/api/search", params={"tag": ["x", "y"]}).json()
    assert [h["uid"] for h in hit] == ["a"] and hit[0]["folderUid"] == "f1"
    assert [h["uid"] for h in api12.call("GET", "/api/search", params={"folderUIDs": "general"}).json()] == ["f1", "b"]
    assert api12.call("GET", "/api/search", params={"query": "ALPHA"}).json()[0]["uid"] == "b"
    assert api12.call("GET", "/api/search", params={"limit": 5001}).status_code == 422
    mixed = api12.call("GET", "/api/search", params={"dashboardUIDs": "a", "dashboardIds": "1"})
    assert mixed.json() == {"message": "search supports UIDs or IDs, not both"}


def test_search_has_no_read_after_write_on_13() -> None:
    with GrafanaStandin(mode="grafana13", token=TOKEN, search_lag=60) as standin:
        api = Api(standin)
        api.save(dash())
        assert api.call("GET", "/api/search").json() == []


def test_folders_create_get_conflict_update_delete(api12: Api) -> None:
    created = api12.call("POST", "/api/folders", json={"uid": "f1", "title": "F1"}).json()
    assert created["url"] == "/dashboards/f/f1/f1" and created["version"] == 1
    dup = api12.call("POST", "/api/folders", json={"uid": "f1", "title": "Other"})
    assert (dup.status_code, dup.json()["status"]) == (412, "version-mismatch")
    same_title = api12.call("POST", "/api/folders", json={"title": "F1"})
    assert same_title.status_code == 409
    stale = api12.call("PUT", "/api/folders/f1", json={"title": "New", "version": 0})
    assert stale.status_code == 412
    assert api12.call("PUT", "/api/folders/f1", json={"title": "New", "version": 1}).json()["version"] == 2
    api12.save(dash(), folderUid="f1")
    assert api12.call("DELETE", "/api/folders/f1").json()["message"] == "Folder deleted"
    assert api12.standin.stored("d1") is None  # contained dashboards go too
    missing = api12.call("GET", "/api/folders/f1")
    assert (missing.status_code, missing.json()) == (404, {"status": "not-found", "message": "folder not found"})


def test_duplicate_folder_uid_status_is_configurable() -> None:
    with GrafanaStandin(token=TOKEN, folder_conflict_status=409) as standin:
        standin.add_folder("f1", "F1")
        assert Api(standin).call("POST", "/api/folders", json={"uid": "f1", "title": "X"}).status_code == 409


# ---------------------------------------------------------------- UI save (§7.2)


def test_ui_save_adds_what_the_frontend_adds(api12: Api) -> None:
    api12.save(
        {
            "uid": "d1",
            "title": "Dash",
            "schemaVersion": 39,
            "tags": [],
            "timepicker": {"time_options": ["5m"]},
            "panels": [
                {
                    "type": "timeseries",
                    "title": "p",
                    "datasource": "prometheus",
                    "targets": [{"expr": "up"}],
                    "fieldConfig": {"defaults": {"custom": {"hideFrom": {"viz": True}}}},
                }
            ],
        }
    )
    saved = api12.standin.simulate_ui_save("d1", mutate=lambda d: d.update(description="edited"))
    panel = saved["panels"][0]
    assert saved["version"] == 2 and saved["description"] == "edited"
    assert saved["schemaVersion"] == 41 and "time_options" not in saved["timepicker"]
    assert saved["annotations"]["list"][0]["builtIn"] == 1
    assert panel["pluginVersion"] == "12.3.0" and panel["id"] == 1 and "gridPos" in panel
    assert panel["datasource"] == {"type": "prometheus", "uid": "prometheus"}
    assert panel["targets"][0] == {"expr": "up", "refId": "A", "datasource": panel["datasource"]}
    assert panel["fieldConfig"]["defaults"]["color"] == {"mode": "palette-classic"}
    assert panel["fieldConfig"]["overrides"] == [] and panel["options"]["legend"]["showLegend"] is True
    versions = api12.call("GET", "/api/dashboards/uid/d1/versions").json()["versions"]
    assert versions[0]["createdBy"] == "admin"


def test_ui_save_on_13_applies_v42_and_drops_empty_tags(api13: Api) -> None:
    api13.save(
        {
            "uid": "d1",
            "title": "Dash",
            "schemaVersion": 41,
            "tags": [],
            "panels": [
                {
                    "type": "timeseries",
                    "fieldConfig": {
                        "defaults": {"custom": {"hideFrom": {"viz": True, "legend": False, "tooltip": False}}}
                    },
                }
            ],
        }
    )
    saved = api13.standin.simulate_ui_save("d1")
    assert saved["schemaVersion"] == 42 and "tags" not in saved
    assert saved["panels"][0]["fieldConfig"]["defaults"]["custom"]["hideFrom"]["tooltip"] is True


# ---------------------------------------------------------------- faults and the request log


def test_injected_status_applies_times_then_stops(api12: Api) -> None:
    fault = api12.standin.inject("GET", "/api/search", status=503, times=2)
    assert [api12.call("GET", "/api/search").status_code for _ in range(3)] == [503, 503, 200]
    assert fault.hits == 2


def test_close_after_handling_lets_the_write_land(api12: Api) -> None:
    api12.standin.inject_close_connection("POST", "/api/dashboards/db", after_handling=True)
    with pytest.raises(requests.ConnectionError):
        api12.save(dash())
    assert api12.standin.stored_version("d1") == 1
    assert api12.standin.request_log[-1].status is None


def test_truncated_body_is_cut(api12: Api) -> None:
    api12.save(dash())
    api12.standin.inject_truncated_body("GET", "/api/dashboards/uid/d1")
    with pytest.raises(json.JSONDecodeError):
        json.loads(api12.call("GET", "/api/dashboards/uid/d1").content)


def test_request_log_hides_credentials_and_counts(api12: Api) -> None:
    api12.save(dash())
    entry = api12.standin.request_log[-1]
    assert entry.headers["Authorization"] == "Bearer ***"
    assert TOKEN not in repr(api12.standin.request_log)
    assert api12.standin.count("POST", "/api/dashboards/db") == 1 and len(api12.standin.writes()) == 1
