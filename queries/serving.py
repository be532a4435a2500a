"""What the first screen asks of the deployment as a whole (S26): the alerts firing for it, whether each
replica is serving, and the SLO as one number.

``ALERTS`` is the series Prometheus and vmalert write for every pending or firing alert, with the rule's
labels; dashgen's rules carry the deployment label (S21), so the deployment matcher keeps this deployment's.

A replica serves when all its nodes' engine targets are up (every PP stage scraped) and its tokens
move; it is stalled when requests wait and no token moved, idle when nothing waits and no token moved.
Which nodes make a replica is the node inventory's ``replica`` label (``queries.inventory``, recorded by
``rules/<profile>.yml``): one query for any number of replicas, its text the same at 2 and 2,000 nodes.
"""

from __future__ import annotations

from dashgen_queries.inventory import REPLICA, node_to_replica
from dashgen_queries.nodata import EVALUATOR_HEARTBEAT, recorded_lookback_seconds
from dashgen_queries.promql import agg, deployment, matcher, rate, scoped_job, selector
from dashgen_queries.sglang_slo import STALL_WINDOW, worst_good_ratio

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.exporters.table import RULE_EVALUATOR, SGLANG
from dashgen.render.states import States

SERVING, STAGE_DOWN, STALLED, IDLE = 0, 1, 2, 3
STATES: dict[int, tuple[str, str]] = {
    SERVING: ("serving", "green"),
    STAGE_DOWN: ("PP stage not scraped", "red"),
    STALLED: ("stalled: requests wait, no token moves", "red"),
    IDLE: ("idle: no request, no token", "blue"),
}
REPLICA_LABEL = REPLICA  # the node inventory's label naming the replica a node serves
FOR_STATE = RULE_EVALUATOR.name("ALERTS_FOR_STATE")
NONE_FIRING, NONE_FIRING_TEXT = 0, "none firing"  # the firing table's row while the evaluator is fresh
SINCE_UNKNOWN = -1  # a firing alert's "since" when no ALERTS_FOR_STATE says it (never a time: times are > 0)
EVALUATOR_SILENT_TEXT = "rule evaluator silent: no rule of this deployment evaluated recently"
TOKENS = SGLANG.name("sglang:realtime_tokens_total")
WAITING = SGLANG.name("sglang:num_queue_reqs")


def firing(profile: Profile) -> str:
    return selector(RULE_EVALUATOR.name("ALERTS"), deployment(profile), matcher("alertstate", "=", "firing"))


def evaluator_fresh(profile: Profile) -> str:
    """One series (value 1) while the rule evaluator is evaluating this deployment's rule file: its one-series
    heartbeat (``nodata.EVALUATOR_HEARTBEAT``, group ``dashgen-<profile>-layer-health``) is at most the Now row's
    one staleness bound old (``nodata.recorded_lookback_seconds``). No series: no evaluator writes here, or it
    stopped; an absent ALERTS then proves nothing (S7)."""
    beat = selector(EVALUATOR_HEARTBEAT, deployment(profile))
    return f"max(last_over_time({beat}[{recorded_lookback_seconds(profile):g}s])) * 0 + 1"


def firing_count(profile: Profile) -> str:
    """Firing alert series; 0 only while the evaluator is fresh (``evaluator_fresh``), else no value."""
    return f"count({firing(profile)}) or on() ({evaluator_fresh(profile)} * 0)"


def firing_alerts(profile: Profile) -> str:
    """One series per firing alert with every label of what it is about (node, GPU, stage, SLI...), its value
    the alert's activation time in milliseconds (``ALERTS_FOR_STATE``, written by Prometheus and vmalert for
    each active alert: activation time in seconds), for Grafana's time units; ``SINCE_UNKNOWN`` where the
    evaluator wrote no ALERTS_FOR_STATE for it."""
    active = selector(FOR_STATE, deployment(profile))
    # a firing alert without its ALERTS_FOR_STATE (an evaluator that does not write it) still gets its row
    unknown = f"({firing(profile)} * 0 + {SINCE_UNKNOWN})"
    return f"1000 * ({active} and ignoring(alertstate) {firing(profile)}) or ignoring(alertstate) {unknown}"


def evaluator_state(profile: Profile) -> str:
    """The firing table's row when no alert fires: ``alertname="none firing"`` with value ``NONE_FIRING``
    while the evaluator is fresh; nothing while it is silent (the panel's no-value text says so)."""
    none = f'label_replace({evaluator_fresh(profile)} * {NONE_FIRING}, "alertname", "{NONE_FIRING_TEXT}", "", "")'
    return f"({none} unless on() {firing(profile)})"


def firing_table(profile: Profile) -> str:
    """The first screen's firing table in one query: each firing alert (``firing_alerts``), else the
    evaluator's row (``evaluator_state``)."""
    return f"{firing_alerts(profile)} or {evaluator_state(profile)}"


def slo_health(profile: Profile, window: str) -> str:
    """The lowest good share of any model and SLI over ``window``: one number for the deployment."""
    return f"min({worst_good_ratio(profile, window)})"


def _per_replica(profile: Profile, expr: str) -> str:
    """``expr`` (per node) with each node's ``replica`` from the inventory."""
    return f"({expr} * on({profile.label('node')}) group_left({REPLICA_LABEL}) {node_to_replica(profile)})"


def _engine(profile: Profile, metric: str) -> str:
    return selector(metric, scoped_job(profile, profile.source("sglang").job))


def replica_state(profile: Profile) -> str:
    """Every replica's state code, ``{replica}``: the first of stage down, serving, stalled, idle that applies.

    Each series is read once (the first screen runs this for every replica at once): a stage is down when an
    inventory node of the replica has no engine target up (absent or 0); a replica whose tokens move serves;
    of the rest, one with requests waiting is stalled and the others idle (serving and stalled exclude each
    other by the tokens, so serving may be tested first)."""
    by = [REPLICA_LABEL]
    node = profile.label("node")
    missing = agg("count", by, f"({node_to_replica(profile)} unless on({node}) ({_engine(profile, 'up')} == 1))")
    down = f"({STAGE_DOWN} + 0 * {missing})"
    tokens = f"({agg('sum', by, _per_replica(profile, rate(_engine(profile, TOKENS), STALL_WINDOW)))} > 0)"
    waiting = f"({agg('sum', by, _per_replica(profile, _engine(profile, WAITING)))} > 0)"
    expected = agg("count", by, node_to_replica(profile))
    return f"{down} or ({SERVING} + 0 * {tokens}) or ({STALLED} + 0 * {waiting}) or ({IDLE} + 0 * {expected})"


def replica_states(profile: Profile, topology: Topology) -> list[str]:
    """The state query (one, whatever the replica count; ``topology`` is what the inventory rules record)."""
    return [replica_state(profile)]


def replica_state_names(states: dict[int, tuple[str, str]] | None = None) -> States:
    """The state codes (``STATES`` by default) with their text and colour."""
    return States.by_code(states or STATES)
