"""How many series a fan-out panel draws with every variable at All, and how many one graph that opens with the
dashboard may draw (``SCREENFUL``): what decides whether ``dashgen_panels.screenful`` narrows a graph, and whether
the rule file records a band for it (``queries.stage_bands``), from the one definition."""

from __future__ import annotations

from dashgen.deployment.topology import Topology
from dashgen.render.spec import FanOut

SCREENFUL = 64  # series one graph that opens with the dashboard may draw


def series_count(fan_out: FanOut, topology: Topology) -> int:
    """How many series the panel draws with every variable at All: the (node, PP stage) pairs of its pool, or
    its GPUs, nodes or (node, replica) pairs. A DP group counts as its stage (the profile states no DP size): a
    lower bound there."""
    roles = {pool.name: pool.role for pool in topology.profile.pools}
    ranks = [r for r in topology.ranks if not fan_out.role or roles.get(r.pool) == fan_out.role]
    keys = {
        "gpu": lambda r: (r.node, r.gpu),
        "node": lambda r: r.node,
        "instance": lambda r: (r.node, r.pool, r.replica),
    }.get(fan_out.per, lambda r: (r.node, r.pp_rank))
    return len({keys(r) for r in ranks})
