"""``Datasource.import_lines`` makes the next body while the store ingests the one before (the demo's series are
generated in the time VictoriaMetrics parses the last 16 MB): one request in flight, the bodies in order, every line
sent once, and a refused body stops the import at the next one. Against a stand-in HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from local_http import running

from dashgen.live.datasource import Datasource, DatasourceError

# A stand-in HTTP server (a subclass of ThreadingHTTPServer, which the collection scan does not follow).
pytestmark = pytest.mark.slow

INGEST_SECONDS = 0.3  # how long the stand-in takes over each body


class _Store(ThreadingHTTPServer):
    def __init__(self, refuse: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Ingest)
        self.refuse = refuse
        self.bodies: list[bytes] = []
        self.answered: list[float] = []  # when each answer was sent
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()


class _Ingest(BaseHTTPRequestHandler):
    server: _Store

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        store = self.server
        with store.lock:
            store.in_flight += 1
            store.most_in_flight = max(store.most_in_flight, store.in_flight)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(INGEST_SECONDS)
        with store.lock:
            store.bodies.append(body)
            store.in_flight -= 1
        status = 400 if store.refuse else 204
        text = b"cannot parse line 1" if store.refuse else b""
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)
        store.answered.append(time.monotonic())

    def log_message(self, *args: object) -> None:
        pass


def _serve(refuse: bool) -> Iterator[_Store]:
    store = _Store(refuse)
    with running(store):
        yield store


@pytest.fixture
def store() -> Iterator[_Store]:
    yield from _serve(refuse=False)


@pytest.fixture
def refusing() -> Iterator[_Store]:
    yield from _serve(refuse=True)


def _lines(made: dict[int, float], count: int = 30) -> Iterator[bytes]:
    """``count`` lines of 99 bytes (the newline included); when each was made."""
    for i in range(count):
        made[i] = time.monotonic()
        yield f'{{"n":{i:03d},"pad":"{"x" * 80}"}}'.encode()


def test_the_next_body_is_made_while_the_store_ingests_the_one_before(store: _Store) -> None:
    made: dict[int, float] = {}
    host, port = store.server_address[:2]
    sent = Datasource(f"http://{host}:{port}", timeout=10).import_lines(_lines(made), chunk_bytes=1000, timeout=10)
    assert sent == 30
    assert [body.count(b"\n") for body in store.bodies] == [11, 11, 8]  # a body closes at 1,000 bytes or more
    # every line once, in order
    assert b"".join(store.bodies).splitlines() == [line for line in _lines({})]
    assert store.most_in_flight == 1
    # the second body's last line was made before the store answered the first body
    assert made[21] < store.answered[0]


def test_a_refused_body_stops_the_import_at_the_next_one(refusing: _Store) -> None:
    made: dict[int, float] = {}
    host, port = refusing.server_address[:2]
    with pytest.raises(DatasourceError, match="cannot parse line 1"):
        Datasource(f"http://{host}:{port}", timeout=10).import_lines(_lines(made), chunk_bytes=1000, timeout=10)
    assert len(refusing.bodies) == 1  # the second body was made, never sent
    assert max(made) == 21  # the second body's last line: the third body was never begun


def test_an_error_making_the_next_body_leaves_at_once_not_after_the_body_in_flight(store: _Store) -> None:
    """An interrupt or an error while the next body is made reaches the caller while the store still ingests the
    body before: the import does not wait for the request in flight (a Ctrl-C of ``dashgen demo`` leaves at once)."""

    def broken() -> Iterator[bytes]:
        yield from _lines({}, 15)  # the first body (11 lines) is sent, the second begun
        raise KeyboardInterrupt

    host, port = store.server_address[:2]
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        Datasource(f"http://{host}:{port}", timeout=10).import_lines(broken(), chunk_bytes=1000, timeout=10)
    assert time.monotonic() - began < INGEST_SECONDS  # the first body was still in flight
