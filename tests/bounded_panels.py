"""What the S38 tests share: the shipped dashboards' data panels, a one-panel dashboard for lint, and one panel of
a shipped dashboard run through Grafana's own code (``grafana_node``) on a hand-made range answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grafana_node import call

from dashgen.lint import lint_dashboard
from dashgen.lint.findings import Finding
from dashgen.live.expand import ExpandedQuery
from dashgen.preview.frames import Answer, request

ROOT = Path(__file__).resolve().parent.parent
RATIO_UNITS = ("percent", "percentunit")
DS = {"type": "prometheus", "uid": "${datasource}"}


def _every(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for item in panels:
        yield item
        yield from _every(item.get("panels") or [])


def shipped_panels(profile: str) -> list[dict[str, Any]]:
    """Every data panel of the committed dashboard of ``profile``, rows opened."""
    path = ROOT / "dashboards" / profile / f"dg-{profile}-cluster.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    return [p for p in _every(document["panels"]) if p.get("type") not in ("row", "text")]


def s38_findings(defaults: dict[str, Any], overrides: list[dict[str, Any]] | None = None) -> list[Finding]:
    """Lint's S38 findings on a dashboard of one time series with this field config."""
    panel = {
        "id": 1,
        "type": "timeseries",
        "title": "Disk busy",
        "description": "Share of time the disk was busy (node-exporter).",
        "datasource": DS,
        "targets": [{"refId": "A", "datasource": DS, "expr": "rate(node_disk_io_time_seconds_total[5m])"}],
        "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
    }
    variable = {"name": "datasource", "type": "datasource", "query": "prometheus", "current": {"value": "vm"}}
    document = {"title": "Test", "uid": "test", "panels": [panel], "templating": {"list": [variable]}}
    return [f for f in lint_dashboard(document, "t.json") if f.rule == "S38"]


def series_shown(panel: dict[str, Any], series: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    """What Grafana's code makes of ``panel`` answering a range query with ``series`` (name -> one value a minute
    over ten minutes): each series' legend calculations, axis and values, by name."""
    query = ExpandedQuery("A", "range", "m", "m", 0, 600, 60, 60, 240)
    result = [
        {"metric": {"pod": name}, "values": [[60 * i, str(v)] for i, v in enumerate(values)]}
        for name, values in series.items()
    ]
    answer = Answer(query, {"expr": "m", "refId": "A", "legendFormat": "{{pod}}"}, "matrix", result)
    (shown,) = call("applyPanels", [request(panel, [answer], 600)])
    assert shown["kind"] == "series", shown
    return {s["name"]: s for s in shown["series"]}
