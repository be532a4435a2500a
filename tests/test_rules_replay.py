"""The rule files under the real vmalert (``-replay``) over the demo data in a real VictoriaMetrics, as the incident
drills run them: in the gpu-missing scenario (one GPU falls off the bus after an Xid 79) GpuMissing names the node
for both exported per-GPU sources and GpuXidFatal still names the lost GPU more than half an hour after its series
vanished; the healthy window fires none of the GPU-presence alerts.
"""

from __future__ import annotations

from pathlib import Path

from vmalert_replay import firing, replay_group

from dashgen.demo.scenarios import lost_gpu

PROFILE = "long-context-64"
PRESENCE = ("GpuMissing", "GpuMissingFromExporter", "GpuXidFatal")


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
