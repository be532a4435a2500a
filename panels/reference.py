"""Reference material, at the end of the dashboard (S34): the capacity anatomy of S17 (limit, allocation,
filesystem: the Store's side panels ``cache_evidence.ANATOMY_KEYS``) and the cache disks' sizes, as configured
and as the filesystem measures them. They answer "how big is it meant to be", not "where is it broken", so
they sit after the rows that localise a fault and the cache-evidence review, collapsed.

The panels are built by the modules that define them (``store_capacity``, ``node_disks``) and keep their keys
(``cache_evidence.*``, ``kv_cache_nvme.*``; ``MOVED_FROM``): a panel's id, and every link to it, does not change
when it moves to the end of the dashboard.
"""

from __future__ import annotations

from dashgen_panels import store_capacity
from dashgen_panels.cache_evidence import ANATOMY_KEYS
from dashgen_panels.node_disks import SIZE_KEYS, filesystem_panels, for_kind

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.spec import GroupSpec, PanelSpec, split_rows

TITLE = "Reference: capacity anatomy and configured sizes"
KEY = "reference"
WORKLOADS = (TEXT, VIDEO)  # S25: the anatomy exists for text pools only; the disk sizes for both
ANATOMY_TITLE = "Capacity anatomy: limit, allocation, filesystem (S17)"
NODE_EXPORTER = "node_exporter"
MOVED_FROM = ("cache_evidence", "kv_cache_nvme")  # the groups whose keys this group's panels keep


def anatomy_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    """The capacity anatomy's panels (text pools only: a video pool has no cache tier, S25)."""
    if not profile.has_kind(TEXT):
        return []
    return [panel for panel in store_capacity.panels(profile, topology) if panel.key in ANATOMY_KEYS]


def size_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    """The cache (scratch) disks' sizes as configured and as measured (``node_disks.SIZE_KEYS``), where the profile
    has a disk tier; the filesystems' use over time stays with the disks' health."""
    if profile.exported(NODE_EXPORTER) and profile.disks.has_cache_tier:
        return [panel for panel in filesystem_panels(profile, topology) if panel.key in SIZE_KEYS]
    return []


def build(profile: Profile, topology: Topology) -> GroupSpec:
    sizes = for_kind(
        profile, "Cache disk sizes: configured and measured", "Scratch disk sizes: configured and measured"
    )
    return split_rows(
        KEY,
        TITLE,
        [
            ("anatomy", ANATOMY_TITLE, anatomy_panels(profile, topology), True),
            ("sizes", sizes, size_panels(profile, topology), True),
        ],
    )
