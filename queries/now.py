"""What is wrong now, as two lists the first screen leads with: the firing alerts, one line per entity in trouble
(entity, layer, verdict, since when, likely cause, row to open), and the node x layer verdicts that are not ok.

Both read each series once and their text does not grow with the node count (a node is a label value, never a
term of the query):

- the verdicts read the recorded reason codes and health states of every layer in one selector each
  (``node:dashgen_layer_reason:code``, ``node:dashgen_layer_health:code``), the node inventory and ``up`` once
  (the collector's silence), and keep a cell only where it is not ok: unreadable data, a health state, or too few
  samples; idle layers (no traffic, no I/O) are not wrong;
- the alerts read ``ALERTS`` / ``ALERTS_FOR_STATE`` and name the entity from the labels the alert carries, in one
  ``entity`` label. The failure-mode catalogue's alerts carry ``layer``, ``cause`` (the likely cause) and ``look``
  (the row to open); an alert without them leaves those cells empty.

An alert about a gateway's backend (``worker`` / ``backend``) names the backend, not the gateway's host: the host
is where the gateway runs, not what is wrong. An alert with ``for: 0`` has no ``ALERTS_FOR_STATE``; its "since"
is the first evaluation that wrote its ``ALERTS`` series within ``SINCE_LOOKBACK`` (a subquery), so it is never
"unknown".
"""

from __future__ import annotations

from dashgen_queries import health, nodata
from dashgen_queries import vmagent as va
from dashgen_queries.promql import agg, deployment, node_var, selector
from dashgen_queries.serving import FOR_STATE, evaluator_state, firing

from dashgen.deployment.profile import Profile

ENTITY = "entity"
CAUSE, LOOK, SEVERITY, FAILURE_LAYER = "cause", "look", "severity", "layer"
SINCE_LOOKBACK, SINCE_STEP = "6h", "1m"  # how far back a for: 0 alert's first ALERTS sample is looked for
EVALUATOR_SILENT = 9  # the verdict list's code for "no rule of this deployment evaluated recently"
EVALUATOR_SILENT_TEXT = "rule evaluator silent: no verdict is recorded"
EVALUATOR_NODE, EVALUATOR_LAYER = "all nodes", "rule evaluator"
NOT_OK_FROM = nodata.INSUFFICIENT  # reason codes from here up are shown; below: ok, no traffic, no I/O
# Above every reason code (GPU missing: GPU_MISSING_BASE x expected + seen GPUs, at most 1,615) and health state
# code: the worst-of encoding of not_ok_cells keeps the codes apart by it.
BAND = nodata.GPU_MISSING_BASE * (nodata.MAX_GPUS_PER_NODE + 1)


def entity_parts(profile: Profile) -> tuple[tuple[str, str], ...]:
    """(label, how its value is written in the entity) in reading order: what an alert can be about."""
    label = profile.label
    return (
        (label("node"), "$1"),
        (label("gpu"), "GPU $1"),
        ("interface", "$1"),
        ("device", "$1"),
        ("mountpoint", "$1"),
        (label("pp_rank"), "PP stage $1"),
        ("replica", "replica $1"),
        ("engine_type", "$1 pool"),
        ("pool", "pool $1"),
        ("master", "master $1"),
        ("segment", "segment $1"),
        ("entry", "gateway $1"),
        ("backend", "backend $1"),
        ("worker", "worker $1"),
        ("policy", "policy $1"),
        (label("model_name"), "model $1"),
        ("slo", "SLI $1"),
        (label("job"), "job $1"),
        (label("instance"), "$1"),
    )


def _part(label: str) -> str:
    return f"{ENTITY}_{label}"


def with_entity(profile: Profile, expr: str) -> str:
    """``expr`` with an ``entity`` label naming what each series is about (its entity labels, written out)."""
    node, instance = profile.label("node"), profile.label("instance")
    parts = entity_parts(profile)
    for label, shown in parts:
        expr = f'label_replace({expr}, "{_part(label)}", "{shown} ", "{label}", "(.+)")'
    # a backend's alert names the backend, not the gateway's host or process; a target's job and instance only
    # where no node is named (a node's alert names the node; its alert name says which target)
    for culprit in ("worker", "backend"):
        for part in (node, instance):
            expr = f'label_replace({expr}, "{_part(part)}", "", "{culprit}", ".+")'
    for part in (profile.label("job"), instance):
        expr = f'label_replace({expr}, "{_part(part)}", "", "{node}", ".+")'
    joined = ", ".join(f'"{_part(label)}"' for label, _ in parts)
    return f'label_join({expr}, "{ENTITY}", "", {joined})'


def since_ms(profile: Profile) -> str:
    """Each firing alert with all its labels, valued by when it became active (ms): ALERTS_FOR_STATE where the
    evaluator writes it (an alert with a hold), else the first ALERTS sample within ``SINCE_LOOKBACK``."""
    fired = firing(profile)
    held = f"({selector(FOR_STATE, deployment(profile))} and ignoring(alertstate) {fired})"
    first = f"(min_over_time(timestamp({fired})[{SINCE_LOOKBACK}:{SINCE_STEP}]) and {fired})"
    return f"1000 * ({held} or ignoring(alertstate) {first})"


