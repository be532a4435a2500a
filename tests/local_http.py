"""A test's own HTTP server on 127.0.0.1, served on a daemon thread for a block: its URL, then shut down and closed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import TCPServer, ThreadingMixIn


@contextmanager
def running(server: TCPServer) -> Iterator[str]:
    """``server`` served for the block; its ``http://127.0.0.1:<port>`` URL. It polls every 0.01 s: ``shutdown()``
    returns at ``serve_forever``'s next poll, half a second later by default. A threading server's handlers are
    daemon threads, so a handler still answering (a drip, a hang) does not hold the closing."""
    if isinstance(server, ThreadingMixIn):
        server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
