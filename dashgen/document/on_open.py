"""What a dashboard runs when it is opened: the queries of every panel not inside a collapsed row.

Grafana runs a collapsed row's queries only when the row is opened, so a dashboard's first-screen cost is
the targets of its top-level panels (rows excluded) plus those of expanded rows' panels, which sit at the top
level in the current schema. Hidden targets and targets without an expression run nothing. Read by
``make bench`` (``bench/open_queries.py``) and the first-screen tests (S26).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashgen.document.walk import unwrap


def _runs(target: Any) -> bool:
    return isinstance(target, Mapping) and bool(str(target.get("expr") or "").strip()) and not target.get("hide")


def queries_on_open(document: Mapping[str, Any]) -> int:
    """The number of queries the dashboard sends when opened (variables' own queries not counted)."""
    body = unwrap(document)
    count = 0
    for panel in body.get("panels") or []:
        if not isinstance(panel, Mapping) or panel.get("type") == "row":
            continue  # a collapsed row holds its panels inside it; they do not run
        count += sum(1 for target in panel.get("targets") or [] if _runs(target))
    for row in body.get("rows") or []:  # legacy rows: a collapsed one runs nothing
        if isinstance(row, Mapping) and not row.get("collapse"):
            count += sum(
                1
                for panel in row.get("panels") or []
                if isinstance(panel, Mapping)
                for target in panel.get("targets") or []
                if _runs(target)
            )
    return count


def queries_in_all_panels(document: Mapping[str, Any]) -> int:
    """Every query of the dashboard, collapsed rows included (what opening every row would send)."""
    body = unwrap(document)
    count = 0
    for panel in body.get("panels") or []:
        if not isinstance(panel, Mapping):
            continue
        inner = panel.get("panels") if panel.get("type") == "row" else [panel]
        count += sum(
            1 for p in inner or [] if isinstance(p, Mapping) for target in p.get("targets") or [] if _runs(target)
        )
    for row in body.get("rows") or []:
        if isinstance(row, Mapping):
            count += sum(
                1
                for p in row.get("panels") or []
                if isinstance(p, Mapping)
                for target in p.get("targets") or []
                if _runs(target)
            )
    return count
