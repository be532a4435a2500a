"""What Grafana is known to rewrite when it saves a dashboard (grafana-api.md §3.4, §7.1), as pure functions.

Grafana trims the edge whitespace of ``title`` and ``uid`` and raises ``refresh`` below its
``[dashboards] min_refresh_interval`` (default 5s) to that minimum; it logs a warning, not an error.
The build refuses such dashboards (``dashgen.render.validate`` and the profile's ``[dashboard]``
section), so dashgen's own dashboards are stored as sent; these functions let a publisher expect
the rewrite for anything else it pushes (a rollback of an old copy), verify against it, and say why
a read-back differs.
"""

from __future__ import annotations

import re
from typing import Any

DEFAULT_MIN_REFRESH = "5s"
_DURATION_RE = re.compile(r"^(\d+)(ms|s|m|h|d|w|y)$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def duration_seconds(text: str) -> float | None:
    """Seconds of a Grafana duration (``5s``, ``1m``, ``1h``); None when it is not one."""
    match = _DURATION_RE.match(text.strip())
    return int(match.group(1)) * _SECONDS[match.group(2)] if match else None


def as_grafana_stores(document: dict[str, Any], min_refresh_interval: str = DEFAULT_MIN_REFRESH) -> dict[str, Any]:
    """``document`` as Grafana stores it after its save-time rewrites (a shallow copy)."""
    out = dict(document)
    for key in ("title", "uid"):
        if isinstance(out.get(key), str):
            out[key] = out[key].strip()
    refresh, minimum = out.get("refresh"), duration_seconds(min_refresh_interval)
    if isinstance(refresh, str) and minimum is not None:
        seconds = duration_seconds(refresh)
        if seconds is not None and seconds < minimum:
            out["refresh"] = min_refresh_interval
    return out


def normalisation_notes(sent: dict[str, Any], stored: dict[str, Any]) -> list[str]:
    """Which of Grafana's known rewrites explain the differences between ``sent`` and ``stored``."""
    notes = []
    for key in ("title", "uid"):
        if isinstance(sent.get(key), str) and sent[key] != stored.get(key) and sent[key].strip() == stored.get(key):
            notes.append(f"{key} edge whitespace trimmed")
    if sent.get("refresh") != stored.get("refresh") and isinstance(sent.get("refresh"), str):
        notes.append(
            f"refresh {sent['refresh']!r} raised to the server's min_refresh_interval {stored.get('refresh')!r}"
        )
    return notes
