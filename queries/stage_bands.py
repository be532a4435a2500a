"""The min / median / max band of the per-stage scheduler gauges recorded at the engine's sample interval (group
``dashgen-<profile>-stage-bands``), read by the narrowed per-stage and per-DP-group graphs
(``dashgen_panels.screenful``) instead of three aggregations of the raw gauge.

A graph narrowed to its worst stages draws a band per pool: ``min``, ``quantile(0.5)`` and ``max`` of the
per-entity expression, each a read of every stage's gauge (three of the four reads of running, waiting, batch size,
queue length and KV usage on open: about 0.4 M samples at 1,024 GPUs on the bench store). A rule records the same
band, ``promql.band`` of the same expression without the dashboard's variables, per pool (label ``pool`` in a PD
deployment), evaluated every stored sample interval of the engine job: at each evaluation the gauge's band is the
band the raw query draws at that instant, so the recorded line is the same line (a gauge is never averaged: every
stored sample of every stage is in the band it draws). What changes: the band is of every stage of the pool
whatever the Node and Stage variables choose (the worst series are still narrowed by them), and without the rules
loaded the band reads No data (the worst series still draw).

``BANDS`` is the one definition: the panels build their per-entity expression with ``expression``, the rule file
writes ``records``, the narrowed graphs read ``read``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dashgen_queries.exported import written
from dashgen_queries.gpu_source import seconds_text
from dashgen_queries.promql import agg, band, in_deployment, matcher, selector
from dashgen_queries.sglang import STAGE_NAME, stage_key, stage_labels
from dashgen_queries.sglang_slo import kv_usage, per_stage_requests, scheduler_matchers

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import topology_of
from dashgen.exporters.table import SGLANG
from dashgen.render.fanout import SCREENFUL, series_count
from dashgen.render.spec import FanOut, RankedPer

GROUP = "stage-bands"
POOL = "pool"  # the rule's label naming the pool of a PD deployment (the band drops engine_type)
RUNNING = SGLANG.name("sglang:num_running_reqs")
WAITING = SGLANG.name("sglang:num_queue_reqs")
KV = SGLANG.name("sglang:token_usage")
# The bands' keys, as the panels name them.
RUNNING_PER_DP_GROUP = "sglang_num_running_reqs_per_dp_group"
WAITING_PER_DP_GROUP = "sglang_num_queue_reqs_per_dp_group"
RUNNING_PER_STAGE = "sglang_num_running_reqs_per_stage"
WAITING_PER_STAGE = "sglang_num_queue_reqs_per_stage"
KV_PER_STAGE = "sglang_token_usage_per_stage"


@dataclass(frozen=True)
class Band:
    """One banded gauge: the raw series, the per-entity expression (profile, pool, with the dashboard variables)
    and the labels naming one entity (what the band aggregates away)."""

    metric: str
    build: Callable[[Profile, str, bool], str]
    labels: Callable[[Profile], tuple[str, ...]]
    per: RankedPer
    opens: Callable[[Profile], bool] = lambda profile: True  # whether its graph's row opens with the dashboard


def queues_open(profile: Profile) -> bool:
    """Whether the per-DP-group engine queue graphs open with the dashboard: where the pool is split in PP stages
    (a stalled stage is found there); otherwise their row starts collapsed and draws every DP group when opened."""
    return profile.has_pp


def _per_dp_group(metric: str) -> Callable[[Profile, str, bool], str]:
    """``sglang.per_stage_gauge``: the gauge per (node, PP stage, DP group, engine type), max across TP ranks."""
    return lambda p, role, with_vars: agg(
        "max", stage_labels(p), selector(metric, *scheduler_matchers(p, with_vars, role))
    )


def _per_stage_requests(metric: str) -> Callable[[Profile, str, bool], str]:
    return lambda p, role, with_vars: per_stage_requests(p, metric, with_vars, role)


BANDS: dict[str, Band] = {
    RUNNING_PER_DP_GROUP: Band(
        RUNNING, _per_dp_group(RUNNING), lambda p: (*stage_labels(p), STAGE_NAME), "dp_group", queues_open
    ),
    WAITING_PER_DP_GROUP: Band(
        WAITING, _per_dp_group(WAITING), lambda p: (*stage_labels(p), STAGE_NAME), "dp_group", queues_open
    ),
    RUNNING_PER_STAGE: Band(RUNNING, _per_stage_requests(RUNNING), lambda p: tuple(stage_key(p)), "stage"),
    WAITING_PER_STAGE: Band(WAITING, _per_stage_requests(WAITING), lambda p: tuple(stage_key(p)), "stage"),
    KV_PER_STAGE: Band(
        KV, lambda p, role, with_vars: kv_usage(p, role, with_vars), lambda p: tuple(stage_key(p)), "stage"
    ),
}


@dataclass(frozen=True)
class BandRecord:
    """One recording rule: the series name, its expression (no dashboard variable) and its labels."""

    record: str
    rule: str
    labels: tuple[tuple[str, str], ...]


def record_name(key: str) -> str:
    """``pool:dashgen_sglang_num_running_reqs_per_stage:band`` (labels ``band``, and ``pool`` in a PD deployment)."""
    return f"pool:dashgen_{key}:band"


def interval_seconds(profile: Profile) -> float:
    """The group's evaluation interval: the engine job's stored sample interval, so each stored sample is banded."""
    return profile.source("sglang").sample_interval_seconds


def interval(profile: Profile) -> str:
    return seconds_text(interval_seconds(profile))


def roles(profile: Profile) -> tuple[str, ...]:
    """The pools drawn apart: ("prefill", "decode") in a PD deployment, else one pool ("")."""
    found = tuple(dict.fromkeys(pool.role for pool in profile.pools if pool.role in ("prefill", "decode")))
    return found or ("",)


def expression(profile: Profile, key: str, role: str = "") -> str:
    """The per-entity expression of the panel the band ``key`` belongs to (with the dashboard variables)."""
    return BANDS[key].build(profile, role, True)


def banded(profile: Profile, key: str, role: str) -> bool:
    """Whether a graph draws the band: the engine writes the gauge, the graph opens with the dashboard and the pool
    has more than a screenful of its entities (otherwise the graph draws every series and no band: a record nothing
    reads is not written)."""
    spec = BANDS[key]
    fan_out = FanOut(spec.per, spec.labels(profile), "top", role)
    many = series_count(fan_out, topology_of(profile)) > SCREENFUL
    return written(profile, spec.metric) and spec.opens(profile) and many


def records(profile: Profile, every: bool = False) -> tuple[BandRecord, ...]:
    """The band rules the narrowed graphs read, per gauge and pool, without variables (``every``: every gauge's
    and pool's, narrowed or not, for a small store to check them on)."""
    found = []
    for key, spec in BANDS.items():
        for role in roles(profile):
            if not (banded(profile, key, role) or (every and written(profile, spec.metric))):
                continue
            expr = band(spec.build(profile, role, False), spec.labels(profile))
            found.append(BandRecord(record_name(key), expr, ((POOL, role),) if role else ()))
    return tuple(found)


def read(profile: Profile, key: str, role: str = "") -> str:
    """The recorded band of ``key`` for the pool ``role`` ("" where the engine never writes the gauge: the panel
    draws the raw band, or no band below a screenful)."""
    if not banded(profile, key, role):
        return ""
    return in_deployment(profile, record_name(key), matcher(POOL, "=", role) if role else "")
