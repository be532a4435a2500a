"""Validation of each section of a profile: cluster, pools, sources, labels, slo, capacity, disks, dashboard.

One function per section; each reads its table through a ``TableReader`` (so every error names
the file and the dotted field), checks what the section alone can check, and returns the value.
Checks that span sections (pools against the cluster, capacity against pools and sources) take
the already parsed values as arguments.
"""

from __future__ import annotations

import re
from string import Formatter

from dashgen.deployment.checks import (
    JOB_FORM,
    JOB_RE,
    MOUNT_FORM,
    MOUNT_RE,
    NODE_FORM,
    NODE_RE,
    first_duplicate,
    name_problem,
    re2_problem,
)
from dashgen.deployment.model import (
    DEFAULT_LABELS,
    FEATURE_SOURCES,
    KNOWN_SOURCES,
    POOL_ROLES,
    SOURCE_STATUSES,
    TEXT,
    VIDEO,
    WORKLOAD_KINDS,
    Capacity,
    Cost,
    Disks,
    Pool,
    Slo,
    Source,
    Speculative,
    Store,
    source_status,
    spelled,
)
from dashgen.deployment.reader import TableReader, parse_duration
from dashgen.errors import ProfileError
from dashgen.exporters.availability import Stated, stated_problem

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}\Z")
WIDE_SPEC_RE = re.compile(r"\d{4,}")  # a node name pattern's width or precision of 1,000 or more


def parse_node_names(cluster: TableReader, nodes: int) -> tuple[str, ...]:
    if "node_names" in cluster.table:
        cluster.used.add("node_names")
        names = cluster.table["node_names"]
        if not isinstance(names, list):
            raise cluster.fail("node_names", f"expected a list of node names ({NODE_FORM})")
        if len(names) != nodes:
            raise cluster.fail("node_names", f"lists {len(names)} names but nodes = {nodes}")
        for index, name in enumerate(names):
            if problem := name_problem(name, NODE_RE, NODE_FORM):
                raise cluster.fail(f"node_names[{index}]", problem)
        if (repeated := first_duplicate(names)) is not None:
            raise cluster.fail("node_names", f"names must be unique; {repeated!r} is listed twice")
        return tuple(names)
    pattern = cluster.string("node_name_format", "node-{index:02d}")
    if len(pattern) > 128 or "{index" not in pattern:
        raise cluster.fail(
            "node_name_format", f"{pattern[:80]!r}: expected a short pattern with {{index}}, e.g. 'node-{{index:02d}}'"
        )
    try:
        # a width like {index:099999999} (or one read from {index}) pads each name to gigabytes before its check
        if any(spec and (WIDE_SPEC_RE.search(spec) or "{" in spec) for _, _, spec, _ in Formatter().parse(pattern)):
            raise cluster.fail(
                "node_name_format",
                f"{pattern[:80]!r}: a width of 1,000 or more, or one read from a field, gives no host name",
            )
        formatted: list[str] = []
        for index in range(nodes):  # each checked as it is made: a bad pattern stops at its first name
            name = pattern.format(index=index)
            if problem := name_problem(name, NODE_RE, NODE_FORM):
                raise cluster.fail("node_name_format", f"node {index}: {problem}")
            formatted.append(name)
    except (KeyError, ValueError, IndexError, AttributeError, TypeError) as exc:
        raise cluster.fail("node_name_format", f"cannot format with index: {exc}") from None
    if len(set(formatted)) != nodes:
        raise cluster.fail("node_name_format", "does not give a unique name per node (use {index})")
    return tuple(formatted)


def parse_node_addresses(cluster: TableReader, node_names: tuple[str, ...]) -> dict[str, str]:
    """``cluster.node_addresses``: node name -> segment host (IP or host name); a subset of the nodes is allowed."""
    table = cluster.table_at("node_addresses")
    addresses: dict[str, str] = {}
    known = set(node_names)
    for node, address in table.table.items():
        if node not in known:
            raise table.fail(node, "not a node of this profile (keys are the profile's node names)")
        if not isinstance(address, str) or not address.strip():
            raise table.fail(node, f"expected a non-empty address string, got {type(address).__name__}")
        if problem := name_problem(address.strip(), NODE_RE, NODE_FORM):
            raise table.fail(node, problem)
        addresses[node] = address.strip()
    effective = [addresses.get(node, node) for node in node_names]
    counts: dict[str, int] = {}
    for address in effective:
        counts[address] = counts.get(address, 0) + 1
    duplicates = sorted(a for a, n in counts.items() if n > 1)[:10]
    if duplicates:
        raise cluster.fail("node_addresses", f"addresses must be unique per node; repeated: {', '.join(duplicates)}")
    return addresses


