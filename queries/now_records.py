"""The first screen recorded (group ``dashgen-<profile>-now``): what the Now row's lists and counts used to compute
from every raw series on each refresh, written once per rule interval, so that the first screen reads about as many
series as it shows.

Raw, the first screen re-read every ``up`` series five times (targets up, up per job twice, Missing targets now and
over the window), every engine rank's ``up``, token counter and queue for the replica states, and every node's
recorded reasons and states with the inventory and ``up`` for the node x layer matrix: at 4,096 GPUs it fetched
159 times the series it returned. Recorded, each list holds only what it shows: the not-ok node x layer cells
(a healthy cluster records none), the targets up per job, the missing targets (only those) and each replica's
serving state.

``records`` is the one definition: each rule's expression is the one the panel ran (``queries.now``,
``queries.vmagent``, ``queries.serving``), with every node instead of the Node variable; the panel reads the
newest record at most the Now row's one staleness bound old (``nodata.recorded_lookback_seconds``, S32), the
same bound as the matrix's cells. Missing targets' "seen in the window" is a fixed window
(``MISSING_WINDOW_SECONDS``, the matrix's "now"), not the dashboard's range. A list that is empty because nothing
is wrong and one that is empty because no rule evaluator records are told apart by the evaluator's heartbeat
(``now.evaluator_silent``, ``serving.evaluator_fresh``): one series, never a count of nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries import nodata, now, serving
from dashgen_queries import vmagent as va
from dashgen_queries.inventory import REPLICA
from dashgen_queries.promql import agg, deployment, selector

from dashgen.deployment.profile import TEXT, Profile

GROUP = "now"
NOT_OK = "node:dashgen_layer_not_ok:code"
TARGETS_UP = "job:dashgen_targets_up:count"
MISSING = "target:dashgen_target_missing:state"
SERVING = "replica:dashgen_serving_state:code"
MISSING_WINDOW_SECONDS = nodata.RECORDED_WINDOW_SECONDS  # Missing targets' "seen in the window", recorded


@dataclass(frozen=True)
class NowRecord:
    """One recorded series of the first screen: its name, the rule's expression and the labels a panel keeps."""

    record: str
    rule: str
    labels: tuple[str, ...]


def records(profile: Profile) -> tuple[NowRecord, ...]:
    """The group's rules: the one definition the rule file writes and the panels read."""
    node, job, instance = (profile.label(name) for name in ("node", "job", "instance"))
    found = [
        NowRecord(NOT_OK, now.verdicts(profile, selected=False), (node, nodata.LAYER_LABEL)),
        NowRecord(TARGETS_UP, va.targets_up_by_job(profile), (job,)),
        NowRecord(MISSING, va.missing_targets(profile, window=f"{MISSING_WINDOW_SECONDS}s"), (node, job, instance)),
    ]
    if profile.exported("sglang") and profile.has_kind(TEXT):
        found.append(NowRecord(SERVING, serving.replica_state(profile), (REPLICA,)))
    return tuple(found)


def record(profile: Profile, name: str) -> NowRecord:
    """The record ``name`` of ``profile``'s group; KeyError names it when the profile records no such series."""
    for found in records(profile):
        if found.record == name:
            return found
    raise KeyError(f"profile {profile.name!r} records no {name} (group dashgen-{profile.name}-{GROUP})")


def is_record(name: str) -> bool:
    """Whether ``name`` is a series of this group (written by the rule evaluator, never by an exporter)."""
    return name in (NOT_OK, TARGETS_UP, MISSING, SERVING)


def newest(profile: Profile, name: str, *matchers: str) -> str:
    """The newest sample of the record ``name`` within the Now row's staleness bound, with the labels its panel
    shows (the deployment label and the record's name dropped)."""
    found = record(profile, name)
    recorded = selector(name, deployment(profile), *matchers)
    bound = nodata.recorded_lookback_seconds(profile)
    return agg("max", list(found.labels), f"last_over_time({recorded}[{bound:g}s])")


def not_ok_cells(profile: Profile, node_matcher: str) -> str:
    """The matrix: the recorded not-ok cells of the nodes ``node_matcher`` selects, or the evaluator-silent line."""
    silent = now.evaluator_silent(
        profile, {profile.label("node"): now.EVALUATOR_NODE, nodata.LAYER_LABEL: now.EVALUATOR_LAYER}
    )
    return f"{newest(profile, NOT_OK, node_matcher)} or {silent}"


def targets_up_total(profile: Profile) -> str:
    """Targets up, all jobs: 0 while the evaluator records none up; no value while it is silent."""
    return f"sum({newest(profile, TARGETS_UP)}) or on() ({serving.evaluator_fresh(profile)} * 0)"


def when_fresh(profile: Profile, expr: str) -> str:
    """``expr`` while the rule evaluator records, else nothing: a constant beside a record (the expected
    counts) is not shown as if the record were read."""
    return f"({expr}) and on() {serving.evaluator_fresh(profile)}"


def missing_by_job(profile: Profile) -> str:
    """Expected minus the recorded targets up, per expected job, 0 where none is missing, while the evaluator
    records. A table cell, not a list: a job missing nothing reads 0, so its cell never falls to the panel's
    no-value text (which says the evaluator is silent)."""
    return when_fresh(profile, f"clamp_min({va.shortfall_by_job(profile, up=newest(profile, TARGETS_UP))}, 0)")


def missing_targets(profile: Profile) -> str:
    """The recorded missing targets, or the evaluator-silent line (node "all nodes", job "rule evaluator")."""
    node, job = profile.label("node"), profile.label("job")
    silent = now.evaluator_silent(profile, {node: now.EVALUATOR_NODE, job: now.EVALUATOR_LAYER})
    return f"{newest(profile, MISSING)} or {silent}"


def replica_states(profile: Profile) -> str:
    """The recorded replica states, or the evaluator-silent line (replica "rule evaluator")."""
    return f"{newest(profile, SERVING)} or {now.evaluator_silent(profile, {REPLICA: now.EVALUATOR_LAYER})}"
