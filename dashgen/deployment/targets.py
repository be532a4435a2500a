"""How many scrape targets a deployment has, per scrape job: the "expected" of target coverage (S23, S26).

The one derivation, read by the first screen's coverage panels, the coverage alert and the tests:

- every exported source that is its own process (not a collector inside another source's process, such
  as HiCache inside SGLang) and runs on every node has one target per node;
- a source that runs on some nodes only (the Mooncake master, the gateway) has the number of targets
  ``[collector.targets]`` gives it, 1 when the profile does not say;
- with a ``[collector]`` section, each node's vmagent scrapes its own ``/metrics``: one more target per node.

long-context-64: SGLang, DCGM, GPM and node_exporter on 8 nodes (32), vmagent on 8 nodes (8), one Mooncake
master and four gateways (5): 45, the number seed 000 records for that pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen.deployment.collector import SOME_NODE_SOURCES
from dashgen.deployment.model import FEATURE_SOURCES, Profile


@dataclass(frozen=True)
class JobTargets:
    """The expected targets of one scrape job: how many, and which sources they serve."""

    job: str
    count: int
    sources: tuple[str, ...]
    per_node: bool


def expected_targets(profile: Profile) -> tuple[JobTargets, ...]:
    """The deployment's scrape jobs and their expected target counts, in the profile's source order."""
    counts: dict[str, list] = {}
    collector = profile.collector
    for name, source in profile.sources.items():
        if not source.exported or name in FEATURE_SOURCES:
            continue
        some = name in SOME_NODE_SOURCES
        number = (collector.targets.get(name, 1) if collector else 1) if some else profile.nodes
        entry = counts.setdefault(source.job, [0, [], not some])
        entry[0] += number
        entry[1].append(name)
        entry[2] = entry[2] and not some
    if collector is not None:
        entry = counts.setdefault(collector.job, [0, [], True])
        entry[0] += profile.nodes
        entry[1].append("collector")
    return tuple(JobTargets(job, count, tuple(sources), per_node) for job, (count, sources, per_node) in counts.items())


def expected_total(profile: Profile) -> int:
    """All targets the deployment should have (45 for long-context-64)."""
    return sum(job.count for job in expected_targets(profile))
