"""Health states of S32 (in an incident): what is *wrong* with a node's layer, apart from whether its data
is missing (``queries.nodata``). One definition of each state, its code, its cell text and colour; the
conditions that recognise it are PromQL built here and read by both the alerting rules (``dashgen.rules``)
and the recording rule the Now row's matrix reads, so an alert and its matrix cell cannot drift apart.

Recorded series (group ``dashgen-<profile>-layer-health``)::

    node:dashgen_layer_health:code{<deployment>, node, layer="<layer key>"}

one series per node and layer, present only while a health state applies (its value is the state's code;
no series = healthy). Layer keys are those of ``queries.nodata.layers`` plus ``collector`` and ``clock``.

The matrix's cell for (node, layer) is the worst of the missing-data reason and the health state::

    (reason >= UNINITIALISED) or on(node) health or on(node) reason

Missing data that makes the layer unreadable (collection failed, segment host not mapped, uninitialised,
GPU missing) wins, since a health state cannot be judged without the data; a health state wins over ok,
no traffic, no I/O and insufficient samples (an engine with requests waiting is "stalled", never "no
traffic"). Health codes (20-99) sit apart from the reason codes (0-8) and the GPU-missing codes (>= 200).
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries.promql import agg, deployment, node_var, selector

from dashgen.deployment.profile import Profile

LAYER_HEALTH = "node:dashgen_layer_health:code"
COLLECTOR_LAYER, CLOCK_LAYER = "collector", "clock"


@dataclass(frozen=True)
class HealthState:
    code: int
    text: str
    colour: str
    severity: str  # critical | warning: the severity of the alert that reports the same state


# Health states use the magenta family (missing data: red / orange / yellow / blue / purple), so a cell
# says by its colour alone whether its data is missing or its numbers are bad.
CRITICAL_COLOUR, WARNING_COLOUR = "#C41A8A", "#E87BD0"

ENGINE_STALLED = HealthState(21, "stalled: requests wait, no token moves", CRITICAL_COLOUR, "critical")
ENGINE_RESTARTED = HealthState(22, "restarted (last 15 min)", WARNING_COLOUR, "warning")
GPU_XID_FATAL = HealthState(31, "GPU fatal Xid", CRITICAL_COLOUR, "critical")
GPU_REMAP_FAILED = HealthState(32, "GPU row remap failed", CRITICAL_COLOUR, "critical")
GPU_THERMAL = HealthState(33, "GPU thermal throttling", WARNING_COLOUR, "warning")
GPU_POWER = HealthState(34, "GPU power throttling", WARNING_COLOUR, "warning")
TIER_COLLAPSED = HealthState(41, "hit ratio collapsed (vs own baseline and peers)", WARNING_COLOUR, "warning")
STORE_RESET = HealthState(42, "Store metadata reset (master failover)", WARNING_COLOUR, "warning")
DISK_SATURATED = HealthState(51, "disk saturated (busy, queue, await)", WARNING_COLOUR, "warning")
COLLECTOR_DROPPING = HealthState(61, "collector dropping samples", WARNING_COLOUR, "warning")
COLLECTOR_QUEUE_FULL = HealthState(62, "collector queue near its bound", WARNING_COLOUR, "warning")
CLOCK_OFF = HealthState(71, "clock off", WARNING_COLOUR, "warning")

STATES: tuple[HealthState, ...] = (ENGINE_STALLED, ENGINE_RESTARTED, GPU_XID_FATAL, GPU_REMAP_FAILED, GPU_THERMAL,
                                   GPU_POWER, TIER_COLLAPSED, STORE_RESET, DISK_SATURATED, COLLECTOR_DROPPING,
                                   COLLECTOR_QUEUE_FULL, CLOCK_OFF)


def value_mappings() -> tuple[dict, ...]:
    """Grafana value mappings: each health code to its text and colour (add beside ``nodata.value_mappings``)."""
    options = {str(s.code): {"text": s.text, "color": s.colour, "index": i} for i, s in enumerate(STATES)}
    return ({"type": "value", "options": options},)


def recorded_health(profile: Profile, layer_key: str, lookback_seconds: float) -> str:
    """The newest recorded health code of each selected node for one layer (no series where healthy)."""
    node = profile.label("node")
    recorded = selector(LAYER_HEALTH, deployment(profile), f'layer="{layer_key}"', node_var(profile))
    return agg("max", [node], f"last_over_time({recorded}[{lookback_seconds:g}s])")


def worst(profile: Profile, reason: str, health: str, unreadable_from: int) -> str:
    """The cell: a reason that makes the layer unreadable, else the health state, else the reason."""
    node = profile.label("node")
    return f"(({reason}) >= {unreadable_from}) or on({node}) ({health}) or on({node}) ({reason})"
