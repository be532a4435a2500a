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

from dashgen_queries import dcgm, health, nodata
from dashgen_queries import mooncake as mc
from dashgen_queries.gpu import (
    CLOCK_EVENT_REASONS,
    POWER_BITS,
    QUANTITIES,
    THERMAL_BITS,
    GpuSource,
    gpu_clock_event_reasons,
    gpu_memory_used_share,
    gpu_source,
    gpu_sources,
    gpu_timeline,
)
from dashgen_queries.inventory import INVENTORY, inventory_labels, node_to_replica
from dashgen_queries.promql import agg, in_deployment
from dashgen_queries.sglang import restarted_ranks
from dashgen_queries.sglang_slo import RECORDED_WINDOWS, error_ratio, slis, slo_error_ratio_name, stalled_stages

from dashgen.deployment.profile import TEXT, Profile
from dashgen.deployment.topology import Topology
from dashgen.rules.collector import dropping_alert, queue_alert
from dashgen.rules.model import RecordingRule

__all__ = ["slo_error_ratio_name", "slo_records", "gpu_records", "inventory_records", "layer_health_records"]

GPU_MEMORY = "node_gpu:dashgen_gpu_memory_used:ratio"
NODE_GPU_MEMORY = "node:dashgen_gpu_memory_used:max_ratio"
GPU_TEMPERATURE = "node_gpu:dashgen_gpu_temperature:celsius"
NODE_GPU_TEMPERATURE = "node:dashgen_gpu_temperature:max_celsius"
GPU_CLOCK_REASONS = "node_gpu:dashgen_gpu_clock_event_reasons:bitmask"


def slo_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """One error-ratio series per SLI and window, labelled ``slo`` (ttft / tpot / e2e), by model."""
    return tuple(
        RecordingRule(slo_error_ratio_name(window), error_ratio(profile, sli, window), (("slo", sli.key),))
        for sli in slis(profile)
        for window in RECORDED_WINDOWS
    )


def gpu_records(profile: Profile, source: GpuSource) -> tuple[RecordingRule, ...]:
    node = profile.label("node")
    return (
        RecordingRule(GPU_MEMORY, gpu_memory_used_share(profile, source, scoped=False, valid_only=True)),
        RecordingRule(NODE_GPU_MEMORY, agg("max", (node,), in_deployment(profile, GPU_MEMORY))),
        RecordingRule(
            GPU_TEMPERATURE, gpu_timeline(profile, source, QUANTITIES["temperature"], scoped=False, valid_only=True)
        ),
        RecordingRule(NODE_GPU_TEMPERATURE, agg("max", (node,), in_deployment(profile, GPU_TEMPERATURE))),
        RecordingRule(GPU_CLOCK_REASONS, gpu_clock_event_reasons(profile, source, scoped=False, valid_only=True)),
    )


def inventory_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """The node inventory (``queries.inventory``): one ``vector(1)`` rule per profile node, labelled with
    the node, its segment host and its engine replica. Each rule is a few bytes of PromQL whatever the
    node count, which is what keeps every dashboard query's text independent of it."""
    rows = inventory_labels(profile, Topology(profile))
    return tuple(RecordingRule(INVENTORY, "vector(1)", labels) for labels in rows)


def layer_health_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """The Now row's node x layer reason codes (``queries.nodata``): one rule per evidence layer, labelled
    ``layer``, over the last 15 minutes for every node; the matrix reads the newest recorded value. Then the
    health states (``queries.health``): one rule per layer that has a condition, the same way."""
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
    return reasons + states


def health_conditions(profile: Profile) -> dict[str, list[tuple[health.HealthState, str]]]:
    """Layer key -> the (state, condition) pairs of the layer, in priority order (the lowest code first); only
    conditions whose sources the profile exports (a state that can never apply is not recorded)."""
    keys = {layer.key for layer in nodata.layers(profile)}
    layers: dict[str, list[tuple[health.HealthState, str]]] = {}
    if "engine" in keys and profile.has_kind(TEXT):
        layers["engine"] = [
            (health.ENGINE_STALLED, stalled_stages(profile)),
            (health.ENGINE_RESTARTED, restarted_ranks(profile)),
        ]
    if "hicache_host" in keys and profile.has_kind(TEXT):
        layers["hicache_host"] = [(health.TIER_COLLAPSED, health.host_tier_collapsed(profile))]
    if "mooncake" in keys:
        served = (
            f"({mc.replica_master(profile, node_to_replica(profile))} and on ({mc.MASTER_LABEL}) "
            f"({health.store_reset(profile)}))"
        )
        layers["mooncake"] = [(health.STORE_RESET, served)]
    gpu = _gpu_conditions(profile)
    for source in gpu_sources(profile):
        layers[source.key] = gpu
    if "disk" in keys:
        layers["disk"] = [(health.DISK_SATURATED, health.disk_saturated(profile))]
    if profile.collector is not None:
        layers[health.COLLECTOR_LAYER] = [
            (health.COLLECTOR_DROPPING, dropping_alert(profile).expr),
            (health.COLLECTOR_QUEUE_FULL, queue_alert(profile).expr),
        ]
    if profile.exported("node_exporter"):
        layers[health.CLOCK_LAYER] = [(health.CLOCK_OFF, health.clock_off(profile))]
    return layers


def _gpu_conditions(profile: Profile) -> list[tuple[health.HealthState, str]]:
    """The GPU layers' states: DCGM's fatal Xid and row-remap failure where DCGM collects them, and the thermal /
    power split of the clock-event bitmask where the GPU source collects the reasons. The bitmask is read as
    ``GPU_CLOCK_REASONS`` records it (the same expression, not the recorded series: the demo and the drills replay
    the layer-health group alone)."""
    found: list[tuple[health.HealthState, str]] = []
    if profile.exported("dcgm") and dcgm.collects(profile, dcgm.XID):
        found.append((health.GPU_XID_FATAL, dcgm.fatal_xid(profile)))
    if profile.exported("dcgm") and dcgm.collects(profile, dcgm.ROW_REMAP_FAILURE):
        found.append((health.GPU_REMAP_FAILED, dcgm.remap_failed(profile)))
    source = gpu_source(profile)
    if source is not None and not source.missing((source.metric(CLOCK_EVENT_REASONS),)):
        reasons = f"({gpu_clock_event_reasons(profile, source, scoped=False, valid_only=True)})"
        found.append((health.GPU_THERMAL, health.clock_events_set(profile, reasons, THERMAL_BITS)))
        found.append((health.GPU_POWER, health.clock_events_set(profile, reasons, POWER_BITS)))
    return found


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
