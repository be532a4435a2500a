"""The hostile-output suite's payloads and its small servers on 127.0.0.1: one answering with a given function,
a beacon that counts every request it gets (a payload that ran, or a page that fetched, shows up as a hit) and a
Prometheus-style data source whose every label value and legend is a payload."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from local_http import running

MARK = "document.documentElement.setAttribute('data-pwned','1')"


def payloads(beacon: str) -> list[str]:
    """Script tags in any case, attribute breakouts, ``javascript:`` links, markdown and HTML injection,
    bidi and control characters; those that would run set :data:`MARK` and fetch ``beacon``."""
    run = f"{MARK};fetch('{beacon}/ran')"
    return [
        f'</SCRIPT><img src=x onerror="{run}">',
        f"</script ><script>{run}</script>",
        f'</ScRiPt/><svg onload="{run}">',
        f'"><img src=x onerror="{run}">',
        f"' onmouseover='{run}' x='",
        f'<img src="{beacon}/img">',
        f'<iframe src="{beacon}/frame"></iframe>',
        f'<meta http-equiv="refresh" content="0;url={beacon}/refresh">',
        f'<base href="{beacon}/"><link rel=stylesheet href="{beacon}/css">',
        f"<style>@import url({beacon}/import);body{{display:none}}</style>",
        "<!--<script>",
        f"javascript:{run}",
        f'[click](javascript:{run}) ![x]({beacon}/md.png) [y]({beacon}/"onmouseover="{run})',
        "\u2028\u2029 -->]]>",
        "@octocat # dashgen check: all clear\n\n</details></summary>",
        "a\u202eevil\u2066b\u200f",
        "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[1;1Hall 85 panels ok\r\x9b31m",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
    ]


def colours(beacon: str) -> list[str]:
    """Colours that try to leave the ``style`` / ``stroke`` attribute or fetch."""
    return [
        f"red;background:url({beacon}/bg)",
        f'red" onmouseover="{MARK}',
        f"url({beacon}/colour)",
        "red}body{display:none",
        "</style><script>x</script>",
    ]


Answer = tuple[int, str, bytes]  # status, content type, body


@contextmanager
def serve(answer: Callable[[str, str, bytes], Answer]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering every GET and POST with ``answer(method, path, body)``; its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, content_type, body = answer(self.command, self.path, sent)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    with running(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as url:
        yield url


@dataclass
class Beacon:
    """An HTTP server on 127.0.0.1 that counts the requests it gets."""

    url: str = ""
    hits: list[str] = field(default_factory=list)


@contextmanager
def beacon_server() -> Iterator[Beacon]:
    beacon = Beacon()

    def count(_method: str, path: str, _body: bytes) -> Answer:
        beacon.hits.append(path)
        return 204, "text/plain", b""

    with serve(count) as url:
        beacon.url = url
        yield beacon


@contextmanager
def hostile_datasource(labels: list[str]) -> Iterator[str]:
    """A Prometheus query API on 127.0.0.1 whose series carry ``labels`` as label values (one series each, plus a
    series with a string timestamp and non-numeric values); its base URL."""

    def answer(_method: str, target: str, sent: bytes) -> Answer:
        query = parse_qs(urlsplit(target).query)
        query.update(parse_qs(sent.decode()))
        params, path = {k: v[0] for k, v in query.items()}, urlsplit(target).path
        if path.endswith("/query_range"):
            start, end, step = (float(params[k]) for k in ("start", "end", "step"))
            stamps = [start + i * step for i in range(int((end - start) // step) + 1)]
            result = [
                {"metric": {"__name__": "up", "pod": label, "model": label}, "values": [[t, "1"] for t in stamps]}
                for label in labels
            ]
            result.append({"metric": {"pod": "odd"}, "values": [["abc", "1"], [stamps[0], "not a number"]]})
            data: object = {"resultType": "matrix", "result": result}
        elif path.endswith("/query"):
            now = float(params.get("time") or 0)
            result = [{"metric": {"pod": label, "model": label}, "value": [now, "3"]} for label in labels]
            result.append({"metric": {"pod": "odd"}, "value": ["abc", "x"]})
            data = {"resultType": "vector", "result": result}
        else:
            data = labels  # label values, series names
        return 200, "application/json", json.dumps({"status": "success", "data": data}).encode()

    with serve(answer) as url:
        yield url
