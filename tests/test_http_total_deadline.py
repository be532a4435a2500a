"""One request of the Grafana transport, with every retry, wait and body, ends within its bound of a few read
timeouts: a ``Retry-After`` of ``inf``, ``nan`` or an hour, or an answer dripping a byte a second after each
failure, cannot hold a command far past its ``--timeout``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from local_http import running

from dashgen.net.body import ANSWER_TIME_FACTOR
from dashgen.net.http import HttpTransport, NoAnswer
from dashgen.net.retry import RetryPolicy, retry_after_seconds


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "Infinity", "1e999", "Wed, 21 Oct 2015 07:28:00 GMT", ""])
def test_a_retry_after_that_is_no_finite_number_is_not_a_delay(value):
    assert retry_after_seconds(value) is None
    assert RetryPolicy(backoff_max=8).rate_limit_delay(1, value) <= 8


def test_a_finite_retry_after_is_honoured_up_to_the_cap():
    assert retry_after_seconds("2.5") == 2.5 and retry_after_seconds("-3") == 0.0
    assert RetryPolicy(retry_after_max=60).rate_limit_delay(1, "3600") == 60


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        status = {"/inf": 429, "/hour": 429, "/busy": 503}.get(self.path)
        if status is not None:
            self.send_response(status)
            self.send_header("Retry-After", {"/inf": "inf", "/hour": "3600", "/busy": "nan"}[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)  # /drip: a byte a second, 60 bytes announced
        self.send_header("Content-Length", "60")
        self.end_headers()
        try:
            for _ in range(60):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            return

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def slow() -> Iterator[str]:
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _Slow)) as url:
        yield url


@pytest.mark.parametrize("path", ["/inf", "/hour", "/busy", "/drip"])
def test_a_request_with_all_its_retries_ends_within_its_bound(slow, path):
    read = 0.5
    transport = HttpTransport(
        "Grafana", slow, read_timeout=read, retry=RetryPolicy(retries=3, retry_after_max=3600), trust_env=False
    )
    started = time.monotonic()
    try:
        answer = transport.request("GET", slow + path)
        assert answer.status in (429, 503)
    except NoAnswer as exc:
        assert path == "/drip", exc  # cut at the bound, then no time left for a retry
    assert time.monotonic() - started < ANSWER_TIME_FACTOR * read + 1.5
