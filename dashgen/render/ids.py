"""Stable identities: dashboard uids from profile and dashboard name, panel ids from stable keys.

A panel id is derived from its key alone, never from its position, so adding a panel changes
no other panel's id. Collisions are detected at build time (validate.py), not silently renumbered.
"""

from __future__ import annotations

import hashlib
import re

UID_MAX = 40


def panel_id(key: str) -> int:
    """A positive 31-bit integer derived from the panel's stable key."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % (2**31 - 1) + 1


def dashboard_uid(profile: str, name: str) -> str:
    """``dg-<profile>-<name>``; shortened with a hash suffix when longer than Grafana's 40 characters."""
    raw = re.sub(r"[^A-Za-z0-9_-]+", "-", f"dg-{profile}-{name}").strip("-")
    if len(raw) <= UID_MAX:
        return raw
    suffix = hashlib.sha256(raw.encode()).hexdigest()[:8]
    return f"{raw[: UID_MAX - 9].rstrip('-')}-{suffix}"


CLUSTER_DASHBOARD = "cluster"


def cluster_dashboard_uid(profile: str) -> str:
    """The uid of a profile's cluster dashboard, the target of its drill-down links."""
    return dashboard_uid(profile, CLUSTER_DASHBOARD)
