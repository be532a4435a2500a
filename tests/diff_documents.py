"""Small hand-written dashboards the diff, check and release-plan tests compare: a panel, a generated dashboard
of three panels, and writing one to a file for the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def panel(pid: int, title: str, expr: str, unit: str = "short", y: int = 0) -> dict[str, Any]:
    return {
        "id": pid,
        "type": "timeseries",
        "title": title,
        "description": f"{title}, per node.",
        "datasource": "$datasource",
        "gridPos": {"x": 0, "y": y, "w": 12, "h": 8},
        "fieldConfig": {"defaults": {"unit": unit, "min": 0}},
        "targets": [{"expr": expr, "legendFormat": "{{node}}"}],
    }


def generated() -> dict[str, Any]:
    return {
        "uid": "cache-evidence",
        "title": "Cache evidence",
        "tags": ["dashgen"],
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "1m",
        "schemaVersion": 41,
        "panels": [
            panel(1, "Running requests", "max by (node) (sglang:num_running_reqs)"),
            panel(2, "Queued requests", "max by (node) (sglang:num_queue_reqs)", y=8),
            panel(3, "KV usage", "max by (node) (sglang:token_usage)", unit="percentunit", y=16),
        ],
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus"},
                {
                    "name": "node",
                    "type": "query",
                    "datasource": "$datasource",
                    "query": "label_values(up, node)",
                    "multi": True,
                    "includeAll": True,
                    "current": {"text": "All", "value": "$__all"},
                },
            ]
        },
    }


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)
