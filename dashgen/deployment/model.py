"""The deployment profile as a value: the immutable dataclasses a validated profile is made of.

A profile is the only place a size, a label name, a job name or a threshold lives (S1). The
loader (``dashgen.deployment.profile``) builds these; everything downstream only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal, TypeVar, get_args

from dashgen.deployment.alerts import AlertThresholds
from dashgen.deployment.collector import Collector
from dashgen.exporters.availability import Stated
from dashgen.exporters.table import TABLES

W = TypeVar("W", bound=str)  # a word of a closed set

# Metric sources a profile may declare, from the exporter table: ``job`` is the default scrape job. Feature
# sources (HiCache, its storage layer) are collectors inside another source's process (``version_of``) and
# default to its job, unless the table gives them a job of their own (TENT: its own metrics port, so its own
# scrape job). ``unstated``: the status of a source the profile leaves out ("" = it must state it).
KNOWN_SOURCES: dict[str, dict[str, str]] = {
    table.source: {"job": table.job, "what": table.what, "unstated": table.unstated}
    for table in TABLES.values()
    if table.job
}
FEATURE_SOURCES = {name: TABLES[name].version_of for name in KNOWN_SOURCES if TABLES[name].version_of}

# The dashboard model a profile writes: classic JSON, or the ``dashboard.grafana.app`` v2 resource.
Schema = Literal["v1", "v2"]
SourceStatus = Literal["exported", "not-exported", "not-deployed"]
SOURCE_STATUSES: tuple[SourceStatus, ...] = get_args(SourceStatus)


def source_status(value: object) -> SourceStatus | None:
    """The source status ``value`` spells, None when it spells none."""
    return spelled(value, SOURCE_STATUSES)


PoolRole = Literal["unified", "prefill", "decode"]
POOL_ROLES: tuple[PoolRole, ...] = get_args(PoolRole)
# Workload kinds (S25): what a pool serves, which decides its engine metrics, panels, No Data layer, SLO and alerts.
WorkloadKind = Literal["text-generation", "video-generation"]
TEXT: Final = "text-generation"
VIDEO: Final = "video-generation"
WORKLOAD_KINDS: tuple[WorkloadKind, ...] = get_args(WorkloadKind)


def spelled(value: object, words: tuple[W, ...]) -> W | None:
    """The word of ``words`` that ``value`` is, None when it is none of them: a profile's string read as one of a
    closed set."""
    return next((word for word in words if word == value), None)


DEFAULT_LABELS: dict[str, str] = {
    "deployment": "cluster",
    "node": "node",
    "job": "job",
    "gpu": "gpu",
    "dcgm_uuid": "UUID",
    "gpm_uuid": "uuid",
    "tp_rank": "tp_rank",
    "pp_rank": "pp_rank",
    "dp_rank": "dp_rank",
    "model_name": "model_name",
    "instance": "instance",
}


@dataclass(frozen=True)
class Source:
    """One metric source and what the deployment says about it (S15)."""

    name: str
    status: SourceStatus
    job: str
    scrape_interval: str
    scrape_interval_seconds: float
    what: str
    sample_interval: str = ""
    sample_interval_seconds: float = 0.0
    # DCGM only: the fields the exporter's CSV collects; None = dcgm-exporter's default-counters.csv.
    fields: tuple[str, ...] | None = None
    # What runs (S35): the exporter's version ("" = the latest dashgen read), its flags (None = not stated: every
    # flag the exporter table knows is assumed on) and the name prefix its scrape path writes ("" = its own).
    version: str = ""
    features: tuple[str, ...] | None = None
    metric_prefix: str = ""

    def __post_init__(self) -> None:
        if not self.sample_interval:
            object.__setattr__(self, "sample_interval", self.scrape_interval)
            object.__setattr__(self, "sample_interval_seconds", self.scrape_interval_seconds)

    @property
    def exported(self) -> bool:
        return self.status == "exported"

    @property
    def stated(self) -> Stated:
        """What the profile states about the exporter's version, flags and prefix (``dashgen.exporters``)."""
        return Stated(self.version, self.features, self.metric_prefix)

    @property
    def deployed(self) -> bool:
        return self.status != "not-deployed"


