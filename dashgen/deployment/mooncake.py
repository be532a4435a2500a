"""``[mooncake]`` of a profile: which Mooncake Store master serves which engine replicas (S11, S13, S17).

Without the section the deployment has one shared master: every target of the master job is one master
(its HA copies) serving every replica. With ``[[mooncake.masters]]`` each master names the replicas its
ranks mount segments on and the nodes its exporter targets run on; the queries label each master target
by those nodes and de-duplicate HA copies per master (``queries.mooncake.by_master``).
"""

from __future__ import annotations

from dashgen.deployment.checks import NODE_FORM, NODE_RE, first_duplicate, name_problem
from dashgen.deployment.model import MooncakeMaster, Pool, Source
from dashgen.deployment.reader import TableReader
from dashgen.deployment.sections import NAME_RE


def parse_mooncake(
    reader: TableReader, pools: tuple[Pool, ...], sources: dict[str, Source]
) -> tuple[MooncakeMaster, ...]:
    """``[[mooncake.masters]]``: each Mooncake master, the replicas it serves and the nodes its HA targets run on
    (S11, S13). Absent: one shared master. Every replica is served by exactly one master; with several masters
    each names its nodes, which no two share (the ``node`` label is what tells their targets apart)."""
    entries = reader.tables("masters")
    reader.reject_unknown()
    if not entries:
        return ()
    if not sources["mooncake_master"].deployed:
        raise reader.fail("masters", "lists Mooncake masters, but sources.mooncake_master is not-deployed")
    known = [f"{pool.name}-{index}" for pool in pools for index in range(pool.replicas)]
    masters: list[MooncakeMaster] = []
    served: dict[str, str] = {}
    hosts: dict[str, str] = {}
    for entry in entries:
        name = entry.string("name", required=True)
        if not NAME_RE.match(name):
            raise entry.fail("name", f"{name[:40]!r} must be lower-case letters, digits and '-', at most 31 characters")
        if any(master.name == name for master in masters):
            raise entry.fail("name", f"{name!r} is listed twice")
        replicas = _names(entry, "replicas", known if len(entries) == 1 else None)
        for replica in replicas:
            if replica not in known:
                raise entry.fail(
                    "replicas",
                    f"{replica!r} is not a replica of this profile; replicas are "
                    f"{', '.join(known[:8])}{' ...' if len(known) > 8 else ''}",
                )
            if replica in served:
                raise entry.fail("replicas", f"{replica!r} is already served by master {served[replica]!r}")
            served[replica] = name
        nodes = _names(entry, "nodes", [] if len(entries) == 1 else None)
        for node in nodes:
            if problem := name_problem(node, NODE_RE, NODE_FORM):
                raise entry.fail("nodes", problem)
            if node in hosts:
                raise entry.fail(
                    "nodes",
                    f"{node!r} also runs master {hosts[node]!r}: two masters on one node "
                    "cannot be told apart by the node label",
                )
            hosts[node] = name
        entry.reject_unknown()
        masters.append(MooncakeMaster(name, tuple(replicas), tuple(nodes)))
    unserved = [replica for replica in known if replica not in served]
    if unserved:
        raise reader.fail(
            "masters",
            f"no master serves replica(s) {', '.join(unserved[:8])}: every replica's "
            "ranks mount their segments on one master",
        )
    return tuple(masters)


def _names(reader: TableReader, key: str, default: list[str] | None) -> list[str]:
    """A list of strings; ``default`` None makes it required."""
    if key not in reader.table:
        reader.used.add(key)
        if default is None:
            raise reader.fail(key, "missing: with several masters, each lists its " + key)
        return list(default)
    reader.used.add(key)
    value = reader.table[key]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise reader.fail(key, "expected a non-empty list of names")
    if (repeated := first_duplicate(value)) is not None:
        raise reader.fail(key, f"{repeated!r} is listed twice")
    return value
