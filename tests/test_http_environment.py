"""The transport reads the environment's proxy and CA settings once, and still honours them: a request goes
through ``HTTP_PROXY`` unless ``NO_PROXY`` names the host (requests' ``trust_env``, without its per-request
lookups)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from local_http import running

from dashgen.net.http import NO_RETRY, HttpTransport, NoAnswer


class _Proxy(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        type(self).seen.append(self.requestline)
        body = b'{"database":"ok"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy():
    _Proxy.seen = []
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)) as url:
        yield url, _Proxy.seen


def test_a_proxy_of_the_environment_is_used_for_every_request(proxy, monkeypatch):
    url, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    transport = HttpTransport("Grafana", "http://grafana.invalid:3000", connect_timeout=2, read_timeout=2)
    try:
        for _ in range(2):
            assert transport.request("GET", "http://grafana.invalid:3000/api/health").status == 200
    finally:
        transport.close()
    assert seen == ["GET http://grafana.invalid:3000/api/health HTTP/1.1"] * 2


def test_no_proxy_naming_the_host_bypasses_the_proxy(proxy, monkeypatch):
    url, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.setenv("NO_PROXY", "grafana.invalid")
    # no retry: a request through the proxy would be answered at the first attempt, so one attempt proves it
    transport = HttpTransport(
        "Grafana", "http://grafana.invalid:3000", connect_timeout=1, read_timeout=1, retry=NO_RETRY
    )
    try:
        with pytest.raises(NoAnswer):  # straight to a host that does not resolve, not through the proxy
            transport.request("GET", "http://grafana.invalid:3000/api/health")
    finally:
        transport.close()
    assert seen == []


def test_trust_env_false_ignores_the_proxy(proxy, monkeypatch):
    url, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", url)
    transport = HttpTransport(  # no retry, as above
        "Grafana", "http://grafana.invalid:3000", connect_timeout=1, read_timeout=1, trust_env=False, retry=NO_RETRY
    )
    try:
        with pytest.raises(NoAnswer):
            transport.request("GET", "http://grafana.invalid:3000/api/health")
    finally:
        transport.close()
    assert seen == []
