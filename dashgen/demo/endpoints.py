"""Where the demo's exporters listen and which disk is a node's cache disk: the port of each source's target and
the device names a profile's ``[disks] cache_device_regex`` picks. Pure data from a profile, shared by the label sets
(``dashgen.demo.scopes``) and the incident drills' statement of what fails (``dashgen.demo.scenarios``)."""

from __future__ import annotations

import re

from dashgen.deployment.profile import Profile

PORTS = {
    "sglang": 30000,
    "dcgm": 9400,
    "gpm": 9500,
    "node_exporter": 9100,
    "mooncake_master": 9003,
    "gateway": 29000,
    "mooncake_client": 12300,
    # TENT's default (9100) is node_exporter's: the demo moves it, as a deployment running both must
    "mooncake_tent": 9101,
}
_DEVICE_CANDIDATES = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1", "nvme0n2", "sdb", "vdb")
SYSTEM_DISK = "sda"


def cache_devices(profile: Profile) -> list[str]:
    pattern = re.compile(f"^(?:{profile.disks.cache_device_regex})$")
    found = [d for d in _DEVICE_CANDIDATES if pattern.match(d)]
    return found[:1] or ["nvme0n1"]