@dataclass(frozen=True)
class Pool:
    """A group of identical engine replicas (the whole cluster, or a prefill / decode pool)."""

    name: str
    role: PoolRole
    replicas: int
    tp: int
    pp: int
    kind: WorkloadKind = TEXT

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def gpus(self) -> int:
        return self.gpus_per_replica * self.replicas


@dataclass(frozen=True)
class Slo:
    """Service-level objective thresholds (histogram bucket bounds, not averages). The TTFT / TPOT / E2E
    thresholds belong to text-generation pools (0.0 when the profile has none); ``job_latency_seconds`` to
    video-generation pools (0.0 when it has none)."""

    ttft_seconds: float
    e2e_seconds: float
    tpot_seconds: float
    objective: float
    window_days: int
    job_latency_seconds: float = 0.0


@dataclass(frozen=True)
class Capacity:
    """The capacity settings of S17, all in bytes."""

    global_segment_size: int | None
    host_cache_per_rank: int | None
    nvme_bucket_limit_per_rank: int | None
    nvme_physical_per_rank: int | None
    disk_nominal_size: int | None
    gpu_tdp_watts: float | None


@dataclass(frozen=True)
class Cost:
    """What energy and GPU time cost (``[cost]``): dollars per kWh of GPU energy and, optionally, dollars per
    GPU-hour (rent or depreciation). None: the dashboard shows energy per token but no dollars."""

    usd_per_kwh: float | None = None
    usd_per_gpu_hour: float | None = None


@dataclass(frozen=True)
class Speculative:
    """The engines' speculative decoding (``[speculative]``): the draft algorithm SGLang runs
    (``--speculative-algorithm``) and its draft tokens per step; "" = the engines run none."""

    algorithm: str = ""
    draft_tokens: int | None = None


@dataclass(frozen=True)
class Disks:
    """Which block devices and mount points are the KV cache disks and the model disk."""

    cache_device_regex: str
    cache_mountpoint: str
    model_mountpoint: str

    @property
    def has_cache_tier(self) -> bool:
        """Whether the deployment has a KV cache disk tier (a cache mount point in ``[disks]``)."""
        return bool(self.cache_mountpoint)


@dataclass(frozen=True)
class Store:
    """The central store as it really is (S20, S24): it keeps one sample per ``resolution`` in history
    (VictoriaMetrics ``-dedup.minScrapeInterval``, or downsampling) and answers ``latency_offset`` behind
    now (``-search.latencyOffset``). Zero resolution: every scraped sample is kept."""

    resolution: str = "0s"
    resolution_seconds: float = 0.0
    latency_offset: str = "0s"
    latency_offset_seconds: float = 0.0


@dataclass(frozen=True)
class DashboardSettings:
    """Dashboard-level defaults: time range, refresh, and the target Grafana version.

    ``min_refresh_interval`` is the target Grafana's ``[dashboards] min_refresh_interval`` (default 5s):
    Grafana raises a lower ``refresh`` to it on save, so such a refresh is refused at build time.
    """

    grafana_version: str
    time_from: str
    refresh: str
    min_refresh_interval: str = "5s"
    # ``dashgen cost`` budgets: per panel and per dashboard on open, as the data source counts them
    cost_panel_series: int = 20_000
    cost_panel_samples: int = 20_000_000
    cost_dashboard_series: int = 200_000
    cost_dashboard_samples: int = 100_000_000
    # The team's own panel modules (``<panels_dir>/<name>.py`` of the team repository, ``dashgen.team_panels``),
    # shown as rows after dashgen's groups, in this order.
    extra_modules: tuple[str, ...] = ()
    # The dashboard model written: "v1" (classic JSON) or "v2" (the ``dashboard.grafana.app`` v2 resource)
    schema: Schema = "v1"
    # Where alerts link out (``dashgen.rules.links``): the team's runbook document (an absolute URL lets Alertmanager
    # open it; the default is the document's path in the team repository) and Grafana's root URL ("": a path)
    runbook_base: str = "docs/alerts.md"
    grafana_url: str = ""
    # Panel keys (``group.panel``) published as library panels, besides those the panel code marks shared
    library_panels: tuple[str, ...] = ()
    # Who evaluates the alerts (``dashgen.rules.grafana``): "prometheus" (the rule files), "grafana" (Grafana-managed
    # rules) or "both" (recording rules in the rule files, alerts in Grafana); never the same rule twice
    ruler: str = "prometheus"

    @property
    def grafana(self) -> tuple[int, int]:
        major, minor = (int(x) for x in self.grafana_version.split(".")[:2])
        return major, minor

    @property
    def schema_version(self) -> int:
        return 42 if self.grafana >= (12, 2) else 41

    @property
    def v2_api_version(self) -> str:
        """The v2 API version the target Grafana stores: ``v2`` on 13 and newer, ``v2beta1`` on 12.2 - 12.x."""
        return "v2" if self.grafana >= (13, 0) else "v2beta1"


