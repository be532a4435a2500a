"""What validate-queries reports: the per-target and per-panel results and the No Data reasons
(the five reasons of S6, plus "segment host not mapped"), shared by the checks, the reason
finder and the reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dashgen_queries import nodata

from dashgen.live.expand import QueryKind

TargetStatus = Literal["ok", "empty", "error"]
# A panel is partial when some of its queries answer and others are empty.
PanelStatus = Literal["ok", "empty", "partial", "error"]
REASON_NAMES = {code: name for code, (name, _colour) in sorted(nodata.REASONS.items())}  # the dashboards' own


@dataclass
class Reason:
    code: int
    text: str
    node: str = ""
    layer: str = ""

    @property
    def name(self) -> str:
        return REASON_NAMES.get(self.code, "unknown")


@dataclass
class TargetCheck:
    ref_id: str
    kind: QueryKind
    expr: str
    query: str
    status: TargetStatus = "ok"
    series: int = 0
    reasons: list[Reason] = field(default_factory=list)
    error_status: int | None = None
    error_message: str = ""
    seconds: float = 0.0


@dataclass
class PanelCheck:
    dashboard: str
    panel_id: int | None
    title: str
    row: str
    targets: list[TargetCheck]

    @property
    def status(self) -> PanelStatus:
        states = {t.status for t in self.targets}
        if "error" in states:
            return "error"
        if states == {"empty"}:
            return "empty"
        return "partial" if "empty" in states else "ok"

    @property
    def series(self) -> int:
        return sum(t.series for t in self.targets)
