"""Validation of each section of a profile: cluster, pools, sources, labels, slo, capacity, disks, dashboard.

One function per section; each reads its table through a ``TableReader`` (so every error names
the file and the dotted field), checks what the section alone can check, and returns the value.
Checks that span sections (pools against the cluster, capacity against pools and sources) take
the already parsed values as arguments.
"""

from __future__ import annotations

import re

from dashgen.deployment.model import (
    DEFAULT_LABELS,
    FEATURE_SOURCES,
    KNOWN_SOURCES,
    POOL_ROLES,
    SOURCE_STATUSES,
    Capacity,
    DashboardSettings,
    Disks,
    Pool,
    Slo,
    Source,
    Store,
)
from dashgen.deployment.reader import TableReader, parse_duration
from dashgen.errors import ProfileError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")


def parse_node_names(cluster: TableReader, nodes: int) -> tuple[str, ...]:
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


def parse_node_addresses(cluster: TableReader, node_names: tuple[str, ...]) -> dict[str, str]:
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


def parse_pool(reader: TableReader) -> Pool:
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
    if not NAME_RE.match(pool.name):
        raise reader.fail("name", f"{pool.name!r} must be lower-case letters, digits and '-'")
    reader.reject_unknown()
    return pool


def check_pools(top: TableReader, pools: tuple[Pool, ...], nodes: int, gpus_per_node: int) -> None:
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


def _duration(reader: TableReader, key: str, default: str) -> tuple[str, float]:
    """A duration field that may also be "0s" (none)."""
    text = reader.string(key, default)
    if text == "0s":
        return text, 0.0
    try:
        return text, parse_duration(text)
    except ValueError as exc:
        raise reader.fail(key, f"{exc} (or '0s' for none)") from None


def parse_store(reader: TableReader) -> Store:
    """``[store]``: the central store's history resolution and latency offset (S24)."""
    resolution, resolution_seconds = _duration(reader, "resolution", "0s")
    offset, offset_seconds = _duration(reader, "latency_offset", "0s")
    reader.reject_unknown()
    return Store(resolution, resolution_seconds, offset, offset_seconds)


def parse_sources(reader: TableReader, store: Store | None = None) -> dict[str, Source]:
    """Each source's status, job and intervals. A source's sample interval (what the store keeps) is at
    least the store's resolution: a 30 s-deduplicated store holds one sample per 30 s of a 1 s source."""
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
        if store is not None and store.resolution_seconds > sample_seconds:
            sample, sample_seconds = store.resolution, store.resolution_seconds
        fields = _fields(sub) if name == "dcgm" else None
        sub.reject_unknown()
        parsed[name] = Source(name, status, job, interval, seconds, defaults["what"], sample, sample_seconds,
                              fields)
    for feature, parent in FEATURE_SOURCES.items():
        if parsed[feature].deployed and not parsed[parent].deployed:
            raise reader.fail(f"{feature}.status", f"cannot be deployed while {parent} is not-deployed")
    return parsed


def _fields(reader: TableReader) -> tuple[str, ...] | None:
    """``fields``: the DCGM fields the exporter's CSV collects, or absent for its default-counters.csv."""
    if "fields" not in reader.table:
        reader.used.add("fields")
        return None
    value = reader.table["fields"]
    reader.used.add("fields")
    if not isinstance(value, list) or not all(isinstance(item, str) and re.match(r"^DCGM_[A-Z0-9_]+$", item)
                                                for item in value):
        raise reader.fail("fields", "expected a list of DCGM field names such as \"DCGM_FI_DEV_XID_ERRORS\"")
    return tuple(value)


def parse_labels(reader: TableReader) -> dict[str, str]:
    labels = dict(DEFAULT_LABELS)
    for key in list(reader.table):
        if key not in DEFAULT_LABELS:
            raise reader.fail(key, f"unknown label role; known roles are {', '.join(DEFAULT_LABELS)}")
        value = reader.string(key)
        if not re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", value):
            raise reader.fail(key, f"{value!r} is not a valid Prometheus label name")
        labels[key] = value
    return labels


def parse_slo(reader: TableReader) -> Slo:
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


def parse_capacity(
    reader: TableReader, pools: tuple[Pool, ...], gpus_per_node: int, sources: dict[str, Source]
) -> Capacity:
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


def parse_disks(reader: TableReader) -> Disks:
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


def parse_dashboard(reader: TableReader) -> DashboardSettings:
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
