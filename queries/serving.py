"""What the first screen asks of the deployment as a whole (S26): the alerts firing for it, whether each
replica is serving, and the SLO as one number.

``ALERTS`` is the series Prometheus and vmalert write for every pending or firing alert, with the rule's
labels; dashgen's rules carry the deployment label (S21), so the deployment matcher keeps this deployment's.

A replica serves when all its nodes' engine targets are up (every PP stage scraped) and its tokens
move; it is stalled when requests wait and no token moved, idle when nothing waits and no token moved.
One query per block of ``REPLICAS_PER_QUERY`` replicas keeps each query short at 25+ replicas.
"""

from __future__ import annotations

from dashgen_queries.promql import deployment, matcher, scoped_job, selector, string_literal
from dashgen_queries.sglang_slo import STALL_WINDOW, worst_good_ratio

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import ReplicaPlacement, Topology

SERVING, STAGE_DOWN, STALLED, IDLE = 0, 1, 2, 3
STATES: dict[int, tuple[str, str]] = {
    SERVING: ("serving", "green"),
    STAGE_DOWN: ("PP stage not scraped", "red"),
    STALLED: ("stalled: requests wait, no token moves", "red"),
    IDLE: ("idle: no request, no token", "blue"),
}
REPLICA_LABEL = "serving_replica"  # a label of the query only (the store has no replica label)
REPLICAS_PER_QUERY = 8
TOKENS = "sglang:realtime_tokens_total"
WAITING = "sglang:num_queue_reqs"


def firing(profile: Profile) -> str:
    return selector("ALERTS", deployment(profile), matcher("alertstate", "=", "firing"))


def firing_count(profile: Profile) -> str:
    return f"count({firing(profile)})"


def firing_by_alert(profile: Profile) -> str:
    return f"count by (alertname, severity) ({firing(profile)})"


def slo_health(profile: Profile, window: str) -> str:
    """The lowest good share of any model and SLI over ``window``: one number for the deployment."""
    return f"min({worst_good_ratio(profile, window)})"


def _engine(profile: Profile, metric: str, replica: ReplicaPlacement) -> str:
    nodes = "|".join(replica.nodes)
    return selector(metric, scoped_job(profile, profile.source("sglang").job),
                    f"{profile.label('node')}=~{string_literal(nodes)}")


def _tagged(code: int, replica: ReplicaPlacement) -> str:
    return f'label_replace(vector({code}), "{REPLICA_LABEL}", "{replica.key}", "", "")'


def replica_state(profile: Profile, replica: ReplicaPlacement) -> str:
    """The replica's state code: the first of stage down, stalled, idle, serving that applies."""
    up = f"(count({_engine(profile, 'up', replica)} == 1) >= {len(replica.nodes)})"
    tokens = f"(sum(rate({_engine(profile, TOKENS, replica)}[{STALL_WINDOW}])) > 0)"
    waiting = f"(sum({_engine(profile, WAITING, replica)}) > 0)"
    down = f"({_tagged(STAGE_DOWN, replica)} unless on() {up})"
    stalled = f"(({_tagged(STALLED, replica)} and on() {waiting}) unless on() {tokens})"
    idle = f"({_tagged(IDLE, replica)} unless on() {tokens})"
    return f"{down} or {stalled} or {idle} or {_tagged(SERVING, replica)}"


def replica_states(profile: Profile, topology: Topology) -> list[str]:
    """One query per block of replicas, each series ``{replica="<pool>-<index>"}`` carrying the state code."""
    replicas = list(topology.replicas)
    return [" or ".join(f"({replica_state(profile, r)})" for r in replicas[i:i + REPLICAS_PER_QUERY])
            for i in range(0, len(replicas), REPLICAS_PER_QUERY)]


def state_mappings(states: dict[int, tuple[str, str]] | None = None) -> tuple[dict, ...]:
    """Value mappings of state codes (``STATES`` by default) to their text and colour."""
    options = {str(code): {"text": text, "color": colour, "index": index}
               for index, (code, (text, colour)) in enumerate(sorted((states or STATES).items()))}
    return ({"type": "value", "options": options},)