def wrong_now_labels(profile: Profile) -> tuple[str, ...]:
    return (SEVERITY, ENTITY, FAILURE_LAYER, "alertname", CAUSE, LOOK)


def wrong_now(profile: Profile) -> str:
    """One series per entity in trouble and alert: the labels of ``wrong_now_labels``, valued by since when (ms);
    while nothing fires and the evaluator records, the evaluator's "none firing" row (``serving.evaluator_state``)."""
    keep = list(wrong_now_labels(profile))
    return f"{agg('max', keep, with_entity(profile, since_ms(profile)))} or {evaluator_state(profile)}"


def layer_titles(profile: Profile) -> dict[str, str]:
    """Recorded layer key -> the title the first screen shows."""
    titles = {health.COLLECTOR_LAYER: "Collector (vmagent)", health.CLOCK_LAYER: "Clock"}
    titles.update({layer.key: layer.title for layer in nodata.layers(profile)})
    return titles


def _newest(profile: Profile, metric: str, selected: bool = True) -> str:
    """The newest recorded code of every (selected) node and layer, at most the Now row's staleness bound old."""
    recorded = selector(metric, deployment(profile), node_var(profile) if selected else "")
    bound = nodata.recorded_lookback_seconds(profile)
    return agg("max", [profile.label("node"), nodata.LAYER_LABEL], f"last_over_time({recorded}[{bound:g}s])")


def not_ok_cells(profile: Profile) -> str:
    """Each selected (node, layer) whose verdict is not ok (``verdicts``), or while no rule evaluator records, the one
    ``EVALUATOR_SILENT`` line (``evaluator_silent``) instead of an empty, all-ok list."""
    named = {profile.label("node"): EVALUATOR_NODE, nodata.LAYER_LABEL: EVALUATOR_LAYER}
    return f"{verdicts(profile)} or {evaluator_silent(profile, named)}"


def verdicts(profile: Profile, *, selected: bool = True) -> str:
    """Each (node, layer) whose verdict is not ok, valued by its code (``nodata`` reasons, ``health`` states,
    ``vmagent.SILENT``): a silent collector overrides its node's cells; unreadable data wins over a health state,
    which wins over too few samples (the S32 order). The ``layer`` label reads as the layer's title. ``selected``:
    the nodes of the Node variable (the panel), else every node (the recording rule, ``now_records``)."""
    node, layer = profile.label("node"), nodata.LAYER_LABEL
    reason = _newest(profile, nodata.LAYER_REASON, selected)
    state = _newest(profile, health.LAYER_HEALTH, selected)
    # The worst of the two with each recorded series read once (reading the reasons on both sides of the states
    # fetched every node x layer twice): a state s becomes BAND + s; a reason r >= NOT_OK_FROM becomes
    # r + 2 BAND (r - NOT_OK_FROM), one linear term, so insufficient samples stay below every state and
    # unreadable data (r >= UNINITIALISED) above; the highest per cell wins, and % BAND gives its code back.
    lift = 2 * BAND
    lifted = f"({reason}) >= {NOT_OK_FROM}) * {lift + 1} - {lift * NOT_OK_FROM}"
    verdict = "verdict"  # keeps a cell's reason and state apart until the worst is taken
    both = (
        f'label_replace(({lifted}, "{verdict}", "reason", "", "") '
        f'or label_replace(({state}) + {BAND}, "{verdict}", "state", "", "")'
    )
    cells = f"{agg('max', [node, layer], both)} % {BAND}"
    if profile.collector:
        bound = nodata.recorded_lookback_seconds(profile)
        silent = va.silent_nodes(profile, after_seconds=bound)
        cells = f'label_replace({silent}, "{layer}", "{health.COLLECTOR_LAYER}", "", "") or on({node}) ({cells})'
    for key, title in layer_titles(profile).items():
        cells = f'label_replace({cells}, "{layer}", "{title}", "{layer}", "{key}")'
    return cells


def evaluator_silent(profile: Profile, labels: dict[str, str]) -> str:
    """One line valued ``EVALUATOR_SILENT`` while no rule evaluator records this deployment's rule file (no
    heartbeat within the Now row's staleness bound: ``serving.evaluator_fresh``'s test, negated), labelled
    ``labels`` (the table's own columns, label -> value): what a recorded list shows instead of an empty one, which
    would read as all ok."""
    beat = selector(nodata.EVALUATOR_HEARTBEAT, deployment(profile))
    expr = f"absent_over_time({beat}[{nodata.recorded_lookback_seconds(profile):g}s]) * {EVALUATOR_SILENT}"
    for label, value in labels.items():
        expr = f'label_replace({expr}, "{label}", "{value}", "", "")'
    return agg("max", list(labels), expr)
