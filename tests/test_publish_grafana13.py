"""Issue 16 point 1: Grafana 13, the v2 schema and the ``/apis`` API (grafana-api.md §13), against the stand-in.

A dashboard a person's save converted to v2 is refused, left untouched and backed up as its v2 JSON when the
overwrite is approved; 12.x's 406 for such a dashboard is that refusal, not an error; the plan diffs what is
really stored; Grafana 13 is written through ``/apis`` with ``metadata.resourceVersion`` and dry-runs there."""

from __future__ import annotations

import json

import pytest
from publishing import TOKEN, UID, change_gpu_label, files, ledger, plan_json, required_approvals, run, saves
from publishing import approve_all as approve_all
from publishing import work_folder as work_folder
from standin import GrafanaStandin
from standin.v2 import auto_grid, rows_to_tabs

work = pytest.fixture(work_folder)
APIS = r"/apis/dashboard\.grafana\.app/[^/]+/namespaces/default/dashboards.*"


@pytest.fixture(params=["grafana12", "grafana13"])
def dynamic(request):
    """A Grafana whose UI saves convert dashboards to v2 (13's default; 12.x with dynamic dashboards on)."""
    with GrafanaStandin(mode=request.param, token=TOKEN, dynamic_dashboards=True) as standin:
        yield standin


def test_a_v2_stored_dashboard_is_refused_untouched_and_overwritten_only_when_approved(work, dynamic):
    assert run(work, dynamic).exit_code == 0
    dynamic.simulate_ui_save(UID, lambda d: d.update(title="Tabbed by a person"), v2_edit=rows_to_tabs)
    stored_v2, version = dynamic.stored_v2(UID), dynamic.stored_version(UID)
    assert stored_v2["layout"]["kind"] == "TabsLayout"
    dynamic.clear_log()
    refused = run(work, dynamic)
    assert refused.exit_code == 1, refused.output
    assert "v2 schema" in refused.output and f"--overwrite-v2 {UID}" in refused.output
    assert "tabs (they would become expanded rows)" in refused.output
    assert "conditional rendering on 1" in refused.output  # the plan says what would be lost
    assert saves(dynamic) == [] and dynamic.stored_v2(UID) == stored_v2 and dynamic.stored_version(UID) == version
    assert not (work / "backups" / UID).exists() or not any("-v2" in f for f in files(work / "backups" / UID))
    overwritten = run(work, dynamic, "--overwrite-v2", UID)
    assert overwritten.exit_code == 0, overwritten.output
    assert dynamic.stored_v2(UID) is None and dynamic.stored_api_version(UID) == "v0alpha1"
    record = ledger(work)[-1]
    assert record["outcome"] == "published" and record["approvals_used"] == [f"overwrite-v2:{UID}"]
    backup = json.loads((work / "backups" / UID / record["backup_file"].rsplit("/", 1)[-1]).read_text())
    assert backup["resource"]["spec"] == stored_v2  # the person's v2 JSON, not a lossy down-conversion
    assert backup["resource"]["apiVersion"].endswith(("/v2", "/v2beta1"))


def test_406_on_grafana_12_with_dynamic_dashboards_is_a_v2_refusal_not_an_error(work):
    with GrafanaStandin(mode="grafana12", token=TOKEN, dynamic_dashboards=True) as grafana:
        assert run(work, grafana).exit_code == 0
        grafana.simulate_ui_save(UID, v2_edit=auto_grid)
        grafana.inject("GET", APIS, 404, {"message": "Not found"}, times=None)  # /apis not served: legacy only
        grafana.clear_log()
        result = run(work, grafana)
        assert [r.status for r in grafana.requests_to("GET", f"/api/dashboards/uid/{UID}")] == [406]
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output and "v2 schema" in result.output and "406" in result.output
        assert f"--overwrite-v2 {UID}" in result.output and saves(grafana) == []
        assert grafana.stored_v2(UID) is not None


@pytest.mark.parametrize("mode", ["grafana12", "grafana13"])
def test_the_plan_diffs_what_is_stored_not_a_schema_migrating_conversion(work, mode):
    """dashgen's JSON is stored as v0alpha1; read through v1 Grafana migrates its schemaVersion. The plan
    re-reads the stored version, so an untouched dashboard is unchanged, not a false update or edit."""
    with GrafanaStandin(mode=mode, token=TOKEN) as grafana:
        grafana.settings.latest_schema_version = 43  # newer than what the build targets
        assert run(work, grafana).exit_code == 0
        grafana.clear_log()
        again = run(work, grafana)
        assert again.exit_code == 0, again.output
        assert ledger(work)[-1]["outcome"] == "unchanged" and grafana.writes() == []
        reads = [r.path.split("/")[3] for r in grafana.requests_to("GET", APIS)]
        assert reads == ["v1" if mode == "grafana13" else "v1beta1", "v0alpha1"]


