"""The rule files under the real vmalert (``-replay``) over the demo data in a real VictoriaMetrics, as the incident
drills run them: in the gpu-missing scenario (one GPU falls off the bus after an Xid 79) GpuMissing names the node
for both exported per-GPU sources and GpuXidFatal still names the lost GPU more than half an hour after its series
vanished; the healthy window fires none of the GPU-presence alerts.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from victoriametrics import program_or_skip

from dashgen.demo import recorder
from dashgen.demo.scenarios import lost_gpu
from dashgen.deployment.profile import Profile
from dashgen.live.datasource import Datasource

PROFILE = "long-context-64"
STAMP = "%Y-%m-%dT%H:%M:%SZ"
PRESENCE = ("GpuMissing", "GpuMissingFromExporter", "GpuXidFatal")


def replay_group(store_url: str, profile: Profile, suffix: str, start: float, end: float, work: Path) -> None:
    """Evaluate the rule file's group ``dashgen-<profile>-<suffix>`` every minute from ``start`` to ``end`` with
    vmalert -replay, writing recorded series and ALERTS back into the store."""
    vmalert = program_or_skip(recorder.find_vmalert(), "vmalert not found (Debian package 'victoria-metrics')")
    rules = work / f"{suffix}.yml"
    rules.write_text(recorder.rule_text([profile], suffix), encoding="utf-8")
    done = subprocess.run(
        [
            vmalert,
            f"-rule={rules}",
            f"-datasource.url={store_url}",
            f"-remoteWrite.url={store_url}",
            "-evaluationInterval=60s",
            "-datasource.queryStep=60s",
            f"-replay.timeFrom={time.strftime(STAMP, time.gmtime(start))}",
            f"-replay.timeTo={time.strftime(STAMP, time.gmtime(end))}",
            "-replay.disableProgressBar",
            "-replay.rulesDelay=0s",
            "-loggerLevel=ERROR",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    Datasource(store_url).flush()


def firing(store_url: str, profile: Profile, names: tuple[str, ...], at: float) -> set[tuple[str, ...]]:
    """(alert name, node, gpu, job, value) of every firing alert of ``names`` at ``at``."""
    result = (
        Datasource(store_url)
        .query(
            f'ALERTS{{alertname=~"{"|".join(names)}", alertstate="firing", '
            f'{profile.label("deployment")}="{profile.deployment}"}}',
            at,
        )
        .result
    )
    return {
        (
            m["alertname"],
            m.get(profile.label("node"), ""),
            m.get(profile.label("gpu"), ""),
            m.get(profile.label("job"), ""),
        )
        for m in (item["metric"] for item in result)
    }


def test_s22_vmalert_pages_the_gpu_that_fell_off_the_bus_and_keeps_its_fatal_xid(
    victoriametrics, demo_windows, tmp_path: Path
) -> None:
    window = demo_windows[(PROFILE, "gpu-missing")]
    profile = window.profile
    node, gpu = lost_gpu(profile)
    replay_group(victoriametrics.url, profile, "gpu", window.end - 600, window.end, tmp_path)
    got = firing(victoriametrics.url, profile, PRESENCE, window.end - 60)
    assert got == {
        ("GpuMissing", node, "", "gpm"),
        ("GpuMissing", node, "", "dcgm"),
        ("GpuXidFatal", node, str(gpu), ""),
    }, got


def test_s22_vmalert_fires_no_gpu_presence_alert_on_healthy_data(victoriametrics, demo_windows, tmp_path: Path) -> None:
    window = demo_windows[(PROFILE, "healthy")]
    replay_group(victoriametrics.url, window.profile, "gpu", window.end - 600, window.end, tmp_path)
    assert not firing(victoriametrics.url, window.profile, PRESENCE, window.end - 60)
