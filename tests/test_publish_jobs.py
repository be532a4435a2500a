"""Issue 16 point 9: ``--jobs N`` — bounded concurrency for export, validation, pushes and read-backs, with the
report and the ledger in plan order whatever the timing, and Grafana's rate limit (429 + ``Retry-After``)
respected by every request, writes included (a rate-limited request was not processed)."""

from __future__ import annotations

import time

import pytest
from publishing import TOKEN, UID, ledger, run, saves, work_folder
from standin import GrafanaStandin

from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.errors import RateLimited
from dashgen.net.http import RetryPolicy

work = pytest.fixture(work_folder)
UIDS = ["dg-h20-16-cluster", "dg-long-context-64-cluster", "dg-pd-128-cluster", "dg-video-200-cluster"]  # plan order
SAVE = {
    "grafana12": ("POST", "/api/dashboards/db"),
    "grafana13": ("POST", r"/apis/dashboard\.grafana\.app/v0alpha1/namespaces/default/dashboards"),
}


@pytest.mark.parametrize("jobs", [1, 2])
def test_jobs_bound_the_requests_in_flight(work, jobs):
    with GrafanaStandin(token=TOKEN, latency=0.05) as grafana:
        result = run(work, grafana, "--jobs", str(jobs), profile=None)
        assert result.exit_code == 0, result.output
        assert grafana.max_in_flight == jobs  # never more, and with 4 dashboards and 50 ms, really that many


def test_the_ledger_and_the_report_are_in_plan_order_whatever_finishes_first(work):
    with GrafanaStandin(mode="grafana13", token=TOKEN) as grafana:
        grafana.inject_delay(0.6, "POST", SAVE["grafana13"][1])  # the first push is the slowest
        result = run(work, grafana, "--jobs", "4", profile=None)
        assert result.exit_code == 0, result.output
        assert [r["uid"] for r in ledger(work)] == UIDS
        lines = [line.split()[1].rstrip(":") for line in result.stdout.splitlines() if line.startswith("published")]
        assert lines == UIDS


@pytest.mark.parametrize("mode", ["grafana12", "grafana13"])
def test_a_429_with_retry_after_is_waited_out_and_the_write_sent_again(work, mode):
    with GrafanaStandin(mode=mode, token=TOKEN) as grafana:
        grafana.inject(*SAVE[mode], 429, {"message": "Too Many Requests"}, headers={"Retry-After": "1"})
        began = time.monotonic()
        result = run(work, grafana)
        assert result.exit_code == 0, result.output
        assert time.monotonic() - began >= 1.0
        assert [r.status for r in saves(grafana)] == [429, 201 if mode == "grafana13" else 200]
        assert ledger(work)[-1]["outcome"] == "published" and grafana.stored_version(UID) == 1


def test_a_429_pauses_every_request_of_the_client_not_only_the_limited_one():
    with GrafanaStandin(token=TOKEN) as grafana:
        grafana.inject("GET", "/api/health", 429, {"message": "slow down"}, headers={"Retry-After": "0.5"})
        with GrafanaClient(grafana.url, token=TOKEN, trust_env=False) as client:
            began = time.monotonic()
            assert client.server_info().version_text
            assert client.current_org_id() == 1
            assert time.monotonic() - began >= 0.5


def test_a_rate_limit_that_never_lifts_is_one_bounded_error():
    with GrafanaStandin(token=TOKEN) as grafana:
        grafana.inject(
            "POST",
            "/api/dashboards/db",
            429,
            {"message": "Too Many Requests"},
            times=None,
            headers={"Retry-After": "0.01"},
        )
        policy = RetryPolicy(retries=2, backoff=0.001, backoff_max=0.01)
        with (
            GrafanaClient(grafana.url, token=TOKEN, retry=policy, trust_env=False) as client,
            pytest.raises(RateLimited, match="429, Retry-After 0.01: Too Many Requests.*after 3 attempts"),
        ):
            client.save_dashboard({"uid": "x", "title": "X"}, None, "m")
        assert grafana.count("POST", "/api/dashboards/db") == 3 and grafana.stored("x") is None
