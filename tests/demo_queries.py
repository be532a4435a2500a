"""Reading a built dashboard against the demo data: its panels under their rows (:func:`panels_by_row`), a table's
instant queries merged on its keys as Grafana merges them (:func:`merged_rows`), and the missing-data reason the
five-reasons scenario puts on a node and layer (:func:`expected_code`)."""

from __future__ import annotations

from dashgen.demo.scenarios import FIVE_REASONS_NODES, uninitialised_layer
from dashgen.document import iter_panels
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan


def panels_by_row(document) -> list[tuple[str, dict]]:
    """(row title, panel): a non-collapsed row owns the top-level panels after it, a collapsed one its nested panels."""
    return [(site.section or "", site.raw) for site in iter_panels(document) if site.raw.get("type") != "row"]


def merged_rows(ds: Datasource, document, panel, window, keys: tuple[str, ...]) -> set[tuple[str, ...]]:
    """Run a table panel's instant queries and merge their frames on ``keys`` (Grafana's merge)."""
    span = Window(window.end, window.hours * 3600)
    planned = plan([DashboardInput("t", {**document, "panels": [panel]}, window.profile)], span)
    rows: set[tuple[str, ...]] = set()
    for planned_panel in planned:
        for query in planned_panel.queries:
            assert query.kind == "instant", f"{panel['title']}: table target {query.ref_id} is not instant"
            for item in ds.query(query.expr, query.end).result:
                rows.add(tuple(item["metric"].get(k, "") for k in keys))
    return rows


def expected_code(nodata, profile, node: str, layer) -> int:
    """The reason the five-reasons scenario puts on (node, layer), from the scenario's definition."""
    code = FIVE_REASONS_NODES.get(profile.node_names.index(node), 0)
    shared_target = not getattr(layer, "per_node_target", True)  # Mooncake master: one target for all nodes
    if code == 5:
        return 0 if shared_target else 5
    if code == 4:
        return 4 if layer.key == uninitialised_layer(profile) else 0
    if code == 3:
        return 0 if shared_target else 3
    if code == 1:  # no traffic: the engine is idle, so its HiCache tiers move no bytes either
        if layer.idle_code == nodata.NO_TRAFFIC:
            return 1
        return nodata.NO_IO if layer.key.startswith("hicache") else 0
    if code == 2:
        return 2 if layer.key == "disk" else 0
    return 0
