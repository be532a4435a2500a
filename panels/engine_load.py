"""Engine load per PP stage (per instance where there is no PP) in the SLO and health group: batch size
beside queue length, queue pressure (a stage with waiting requests and none running shows "stalled"),
KV usage and prefix reuse, one series per (node, stage), drilling down to the clicked node. Stages are
never summed (S3). In a PD-disaggregated deployment every panel is drawn once per pool, selected by the
engine's own ``engine_type`` label, so prefill and decode never share an axis (S27).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dashgen_panels.drilldown import node_link
from dashgen_queries import request_rates, stage_bands, stage_rates
from dashgen_queries.sglang import stage_key
from dashgen_queries.sglang_slo import STALLED_VALUE, queue_per_running

from dashgen.deployment.profile import Profile
from dashgen.render.kit import ratio_axis, stat, timeseries
from dashgen.render.spec import Evidence, FanOut, PanelSpec, RankedEnd, Target

KEY = "slo_health"
KV_STATES = (("green", None), ("yellow", 0.8), ("orange", 0.9), ("red", 0.95))
# Waiting ÷ running, in batches: under continuous batching some requests always wait for the next step, so a
# queue shorter than the running batch is a healthy backlog (green), drained within about one batch's turnover;
# yellow (busy) when a whole batch waits, orange (high) two batches, red (overloaded) four.
QUEUE_STATES = (("green", None), ("yellow", 1.0), ("orange", 2.0), ("red", 4.0))
STALLED_TEXT = "stalled: waiting, none running"
STALLED_MAPPINGS = (
    {"type": "value", "options": {f"{STALLED_VALUE:.0f}": {"text": STALLED_TEXT, "color": "red", "index": 0}}},
)


# (panel, has PP) -> title: "stage" where the profile has pipeline parallelism, "instance" where it has none.
TITLES = {
    ("running", True): "Batch size: running requests per stage, DP groups summed",
    ("running", False): "Batch size: running requests per instance, DP groups summed",
    ("queue", True): "Queue length: waiting requests per stage, DP groups summed",
    ("queue", False): "Queue length: waiting requests per instance, DP groups summed",
    ("load_state", True): "Queue pressure per stage (waiting ÷ running)",
    ("load_state", False): "Queue pressure per instance (waiting ÷ running)",
    ("kv_usage", True): "KV usage of the fullest pool per stage (token_usage)",
    ("kv_usage", False): "KV usage of the fullest pool per instance (token_usage)",
    ("prefix_hit", True): "Prefix-cache reuse share per stage",
    ("prefix_hit", False): "Prefix-cache reuse share per instance",
}


def pd_roles(profile: Profile) -> tuple[str, ...]:
    """The pools drawn apart: ("prefill", "decode") in a PD deployment, else one pool ("")."""
    roles = tuple(dict.fromkeys(pool.role for pool in profile.pools if pool.role in ("prefill", "decode")))
    return roles or ("",)


def _title(profile: Profile, key: str, role: str) -> str:
    title = TITLES[(key, profile.has_pp)]
    if not role:
        return title
    stem, paren, rest = title.partition(" (")
    return f"{stem} ({role}{', ' + rest.rstrip(')') if paren else ''})"


def pool_key(key: str, role: str) -> str:
    """A per-pool panel's key: ``<key>_<role>`` in a PD deployment, ``key`` otherwise."""
    return f"{key}_{role}" if role else key


_key = pool_key


def pool_title(title: str, role: str) -> str:
    """``title`` with the pool it shows in a PD deployment: ``<title> (<role> pool)``."""
    return f"{title} ({role} pool)" if role else title


def pool_matchers(role: str) -> tuple[str, ...]:
    """The matcher selecting one pool by the engine's own label (``engine_type="decode"``), none without pools."""
    return (f'engine_type="{role}"',) if role else ()


def _stage_legend(profile: Profile) -> str:
    node = f"{{{{{profile.label('node')}}}}}"
    return f"{node} stage {{{{{profile.label('pp_rank')}}}}}" if profile.has_pp else node


def _scheduler_source(profile: Profile, metric: str) -> str:
    return (
        f"SGLang scheduler gauge {metric} (job {profile.source('sglang').job}), reported by the stats-logging "
        "TP rank of each PP stage"
    )


def _stage_panel(
    profile: Profile,
    key: str,
    title: str,
    make: Callable[..., PanelSpec],
    evidence: Evidence,
    expr: str,
    fan_out: FanOut,
    interval: str = "",
    **fields: Any,
) -> PanelSpec:
    """A per-(node, PP stage) panel of the kit kind ``make``: one series per stage, drilling down to the
    clicked node; ``fan_out`` says which stages are worst when there are too many to draw
    (``dashgen_panels.screenful``); ``interval`` the Min step of a query reading recorded series."""
    panel = make(
        f"{KEY}.{key}",
        title,
        evidence,
        (Target(expr, legend=_stage_legend(profile), interval=interval),),
        height=8,
        data_links=(node_link(profile),),
        **fields,
    )
    return replace(panel, fan_out=fan_out)


def _stages(profile: Profile, role: str, worst: RankedEnd) -> FanOut:
    """One series per (node, PP stage) of the pool ``role``; ``worst`` "top" where high is bad."""
    return FanOut("stage", tuple(stage_key(profile)), worst, role)