def parse_pool(reader: TableReader) -> Pool:
    stated_role = reader.string("role", "unified")
    role = spelled(stated_role, POOL_ROLES)
    if role is None:
        raise reader.fail("role", f"{stated_role!r} is not one of {', '.join(POOL_ROLES)}")
    stated_kind = reader.string("kind", TEXT)
    kind = spelled(stated_kind, WORKLOAD_KINDS)
    if kind is None:
        raise reader.fail("kind", f"{stated_kind!r} is not one of {', '.join(WORKLOAD_KINDS)}")
    pool = Pool(
        name=reader.string("name", required=True),
        role=role,
        replicas=reader.integer("replicas", required=True),
        tp=reader.integer("tp", required=True),
        pp=reader.integer("pp", 1),
        kind=kind,
    )
    if kind == VIDEO and role != "unified":
        raise reader.fail(
            "role", f'{role!r}: a {VIDEO} pool (SGLang Diffusion) has no prefill / decode split; use role = "unified"'
        )
    if kind == VIDEO and pool.pp != 1:
        raise reader.fail("pp", f"{pool.pp}: a {VIDEO} pool has no pipeline parallelism (pp = 1)")
    if not NAME_RE.match(pool.name):
        raise reader.fail(
            "name", f"{pool.name[:40]!r} must be lower-case letters, digits and '-', at most 31 characters"
        )
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
    if total == nodes * gpus_per_node:
        _check_packing(top, pools, nodes, gpus_per_node)
    if total != nodes * gpus_per_node:
        detail = " + ".join(f"{p.replicas} x TP{p.tp} x PP{p.pp}" for p in pools)
        raise top.fail(
            "pools",
            f"{detail} = {total} GPUs, but the cluster has {nodes} nodes x {gpus_per_node} = "
            f"{nodes * gpus_per_node} GPUs",
        )