@dataclass(frozen=True)
class MooncakeMaster:
    """One Mooncake Store master (S11, S13): the engine replicas whose ranks mount segments on it, and the
    nodes its exporter targets run on (its HA copies; the ``node`` label names where a master runs, not
    where data lives). No ``nodes``: every target of the master job is this master (one shared master)."""

    name: str
    replicas: tuple[str, ...]
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    """A validated deployment profile. Immutable; everything panels need to size themselves."""

    name: str
    title: str
    description: str
    path: str
    nodes: int
    gpus_per_node: int
    node_names: tuple[str, ...]
    pools: tuple[Pool, ...]
    sources: dict[str, Source]
    labels: dict[str, str]
    slo: Slo
    capacity: Capacity
    disks: Disks
    dashboard: DashboardSettings
    insufficient_samples_share: float = 0.5
    # The value of the deployment label (labels.deployment) every series of this deployment carries
    # in the shared store (S21); "" when the store holds this deployment alone and has no such label.
    deployment: str = ""
    store: Store = field(default_factory=Store)
    # A retired deployment's rules never page: every alert is at most a warning.
    retired: bool = False
    # Node name -> the address its Mooncake Store clients register as the segment host (S11);
    # nodes not listed register under their node name.
    node_addresses: dict[str, str] = field(default_factory=dict)
    # The per-node collector's bounds and the targets of sources on some nodes (``[collector]``, S23); None: unknown.
    collector: Collector | None = None
    # The Mooncake masters and the replicas each serves ([[mooncake.masters]]); empty: one shared master.
    mooncake_masters: tuple[MooncakeMaster, ...] = ()
    # The incident alerts' thresholds (``[alerts]``; defaults when the section is absent).
    alerts: AlertThresholds = field(default_factory=AlertThresholds)
    # What energy and GPU time cost (``[cost]``; no dollars shown when absent).
    cost: Cost = field(default_factory=Cost)
    # The engines' speculative decoding (``[speculative]``; none when absent).
    speculative: Speculative = field(default_factory=Speculative)

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def max_pp(self) -> int:
        return max(pool.pp for pool in self.pools)

    @property
    def has_pp(self) -> bool:
        return self.max_pp > 1

    @property
    def has_pools(self) -> bool:
        """True when the deployment has more than one pool (e.g. prefill and decode)."""
        return len(self.pools) > 1

    @property
    def kinds(self) -> tuple[str, ...]:
        """The workload kinds of the profile's pools, in ``WORKLOAD_KINDS`` order (S25)."""
        return tuple(kind for kind in WORKLOAD_KINDS if any(pool.kind == kind for pool in self.pools))

    def has_kind(self, kind: str) -> bool:
        return kind in self.kinds

    def source(self, name: str) -> Source:
        return self.sources[name]

    def exported(self, name: str) -> bool:
        return self.sources[name].exported

    def label(self, role: str) -> str:
        return self.labels[role]

    def replica_keys(self) -> tuple[str, ...]:
        """Every engine replica's key, ``<pool>-<index>`` (as ``Topology.replicas`` names them)."""
        return tuple(f"{pool.name}-{index}" for pool in self.pools for index in range(pool.replicas))

    def masters(self) -> tuple[MooncakeMaster, ...]:
        """The Mooncake masters: the profile's ``[[mooncake.masters]]``, else one shared master serving every
        replica from every target of the master job."""
        return self.mooncake_masters or (MooncakeMaster("shared", self.replica_keys()),)

    def node_address(self, node: str) -> str:
        """The segment host of ``node``'s Store clients: its ``cluster.node_addresses`` entry, else its name."""
        return self.node_addresses.get(node, node)
