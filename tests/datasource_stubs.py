"""The fixtures of the ``validate-queries`` tests: a dashboard folder of given queries (:func:`folder`) and a data
source on 127.0.0.1 that answers as told, slowly, malformed or not at all (:func:`hostile`)."""

from __future__ import annotations

import json

import pytest

VARIABLES = [
    {"name": "datasource", "type": "datasource", "current": {"value": "default"}},
    {
        "name": "node",
        "type": "query",
        "includeAll": True,
        "multi": True,
        "allValue": ".+",
        "current": {"value": ["$__all"]},
        "query": "label_values(up, node)",
    },
    {
        "name": "replica",
        "type": "custom",
        "includeAll": True,
        "multi": True,
        "current": {"value": ["$__all"]},
        "query": "r0 : a|b,r1 : c|d",
    },
    {
        "name": "stage",
        "type": "custom",
        "includeAll": False,
        "multi": True,
        "current": {"value": ["0", "1"]},
        "options": [{"value": "0"}, {"value": "1"}, {"value": "2"}],
    },
    {"name": "one", "type": "custom", "current": {"value": "x.y"}, "options": [{"value": "x.y"}]},
]


def dashboard_of(*exprs: str) -> dict:
    return {
        "uid": "t",
        "title": "t",
        "templating": {"list": VARIABLES},
        "panels": [
            {
                "id": i + 1,
                "type": "timeseries",
                "title": f"p{i}",
                "targets": [{"refId": "A", "expr": e, "instant": True}],
            }
            for i, e in enumerate(exprs)
        ],
    }


@pytest.fixture()
def folder(tmp_path):
    def write(*exprs: str):
        (tmp_path / "d.json").write_text(json.dumps(dashboard_of(*exprs)))
        return tmp_path

    return write


class HostileServer:
    """A data source on 127.0.0.1 that answers every request with ``answer(path) -> (status, body bytes)``,
    or drips ``drip`` bytes a second; counts the requests it got."""

    def __init__(self, answer=None, drip: float = 0.0) -> None:
        import http.server
        import threading

        owner = self
        self.requests = 0
        self.answer = answer or (lambda path: (200, b'{"status":"success","data":{"resultType":"vector","result":[]}}'))

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _any(self):
                owner.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                status, body = owner.answer(self.path)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if not drip else 10_000))
                self.end_headers()
                if drip:
                    import time

                    try:
                        for _ in range(int(20 * drip) + 5):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(1 / drip)
                    except OSError:
                        pass
                    return
                self.wfile.write(body)

            do_GET = do_POST = _any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # shutdown() returns at serve_forever's next poll: half a second later by default
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def hostile():
    servers = []

    def start(answer=None, drip: float = 0.0) -> HostileServer:
        servers.append(HostileServer(answer, drip))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def json_answer(data) -> tuple[int, bytes]:
    return 200, json.dumps({"status": "success", "data": data}).encode()