def test_grafana_13_dry_run_asks_grafana_what_it_would_store_and_stores_nothing(work):
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        assert run(work, grafana).exit_code == 0
        change_gpu_label(work)
        keys = required_approvals(work, grafana)
        grafana.settings.min_refresh_interval = "5m"  # the server would raise the build's 1m refresh
        version, before = grafana.stored_version(UID), files(work)
        grafana.clear_log()
        result = run(work, grafana, "--dry-run", "--format", "json", *approve_all(keys))
        assert result.exit_code == 0, result.output
        (preview,) = plan_json(result)["dashboards"][0]["server_preview"]
        assert preview.startswith("something else than the build") and '$.refresh: sent "1m" stored "5m"' in preview
        (dry,) = grafana.requests_to("PUT", APIS)
        assert dry.query["dryRun"] == ["All"] and dry.json()["metadata"]["resourceVersion"]
        assert grafana.stored_version(UID) == version and grafana.writes() == [] and files(work) == before


def test_grafana_12_dry_runs_locally_and_writes_through_the_legacy_api(work):
    with GrafanaStandin(mode="grafana12", token=TOKEN) as grafana:
        assert run(work, grafana).exit_code == 0
        change_gpu_label(work)
        keys = required_approvals(work, grafana)
        assert grafana.writes(include_dry_runs=True) == [s for s in saves(grafana)]  # no server-side dry run on 12
        assert run(work, grafana, *approve_all(keys)).exit_code == 0
        assert [r.method for r in grafana.writes(include_dry_runs=True)] == ["POST", "POST"]
        assert all(r.path == "/api/dashboards/db" for r in grafana.writes())


def test_a_hidden_version_reads_through_apis_and_writes_through_the_legacy_api(work):
    with GrafanaStandin(mode="grafana13", token=TOKEN, hide_version=True) as grafana:
        result = run(work, grafana)
        assert result.exit_code == 0, result.output
        assert "version hidden" in result.output
        assert [r.path for r in saves(grafana)] == ["/api/dashboards/db"]
        assert grafana.count("GET", APIS) >= 2  # the export and the read-back


def test_grafana_11_is_read_and_written_through_the_legacy_api_only(work):
    with GrafanaStandin(mode="grafana12", token=TOKEN, grafana_version="11.6.0") as grafana:
        assert run(work, grafana).exit_code == 0
        assert run(work, grafana).exit_code == 0
        assert grafana.count("*", r"/apis/.*") == 0 and ledger(work)[-1]["outcome"] == "unchanged"


def test_a_dry_run_behind_a_proxy_that_drops_query_strings_sends_no_write(work):
    """Issue 32: behind ``proxy_pass http://grafana$uri;`` the server-side ``?dryRun=All`` is lost and a dry run
    PUT is a save. The path is probed with a read first (an unmatched labelSelector must list nothing); here it
    lists everything, so Grafana is not asked, the plan is computed locally, and nothing but reads is sent."""
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        assert run(work, grafana).exit_code == 0
        change_gpu_label(work)
        keys = required_approvals(work, grafana)
        version = grafana.stored_version(UID)
        grafana.drop_query_strings = True
        grafana.clear_log()
        result = run(work, grafana, "--dry-run", *approve_all(keys))
        assert result.exit_code == 0, result.output
        assert "drops query strings" in result.output and "nothing was written" in result.output
        assert {r.method for r in grafana.requests_to("*")} <= {"GET", "HEAD"}
        assert grafana.stored_version(UID) == version and grafana.writes() == []


def test_a_dry_run_client_refuses_every_write_before_it_is_sent():
    from dashgen.grafana.client import GrafanaClient
    from dashgen.net.http import WriteRefused

    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        client = GrafanaClient(grafana.url, token=TOKEN)
        client.refuse_writes()
        with pytest.raises(WriteRefused, match="dry run"):
            client.save_dashboard({"uid": "x", "title": "x", "panels": []}, None, "m")
        with pytest.raises(WriteRefused):
            client.resources(1).write("x", {"title": "x"}, None, "m", None, create=True, dry_run=True)
        assert grafana.requests_to("*") == []
