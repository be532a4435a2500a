"""The deployment's node inventory as series, so no query carries the node list in its text.

One recording rule per profile node (``dashgen rules``, group ``dashgen-<profile>-inventory``) writes
``node:dashgen_inventory:info{node="<name>", segment_host="<address>", replica="<key>"} 1`` with the
deployment label: ``node`` is every node the profile lists, ``segment_host`` the host its Mooncake
segments carry (``cluster.node_addresses``, else the node name; S11) and ``replica`` the engine replica
the node belongs to (absent on a node without engine GPUs). The queries join on it instead of naming
nodes:

* the Missing-data reasons (S6) take the expected nodes from it (``collection failed`` for a node
  missing from ``up``);
* the Store views map ``segment="<host>:<port>"`` to the node with
  ``label_replace(..., "segment_host", "$1", "segment", "(.*):[0-9]+") * on(segment_host)
  group_left(node) <inventory>`` (segments with a host not in it are the unmapped ones), and to the
  replica the same way;
* the request-level reuse marks the nodes that are not a replica's entry node with ``unless on(node)``
  the entry nodes.

A query's text is then the same at 16 and at 10,000 GPUs. The price: the inventory must be recorded
(vmalert or Prometheus loading the rule file; the demo writes it as the recorder would), and a store
without it shows the reasons table empty rather than wrong; each rule is ``vector(1)``, one sample
per node and evaluation.
"""

from __future__ import annotations

from dashgen_queries.promql import agg, in_deployment

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology

INVENTORY = "node:dashgen_inventory:info"
SEGMENT_HOST = "segment_host"
REPLICA = "replica"
ENTRY = "replica_entry"


def inventory(profile: Profile, *matchers: str) -> str:
    """The deployment's inventory series (one per profile node)."""
    return in_deployment(profile, INVENTORY, *matchers)


def expected_nodes(profile: Profile, code: int) -> str:
    """One series ``{node}`` per profile node with the value ``code``."""
    return f"({agg('max', [profile.label('node')], inventory(profile))} * 0 + {code})"


def host_to_node(profile: Profile) -> str:
    """``{segment_host, node} 1`` per profile node: the right side of the segment -> node join."""
    return agg("max", [SEGMENT_HOST, profile.label("node")], inventory(profile))


def node_to_replica(profile: Profile) -> str:
    """``{node, replica} 1`` per engine node: the right side of the node -> replica join."""
    return agg("max", [profile.label("node"), REPLICA], inventory(profile, f'{REPLICA}!=""'))


def entry_nodes(profile: Profile) -> str:
    """``{node} 1`` per replica entry node (node_rank 0: where the replica's tokenizer counts requests)."""
    return agg("max", [profile.label("node")], inventory(profile, f'{ENTRY}="true"'))


def inventory_labels(profile: Profile, topology: Topology) -> list[tuple[tuple[str, str], ...]]:
    """The label pairs of each node's inventory series, in node order. A node in several replicas (replicas
    smaller than a node) carries the last one, as a per-node label can hold one."""
    node = profile.label("node")
    replicas = {name: replica.key for replica in topology.replicas for name in replica.nodes}
    entries = {replica.nodes[0] for replica in topology.replicas}
    rows = []
    for name in profile.node_names:
        labels = [(node, name), (SEGMENT_HOST, profile.node_address(name))]
        if name in replicas:
            labels.append((REPLICA, replicas[name]))
        if name in entries:
            labels.append((ENTRY, "true"))
        rows.append(tuple(labels))
    return rows
