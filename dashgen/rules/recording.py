"""Recording rules for the expressions that are expensive at 200+ GPUs or evaluated over long
windows: SLO error ratios (TTFT, TPOT, E2E; aborted requests counted as bad events) at 5m / 30m /
1h / 6h / 3d, and per-GPU / per-node GPU aggregates.

The expressions are the dashboards' own builders (``queries.sglang_slo``, ``queries.gpu``) without template
variables (the GPU ones on valid samples only, where the source has a validity series),
so a recorded series and its panel cannot drift apart. Alerts read the recorded series; the
dashboard's burn-rate panels read them too where they exist and fall back to the same raw
expression where they do not.
"""

from __future__ import annotations

from collections.abc import Callable

from dashgen_queries import health, nodata, now_records, request_rates, stage_bands, stage_rates
from dashgen_queries.gpu import (
    QUANTITIES,
    GpuSource,
    gpu_clock_event_reasons,
    gpu_memory_used_share,
    gpu_sources,
    gpu_timeline,
)
from dashgen_queries.gpu_window import window_records
from dashgen_queries.inventory import INVENTORY, inventory_labels
from dashgen_queries.promql import agg
from dashgen_queries.sglang_slo import RECORDED_WINDOWS, error_ratio, slis, slo_error_ratio_name

from dashgen.catalogue import FailureMode, Paint, rows_for
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import topology_of
from dashgen.rules.collector import dropping_alert, queue_alert
from dashgen.rules.model import RecordingRule

__all__ = [
    "slo_error_ratio_name",
    "slo_records",
    "gpu_records",
    "gpu_window_records",
    "request_rate_records",
    "stage_band_records",
    "stage_reuse_records",
    "inventory_records",
    "layer_health_records",
    "first_screen_records",
]

GPU_MEMORY = "node_gpu:dashgen_gpu_memory_used:ratio"
GPU_TEMPERATURE = "node_gpu:dashgen_gpu_temperature:celsius"
GPU_CLOCK_REASONS = "node_gpu:dashgen_gpu_clock_event_reasons:bitmask"


def slo_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """One error-ratio series per SLI and window, labelled ``slo`` (ttft / tpot / e2e), by model."""
    return tuple(
        RecordingRule(slo_error_ratio_name(window), error_ratio(profile, sli, window), (("slo", sli.key),))
        for sli in slis(profile)
        for window in RECORDED_WINDOWS
    )


def gpu_records(profile: Profile, source: GpuSource) -> tuple[RecordingRule, ...]:
    """Per GPU, on valid samples: memory used share, temperature and the clock-event bitmask (the alerts and the
    health states read them; no per-node maximum is recorded, none was read)."""
    return (
        RecordingRule(GPU_MEMORY, gpu_memory_used_share(profile, source, scoped=False, valid_only=True)),
        RecordingRule(
            GPU_TEMPERATURE, gpu_timeline(profile, source, QUANTITIES["temperature"], scoped=False, valid_only=True)
        ),
        RecordingRule(GPU_CLOCK_REASONS, gpu_clock_event_reasons(profile, source, scoped=False, valid_only=True)),
    )


def gpu_window_records(profile: Profile, source: GpuSource) -> tuple[RecordingRule, ...]:
    """Per GPU and rule interval, the statistics the per-GPU window table combines over its window
    (``queries.gpu_window``: means, peaks, lows, throttle and valid shares of the columns the source fills)."""
    return tuple(RecordingRule(statistic.record, statistic.rule) for statistic in window_records(profile, source))


def request_rate_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """Per rule interval, the request rates the SLO group's graphs read (``queries.request_rates``: bucket, count
    and abort rates per entry node and model)."""
    return tuple(RecordingRule(rate.record, rate.rule) for rate in request_rates.records(profile))


def stage_reuse_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """Per rule interval, the reused and input prefill token rates per stage (``queries.stage_rates``)."""
    return tuple(RecordingRule(rate.record, rate.rule) for rate in stage_rates.records(profile))


def stage_band_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """At the engine's sample interval, the min / median / max band of the per-stage gauges the narrowed graphs
    draw (``queries.stage_bands``)."""
    return tuple(RecordingRule(b.record, b.rule, b.labels) for b in stage_bands.records(profile))


def inventory_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """The node inventory (``queries.inventory``): one ``vector(1)`` rule per profile node, labelled with
    the node, its segment host and its engine replica. Each rule is a few bytes of PromQL whatever the
    node count, which is what keeps every dashboard query's text independent of it."""
    rows = inventory_labels(profile, topology_of(profile))
    return tuple(RecordingRule(INVENTORY, "vector(1)", labels) for labels in rows)


