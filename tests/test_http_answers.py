"""Bounded answers (issue 32, finding 10): a huge answer is refused by size without being held whole in memory, and
an answer that drips in (each read within the read timeout, the whole never) ends within a few read timeouts; a
lone surrogate escape in a JSON answer reads as U+FFFD."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from local_http import running

from dashgen.net.http import NO_RETRY, AnswerTooLarge, HttpTransport, NoAnswer


class _Hostile(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        if self.path == "/huge":  # 8 MiB, no Content-Length: only reading tells the size
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(128):
                    self.wfile.write(b"x" * 65536)
            except OSError:  # the client refused the answer part way, as it should
                return
        elif self.path == "/declared":  # a Content-Length over the cap is refused before the body is read
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 40))
            self.end_headers()
        else:  # /drip: a byte every 0.2 s for up to 10 s
            self.send_response(200)
            self.send_header("Content-Length", "50")
            self.end_headers()
            for _ in range(50):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.2)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[str]:
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)) as url:
        yield url


@pytest.mark.parametrize("path", ["/huge", "/declared"])
def test_an_answer_over_the_size_cap_is_refused_naming_the_limit(hostile, path):
    transport = HttpTransport(
        "Grafana", hostile, read_timeout=5, retry=NO_RETRY, max_answer_bytes=1 << 20, trust_env=False
    )
    with pytest.raises(AnswerTooLarge, match="over the limit of 1,048,576"):
        transport.request("GET", hostile + path)


def test_a_dripping_answer_ends_within_a_few_read_timeouts(hostile):
    transport = HttpTransport("Grafana", hostile, read_timeout=0.5, retry=NO_RETRY, trust_env=False)
    started = time.monotonic()
    with pytest.raises(NoAnswer) as caught:
        transport.request("GET", hostile + "/drip")
    assert caught.value.timed_out and "did not arrive whole" in caught.value.reason
    assert time.monotonic() - started < 4 * 0.5 + 1.5  # 10 s of dripping, cut after 4 read timeouts


class _RateLimited(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        self.send_response(429)
        self.send_header("Retry-After", "30")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_retry_after_past_the_deadline_is_not_waited():
    """Issue 32: Retry-After counts against publish --deadline: a 30 s pause that would end past the deadline
    is not taken; the 429 in hand is the answer."""
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _RateLimited)) as url:
        transport = HttpTransport("Grafana", url, read_timeout=2, trust_env=False)
        transport.deadline = time.monotonic() + 5
        started = time.monotonic()
        assert transport.request("GET", url + "/api/health").status == 429
        assert time.monotonic() - started < 3


def test_a_lone_surrogate_escape_in_an_answer_reads_as_the_replacement_character():
    from dashgen.net.http import HttpResponse

    body = b'{"a\\ud800": ["x\\udcffy", "\\ud83d\\ude00", 1, {"k": "\\uDC9B"}]}'
    data = HttpResponse("GET", "http://x", 200, {}, body, 1, 0).json()
    assert data == {"a\ufffd": ["x\ufffdy", "\U0001f600", 1, {"k": "\ufffd"}]}  # a pair stays one character


def test_a_label_value_that_is_a_lone_surrogate_leaves_the_preview_drawn(tmp_path):
    """One label value of the data source that is no character made the whole page unwritable (exit 2)."""
    from click.testing import CliRunner
    from hostile import hostile_datasource

    from dashgen.cli import main

    with hostile_datasource(["ok", "x\udcffy"]) as url:
        args = ["preview", "--profile", "h20-16", "--no-png", "--timeout", "5", "--workers", "2"]
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path), "--datasource-url", url])
    assert result.exit_code in (0, 1) and "not UTF-8" not in result.output, result.output
    page = (tmp_path / "dg-h20-16-cluster.html").read_text(encoding="utf-8")
    assert "x\ufffdy" in page
