"""One headless Chromium per run, driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
open a local HTML file, wait until its script says it is ready, take a whole-page PNG, read the DOM.

No port, no WebSocket library: Chromium reads NUL-terminated JSON commands on file descriptor 3 and writes
its answers and events on 4. Every wait is bounded; :meth:`Browser.close` ends the process (terminate,
then kill). A missing browser is a :class:`BrowserMissing` naming the Debian package to install.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from dashgen.errors import DashgenError, InputError

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PACKAGE = "chromium"


class BrowserMissing(InputError):
    """No Chromium to draw with (exit 2, naming the package)."""


class BrowserError(DashgenError):
    """Chromium failed or did not answer in time."""

    exit_code = 2


def find_browser(explicit: str | None = None) -> str | None:
    """``explicit``, else ``$DASHGEN_CHROMIUM``, else the first Chromium on PATH; None when there is none."""
    for candidate in (explicit, os.environ.get("DASHGEN_CHROMIUM")):
        if candidate:
            return candidate if Path(candidate).is_file() else shutil.which(candidate)
    return next((found for name in BROWSER_NAMES if (found := shutil.which(name))), None)


def require_browser(explicit: str | None = None) -> str:
    found = find_browser(explicit)
    if found is None:
        raise BrowserMissing(
            f"headless Chromium not found: install the Debian package '{PACKAGE}' (apt-get install -y {PACKAGE}), "
            "or set DASHGEN_CHROMIUM to a Chromium or Chrome binary"
        )
    return found


# No network but the file it draws: every request (loopback included, which Chromium otherwise sends past a
# proxy) goes to a proxy on the discard port, where nothing listens, and no host name resolves. The page's
# Content-Security-Policy already forbids any request; this holds even for a page without one.
OFFLINE_FLAGS = (
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-component-update",
    "--disable-sync",
    "--disable-domain-reliability",
    "--no-pings",
)


def sandbox_flags() -> tuple[str, ...]:
    """Chromium's sandbox stays on, except as root, where Chromium refuses to start with it (it needs an
    unprivileged user for its namespaces): then ``--no-sandbox``, and the offline flags and the page's policy
    are what keep a page inert."""
    return ("--no-sandbox",) if os.geteuid() == 0 else ()


class Browser:
    """A running headless Chromium; use as a context manager. ``timeout`` bounds every command, in seconds."""

    def __init__(self, binary: str | None = None, timeout: float = 60.0) -> None:
        self.binary = require_browser(binary)
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="dashgen-chromium-")
        # DevTools over a pipe: the browser reads commands on its fd 3 and writes answers on its fd 4. The child's
        # ends are moved above 9 first, so putting them on 3 and 4 cannot overwrite one another.
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        child_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)
        flags = [
            "--headless=new",
            "--remote-debugging-pipe",
            *sandbox_flags(),
            *OFFLINE_FLAGS,
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--mute-audio",
            f"--user-data-dir={self._profile}",
            "about:blank",
        ]
        # a two-line trampoline (no preexec_fn, which is unsafe with threads): fds to 3 and 4, then exec the browser
        trampoline = (
            "import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); os.dup2(w, 4); "
            "os.close(r); os.close(w); os.execv(sys.argv[3], sys.argv[3:])"
        )
        self._log = Path(self._profile) / "chromium.log"
        try:
            with self._log.open("wb") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-c", trampoline, str(child_r), str(child_w), self.binary, *flags],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    pass_fds=(child_r, child_w),
                )
        finally:
            os.close(child_r)
            os.close(child_w)
        self._next_id = 0
        self._buffer = b""
        self._lock = threading.Lock()
        self._events: list[dict[str, Any]] = []

    # -- protocol ---------------------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer within {self.timeout:g}s")
            ready, _, _ = select.select([self._from_browser], [], [], min(left, 1.0))
            if not ready:
                if self.process.poll() is not None:
                    tail = self._log.read_text(errors="replace").strip().splitlines()[-5:]
                    raise BrowserError(f"Chromium exited with status {self.process.returncode}: {' / '.join(tail)}")
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One DevTools command; its ``result``, or a :class:`BrowserError` with the browser's message."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            command: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
            if session:
                command["sessionId"] = session
            data = json.dumps(command).encode() + b"\0"
            while data:
                written = os.write(self._to_browser, data)
                data = data[written:]
            deadline = time.monotonic() + self.timeout
            while True:
                message = self._read_message(deadline)
                if message.get("id") == ident:
                    if "error" in message:
                        raise BrowserError(f"{method}: {message['error'].get('message', message['error'])}")
                    return message.get("result") or {}
                if "method" in message:
                    self._events.append(message)
                    del self._events[:-200]

    # -- pages ------------------------------------------------------------------------------------

    def render(self, path: Path, png: Path | None, width: int, height: int, viewport_only: bool = False) -> str:
        """Open ``path`` at ``width`` x ``height`` CSS pixels, wait for the page's ready mark, write the
        whole page (or only the ``width`` x ``height`` viewport) as ``png`` when given, and return the DOM
        as drawn (``outerHTML``)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session,
            )
            self.send("Page.navigate", {"url": path.resolve().as_uri()}, session)
            self._wait_ready(session)
            if png is not None:
                shot = self.send(
                    "Page.captureScreenshot",
                    {"format": "png", "captureBeyondViewport": not viewport_only, "fromSurface": True},
                    session,
                )
                png.write_bytes(base64.b64decode(shot["data"]))
            return str(self.evaluate("document.documentElement.outerHTML", session))
        finally:
            self.send("Target.closeTarget", {"targetId": target})

    def evaluate(self, expression: str, session: str) -> Any:
        answer = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in answer:
            raise BrowserError(f"page script failed: {answer['exceptionDetails'].get('text', '')}")
        return (answer.get("result") or {}).get("value")

    def _wait_ready(self, session: str) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            state = self.evaluate(
                "document.readyState === 'complete' && document.body && document.body.dataset.ready === '1'", session
            )
            if state:
                failed = self.evaluate("document.body.dataset.failed || ''", session)
                if failed:
                    raise BrowserError(f"the preview script could not draw: {failed[:500]}")
                return
            time.sleep(0.05)
        raise BrowserError(f"the preview page was not ready within {self.timeout:g}s")

    # -- lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                with contextlib.suppress(BrowserError):
                    self.send("Browser.close")
                try:
                    self.process.wait(5)
                except subprocess.TimeoutExpired:
                    self.process.terminate()
                    try:
                        self.process.wait(5)
                    except subprocess.TimeoutExpired:
                        self.process.kill()
                        self.process.wait(5)
        finally:
            for fd in (self._to_browser, self._from_browser):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