def _check_packing(top: TableReader, pools: tuple[Pool, ...], nodes: int, gpus_per_node: int) -> None:
    """Each pool takes whole nodes, in order: replicas smaller than a node must fill their nodes, since two
    pools never share a node (the dashboards map every node to one pool)."""
    used = 0
    for index, pool in enumerate(pools):
        if pool.gpus_per_replica >= gpus_per_node:
            used += pool.replicas * (pool.gpus_per_replica // gpus_per_node)
            continue
        per_node = gpus_per_node // pool.gpus_per_replica
        if pool.replicas % per_node:
            free = (per_node - pool.replicas % per_node) * pool.gpus_per_replica
            raise ProfileError(
                top.path,
                f"pools[{index}].replicas",
                f"{pool.replicas} replicas of TP{pool.tp} x PP{pool.pp} leave {free} of {gpus_per_node} GPUs of "
                f"their last node free: pools cannot share a node, so use a multiple of {per_node} replicas",
            )
        used += pool.replicas // per_node
    if used != nodes:
        raise top.fail("pools", f"the pools take {used} whole nodes, but the cluster has {nodes}")


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
        parent = FEATURE_SOURCES.get(name)
        own_job = parent is None or defaults["job"] != KNOWN_SOURCES[parent]["job"]
        default_job = parsed[parent].job if parent and parent in parsed and not own_job else defaults["job"]
        if name not in reader.table:
            if not defaults["unstated"]:
                raise reader.fail(
                    name, "missing: every profile states each source as exported, not-exported or not-deployed"
                )
            parsed[name] = _unstated(name, defaults, default_job, parsed.get(parent) if parent else None, store)
            continue
        sub = reader.table_at(name)
        stated = sub.string("status", required=True)
        status = source_status(stated)
        if status is None:
            raise sub.fail("status", f"{stated!r} is not one of {', '.join(SOURCE_STATUSES)}")
        job = sub.string("job", default_job)
        if problem := name_problem(job, JOB_RE, JOB_FORM):
            raise sub.fail("job", problem)
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
        version, features, prefix = _stated(sub, name, parsed.get(parent) if parent else None)
        sub.reject_unknown()
        parsed[name] = Source(
            name,
            status,
            job,
            interval,
            seconds,
            defaults["what"],
            sample,
            sample_seconds,
            fields,
            version,
            features,
            prefix,
        )
    for feature, parent in FEATURE_SOURCES.items():
        if parsed[feature].deployed and not parsed[parent].deployed:
            raise reader.fail(f"{feature}.status", f"cannot be deployed while {parent} is not-deployed")
        if KNOWN_SOURCES[feature]["job"] != KNOWN_SOURCES[parent]["job"]:
            continue  # a collector with a server of its own (the transfer engine's) is scraped apart
        # A collector inside its parent's process is read on the parent's /metrics, by the parent's scrape: it has
        # no job, scrape failure or target of its own, and is read only where the parent is.
        if parsed[feature].job != parsed[parent].job:
            raise reader.fail(
                f"{feature}.job",
                f"{parsed[feature].job!r}: this collector runs inside {parent} and is scraped with it; "
                f"set job on [sources.{parent}] ({parsed[parent].job!r})",
            )
        if parsed[feature].exported and not parsed[parent].exported:
            raise reader.fail(
                f"{feature}.status",
                f"cannot be exported while {parent} is {parsed[parent].status}: its series are scraped from {parent}",
            )
    return parsed


def _unstated(name: str, defaults: dict[str, str], job: str, parent: Source | None, store: Store | None) -> Source:
    """A source the profile leaves out that may be left out (an exporter off by default): its ``unstated`` status
    (not deployed with its parent), default job and interval, and its parent's version and prefix."""
    version, prefix = (parent.version, parent.metric_prefix) if parent else ("", "")
    interval, seconds = "15s", parse_duration("15s")
    sample, sample_seconds = interval, seconds
    if store is not None and store.resolution_seconds > seconds:
        sample, sample_seconds = store.resolution, store.resolution_seconds
    # Not deployed where the process it runs in is not: a profile without the Store client runs no transfer engine.
    status = "not-deployed" if parent is not None and not parent.deployed else source_status(defaults["unstated"])
    if status is None:
        raise ValueError(f"{name}: the exporter table's unstated status {defaults['unstated']!r} is no source status")
    return Source(
        name, status, job, interval, seconds, defaults["what"], sample, sample_seconds, None, version, None, prefix
    )


def _stated(reader: TableReader, name: str, parent: Source | None) -> tuple[str, tuple[str, ...] | None, str]:
    """``version``, ``features`` and ``metric_prefix`` (S35), checked against the exporter table; a feature
    collector (HiCache) runs inside its parent's process and takes the parent's version and prefix."""
    if parent is not None:
        for key in ("version", "metric_prefix"):
            if key in reader.table:
                raise reader.fail(key, f"set it on [sources.{parent.name}]: this collector runs inside {parent.name}")
        version, prefix = parent.version, parent.metric_prefix
    else:
        version, prefix = reader.string("version", ""), reader.string("metric_prefix", "")
    features: tuple[str, ...] | None = None
    if "features" in reader.table:
        value = reader.value("features")
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise reader.fail("features", 'expected a list of the exporter\'s flags, e.g. ["--engine-metrics"]')
        features = tuple(value)
    problem = stated_problem(name, Stated(version, features, prefix))
    if problem is not None:
        raise reader.fail(*problem)
    return version, features, prefix


def _fields(reader: TableReader) -> tuple[str, ...] | None:
    """``fields``: the DCGM fields the exporter's CSV collects, or absent for its default-counters.csv."""
    if "fields" not in reader.table:
        reader.used.add("fields")
        return None
    value = reader.table["fields"]
    reader.used.add("fields")
    if not isinstance(value, list) or not all(
        isinstance(item, str) and re.match(r"^DCGM_[A-Z0-9_]+\Z", item) for item in value
    ):
        raise reader.fail("fields", 'expected a list of DCGM field names such as "DCGM_FI_DEV_XID_ERRORS"')
    return tuple(value)


def parse_labels(reader: TableReader) -> dict[str, str]:
    labels = dict(DEFAULT_LABELS)
    for key in list(reader.table):
        if key not in DEFAULT_LABELS:
            raise reader.fail(key, f"unknown label role; known roles are {', '.join(DEFAULT_LABELS)}")
        value = reader.string(key)
        if not re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*\Z", value):
            raise reader.fail(key, f"{value!r} is not a valid Prometheus label name")
        labels[key] = value
    return labels


TEXT_SLO_FIELDS = ("ttft_seconds", "tpot_seconds", "e2e_seconds")
VIDEO_SLO_FIELDS = ("job_latency_seconds",)


def parse_slo(reader: TableReader, kinds: tuple[str, ...] = (TEXT,)) -> Slo:
    """``[slo]``: the objective, and the thresholds of the profile's workload kinds (S25): TTFT / TPOT / E2E for
    text-generation pools, the job-latency bound for video-generation pools; a threshold of a kind the
    profile has no pool of is refused (a video pool has no TTFT)."""
    objective = reader.number("objective", required=True)
    assert objective is not None
    if not 0 < objective < 1:
        raise reader.fail("objective", f"must be a share between 0 and 1 (e.g. 0.99), got {objective}")
    for kind, fields in ((TEXT, TEXT_SLO_FIELDS), (VIDEO, VIDEO_SLO_FIELDS)):
        if kind in kinds:
            continue
        for key in fields:
            if key in reader.table:
                raise reader.fail(
                    key,
                    f"the profile has no {kind} pool, so this threshold has nothing to measure "
                    f"(pools' kind: {', '.join(kinds)})",
                )
    text, video = TEXT in kinds, VIDEO in kinds
    slo = Slo(
        ttft_seconds=(reader.number("ttft_seconds", required=True) or 0.0) if text else 0.0,
        e2e_seconds=(reader.number("e2e_seconds", required=True) or 0.0) if text else 0.0,
        tpot_seconds=(reader.number("tpot_seconds", required=True) or 0.0) if text else 0.0,
        objective=objective,
        window_days=reader.integer("window_days", 30),
        job_latency_seconds=(reader.number("job_latency_seconds", required=True) or 0.0) if video else 0.0,
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
    for key in (
        "global_segment_size",
        "host_cache_per_rank",
        "nvme_bucket_limit_per_rank",
        "nvme_physical_per_rank",
        "disk_nominal_size",
    ):
        if getattr(capacity, key) == 0:
            raise reader.fail(key, "0 bytes: a capacity must be positive (leave the field out where there is none)")
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


# A price per kWh above this is a unit slip (cents, or $/MWh), not a tariff.
MAX_USD_PER_KWH = 10.0


def parse_cost(reader: TableReader) -> Cost:
    """``[cost]``: ``usd_per_kwh`` (dollars per kWh of GPU energy) and optional ``usd_per_gpu_hour``."""
    cost = Cost(
        usd_per_kwh=reader.number("usd_per_kwh"),
        usd_per_gpu_hour=reader.number("usd_per_gpu_hour"),
    )
    reader.reject_unknown()
    if cost.usd_per_kwh is not None and cost.usd_per_kwh > MAX_USD_PER_KWH:
        raise reader.fail(
            "usd_per_kwh",
            f"{cost.usd_per_kwh:g} dollars per kWh is above {MAX_USD_PER_KWH:g}: is it cents or dollars per MWh?",
        )
    if cost.usd_per_gpu_hour is not None and cost.usd_per_kwh is None:
        raise reader.fail("usd_per_gpu_hour", "needs usd_per_kwh too: dollars per token add energy and GPU time")
    return cost


# SGLang's --speculative-algorithm values (server_args.py); NEXTN is read as EAGLE by the engine.
SPECULATIVE_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")


def parse_speculative(reader: TableReader, sources: dict[str, Source]) -> Speculative:
    """``[speculative]``: ``algorithm`` (one of SGLang's draft algorithms) and optional ``draft_tokens``."""
    algorithm = reader.string("algorithm", "")
    draft_tokens = reader.integer("draft_tokens", maximum=64) if "draft_tokens" in reader.table else None
    reader.reject_unknown()
    if algorithm and algorithm not in SPECULATIVE_ALGORITHMS:
        raise reader.fail("algorithm", f"{algorithm!r} is not one of SGLang's {', '.join(SPECULATIVE_ALGORITHMS)}")
    if draft_tokens is not None and not algorithm:
        raise reader.fail("draft_tokens", "needs algorithm: draft tokens without a draft algorithm")
    features = sources["sglang"].features if "sglang" in sources else None
    if algorithm and features is not None and "--speculative-algorithm" not in features:
        raise reader.fail(
            "algorithm",
            f"{algorithm} is stated but [sources.sglang] features does not list --speculative-algorithm",
        )
    return Speculative(algorithm=algorithm, draft_tokens=draft_tokens)


def parse_disks(reader: TableReader) -> Disks:
    disks = Disks(
        cache_device_regex=reader.string("cache_device_regex", "nvme[0-9]+n[0-9]+"),
        cache_mountpoint=reader.string("cache_mountpoint", ""),  # "": no KV cache disk tier
        model_mountpoint=reader.string("model_mountpoint", "/models"),
    )
    if problem := re2_problem(disks.cache_device_regex):
        raise reader.fail("cache_device_regex", f"{disks.cache_device_regex[:80]!r}: {problem}")
    for key in ("cache_mountpoint", "model_mountpoint"):
        if key == "cache_mountpoint" and not disks.cache_mountpoint:
            continue  # no cache disk tier
        if problem := name_problem(getattr(disks, key), MOUNT_RE, MOUNT_FORM):
            raise reader.fail(key, problem)
    reader.reject_unknown()
    return disks
