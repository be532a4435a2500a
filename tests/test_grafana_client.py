"""The Grafana client against the real-HTTP stand-in: one test per fault of the publish loop."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from standin import GrafanaStandin, free_port

from dashgen.errors import DashgenError, InputError
from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import (
    BadResponse,
    FolderNotFound,
    Forbidden,
    GrafanaError,
    GrafanaUnreachable,
    NotFound,
    PayloadTooLarge,
    RequestRejected,
    ServerError,
    Unauthorized,
    VersionConflict,
    WriteOutcomeUnknown,
)
from dashgen.net.http import InsecureTLSWarning, RetryPolicy

TOKEN = "glsa_TestToken_0123456789abcdef_deadbeef"
FAST = RetryPolicy(retries=3, backoff=0.001, backoff_max=0.005)


def make_client(standin: GrafanaStandin, **kwargs: Any) -> GrafanaClient:
    options: dict[str, Any] = {
        "token": TOKEN,
        "connect_timeout": 0.5,
        "read_timeout": 1.0,
        "retry": FAST,
        "trust_env": False,
    }
    options.update(kwargs)
    return GrafanaClient(standin.url, **options)


@pytest.fixture(params=["grafana12", "grafana13"])
def any_standin(request: pytest.FixtureRequest) -> Iterator[GrafanaStandin]:
    with GrafanaStandin(mode=request.param, token=TOKEN) as standin:
        yield standin


@pytest.fixture
def standin() -> Iterator[GrafanaStandin]:
    with GrafanaStandin(mode="grafana12", token=TOKEN) as standin:
        yield standin


@pytest.fixture
def client(standin: GrafanaStandin) -> Iterator[GrafanaClient]:
    with make_client(standin) as client:
        yield client


def dashboard(uid: str = "prod-overview", title: str = "Production overview", **extra: Any) -> dict[str, Any]:
    return {"uid": uid, "title": title, "panels": [], "schemaVersion": 41, **extra}


# ---------------------------------------------------------------- reads


def test_get_existing_dashboard_returns_json_and_meta(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.add_folder("team", "Team")
    standin.seed_dashboard(dashboard(), folder_uid="team")
    live = client.get_dashboard("prod-overview")
    assert live is not None
    assert (live.uid, live.version, live.folder_uid, live.folder_title) == ("prod-overview", 1, "team", "Team")
    assert live.dashboard["title"] == "Production overview"
    assert live.dashboard["version"] == live.version
    assert live.url == "/d/prod-overview/production-overview"


def test_get_missing_dashboard_returns_none(client: GrafanaClient) -> None:
    assert client.get_dashboard("nope") is None


def test_html_404_from_a_wrong_base_path_is_not_taken_for_a_missing_dashboard(
    standin: GrafanaStandin, client: GrafanaClient
) -> None:
    standin.inject("GET", "/api/dashboards/uid/.*", status=404, body="<html>404</html>", content_type="text/html")
    with pytest.raises(NotFound, match="probably from a proxy"):
        client.get_dashboard("prod-overview")


# ---------------------------------------------------------------- saves and conflicts


def test_save_new_dashboard_creates_version_1(standin: GrafanaStandin, client: GrafanaClient) -> None:
    result = client.save_dashboard(dashboard(version=7), None, "first release")
    assert (result.uid, result.version) == ("prod-overview", 1)
    assert result.url == "/d/prod-overview/production-overview"
    sent = standin.requests_to("POST", "/api/dashboards/db")[0].json()
    assert sent["folderUid"] == "" and sent["overwrite"] is False and sent["message"] == "first release"


def test_save_with_the_version_read_back_updates(any_standin: GrafanaStandin) -> None:
    with make_client(any_standin) as client:
        client.save_dashboard(dashboard(), None, "v1")
        live = client.get_dashboard("prod-overview")
        assert live is not None
        result = client.save_dashboard({**live.dashboard, "title": "Renamed"}, None, "v2")
        assert result.version == 2
        assert any_standin.stored("prod-overview")["title"] == "Renamed"  # type: ignore[index]


@pytest.mark.parametrize(("mode", "status"), [("grafana12", 412), ("grafana13", 409)])
def test_stale_version_raises_version_conflict(mode: str, status: int) -> None:
    with GrafanaStandin(mode=mode, token=TOKEN) as standin, make_client(standin) as client:
        client.save_dashboard(dashboard(), None, "v1")
        standin.simulate_ui_save("prod-overview")  # someone saved version 2 in the UI
        with pytest.raises(VersionConflict, match=f"since version 1 was read .*{status}") as caught:
            client.save_dashboard(dashboard(version=1, title="Mine"), None, "v2")
        assert caught.value.status == status
        assert standin.stored_version("prod-overview") == 2


def test_overwrite_replaces_despite_a_stale_version(standin: GrafanaStandin, client: GrafanaClient) -> None:
    client.save_dashboard(dashboard(), None, "v1")
    standin.simulate_ui_save("prod-overview")
    assert client.save_dashboard(dashboard(version=1), None, "forced", overwrite=True).version == 3


def test_missing_folder_raises_folder_not_found(any_standin: GrafanaStandin) -> None:
    with make_client(any_standin) as client, pytest.raises(FolderNotFound, match="no folder 'ghost'"):
        client.save_dashboard(dashboard(), "ghost", "v1")


def test_save_into_folder_keeps_the_folder(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.add_folder("team", "Team")
    assert client.save_dashboard(dashboard(), "team", "v1").folder_uid == "team"
    assert client.save_dashboard(dashboard(version=1), "team", "v2").folder_uid == "team"


def test_provisioned_dashboard_is_request_rejected(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.seed_dashboard(dashboard(), provisioned=True)
    with pytest.raises(RequestRejected, match="Cannot save provisioned dashboard"):
        client.save_dashboard(dashboard(version=1), None, "v2")


def test_413_oversized_dashboard_raises_payload_too_large() -> None:
    with GrafanaStandin(token=TOKEN, max_dashboard_bytes=4096) as standin, make_client(standin) as client:
        big = dashboard(description="x" * 8192)
        with pytest.raises(PayloadTooLarge, match="too large"):
            client.save_dashboard(big, None, "v1")
        assert standin.count("POST", "/api/dashboards/db") == 1


def test_413_html_page_from_a_proxy_raises_payload_too_large(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.inject(
        "POST",
        "/api/dashboards/db",
        status=413,
        body="<html>413 Request Entity Too Large</html>",
        content_type="text/html",
    )
    with pytest.raises(PayloadTooLarge, match="proxy"):
        client.save_dashboard(dashboard(), None, "v1")


# ---------------------------------------------------------------- auth


def test_401_bad_token_raises_unauthorized(standin: GrafanaStandin) -> None:
    with make_client(standin, token="glsa_wrong_token_value") as client:
        with pytest.raises(Unauthorized, match=r"refused the token \(401 Invalid API key\) at http://127\.0\.0\.1"):
            client.get_dashboard("prod-overview")
        assert standin.count("GET") == 1  # a 401 is final


def test_401_without_credentials_raises_unauthorized(standin: GrafanaStandin) -> None:
    with make_client(standin, token=None) as client, pytest.raises(Unauthorized, match="without credentials"):
        client.get_dashboard("prod-overview")


def test_401_wrong_basic_password_raises_unauthorized() -> None:
    with GrafanaStandin(basic_auth=("admin", "s3cret-pass")) as standin:
        with make_client(standin, token=None, basic_auth=("admin", "s3cret-pass")) as good:
            assert good.get_dashboard("prod-overview") is None
        with (
            make_client(standin, token=None, basic_auth=("admin", "wrong-pass")) as bad,
            pytest.raises(Unauthorized, match="Invalid username or password"),
        ):
            bad.get_dashboard("prod-overview")


def test_403_names_the_missing_permission(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.permissions -= {"dashboards:create", "dashboards:write"}
    with pytest.raises(Forbidden, match="missing permission any of dashboards:create, dashboards:write") as caught:
        client.save_dashboard(dashboard(), None, "v1")
    assert caught.value.permission == "any of dashboards:create, dashboards:write"


def test_403_service_level_denial_keeps_grafanas_reason(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.permissions.discard("dashboards:create")  # may update, may not create
    with pytest.raises(Forbidden, match="Access denied to save dashboard") as caught:
        client.save_dashboard(dashboard(), None, "v1")
    assert caught.value.permission is None


def test_org_id_is_sent_and_a_token_of_another_org_is_refused(standin: GrafanaStandin) -> None:
    with make_client(standin, org_id=1) as client:
        assert client.get_dashboard("prod-overview") is None
    assert standin.request_log[-1].headers["X-Grafana-Org-Id"] == "1"
    with make_client(standin, org_id=2) as client, pytest.raises(Unauthorized, match="organization"):
        client.get_dashboard("prod-overview")


# ---------------------------------------------------------------- server errors and retries


def test_500_then_success_on_get_is_retried(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.seed_dashboard(dashboard())
    standin.inject("GET", "/api/dashboards/uid/prod-overview", status=500, times=1)
    assert client.get_dashboard("prod-overview") is not None
    assert standin.count("GET", "/api/dashboards/uid/prod-overview") == 2


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_on_get_are_retried(standin: GrafanaStandin, client: GrafanaClient, status: int) -> None:
    standin.inject(
        "GET",
        "/api/dashboards/uid/.*",
        status=status,
        times=2,
        body="<html>bad gateway</html>",
        content_type="text/html",
    )
    assert client.get_dashboard("prod-overview") is None
    assert standin.count("GET", "/api/dashboards/uid/prod-overview") == 3


def test_500_on_every_get_gives_server_error_after_bounded_retries(
    standin: GrafanaStandin, client: GrafanaClient
) -> None:
    standin.inject("GET", "/api/dashboards/uid/.*", status=500, times=None)
    with pytest.raises(ServerError, match="after 4 attempts"):
        client.get_dashboard("prod-overview")
    assert standin.count("GET") == 1 + FAST.retries


def test_500_on_post_is_not_retried(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.inject("POST", "/api/dashboards/db", status=500, times=1)
    with pytest.raises(ServerError, match="500"):
        client.save_dashboard(dashboard(), None, "v1")
    assert standin.count("POST") == 1
    assert standin.stored("prod-overview") is None


def test_missing_version_answered_500_is_not_found_without_retries(
    standin: GrafanaStandin, client: GrafanaClient
) -> None:
    standin.seed_dashboard(dashboard())
    with pytest.raises(NotFound, match="no version 9"):
        client.get_version("prod-overview", 9)
    assert standin.count("GET", ".*/versions/9") == 1


def test_read_timeout_on_get_is_retried_then_succeeds(standin: GrafanaStandin) -> None:
    standin.seed_dashboard(dashboard())
    standin.inject_delay(0.5, "GET", "/api/dashboards/uid/prod-overview", times=1)
    with make_client(standin, read_timeout=0.2) as client:
        assert client.get_dashboard("prod-overview") is not None
    assert standin.count("GET") == 2


def test_read_timeout_on_every_get_raises_unreachable(standin: GrafanaStandin) -> None:
    standin.inject_delay(0.5, "GET", "/api/dashboards/uid/.*", times=None)
    retry = RetryPolicy(retries=1, backoff=0.001, backoff_max=0.001)
    with (
        make_client(standin, read_timeout=0.15, retry=retry) as client,
        pytest.raises(GrafanaUnreachable, match=r"read timed out after 0\.15 s \(2 attempts\)"),
    ):
        client.get_dashboard("prod-overview")


def test_read_timeout_on_post_is_write_outcome_unknown_and_read_back_finds_the_landed_write(
    standin: GrafanaStandin,
) -> None:
    standin.inject_delay(0.5, "POST", "/api/dashboards/db", after_handling=True)  # slow, but it lands
    with make_client(standin, read_timeout=0.2) as client:
        with pytest.raises(WriteOutcomeUnknown, match="may or may not have landed") as caught:
            client.save_dashboard(dashboard(), None, "v1")
        assert standin.count("POST") == 1
        resolved = client.resolve_save(caught.value)
    assert resolved is not None and resolved.version == 1


def test_connection_dropped_before_the_post_landed_resolves_to_not_landed(
    standin: GrafanaStandin, client: GrafanaClient
) -> None:
    standin.inject_close_connection("POST", "/api/dashboards/db")
    with pytest.raises(WriteOutcomeUnknown) as caught:
        client.save_dashboard(dashboard(), None, "v1")
    assert standin.count("POST") == 1
    assert client.resolve_save(caught.value) is None


def test_read_back_after_uncertain_write_sees_someone_elses_content_as_not_landed(
    standin: GrafanaStandin, client: GrafanaClient
) -> None:
    standin.seed_dashboard(dashboard(title="Theirs"))
    standin.inject_close_connection("POST", "/api/dashboards/db")
    with pytest.raises(WriteOutcomeUnknown) as caught:
        client.save_dashboard(dashboard(title="Mine", version=1), None, "v2")
    assert client.resolve_save(caught.value) is None


def test_connection_refused_raises_unreachable_for_reads_and_writes() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    retry = RetryPolicy(retries=1, backoff=0.001, backoff_max=0.001)
    with GrafanaClient(url, token=TOKEN, connect_timeout=0.5, retry=retry, trust_env=False) as client:
        with pytest.raises(GrafanaUnreachable, match="connection refused"):
            client.get_dashboard("prod-overview")
        with pytest.raises(GrafanaUnreachable) as caught:  # nothing was sent: not WriteOutcomeUnknown
            client.save_dashboard(dashboard(), None, "v1")
        assert not isinstance(caught.value, WriteOutcomeUnknown)


def test_truncated_json_body_raises_bad_response(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.seed_dashboard(dashboard())
    standin.inject_truncated_body("GET", "/api/dashboards/uid/prod-overview", honest_length=True)
    with pytest.raises(BadResponse, match="not valid JSON") as caught:
        client.get_dashboard("prod-overview")
    # Grafana's own JSON answer cut short: its API answered and failed (a release that fails, exit 1), where an HTML
    # page or a redirect means the URL leads elsewhere (exit 2)
    assert caught.value.exit_code == 1


def test_transfer_cut_short_on_get_is_retried(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.seed_dashboard(dashboard())
    standin.inject_truncated_body("GET", "/api/dashboards/uid/prod-overview", honest_length=False)
    assert client.get_dashboard("prod-overview") is not None
    assert standin.count("GET") == 2


def test_truncated_body_after_a_landed_post_is_write_outcome_unknown(
    standin: GrafanaStandin, client: GrafanaClient
) -> None:
    standin.inject_truncated_body("POST", "/api/dashboards/db", honest_length=True)
    with pytest.raises(WriteOutcomeUnknown, match="unreadable body") as caught:
        client.save_dashboard(dashboard(), None, "v1")
    result = client.resolve_save(caught.value)
    assert result is not None and result.version == 1


def test_redirect_is_not_followed_for_a_write(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.inject("POST", "/api/dashboards/db", status=301, body="", headers={"Location": "https://elsewhere/"})
    with pytest.raises(BadResponse, match="redirect") as caught:
        client.save_dashboard(dashboard(), None, "v1")
    assert standin.count("*") == 1 and caught.value.exit_code == 2  # the URL leads elsewhere: an input error


# ---------------------------------------------------------------- secrets and TLS


def test_token_never_appears_in_errors_reprs_or_logs(standin: GrafanaStandin, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # A misbehaving proxy echoing the credential back must not leak it either.
    standin.inject("GET", "/api/dashboards/uid/echo", status=400, body={"message": f"bad header Bearer {TOKEN}"})
    standin.inject("POST", "/api/dashboards/db", status=500)
    standin.inject_delay(0.5, "GET", "/api/dashboards/uid/slow/versions", times=None)
    texts: list[str] = []
    with make_client(standin, read_timeout=0.1) as client:
        texts.append(repr(client))
        for call in (
            lambda: client.get_dashboard("echo"),
            lambda: client.save_dashboard(dashboard(), None, "v1"),
            lambda: client.list_versions("slow"),
        ):
            with pytest.raises(GrafanaError) as caught:
                call()
            texts += [str(caught.value), repr(caught.value), repr(caught.value.__dict__)]
    with make_client(standin, token=TOKEN + "x") as wrong, pytest.raises(Unauthorized) as caught:
        wrong.get_dashboard("x")
    texts += [str(caught.value), repr(wrong)]
    texts.append(caplog.text)
    assert "retry" in caplog.text  # the log did record the failures
    assert all(TOKEN not in text for text in texts)
    assert "***" in texts[1]


def test_url_with_credentials_is_rejected_without_echoing_them() -> None:
    with pytest.raises(InputError) as caught:
        GrafanaClient("https://admin:hunter2@grafana.example.com")
    assert "hunter2" not in str(caught.value)


def test_insecure_tls_warns_loudly(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.warns(InsecureTLSWarning, match="verification is OFF"):
        client = GrafanaClient("https://grafana.example.com", token=TOKEN, insecure=True)
    client.close()
    assert "verification is OFF" in caplog.text


# ---------------------------------------------------------------- versions, folders, errors


def test_versions_list_and_single_version(any_standin: GrafanaStandin) -> None:
    with make_client(any_standin) as client:
        client.save_dashboard(dashboard(), None, "first")
        client.save_dashboard(dashboard(version=1, title="Second"), None, "second")
        versions = client.list_versions("prod-overview")
        assert [(v.version, v.message) for v in versions] == [(2, "second"), (1, "Initial save")]
        one = client.get_version("prod-overview", 1)
        assert one.message == "first" and one.data is not None and one.data["title"] == "Production overview"
        with pytest.raises(NotFound):
            client.list_versions("ghost")


def test_create_folder_save_into_it_and_delete(standin: GrafanaStandin, client: GrafanaClient) -> None:
    folder = client.create_folder("Team", uid="team")
    assert (folder.uid, folder.title) == ("team", "Team")
    with pytest.raises(RequestRejected, match="already taken"):
        client.create_folder("Team again", uid="team")
    client.save_dashboard(dashboard(tags=["llm"]), "team", "v1")
    live = client.get_dashboard("prod-overview")
    assert live is not None and live.folder_uid == "team"
    client.delete_dashboard("prod-overview")
    assert client.get_dashboard("prod-overview") is None
    with pytest.raises(NotFound):
        client.delete_dashboard("prod-overview")


def test_every_error_is_one_line_and_a_dashgen_error(standin: GrafanaStandin, client: GrafanaClient) -> None:
    standin.inject(
        "GET", "/api/dashboards/uid/.*", status=500, times=None, body={"message": "database is locked\nretry later"}
    )
    with pytest.raises(ServerError) as caught:
        client.get_dashboard("prod-overview")
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, DashgenError)


# ---------------------------------------------------------------- the same transport for the data source


def test_the_data_source_client_shares_the_transport_with_its_own_errors_and_no_retries(
    standin: GrafanaStandin,
) -> None:
    from dashgen.live.datasource import Datasource, DatasourceError

    datasource = Datasource(standin.url, timeout=0.2)
    standin.inject_delay(0.5, "POST", "/api/v1/query", times=None)
    with pytest.raises(DatasourceError, match=r"/api/v1/query: no answer: timed out after 0\.2s"):
        datasource.query("up")
    standin.inject(
        "GET",
        "/api/v1/label/node/values",
        status=503,
        times=None,
        body={"status": "error", "errorType": "unavailable", "error": "overloaded"},
    )
    with pytest.raises(DatasourceError, match="HTTP 503 unavailable: overloaded"):
        datasource.label_values("node")
    assert standin.count("GET", "/api/v1/label/node/values") == 1
    assert "dashgen/" in standin.request_log[-1].headers["User-Agent"]
    with pytest.raises(DatasourceError, match=r"no answer: cannot connect"):
        Datasource(f"http://127.0.0.1:{free_port()}", timeout=0.5).query("up")
