"""A real vmagent for the collector tests (Debian package ``victoria-metrics`` ships ``/usr/bin/vmagent``):
started on 127.0.0.1 with a scrape config that scrapes itself and a small local exporter, relabels each
target with the profile's ``node`` and ``job`` labels, adds the deployment label with ``-remoteWrite.label``
(as the seed's per-node vmagent does) and remote-writes into the test VictoriaMetrics. Also the tiny
exporter (``http.server``) it scrapes. Every wait is bounded; the servers are stopped with
``dashgen.demo.vmlauncher.stop_process``. Missing binary: skip locally, fail in CI (``CI=true``).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from subprocess import Popen

from victoriametrics import program_or_skip

from dashgen.demo.vmlauncher import LaunchError, find_program, free_port, launch, log_tail, stop_process
from dashgen.deployment.profile import Profile


def find_vmagent() -> str:
    return program_or_skip(
        find_program("VMAGENT_BIN", ("vmagent",)),
        "vmagent not found: install the Debian package victoria-metrics (`make debian-deps`) or set VMAGENT_BIN",
    )


class Exporter:
    """An HTTP server on 127.0.0.1 answering ``/metrics`` with fixed text (what the test's exporter exports)."""

    def __init__(self, body: str) -> None:
        payload = body.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@dataclass
class VmAgent:
    """A running vmagent; ``stop`` ends it (terminate, then kill after a bounded wait)."""

    port: int
    directory: Path
    process: Popen | None = None
    log_path: Path | None = None
    extra: dict = field(default_factory=dict)

    def stop(self) -> None:
        process, self.process = self.process, None
        stop_process(process)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def log_tail(self) -> str:
        return log_tail(self.log_path)


def scrape_config(profile: Profile, node: str, interval: str, targets: dict[str, str]) -> str:
    """YAML (JSON is YAML) of one static target per job, relabelled with the profile's node and job labels."""
    import json

    jobs = []
    for job, address in targets.items():
        jobs.append(
            {
                "job_name": job,
                "scrape_interval": interval,
                "static_configs": [{"targets": [address]}],
                "relabel_configs": [
                    {"target_label": profile.label("node"), "replacement": node},
                    {"target_label": profile.label("job"), "replacement": job},
                ],
            }
        )
    return json.dumps({"scrape_configs": jobs}, indent=1)


def start_vmagent(
    profile: Profile, node: str, exporter_port: int, remote_write: list[str], interval: str = "1s"
) -> VmAgent:
    """vmagent scraping itself (job = the profile's collector job) and the exporter (job = the GPM source's)."""
    binary = find_vmagent()
    assert profile.collector is not None
    directory = Path(tempfile.mkdtemp(prefix="dashgen-vmagent-"))
    agent = VmAgent(free_port(), directory, log_path=directory / "vmagent.log")
    targets = {
        profile.collector.job: f"127.0.0.1:{agent.port}",
        profile.source("gpm").job: f"127.0.0.1:{exporter_port}",
    }
    config = directory / "scrape.yml"
    config.write_text(scrape_config(profile, node, interval, targets))
    args = [
        binary,
        f"-httpListenAddr=127.0.0.1:{agent.port}",
        f"-promscrape.config={config}",
        f"-remoteWrite.tmpDataPath={directory / 'queue'}",
        "-remoteWrite.flushInterval=1s",
        f"-remoteWrite.label={profile.label('deployment')}={profile.deployment}",
        "-loggerLevel=ERROR",
        *(f"-remoteWrite.url={url}" for url in remote_write),
    ]
    try:
        agent.process = launch("vmagent", args, agent.log_path, f"http://127.0.0.1:{agent.port}/health", 30)
    except LaunchError:
        agent.cleanup()
        raise
    return agent
