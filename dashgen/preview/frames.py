"""What a panel's queries returned, as the request the page's copy of Grafana's ``@grafana/data`` computes from.

Pure glue, no Grafana behaviour of its own: the answers of one panel's queries in, a JSON-ready
:func:`request` out (each query's refId, expression, ``legendFormat``, format and Prometheus ``result``; the
window and step in milliseconds). The page's ``DashgenGrafana.applyPanels`` (``dashgen/data/grafana-data``,
built from ``bundles/grafana-data``) turns it into data frames as Grafana's Prometheus data source does, runs
the panel's transformations, field config and overrides through ``@grafana/data``, and the page draws what
comes back. The same bundle runs in Node in the tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dashgen.live.expand import ExpandedQuery


@dataclass(frozen=True)
class Answer:
    """One query of a panel and what came back: ``result`` (a Prometheus ``result``) or ``error``."""

    query: ExpandedQuery
    target: Mapping[str, Any]
    result_type: str = "matrix"
    result: Sequence[Any] = ()
    error: str = ""

    @property
    def series(self) -> int:
        """Series (or the one scalar) the query returned."""
        if self.error:
            return 0
        if self.result_type in ("matrix", "vector"):
            return len(self.result)
        return 1 if self.result else 0

    @property
    def samples(self) -> int:
        """Samples returned (whatever their shape: the page's frames leave malformed ones out as gaps)."""
        if self.error or self.result_type not in ("matrix", "vector"):
            return 1 if self.result and not self.error else 0
        count = 0
        for item in self.result:
            if isinstance(item, Mapping):
                values = item.get("values")
                count += len(values) if isinstance(values, list) else 0
                count += 1 if item.get("value") else 0
        return count


def _format(answer: Answer) -> str:
    # Grafana's Prometheus query editor: "table" and "heatmap" are asked for; anything else is a time series
    return str(answer.target.get("format") or "time_series")


def request(panel: Mapping[str, Any], answers: Sequence[Answer], now: float) -> dict[str, Any]:
    """The JSON ``DashgenGrafana.applyPanel`` takes for ``panel`` (times in ms, as Grafana's frames carry them)."""
    ranged = [a.query for a in answers if a.query.kind == "range"]
    return {
        "panel": dict(panel),
        "nowMs": round(now * 1000),
        "startMs": round(min(q.start for q in ranged) * 1000) if ranged else None,
        "endMs": round(max(q.end for q in ranged) * 1000) if ranged else None,
        "stepMs": round(min(q.step for q in ranged) * 1000) if ranged else None,
        "answers": [
            {
                "refId": a.query.ref_id,
                "expr": a.query.expr,
                "legendFormat": a.target.get("legendFormat"),
                "format": _format(a),
                "instant": a.query.kind == "instant",
                "stepMs": round(a.query.step * 1000) if a.query.kind == "range" else None,
                "resultType": a.result_type,
                "result": list(a.result),
                "error": a.error,
            }
            for a in answers
        ],
    }


def returned(answers: Sequence[Answer]) -> int:
    """Series the queries returned, all answers together."""
    return sum(a.series for a in answers)


def empty(answers: Sequence[Answer]) -> bool:
    """True when no query returned a single sample (the panel shows "No data" or its error)."""
    return not any(a.samples for a in answers)
