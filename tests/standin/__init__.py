"""A Grafana HTTP API stand-in for dashgen's tests (contract: /work/shared/grafana-api.md).

``GrafanaStandin`` runs a real HTTP server on 127.0.0.1 with profiles ``grafana12`` and
``grafana13``, fault injection and a request log. See ``server.py`` for the API.
"""

from .faults import Fault
from .server import ALL_PERMISSIONS, GrafanaStandin, LoggedRequest, free_port
from .store import GRAFANA12, GRAFANA13

__all__ = ["ALL_PERMISSIONS", "GRAFANA12", "GRAFANA13", "Fault", "GrafanaStandin", "LoggedRequest", "free_port"]
