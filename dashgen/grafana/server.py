"""What a Grafana server is and can do, from ``GET /api/health`` (grafana-api.md §0, §6, §13).

The version decides the path a publisher takes: Grafana ≥ 12 is read through the ``/apis`` resource
API (so a dashboard a person's save converted to the v2 schema is seen as such, never through a lossy
down-conversion); Grafana ≥ 13 is also written through it (``metadata.resourceVersion`` as the
optimistic lock) and honours server-side ``?dryRun=All``; Grafana 11 and 12 are written through the
legacy ``/api/dashboards/db``. A server that hides its version is treated as Grafana 12: read through
``/apis`` where it answers, written through the legacy API, which every version keeps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ServerInfo:
    """``version`` is ``(major, minor, patch)``, or None when the server hides it."""

    version_text: str = ""
    database: str = "ok"

    @property
    def version(self) -> tuple[int, int, int] | None:
        match = _VERSION_RE.match(self.version_text.strip())
        if match is None:
            return None
        return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)

    @property
    def major(self) -> int:
        return self.version[0] if self.version else 12

    @property
    def reads_apis(self) -> bool:
        """Read dashboards through ``/apis`` first (falls back to the legacy API where it is not served)."""
        return self.major >= 12

    @property
    def writes_apis(self) -> bool:
        return self.version is not None and self.major >= 13

    @property
    def server_dry_run(self) -> bool:
        """``?dryRun=All`` is honoured for dashboards on unified storage (13); thin on 12's dual writer."""
        return self.writes_apis

    @property
    def detect_version(self) -> str:
        """The API version read first to learn ``status.conversion.storedVersion``."""
        return "v1" if self.major >= 13 else "v1beta1"

    @property
    def label(self) -> str:
        if not self.version_text:
            return "Grafana (version hidden)"
        path = "/apis" if self.writes_apis else ("/apis reads, legacy writes" if self.reads_apis else "legacy API")
        return f"Grafana {self.version_text} ({path})"


def namespace(org_id: int) -> str:
    """The ``/apis`` namespace of an organisation: ``default`` for org 1, ``org-<id>`` otherwise."""
    return "default" if org_id == 1 else f"org-{org_id}"
