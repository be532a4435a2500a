"""The values of the failure-mode catalogue: one ``FailureMode`` per way a component of the system fails, with the
closed sets its fields take. Data only; ``dashgen.catalogue.rows`` holds the rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from dashgen_queries.health import HealthState

from dashgen.deployment.profile import Profile

Component = Literal[
    "gpu",
    "host",
    "disk",
    "engine",
    "kv_pool",
    "hicache",
    "mooncake_master",
    "mooncake_store",
    "transfer_engine",
    "gateway",
    "collector",
    "clock",
    "store",
    "slo",
    "video",
]
# The node x layer health column a row paints: the matrix's layer keys (``queries.nodata.layers`` plus the collector
# and the clock). "gpu" paints each per-GPU source's column (``dcgm``, ``gpm``); "" paints no column (a cluster-wide
# or a gateway failure, read on the first screen's list and the firing table).
Layer = Literal["engine", "hicache_host", "hicache_storage", "mooncake", "gpu", "disk", "collector", "clock", ""]
Severity = Literal["critical", "warning"]
# What an alert names, as label roles: a role the profile's ``[labels]`` maps (node, gpu, pp_rank, instance, job,
# deployment) is written with the profile's label name, the others as spelled here.
Entity = Literal[
    "node",
    "gpu",
    "device",
    "mountpoint",
    "pp_rank",
    "engine_type",
    "instance",
    "worker",
    "policy",
    "master",
    "job",
    "interface",
    "replica",
    "model_name",
    "slo",
    "segment",
]
# How the first screen lists a row's alert: per entity it names, or once for the deployment.
Scope = Literal["entity", "cluster"]

COMPONENTS: tuple[str, ...] = get_args(Component)
LAYERS: tuple[str, ...] = get_args(Layer)
SEVERITIES: tuple[str, ...] = get_args(Severity)
ENTITIES: tuple[str, ...] = get_args(Entity)

Condition = Callable[[Profile], str]
Applies = Callable[[Profile], bool]


@dataclass(frozen=True)
class Read:
    """A series a row reads, by the exporter table's name (``dashgen.exporters.table``): the stated exporter
    version, flags and scrape prefix of a profile apply to it (``dashgen.exporters.availability``)."""

    source: str
    name: str


@dataclass(frozen=True)
class DemoFault:
    """How a fault of this kind looks in data, and the demo scenario that writes it.

    ``scenario``: the key of the fault scenario in ``dashgen.demo.faults`` (``dashgen demo --scenario
    fault:<key>``) that shapes the healthy series of ONE entity as the exporter would show the fault.
    ``shows``: the same in words, for the runbook."""

    scenario: str
    shows: str


@dataclass(frozen=True)
class Paint:
    """A health state a row paints on its ``layer`` column, and the per-node condition that paints it (labels: at
    least the node). ``condition`` None: the row's own alert expression is the condition."""

    state: HealthState
    condition: Condition | None = None


@dataclass(frozen=True)
class FailureMode:
    """One row: one failure mode of one component.

    ``id`` is stable (the ``failure`` label of the alert, the runbook's anchor); ``alert`` the alert's name.
    ``test`` / ``test_reason``: the condition in words and why it is the right test (``expr`` builds the PromQL:
    None when ``dashgen.rules`` builds it with a description of its own, named by ``alert``). ``hold`` /
    ``hold_reason``: the alert's ``for`` and why. ``cause``: the likely cause, short (an alert label);
    ``look``: the dashboard row or panel to open first (an alert label); ``runbook``: the on-call's first steps.
    ``applies``: whether the profile exports what the row reads (rules drop rows whose series the profile's
    versions and flags never write, S35, on top of this)."""

    id: str
    alert: str
    component: Component
    layer: Layer
    reads: tuple[Read, ...]
    entity: tuple[Entity, ...]
    test: str
    test_reason: str
    hold: str
    hold_reason: str
    severity: Severity
    cause: str
    look: str
    runbook: str
    demo: DemoFault
    applies: Applies
    expr: Condition | None = None
    # the alert's summary (Prometheus template; "{deployment}" = the deployment's name) for rows the catalogue builds
    summary: str = ""
    paints: tuple[Paint, ...] = ()
    scope: Scope = "entity"
    # Rows whose alerts follow from this one's fault and may fire beside it (a full KV pool retracts requests).
    also: tuple[str, ...] = ()
    # The source whose scrape targets the row watches, for a row that reads only the collector's ``up`` of them.
    watches: str = ""

    @property
    def anchor(self) -> str:
        """The row's runbook section in docs/alerts.md (GitHub heading anchor of ``id``)."""
        return self.id


@dataclass(frozen=True)
class NotASignal:
    """An exporter-table series that no row reads, and why it signals no failure on its own."""

    source: str
    name: str
    reason: str
