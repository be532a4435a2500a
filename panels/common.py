"""Helpers shared by the panel groups: the 'not deployed / not exported' panel (S15), the
No Data text (S6/S7), and table plumbing (merge instant queries into one row per key)."""

from __future__ import annotations

from typing import Any

from dashgen.deployment.profile import Profile
from dashgen.render.spec import PanelSpec

NO_DATA_TEXT = "No data: see Missing-data reasons"


def source_status_panel(key: str, profile: Profile, names: list[str], what: str, width: int = 24) -> PanelSpec:
    """One clear text panel saying which sources are not deployed or not exported (S15).

    Shown instead of charts that could only be empty; no empty scrape target is invented.
    """
    lines = [f"**{what}** is not shown for this deployment ({profile.name}):", ""]
    for name in names:
        source = profile.source(name)
        if source.status == "not-exported":
            state = "not exported by the client in this deployment (the metric exists in its code)"
        elif source.status == "not-deployed":
            state = "not deployed"
        else:
            continue
        lines.append(f"- {source.what} (`{name}`): {state}.")
    lines += ["", "These panels would otherwise be empty; absent data here is a deployment fact, not a zero."]
    return PanelSpec(key=key, title=f"{what}: not available", kind="text", evidence=None,
                     content="\n".join(lines), width=width, height=2 + len(names) + 3)


def merge_table(rename: dict[str, str], exclude: list[str]) -> tuple[dict[str, Any], ...]:
    """Transformations that merge instant table queries into one row per key and name the columns.

    ``rename`` maps the original field names (label names, ``Value #A``...) to column titles, in
    column order; Grafana's organize step indexes and renames by the original names.
    """
    order = list(rename)
    return (
        {"id": "merge", "options": {}},
        {
            "id": "organize",
            "options": {
                "excludeByName": {name: True for name in exclude},
                "indexByName": {name: index for index, name in enumerate(order)},
                "renameByName": dict(rename),
            },
        },
    )
