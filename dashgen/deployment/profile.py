"""Deployment profiles: read ``profiles/<name>.toml`` into a validated, immutable ``Profile``.

A profile is the only place a size, a label name, a job name or a threshold lives (S1).
Every error names the file and the dotted field, and loading writes nothing.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashgen.deployment.sizes import parse_size
from dashgen.errors import ProfileError

# Metric sources a profile may declare. ``job`` is the default scrape job; feature sources
# (HiCache, its storage layer) are collectors inside the SGLang process and share its job.
KNOWN_SOURCES: dict[str, dict[str, str]] = {
    "sglang": {"job": "sglang", "what": "SGLang engine (scheduler, tokenizer)"},
    "hicache": {"job": "sglang", "what": "SGLang HiCache GPU<->Host tier (--enable-hierarchical-cache)"},
    "hicache_storage": {"job": "sglang", "what": "SGLang HiCache Host<->Store tier (storage backend)"},
    "mooncake_master": {"job": "mooncake-master", "what": "Mooncake Store master"},
    "mooncake_client": {"job": "mooncake-client", "what": "Mooncake Store client (incl. SSD metrics)"},
    "gateway": {"job": "gateway", "what": "SGLang model gateway (smg)"},
    "dcgm": {"job": "dcgm", "what": "NVIDIA DCGM exporter"},
    "gpm": {"job": "gpm", "what": "GPM sampler, 1 s per GPU (in-house)"},
    "node_exporter": {"job": "node", "what": "Prometheus node_exporter"},
}
FEATURE_SOURCES = {"hicache": "sglang", "hicache_storage": "sglang"}

SOURCE_STATUSES = ("exported", "not-exported", "not-deployed")
POOL_ROLES = ("unified", "prefill", "decode")

DEFAULT_LABELS: dict[str, str] = {
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

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")
_DURATION_RE = re.compile(r"^([0-9]+)(ms|s|m|h)$")
_DURATION_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> float:
    """Seconds from a Prometheus-style duration with one unit (``"1s"``, ``"30s"``, ``"5m"``)."""
    match = _DURATION_RE.match(text)
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"expected a duration like '1s', '15s' or '5m', got {text!r}")
    return int(match.group(1)) * _DURATION_SECONDS[match.group(2)]


@dataclass(frozen=True)
class Source:
    """One metric source and what the deployment says about it (S15)."""

    name: str
    status: str
    job: str
    scrape_interval: str
    scrape_interval_seconds: float
    what: str
    sample_interval: str = ""
    sample_interval_seconds: float = 0.0

    def __post_init__(self) -> None:
        if not self.sample_interval:
            object.__setattr__(self, "sample_interval", self.scrape_interval)
            object.__setattr__(self, "sample_interval_seconds", self.scrape_interval_seconds)

    @property
    def exported(self) -> bool:
        return self.status == "exported"

    @property
    def deployed(self) -> bool:
        return self.status != "not-deployed"


@dataclass(frozen=True)
class Pool:
    """A group of identical engine replicas (the whole cluster, or a prefill / decode pool)."""

    name: str
    role: str
    replicas: int
    tp: int
    pp: int

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def gpus(self) -> int:
        return self.gpus_per_replica * self.replicas


@dataclass(frozen=True)
class Slo:
    """Service-level objective thresholds (histogram bucket bounds, not averages)."""

    ttft_seconds: float
    e2e_seconds: float
    tpot_seconds: float
    objective: float
    window_days: int


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
class Disks:
    """Which block devices and mount points are the KV cache disks and the model disk."""

    cache_device_regex: str
    cache_mountpoint: str
    model_mountpoint: str


@dataclass(frozen=True)
class DashboardSettings:
    """Dashboard-level defaults: time range, refresh, and the target Grafana version."""

    grafana_version: str
    time_from: str
    refresh: str

    @property
    def schema_version(self) -> int:
        major, minor = (int(x) for x in self.grafana_version.split(".")[:2])
        return 42 if (major, minor) >= (12, 2) else 41


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
    extra: dict[str, Any] = field(default_factory=dict)
    # Node name -> the address its Mooncake Store clients register as the segment host (S11);
    # nodes not listed register under their node name.
    node_addresses: dict[str, str] = field(default_factory=dict)

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

    def source(self, name: str) -> Source:
        return self.sources[name]

    def exported(self, name: str) -> bool:
        return self.sources[name].exported

    def label(self, role: str) -> str:
        return self.labels[role]

    def node_address(self, node: str) -> str:
        """The segment host of ``node``'s Store clients: its ``cluster.node_addresses`` entry, else its name."""
        return self.node_addresses.get(node, node)


