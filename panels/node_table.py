"""The per-node table of the cache-evidence group: instant queries merged into one row per node
(and PP stage where the engine is the source), no footer, columns named with tier, direction and unit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dashgen.deployment.profile import Profile
from dashgen.render.kit import NO_DATA_TEXT, CellColour, Column, Sort, table
from dashgen.render.spec import Evidence, PanelSpec

KEY = "cache_evidence"


def per_node_table(
    profile: Profile,
    key: str,
    title: str,
    columns: Sequence[Column | tuple[str, str]],
    evidence: Evidence,
    *,
    stage: bool = True,
    extra_mappings: Sequence[Mapping[str, Any]] = (),
    unit: str = "none",
    decimals: int | None = 1,
    cells: CellColour | None = None,
    thresholds: tuple[tuple[str, float | None], ...] = (("text", None),),
    width: int = 24,
) -> PanelSpec:
    """A table of instant queries merged into one row per node (and PP stage where the engine is the
    source); ``columns`` are ``Column``s or (column title, PromQL) in order."""
    labels = {profile.label("node"): "Node"}
    if stage:
        labels[profile.label("pp_rank")] = "PP stage"
    return table(
        key=f"{KEY}.{key}",
        title=title,
        evidence=evidence,
        labels=labels,
        columns=[c if isinstance(c, Column) else Column(*c) for c in columns],
        unit=unit,
        decimals=decimals,
        width=width,
        height=min(max(profile.nodes + 4, 7), 16),
        no_value=NO_DATA_TEXT,
        mappings=extra_mappings,
        thresholds=thresholds,
        cells=cells,
        sort=(Sort("Node"),),
    )
