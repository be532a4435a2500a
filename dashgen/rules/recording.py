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

from dashgen_queries import nodata
from dashgen_queries.gpu import QUANTITIES, GpuSource, gpu_clock_event_reasons, gpu_memory_used_share, gpu_timeline
from dashgen_queries.inventory import INVENTORY, inventory_labels
from dashgen_queries.promql import agg, in_deployment
from dashgen_queries.sglang_slo import RECORDED_WINDOWS, error_ratio, slis, slo_error_ratio_name

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
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
        RecordingRule(GPU_TEMPERATURE,
                      gpu_timeline(profile, source, QUANTITIES["temperature"], scoped=False, valid_only=True)),
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
    ``layer``, over the last 15 minutes for every node; the matrix reads the newest recorded value."""
    return tuple(RecordingRule(nodata.LAYER_REASON, nodata.recorded_reason_rule(profile, layer),
                               ((nodata.LAYER_LABEL, layer.key),))
                 for layer in nodata.layers(profile))