class _Reader:
    """Reads typed fields from a TOML table, raising ProfileError that names file and field."""

    def __init__(self, path: str, table: dict[str, Any], prefix: str = "") -> None:
        self.path = path
        self.table = table
        self.prefix = prefix
        self.used: set[str] = set()

    def name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def fail(self, key: str, message: str) -> ProfileError:
        return ProfileError(self.path, self.name(key), message)

    def _get(self, key: str, default: Any, required: bool) -> Any:
        self.used.add(key)
        if key not in self.table:
            if required:
                raise self.fail(key, "missing required field")
            return default
        return self.table[key]

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str:
        value = self._get(key, default, required)
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {type(value).__name__} {value!r}")
        return value

    def integer(self, key: str, default: int | None = None, *, required: bool = False, minimum: int = 1) -> int:
        value = self._get(key, default, required)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {type(value).__name__} {value!r}")
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def number(self, key: str, default: float | None = None, *, required: bool = False) -> float | None:
        value = self._get(key, default, required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number, got {type(value).__name__} {value!r}")
        if value <= 0:
            raise self.fail(key, f"must be positive, got {value}")
        return float(value)

    def size(self, key: str, *, required: bool = False) -> int | None:
        value = self._get(key, None, required)
        if value is None:
            return None
        try:
            return parse_size(value)
        except ValueError as exc:
            raise self.fail(key, str(exc)) from None

    def table_at(self, key: str, *, required: bool = False) -> _Reader:
        value = self._get(key, {}, required)
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {type(value).__name__}")
        return _Reader(self.path, value, f"{self.name(key)}.")

    def tables(self, key: str, *, required: bool = False) -> list[_Reader]:
        value = self._get(key, [], required)
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.fail(key, "expected an array of tables ([[...]])")
        if required and not value:
            raise self.fail(key, "needs at least one entry")
        return [_Reader(self.path, item, f"{self.name(key)}[{i}].") for i, item in enumerate(value)]

    def reject_unknown(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            raise self.fail(unknown[0], "unknown field (check the spelling; see profiles/README in the docs)")


def load_profile(path: str | Path) -> Profile:
    """Read and validate one profile file. Raises ProfileError naming the file and field."""
    path = Path(path)
    shown = str(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(shown, "<file>", "no such profile file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(shown, "<toml>", f"not valid TOML: {exc}") from None
    return profile_from_dict(raw, shown, expected_name=path.stem)


def profile_from_dict(raw: dict[str, Any], path: str, expected_name: str | None = None) -> Profile:
    """Validate a parsed profile mapping (the TOML document) and build the Profile."""
    top = _Reader(path, raw)
    name = top.string("name", required=True)
    if not _NAME_RE.match(name):
        raise top.fail("name", f"{name!r} must be lower-case letters, digits and '-', at most 31 characters")
    if expected_name is not None and name != expected_name:
        raise top.fail("name", f"{name!r} differs from the file name {expected_name!r}")
    title = top.string("title", required=True)
    description = top.string("description", "")
    share = top.number("insufficient_samples_share", 0.5)
    assert share is not None
    if share >= 1:
        raise top.fail("insufficient_samples_share", f"must be below 1, got {share}")

    cluster = top.table_at("cluster", required=True)
    nodes = cluster.integer("nodes", required=True)
    gpus_per_node = cluster.integer("gpus_per_node", required=True)
    node_names = _node_names(cluster, nodes)
    node_addresses = _node_addresses(cluster, node_names)
    cluster.reject_unknown()

    pools = tuple(_pool(reader) for reader in top.tables("pools", required=True))
    _check_pools(top, pools, nodes, gpus_per_node)

    sources = _sources(top.table_at("sources", required=True))
    labels = _labels(top.table_at("labels"))
    slo = _slo(top.table_at("slo", required=True))
    capacity = _capacity(top.table_at("capacity"), pools, gpus_per_node, sources)
    disks = _disks(top.table_at("disks"))
    dashboard = _dashboard(top.table_at("dashboard"))
    top.reject_unknown()
    return Profile(
        name=name,
        title=title,
        description=description,
        path=path,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        node_names=node_names,
        pools=pools,
        sources=sources,
        labels=labels,
        slo=slo,
        capacity=capacity,
        disks=disks,
        dashboard=dashboard,
        insufficient_samples_share=share,
        node_addresses=node_addresses,
    )


def _node_names(cluster: _Reader, nodes: int) -> tuple[str, ...]:
    if "node_names" in cluster.table:
        cluster.used.add("node_names")
        names = cluster.table["node_names"]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise cluster.fail("node_names", "expected a list of non-empty strings")
        if len(names) != nodes:
            raise cluster.fail("node_names", f"lists {len(names)} names but nodes = {nodes}")
        if len(set(names)) != len(names):
            raise cluster.fail("node_names", "names must be unique")
        return tuple(names)
    pattern = cluster.string("node_name_format", "node-{index:02d}")
    try:
        names = tuple(pattern.format(index=i) for i in range(nodes))
    except (KeyError, ValueError, IndexError) as exc:
        raise cluster.fail("node_name_format", f"cannot format with index: {exc}") from None
    if len(set(names)) != nodes:
        raise cluster.fail("node_name_format", "does not give a unique name per node (use {index})")
    return names


def _node_addresses(cluster: _Reader, node_names: tuple[str, ...]) -> dict[str, str]:
    """``cluster.node_addresses``: node name -> segment host (IP or host name); a subset of the nodes is allowed."""
    table = cluster.table_at("node_addresses")
    addresses: dict[str, str] = {}
    for node, address in table.table.items():
        if node not in node_names:
            raise table.fail(node, "not a node of this profile (keys are the profile's node names)")
        if not isinstance(address, str) or not address.strip():
            raise table.fail(node, f"expected a non-empty address string, got {address!r}")
        addresses[node] = address.strip()
    effective = [addresses.get(node, node) for node in node_names]
    duplicates = sorted({a for a in effective if effective.count(a) > 1})
    if duplicates:
        raise cluster.fail("node_addresses", f"addresses must be unique per node; repeated: {', '.join(duplicates)}")
    return addresses


def _pool(reader: _Reader) -> Pool:
    role = reader.string("role", "unified")
    if role not in POOL_ROLES:
        raise reader.fail("role", f"{role!r} is not one of {', '.join(POOL_ROLES)}")
    pool = Pool(
        name=reader.string("name", required=True),
        role=role,
        replicas=reader.integer("replicas", required=True),
        tp=reader.integer("tp", required=True),
        pp=reader.integer("pp", 1),
    )
    if not _NAME_RE.match(pool.name):
        raise reader.fail("name", f"{pool.name!r} must be lower-case letters, digits and '-'")
    reader.reject_unknown()
    return pool


def _check_pools(top: _Reader, pools: tuple[Pool, ...], nodes: int, gpus_per_node: int) -> None:
    names = [pool.name for pool in pools]
    if len(set(names)) != len(names):
        raise top.fail("pools", f"pool names must be unique, got {names}")
    for index, pool in enumerate(pools):
        per_replica = pool.gpus_per_replica
        fits = per_replica % gpus_per_node == 0 if per_replica >= gpus_per_node else gpus_per_node % per_replica == 0
        if not fits:
            raise ProfileError(
                top.path,
                f"pools[{index}]",
                f"TP x PP = {pool.tp} x {pool.pp} = {per_replica} GPUs per replica does not divide into nodes "
                f"of {gpus_per_node} GPUs",
            )
        nodes_per_replica = max(per_replica // gpus_per_node, 1)
        if per_replica > gpus_per_node and nodes_per_replica % pool.pp and pool.pp % nodes_per_replica:
            raise ProfileError(
                top.path,
                f"pools[{index}].pp",
                f"PP = {pool.pp} cannot be laid out over {nodes_per_replica} nodes per replica",
            )
    total = sum(pool.gpus for pool in pools)
    if total != nodes * gpus_per_node:
        detail = " + ".join(f"{p.replicas} x TP{p.tp} x PP{p.pp}" for p in pools)
        raise top.fail(
            "pools",
            f"{detail} = {total} GPUs, but the cluster has {nodes} nodes x {gpus_per_node} = "
            f"{nodes * gpus_per_node} GPUs",
        )


def _sources(reader: _Reader) -> dict[str, Source]:
    for key in reader.table:
        if key not in KNOWN_SOURCES:
            raise reader.fail(key, f"unknown source; known sources are {', '.join(KNOWN_SOURCES)}")
    parsed: dict[str, Source] = {}
    for name, defaults in KNOWN_SOURCES.items():
        if name not in reader.table:
            raise reader.fail(name, "missing: every profile states each source as exported, not-exported "
                                    "or not-deployed")
        sub = reader.table_at(name)
        status = sub.string("status", required=True)
        if status not in SOURCE_STATUSES:
            raise sub.fail("status", f"{status!r} is not one of {', '.join(SOURCE_STATUSES)}")
        parent = FEATURE_SOURCES.get(name)
        default_job = parsed[parent].job if parent and parent in parsed else defaults["job"]
        job = sub.string("job", default_job)
        default_interval = parsed[parent].scrape_interval if parent and parent in parsed else "15s"
        interval = sub.string("scrape_interval", default_interval)
        try:
            seconds = parse_duration(interval)
        except ValueError as exc:
            raise sub.fail("scrape_interval", str(exc)) from None
        # The spacing of the samples the central store keeps (after deduplication or downsampling);
        # the "insufficient samples" reason expects one sample per sample_interval.
        sample = sub.string("sample_interval", interval)
        try:
            sample_seconds = parse_duration(sample)
        except ValueError as exc:
            raise sub.fail("sample_interval", str(exc)) from None
        if sample_seconds < seconds:
            raise sub.fail("sample_interval", f"{sample} is shorter than the scrape interval {interval}")
        sub.reject_unknown()
        parsed[name] = Source(name, status, job, interval, seconds, defaults["what"], sample, sample_seconds)
    for feature, parent in FEATURE_SOURCES.items():
        if parsed[feature].deployed and not parsed[parent].deployed:
            raise reader.fail(f"{feature}.status", f"cannot be deployed while {parent} is not-deployed")
    return parsed


def _labels(reader: _Reader) -> dict[str, str]:
    labels = dict(DEFAULT_LABELS)
    for key in list(reader.table):
        if key not in DEFAULT_LABELS:
            raise reader.fail(key, f"unknown label role; known roles are {', '.join(DEFAULT_LABELS)}")
        value = reader.string(key)
        if not re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", value):
            raise reader.fail(key, f"{value!r} is not a valid Prometheus label name")
        labels[key] = value
    return labels


def _slo(reader: _Reader) -> Slo:
    objective = reader.number("objective", required=True)
    assert objective is not None
    if not 0 < objective < 1:
        raise reader.fail("objective", f"must be a share between 0 and 1 (e.g. 0.99), got {objective}")
    slo = Slo(
        ttft_seconds=reader.number("ttft_seconds", required=True) or 0.0,
        e2e_seconds=reader.number("e2e_seconds", required=True) or 0.0,
        tpot_seconds=reader.number("tpot_seconds", required=True) or 0.0,
        objective=objective,
        window_days=reader.integer("window_days", 30),
    )
    reader.reject_unknown()
    return slo


def _capacity(reader: _Reader, pools: tuple[Pool, ...], gpus_per_node: int, sources: dict[str, Source]) -> Capacity:
    capacity = Capacity(
        global_segment_size=reader.size("global_segment_size"),
        host_cache_per_rank=reader.size("host_cache_per_rank"),
        nvme_bucket_limit_per_rank=reader.size("nvme_bucket_limit_per_rank"),
        nvme_physical_per_rank=reader.size("nvme_physical_per_rank"),
        disk_nominal_size=reader.size("disk_nominal_size"),
        gpu_tdp_watts=reader.number("gpu_tdp_watts"),
    )
    reader.reject_unknown()
    if sources["hicache_storage"].deployed and capacity.global_segment_size is None:
        raise reader.fail("global_segment_size", "required when hicache_storage is deployed (S17)")
    if sources["hicache"].deployed and capacity.host_cache_per_rank is None:
        raise reader.fail("host_cache_per_rank", "required when hicache is deployed (S17)")
    if capacity.global_segment_size is not None:
        for pool in pools:
            if capacity.global_segment_size % pool.gpus_per_replica:
                raise reader.fail(
                    "global_segment_size",
                    f"{capacity.global_segment_size} bytes is the Store quota per replica and must divide "
                    f"evenly over TP x PP = {pool.gpus_per_replica} ranks of pool {pool.name!r}",
                )
    limit, physical = capacity.nvme_bucket_limit_per_rank, capacity.nvme_physical_per_rank
    if limit is not None and physical is not None and limit > physical:
        raise reader.fail(
            "nvme_bucket_limit_per_rank",
            f"limit {limit} bytes exceeds the physical size per rank {physical} bytes",
        )
    if physical is not None and capacity.disk_nominal_size is not None:
        per_node = physical * gpus_per_node
        if per_node > capacity.disk_nominal_size:
            raise reader.fail(
                "nvme_physical_per_rank",
                f"{gpus_per_node} ranks x {physical} bytes = {per_node} bytes per node exceeds the disk's "
                f"nominal size {capacity.disk_nominal_size} bytes",
            )
    return capacity


def _disks(reader: _Reader) -> Disks:
    disks = Disks(
        cache_device_regex=reader.string("cache_device_regex", "nvme[0-9]+n[0-9]+"),
        cache_mountpoint=reader.string("cache_mountpoint", "/mnt/kvcache"),
        model_mountpoint=reader.string("model_mountpoint", "/models"),
    )
    try:
        re.compile(disks.cache_device_regex)
    except re.error as exc:
        raise reader.fail("cache_device_regex", f"not a valid regular expression: {exc}") from None
    reader.reject_unknown()
    return disks


def _dashboard(reader: _Reader) -> DashboardSettings:
    version = reader.string("grafana_version", "12.3")
    if not re.match(r"^[0-9]+\.[0-9]+(\.[0-9]+)?$", version):
        raise reader.fail("grafana_version", f"expected a version like '12.3', got {version!r}")
    major = int(version.split(".")[0])
    if major < 11:
        raise reader.fail("grafana_version", f"dashgen targets Grafana 11.6 and newer, got {version}")
    settings = DashboardSettings(
        grafana_version=version,
        time_from=reader.string("time_from", "now-1h"),
        refresh=reader.string("refresh", "1m"),
    )
    reader.reject_unknown()
    return settings


def profiles_dir() -> Path:
    """``profiles/`` in the working directory when present, else the one next to the package."""
    here = Path.cwd() / "profiles"
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "profiles"


def discover_profiles(directory: Path | None = None) -> list[Path]:
    """Profile files in ``directory`` (default ``profiles/``), sorted by name."""
    directory = directory or profiles_dir()
    return sorted(directory.glob("*.toml"))


def load_profiles(names: list[str] | tuple[str, ...] = (), directory: Path | None = None) -> list[Profile]:
    """Load the named profiles (all when ``names`` is empty). Unknown names are an input error."""
    directory = directory or profiles_dir()
    available = {path.stem: path for path in discover_profiles(directory)}
    if not names:
        return [load_profile(path) for path in available.values()]
    missing = [name for name in names if name not in available]
    if missing:
        raise ProfileError(
            str(directory / f"{missing[0]}.toml"),
            "<file>",
            f"no such profile; available: {', '.join(available) or 'none'}",
        )
    return [load_profile(available[name]) for name in names]
