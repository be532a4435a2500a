"""A real vmalert beside the demo VictoriaMetrics: every rule group of the profile (recording rules, alerts and the
evaluator heartbeat, as ``dashgen rules`` writes them) evaluated live against the store and written back, so the
demo's first screen shows the rules evaluated instead of "rule evaluator silent". Alerts go nowhere
(``-notifier.blackhole``); vmalert writes ``ALERTS`` into the store as it would in a cluster.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dashgen_queries.nodata import RULE_INTERVAL_SECONDS

from dashgen.demo.recorder import ReplayError, find_vmalert, rule_text
from dashgen.demo.vmlauncher import free_port, stop_process
from dashgen.deployment.profile import Profile


@dataclass
class Evaluator:
    """A running vmalert and the folder holding its rule file and log."""

    process: subprocess.Popen[bytes]
    work: tempfile.TemporaryDirectory[str]

    def stop(self) -> None:
        stop_process(self.process)
        self.work.cleanup()


def start(store_url: str, profile: Profile, binary: str | None = None) -> Evaluator:
    """vmalert evaluating every rule group of ``profile`` every rule interval against ``store_url``, writing back."""
    found = find_vmalert(binary)
    if found is None:
        raise ReplayError(
            "vmalert not found (install the Debian package 'victoria-metrics': `make debian-deps`, or set VMALERT_BIN)"
        )
    work = tempfile.TemporaryDirectory(prefix="dashgen-demo-vmalert-")
    rules = Path(work.name) / "rules.yml"
    rules.write_text(rule_text([profile], None), encoding="utf-8")
    log = (Path(work.name) / "vmalert.log").open("wb")
    process = subprocess.Popen(
        [
            found,
            f"-rule={rules}",
            f"-datasource.url={store_url}",
            f"-remoteWrite.url={store_url}",
            f"-remoteRead.url={store_url}",  # alerts' for-state survives a restart, as in a cluster
            f"-evaluationInterval={RULE_INTERVAL_SECONDS:g}s",
            "-notifier.blackhole",
            f"-httpListenAddr=127.0.0.1:{free_port()}",
            "-loggerLevel=ERROR",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    return Evaluator(process, work)
