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
from dashgen_queries.sglang_slo import STALL_WINDOW, RateReader, worst_good_ratio

from dashgen.deployment.profile import Profile
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


def slo_health(profile: Profile, window: str, reader: RateReader | None = None) -> str:
    """The lowest good share of any model and SLI over ``window``: one number for the deployment (its rates read by
    ``reader``: the recorded ones on the first screen)."""
    return f"min({worst_good_ratio(profile, window, reader)})"


def _engine(profile: Profile, metric: str) -> str:
    return selector(metric, scoped_job(profile, profile.source("sglang").job))


# Each node's rank in the replica state's one ``max`` (``replica_state``): the node's engine up term plus its
# token / queue term, shifted by ``RANK_SHIFT``: an idle node that is scraped ranks 0, stalled 3, serving 5, and
# every node whose stage is down ranks at least 6 (``RANK_DOWN``). Then (rank + 3) % 4 is the state code:
# 0 -> IDLE, 3 -> STALLED, 5 -> SERVING, 6 -> STAGE_DOWN.
RANK_SHIFT, RANK_WAITING, RANK_TOKENS, RANK_DOWN = 100, 3, 5, 6


def replica_state(profile: Profile) -> str:
    """Every replica's state code, ``{replica}``: the first of stage down, serving, stalled, idle that applies.

    The first screen runs this for every replica at once, and it reads up, the token counter and the queue once
    and the inventory twice (the join that names each node's replica, and the nodes with no series at all). Per
    node, a sum of two terms: ``-RANK_SHIFT`` when an engine target of the node is up (else 0, and no term when
    the node has no engine up series), plus ``RANK_TOKENS`` when its tokens moved over the stall window, else
    ``RANK_WAITING`` when requests wait. Shifted by ``RANK_SHIFT``, a scraped node ranks 0 / 3 / 5 and a node
    without an engine target up at least ``RANK_DOWN``, as does an inventory node with no series; the replica
    takes its nodes' highest rank (a stage down wins, then serving, then stalled: serving and stalled exclude each
    other by the tokens, so serving may be tested first), and ``(rank + 3) % 4`` is its code."""
    node = profile.label("node")
    tokens = f"({rate(_engine(profile, TOKENS), STALL_WINDOW)} > 0) * 0 + {RANK_TOKENS}"
    waiting = f"({_engine(profile, WAITING)} > 0) * 0 + {RANK_WAITING}"
    moving = agg("max", [node], f"{tokens} or {waiting}")
    scraped = f"({agg('max', [node], _engine(profile, 'up'))} == bool 1) * -{RANK_SHIFT}"
    term = "dashgen_term"  # keeps a node's two terms apart until they are summed
    ranks = agg(
        "sum",
        [node],
        f'label_replace({moving}, "{term}", "moving", "", "") or label_replace({scraped}, "{term}", "up", "", "")',
    )
    replicas = node_to_replica(profile)
    per_node = f"({replicas} * on({node}) group_left() {ranks}) or on({node}) ({replicas} * 0)"
    highest = agg("max", [REPLICA_LABEL], per_node)
    return f"(clamp_max({highest} + {RANK_SHIFT}, {RANK_DOWN}) + 3) % 4"


def replica_state_names(states: dict[int, tuple[str, str]] | None = None) -> States:
    """The state codes (``STATES`` by default) with their text and colour."""
    return States.by_code(states or STATES)