def layer_health_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """The Now row's node x layer reason codes (``queries.nodata``): one rule per evidence layer, labelled
    ``layer``, over the last 15 minutes for every node; the matrix reads the newest recorded value. Then the
    health states (``queries.health``): one rule per layer that has a condition, the same way. First the rule
    evaluator's heartbeat (``nodata.EVALUATOR_HEARTBEAT``), the one series the first screen reads to tell a silent
    evaluator from a quiet deployment."""
    reasons = tuple(
        RecordingRule(
            nodata.LAYER_REASON, nodata.recorded_reason_rule(profile, layer), ((nodata.LAYER_LABEL, layer.key),)
        )
        for layer in nodata.layers(profile)
    )
    states = tuple(
        RecordingRule(health.LAYER_HEALTH, recorded_health_rule(profile, chain), ((nodata.LAYER_LABEL, key),))
        for key, chain in health_conditions(profile).items()
        if chain
    )
    # one series per deployment, so "is the evaluator running this file" is read without counting nodes
    heartbeat = RecordingRule(nodata.EVALUATOR_HEARTBEAT, "vector(1)")
    return (heartbeat, *reasons, *states)


def first_screen_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """The first screen's lists and counts (``queries.now_records``): the not-ok node x layer cells, the targets up
    per job, the missing targets and the replica serving states, each the expression its panel ran."""
    return tuple(RecordingRule(r.record, r.rule) for r in now_records.records(profile))


def matrix_layers(profile: Profile) -> tuple[str, ...]:
    """The layer keys the Now row's node x layer matrix asks a health state for: every evidence layer
    (``queries.nodata.layers``), the collector where the profile has one, and the clock."""
    keys = [layer.key for layer in nodata.layers(profile)]
    if profile.collector is not None:
        keys.append(health.COLLECTOR_LAYER)
    return (*keys, health.CLOCK_LAYER)


# Rows whose alert ``dashgen.rules`` builds and whose alert expression is the health condition as it stands.
_ALERT_EXPRS: dict[str, Callable[[Profile], str]] = {
    "CollectorSendQueueNearBound": lambda profile: queue_alert(profile).expr,
    "CollectorDroppingSamples": lambda profile: dropping_alert(profile).expr,
}


def _condition(profile: Profile, row: FailureMode, paint: Paint) -> str:
    if paint.condition is not None:
        return paint.condition(profile)
    if row.expr is not None:
        return row.expr(profile)
    return _ALERT_EXPRS[row.alert](profile)


def health_conditions(profile: Profile) -> dict[str, list[tuple[health.HealthState, str]]]:
    """Layer key -> the (state, condition) pairs the catalogue's rows paint on it, in priority order (the lowest
    code first); only rows that apply to the profile (a state that can never apply is not recorded) and only layers
    the matrix asks for (``matrix_layers``; ``gpu`` paints every per-GPU source's column)."""
    asked = matrix_layers(profile)
    gpu_keys = [source.key for source in gpu_sources(profile)]
    layers: dict[str, list[tuple[health.HealthState, str]]] = {}
    for row in rows_for(profile):
        for paint in row.paints:
            for key in gpu_keys if row.layer == "gpu" else [row.layer]:
                if key in asked:
                    layers.setdefault(key, []).append((paint.state, _condition(profile, row, paint)))
    ordered = {key: sorted(layers[key], key=lambda pair: pair[0].code) for key in asked if key in layers}
    return ordered


def recorded_health_rule(profile: Profile, chain: list[tuple[health.HealthState, str]]) -> str:
    """The first state that applies on each node (``count by (node) (condition) * 0 + code`` joined with
    ``or on(node)``, highest priority first), and of those seen at any evaluation step within the last
    ``nodata.RECORDED_WINDOW_SECONDS`` the highest-priority one (the lowest code): a state that applied in the
    matrix's "now" window still shows. No state on a node: no series (healthy)."""
    node = profile.label("node")
    ordered = sorted(chain, key=lambda pair: pair[0].code)
    branches = f" or on({node}) ".join(
        f"({agg('count', [node], condition)} * 0 + {state.code})" for state, condition in ordered
    )
    window, step = nodata.RECORDED_WINDOW_SECONDS, nodata.RULE_INTERVAL_SECONDS
    return f"min_over_time(({branches})[{window}s:{step}s])"
