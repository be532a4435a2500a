"""The per-node table of the cache-evidence group: instant queries merged into one row per node
(and PP stage where the engine is the source), no footer, columns named with tier, direction and unit."""

from __future__ import annotations

from dashgen.deployment.profile import Profile
from dashgen.render.kit import NO_DATA_TEXT, merge_table, ref, table
from dashgen.render.spec import Evidence, PanelSpec, Target

KEY = "cache_evidence"


def per_node_table(
    profile: Profile,
    key: str,
    title: str,
    columns: list[tuple[str, str]],
    evidence: Evidence,
    *,
    stage: bool = True,
    extra_mappings: tuple[dict, ...] = (),
    unit: str = "none",
    decimals: int | None = 1,
    custom: dict | None = None,
    thresholds: tuple[tuple[str, float | None], ...] = (("text", None),),
    width: int = 24,
) -> PanelSpec:
    """A table of instant queries merged into one row per node (and PP stage where the engine is the
    source); ``columns`` are (column title, PromQL) in order."""
    node, pp_rank = profile.label("node"), profile.label("pp_rank")
    rename = {node: "Node"}
    if stage:
        rename[pp_rank] = "PP stage"
    targets = []
    for index, (column, expr) in enumerate(columns):
        ref_id = ref(index)
        targets.append(Target(expr, instant=True, table=True, ref_id=ref_id))
        rename[f"Value #{ref_id}"] = column
    return table(
        key=f"{KEY}.{key}",
        title=title,
        evidence=evidence,
        targets=tuple(targets),
        unit=unit,
        decimals=decimals,
        width=width,
        height=min(max(profile.nodes + 4, 7), 16),
        no_value=NO_DATA_TEXT,
        mappings=extra_mappings,
        thresholds=thresholds,
        custom=custom or {},
        transformations=merge_table(rename, exclude=["Time"]),
        options={"sortBy": [{"displayName": "Node", "desc": False}]},
    )
