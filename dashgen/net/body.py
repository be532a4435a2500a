"""Reading an HTTP answer's body with bounds: at most ``max_bytes`` (a 200 MB answer took 430 MB of memory), and
whole before a deadline — the read timeout is per socket read, so a server dripping a byte a second never tripped
it; a watchdog shuts the socket of an answer past its deadline, which wakes the blocked read."""

from __future__ import annotations

import socket
import threading
import time

import requests

ANSWER_TIME_FACTOR = 4  # a whole answer must arrive within this many read timeouts


class BodyLimit(requests.exceptions.RequestException):
    """Raised while reading a body: over the size cap, or past the whole answer's time limit."""

    def __init__(self, message: str, *, too_large: bool) -> None:
        super().__init__(message)
        self.too_large = too_large


def _cut_connection(raw: requests.Response, cut: threading.Event) -> None:
    """Shut the answer's socket down (which wakes a blocked read), else close the answer."""
    cut.set()
    sock = getattr(getattr(raw.raw, "_connection", None), "sock", None)
    if sock is None:  # urllib3 hands the socket to http.client's answer: fp (BufferedReader) -> SocketIO -> socket
        sock = getattr(getattr(getattr(getattr(raw.raw, "_fp", None), "fp", None), "raw", None), "_sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        else:
            raw.close()
    except OSError:
        pass


def read_body(raw: requests.Response, max_bytes: int, deadline: float) -> bytes:
    """The answer's body, read in chunks up to ``max_bytes`` and before ``deadline`` (monotonic)."""
    declared = raw.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise BodyLimit(f"the answer is {int(declared):,} bytes, over the limit of {max_bytes:,}", too_large=True)
    chunks, size, cut = [], 0, threading.Event()
    # a read blocks until a chunk is full or the body ends, so the deadline is kept by cutting the connection
    watchdog = threading.Timer(max(deadline - time.monotonic(), 0.0), _cut_connection, (raw, cut))
    watchdog.daemon = True
    watchdog.start()
    try:
        for chunk in raw.iter_content(1 << 16):
            size += len(chunk)
            if size > max_bytes:
                raise BodyLimit(f"the answer went over the limit of {max_bytes:,} bytes", too_large=True)
            chunks.append(chunk)
    except (requests.exceptions.RequestException, OSError, ValueError, AttributeError) as exc:
        if not cut.is_set() or isinstance(exc, BodyLimit):
            raise
    finally:
        watchdog.cancel()
    if cut.is_set():
        raise BodyLimit(
            f"the answer did not arrive whole within {ANSWER_TIME_FACTOR} read timeouts ({size:,} bytes so far)",
            too_large=False,
        )
    return b"".join(chunks)