def requests_panel(profile: Profile, key: str, metric: str, quantity: str, role: str = "") -> PanelSpec:
    band_key = {
        "sglang:num_running_reqs": stage_bands.RUNNING_PER_STAGE,
        "sglang:num_queue_reqs": stage_bands.WAITING_PER_STAGE,
    }[metric]
    return _stage_panel(
        profile,
        _key(key, role),
        _title(profile, key, role),
        timeseries,
        Evidence(
            source=_scheduler_source(profile, metric),
            quantity=quantity + " per (node, PP stage); TP copies removed with max, DP groups added (the "
            "Requests group shows the same gauge per DP group)",
            limit=(
                "each PP stage's scheduler sees the same requests, so stages are never summed (S3); a gauge "
                "sampled at the log interval can miss short bursts"
            ),
        ),
        stage_bands.expression(profile, band_key, role),
        replace(_stages(profile, role, "top"), band=stage_bands.read(profile, band_key, role)),
        unit="short",
        min=0,
        width=9,
    )


def batch_size_panel(profile: Profile, role: str = "") -> PanelSpec:
    return requests_panel(profile, "running", "sglang:num_running_reqs", "requests in the running batch", role)


def queue_length_panel(profile: Profile, role: str = "") -> PanelSpec:
    return requests_panel(profile, "queue", "sglang:num_queue_reqs", "requests in the waiting queue", role)


def load_state_panel(profile: Profile, role: str = "") -> PanelSpec:
    return _stage_panel(
        profile,
        _key("load_state", role),
        _title(profile, "load_state", role),
        stat,
        Evidence(
            source=_scheduler_source(profile, "sglang:num_queue_reqs / sglang:num_running_reqs"),
            quantity="waiting requests per running request per (node, PP stage), last value",
            limit=(
                "green: fewer requests wait than run (a backlog continuous batching drains within about one batch's "
                "turnover; 0 when nothing waits); yellow (busy): a whole batch waits; orange (high): two batches "
                "wait; red (overloaded): four batches wait; red "
                f"'{STALLED_TEXT}': requests wait and none runs (a stalled scheduler, or every request retracted "
                "for lack of KV), the worst state. No data only when both gauges are absent"
            ),
        ),
        queue_per_running(profile, role),
        _stages(profile, role, "top"),
        unit="none",
        min=0,
        decimals=2,
        width=6,
        thresholds=QUEUE_STATES,
        mappings=STALLED_MAPPINGS,
    )


def kv_usage_panel(profile: Profile, role: str = "") -> PanelSpec:
    return _stage_panel(
        profile,
        _key("kv_usage", role),
        _title(profile, "kv_usage", role),
        timeseries,
        Evidence(
            source=_scheduler_source(profile, "sglang:token_usage"),
            quantity=(
                "used share of the fullest KV pool (max of full / SWA / mamba pools) per (node, PP stage); "
                "the fullest DP group"
            ),
            limit=(
                "slots held by the radix cache that can be evicted are not counted as used; colours: yellow "
                "(busy) 80 %, orange (high) 90 %, red (overloaded) 95 %, where retraction becomes likely"
            ),
        ),
        stage_bands.expression(profile, stage_bands.KV_PER_STAGE, role),
        replace(_stages(profile, role, "top"), band=stage_bands.read(profile, stage_bands.KV_PER_STAGE, role)),
        **ratio_axis("percentunit"),
        width=12,
        thresholds=KV_STATES,
        threshold_style="line",
    )


def prefix_hit_panel(profile: Profile, role: str = "") -> PanelSpec:
    return _stage_panel(
        profile,
        _key("prefix_hit", role),
        _title(profile, "prefix_hit", role),
        timeseries,
        Evidence(
            source=(
                f"SGLang scheduler counter sglang:prefill_effective_tokens_total{{mode}} (job "
                f"{profile.source('sglang').job}); chosen over the sglang:cache_hit_rate gauge because it is "
                "token-weighted over the rate interval rather than the scheduler's own estimate"
            ),
            quantity=(
                "(device_hit + host_hit + storage_hit) ÷ input prefill tokens per (node, PP stage), over the "
                "rate interval; the logging TP rank is read (max across TP ranks)"
            ),
            limit=(
                "scheduler-level final reuse at prefill (S9): the same counter as the final-reuse columns of the "
                "cache-evidence table, as a token share; not a request hit rate; every PP stage counts the same "
                "request, so stages are never added (S3). No prefill in the interval -> No data. The two rates "
                "are dashgen's recording rules "
                + stage_rates.recorded_note(
                    profile, "reused and input prefill tokens per (node, PP stage)", stage_rates.NO_VALUE
                )
            ),
            layer="final reuse at prefill (scheduler)",
        ),
        stage_rates.prefix_hit_ratio(profile, role=role),
        _stages(profile, role, "bottom"),
        interval=request_rates.min_step_of(profile),
        **ratio_axis("percentunit"),
        width=12,
        no_value=stage_rates.NO_VALUE,
    )


def stage_panels(profile: Profile) -> list[PanelSpec]:
    """The five engine-load panels, once per pool in a PD deployment (prefill, then decode)."""
    return [
        panel
        for role in pd_roles(profile)
        for panel in (
            batch_size_panel(profile, role),
            queue_length_panel(profile, role),
            load_state_panel(profile, role),
            kv_usage_panel(profile, role),
            prefix_hit_panel(profile, role),
        )
    ]
