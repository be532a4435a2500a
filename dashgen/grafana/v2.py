"""What a dashboard stored in Grafana's v2 schema holds that its v1 form cannot (grafana-api.md §13).

Grafana's own v2 → v1 conversion is lossy: tabs become expanded rows, nested rows and tabs are
flattened, an auto-grid becomes fixed positions, a row with a hidden header loses its row panel, and
conditional rendering is dropped. ``v2_losses`` names each of these found in a v2 spec, so a plan can
say what overwriting the dashboard with v1 JSON would destroy. Pure.
"""

from __future__ import annotations

from typing import Any


def _walk_layouts(layout: Any, depth: int, found: dict[str, int]) -> None:
    if not isinstance(layout, dict):
        return
    kind, spec = layout.get("kind"), layout.get("spec") or {}
    if kind == "AutoGridLayout":
        found["auto"] += 1
    entries: list[Any] = []
    if kind == "TabsLayout":
        entries = spec.get("tabs") or []
        found["tabs"] += len(entries)
    elif kind == "RowsLayout":
        entries = spec.get("rows") or []
    for entry in entries:
        entry_spec = (entry or {}).get("spec") or {}
        if depth > 0:
            found["nested"] += 1
        if entry_spec.get("hideHeader"):
            found["hidden"] += 1
        if entry_spec.get("conditionalRendering"):
            found["conditional"] += 1
        _walk_layouts(entry_spec.get("layout"), depth + 1, found)
    for item in spec.get("items") or []:
        if ((item or {}).get("spec") or {}).get("conditionalRendering"):
            found["conditional"] += 1


def v2_losses(spec: dict[str, Any]) -> tuple[str, ...]:
    """Human-readable list of what a v1 overwrite loses; empty when the spec uses nothing v1 lacks."""
    found = {"tabs": 0, "auto": 0, "nested": 0, "hidden": 0, "conditional": 0}
    _walk_layouts(spec.get("layout"), 0, found)
    for element in (spec.get("elements") or {}).values():
        if ((element or {}).get("spec") or {}).get("conditionalRendering"):
            found["conditional"] += 1
    out = []
    if found["tabs"]:
        out.append(f"{found['tabs']} tabs (they would become expanded rows)")
    if found["nested"]:
        out.append(f"{found['nested']} nested rows or tabs (flattened)")
    if found["auto"]:
        out.append(f"{found['auto']} auto-grid layouts (they would become fixed positions)")
    if found["hidden"]:
        out.append(f"{found['hidden']} rows with a hidden header (their row panel is lost)")
    if found["conditional"]:
        out.append(f"conditional rendering on {found['conditional']} rows, tabs or panels (dropped)")
    panels = len(spec.get("elements") or {})
    out.append(f"the person's save itself ({panels} panels as stored in v2)")
    return tuple(out)
