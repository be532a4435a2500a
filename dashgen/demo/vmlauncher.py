"""Start and stop a throw-away single-node VictoriaMetrics on 127.0.0.1 (tests, ``make demo``).

One job: find the binary, pick a free port, run it on a temporary ``-storageDataPath`` with the
flags query validation needs (fresh samples queryable at once, no dedup, no response cache, a
retention long enough for back-dated imports) or, with ``production_flags``, as a profile's central
store runs (deduplication interval and latency offset), wait for ``/health`` with a bound, and stop it
(terminate, wait, kill on timeout). All waits are bounded.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import requests

from dashgen.errors import DashgenError

BINARY_NAMES = ("victoria-metrics", "victoria-metrics-prod")
DEFAULT_FLAGS = (
    "-retentionPeriod=100y",
    "-search.latencyOffset=0s",
    "-search.disableCache",
    "-loggerLevel=ERROR",
)


def production_flags(resolution: str, latency_offset: str) -> tuple[str, ...]:
    """The flags of a central store as a profile's ``[store]`` describes it (S24): deduplication to one
    sample per ``resolution`` and the ``latency_offset`` behind now; they override the fast defaults."""
    flags = [f"-search.latencyOffset={latency_offset}"]
    if resolution != "0s":
        flags.append(f"-dedup.minScrapeInterval={resolution}")
    return tuple(flags)


class LaunchError(DashgenError):
    """VictoriaMetrics could not be started (binary missing, port, or no /health in time)."""

    exit_code = 2


def find_program(env_var: str, names: Sequence[str], explicit: str | None = None) -> str | None:
    """A program: ``explicit``, else ``$<env_var>`` (a path, or a name on PATH; when set, it decides), else the
    first of ``names`` found (a name on PATH, or an absolute path); None when there is none."""
    for candidate in (explicit, os.environ.get(env_var)):
        if candidate:
            return candidate if Path(candidate).is_file() else shutil.which(candidate)
    return next((found for name in names if (found := shutil.which(name))), None)


def find_binary(explicit: str | None = None) -> str | None:
    """The VictoriaMetrics binary: ``explicit``, ``$VICTORIA_METRICS_BIN``, or the first on PATH."""
    return find_program("VICTORIA_METRICS_BIN", BINARY_NAMES, explicit)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log_tail(path: Path | None, lines: int = 20) -> str:
    """The last ``lines`` of a throw-away server's log ("" when it has none)."""
    if path is None or not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def stop_process(process: subprocess.Popen | None, timeout: float = 10.0) -> None:
    """Terminate a throw-away server, wait up to ``timeout``, kill it if it is still running."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)


class ServerExited(RuntimeError):
    """A throw-away server's process ended before it answered."""

    def __init__(self, code: int) -> None:
        self.code = code
        super().__init__(f"exited with code {code}")


def wait_ready(process: subprocess.Popen, url: str, timeout: float) -> None:
    """Return once ``url`` answers 2xx; raise ServerExited if the process ends first, TimeoutError after
    ``timeout`` seconds. Each probe waits at most 1 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = process.poll()
        if code is not None:
            raise ServerExited(code)
        try:
            if requests.get(url, timeout=1).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise TimeoutError(url)


def launch(
    name: str, args: list[str], log_path: Path, ready_url: str, timeout: float, cwd: Path | None = None
) -> subprocess.Popen:
    """Start a throw-away server (output to ``log_path``) and return its process once ``ready_url`` answers.
    When it exits first or is not ready within ``timeout`` seconds it is stopped and LaunchError says why, with
    the tail of its log."""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd)
    try:
        wait_ready(process, ready_url, timeout)
        return process
    except ServerExited as exc:
        problem = f"{name} exited with code {exc.code} during start-up"
    except TimeoutError:
        problem = f"{name} did not answer {ready_url} within {timeout:g}s"
    except BaseException:  # a signal or Ctrl-C while it starts: the server is not left running without an owner
        stop_process(process)
        raise
    stop_process(process)
    raise LaunchError(f"{problem}:\n{log_tail(log_path)}")


@dataclass
class VictoriaMetrics:
    """A running VictoriaMetrics; ``url`` is the Prometheus-compatible base URL."""

    binary: str
    port: int
    data_dir: Path
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    _owns_dir: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate, wait up to ``timeout``, kill if it is still running; remove a temporary data dir."""
        process, self.process = self.process, None
        stop_process(process, timeout)
        if self._owns_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> VictoriaMetrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(
    binary: str | None = None,
    data_dir: Path | None = None,
    port: int | None = None,
    startup_timeout: float = 30.0,
    extra_flags: tuple[str, ...] = (),
) -> VictoriaMetrics:
    """Start VictoriaMetrics and return once ``/health`` answers OK; raises LaunchError otherwise."""
    found = find_binary(binary)
    if not found:
        raise LaunchError(
            "victoria-metrics binary not found (install the Debian package 'victoria-metrics': "
            "`make debian-deps`, or set VICTORIA_METRICS_BIN)"
        )
    owns = data_dir is None
    directory = Path(tempfile.mkdtemp(prefix="dashgen-vm-")) if data_dir is None else Path(data_dir)
    directory.mkdir(parents=True, exist_ok=True)
    server = VictoriaMetrics(found, port or free_port(), directory, _owns_dir=owns)
    server.log_path = directory / "victoria-metrics.log"
    args = [
        found,
        f"-httpListenAddr=127.0.0.1:{server.port}",
        f"-storageDataPath={directory / 'data'}",
        *(flag for flag in DEFAULT_FLAGS if flag.split("=")[0] not in {extra.split("=")[0] for extra in extra_flags}),
        *extra_flags,
    ]
    try:
        server.process = launch("victoria-metrics", args, server.log_path, f"{server.url}/health", startup_timeout)
    except BaseException:  # LaunchError, or a signal while it starts: its folder is removed too
        server.stop()
        raise
    return server
