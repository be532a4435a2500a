"""Cache evidence: the first data group. Three per-node tables read in order (domain.md layout 1):
(a) occupancy of each tier at the window end, (b) in the same window final reuse and physical
reads/writes, (c) the missing-data reason of every evidence layer; beside them the Store capacity,
prefetch and capacity-anatomy panels of ``panels/store_capacity.py``.

Rules held here: one row per node with ``All`` (S2); nothing added across nodes or PP stages, no
total row, no footer sum (S3); absent is never zero (S7); every column names its tier, direction
and unit, since table cells carry no per-column unit (Grafana's schema admits no scalar overrides).
"""

from __future__ import annotations

from dashgen_panels import store_capacity
from dashgen_panels.node_table import per_node_table
from dashgen_queries import hicache as sg
from dashgen_queries import mooncake as mc
from dashgen_queries import nodata
from dashgen_queries import node_exporter as fs
from dashgen_queries.inventory import INVENTORY
from dashgen_queries.promql import WINDOW, divide, newest_sample_age, scale

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, split_rows

TITLE = "Cache evidence"
WORKLOADS = (TEXT, VIDEO)  # S25: the workload kinds this group serves (dashgen.dashboard)
NO_CACHE_TITLE = "Missing data and freshness"  # the group of a deployment without text-generation pools
KEY = "cache_evidence"
NOT_SPLITTABLE = "N/A: replica-level, not per node (S14)"
ABSENT_NOTE = (
    "An empty cell (shown as the No Data text) means the series is absent: counters appear only at "
    "their first event, so absent is not 0 (S7); the Missing-data reasons table says why"
)


def occupancy_columns(profile: Profile) -> list[tuple[str, str]]:
    columns = []
    if profile.exported("sglang"):
        columns.append(("GPU KV used+evictable (% of max_total_num_tokens)", sg.gpu_kv_occupancy_pct(profile)))
    if profile.exported("hicache"):
        columns.append(("Host KV used (% of host tokens)", sg.host_occupancy_pct(profile)))
    if profile.exported("mooncake_master"):
        columns.append(("Store allocated (% of node's mounted segments)", mc.per_node_occupancy_pct(profile)))
        columns.append(("Store allocated (GiB)", mc.per_node_gib(profile, mc.ALLOCATED)))
    if profile.exported("node_exporter") and profile.disks.has_cache_tier:
        columns.append(
            (
                f"Cache filesystem {fs.UNAVAILABLE_NAME} (% of {profile.disks.cache_mountpoint} size)",
                fs.unavailable_pct(profile),
            )
        )
    return columns


def occupancy_table(profile: Profile) -> PanelSpec:
    evidence = Evidence(
        layer="allocation (tier occupancy at the window end)",
        source="SGLang scheduler gauges kv_used_tokens, kv_evictable_tokens, max_total_num_tokens (one TP rank per "
        "PP stage); HiCache hicache_host_used_tokens / hicache_host_total_tokens; Mooncake master "
        "segment_allocated_bytes / segment_total_capacity_bytes mapped to nodes by segment host through "
        "the profile's node addresses (S11); "
        f"node_exporter node_filesystem_avail_bytes / size_bytes on {profile.disks.cache_mountpoint}. Only the tiers "
        "this deployment exports have a column",
        quantity="instant values at the end of the dashboard window, one row per node and PP stage: GPU KV "
        "(used + evictable) / pool size; Host used / host pool; Store allocated / the node's mounted segments, "
        "and allocated GiB; cache filesystem not available to the cache process / size (1 - avail / size, root-"
        "reserved blocks included; the 'used' of size - free is a different number)",
        limit="occupancy is not reuse: a full tier proves nothing about hits. Tokens (SGLang) and bytes (Mooncake) "
        "are different units and are not compared (no bytes-per-token factor is exported). Store cells take "
        "the segments whose host is the node's address in the profile (cluster.node_addresses, else the node "
        "name); a segment with any other host is in no row (never mis-attributed) and is counted in 'Store "
        "segments not mapped to a node'. Under DP attention the DP groups' pools are added before dividing, "
        "the TP ranks of a group read once. Rows are never added up across nodes or PP stages (S3). " + ABSENT_NOTE,
    )
    return per_node_table(
        profile, "occupancy", "Tier occupancy at window end, per node", occupancy_columns(profile), evidence
    )


# The last minutes beside the window totals (S34): the Now row's "now" (nodata.RECORDED_WINDOW_SECONDS).
RECENT_WINDOW = f"{nodata.RECORDED_WINDOW_SECONDS}s"
RECENT_TITLE = f"last {nodata.RECORDED_WINDOW_SECONDS // 60} min"


def reuse_columns(profile: Profile, topology: Topology) -> list[tuple[str, str]]:
    tiers = [("gpu", "GPU")]
    if profile.exported("hicache"):
        tiers.append(("host", "Host"))
    if profile.exported("hicache_storage"):
        tiers.append(("store", "Store"))
    columns = [("Prefill input, stage scheduler (tokens)", sg.stage_reuse(profile, "input"))]
    for tier, name in tiers:
        mode = sg.TIERS[tier][0]
        columns.append((f"Final reuse from {name}, stage scheduler (tokens)", sg.stage_reuse(profile, mode)))
    # S34: each tier's share of the prefill input over the window and over the last 15 minutes side by side, so a
    # recent collapse is not diluted by an hour of health
    for tier, name in tiers:
        mode = sg.TIERS[tier][0]
        for title, window in (("window", WINDOW), (RECENT_TITLE, RECENT_WINDOW)):
            columns.append(
                (
                    f"Reuse share from {name}, stage scheduler, {title} (%)",
                    scale(divide(sg.stage_reuse(profile, mode, window), sg.stage_reuse(profile, "input", window)), 100),
                )
            )
    for tier, name in tiers:
        columns.append(
            (f"Final reuse from {name}, request-level (tokens)", sg.request_reuse(profile, topology, sg.TIERS[tier][1]))
        )
    if profile.exported("hicache"):
        columns += [
            ("GPU→Host backup (GiB)", sg.shard_bytes_gib(profile, sg.BACKUP_BYTES)),
            ("Host→GPU load-back (GiB)", sg.shard_bytes_gib(profile, sg.LOAD_BACK_BYTES)),
        ]
        columns += [
            (f"GPU KV dropped before Host backup, {reason} (tokens)", sg.dropped_tokens(profile, reason))
            for reason in sg.DROPPED_REASONS
        ]
    if profile.exported("hicache_storage"):
        columns += [
            ("Store query hit, engine L3 lookup (tokens)", sg.logical_tokens(profile, sg.PREFETCH_HIT)),
            ("Host→Store backed-up (tokens)", sg.logical_tokens(profile, sg.BACKUPED)),
            ("Store→Host prefetched (tokens)", sg.logical_tokens(profile, sg.PREFETCHED)),
            ("Host→Store dropped before backup (tokens)", sg.logical_tokens(profile, sg.BACKUP_DROPPED)),
        ]
    return columns


def reuse_table(profile: Profile, topology: Topology) -> PanelSpec:
    entries = ", ".join(sg.entry_nodes(topology))
    evidence = Evidence(
        layer="engine final reuse and physical transfer (same window)",
        source="SGLang: prefill_effective_tokens_total{mode} (scheduler of each PP stage, one TP rank); "
        "cached_tokens_total{cache_source} (tokenizer, request-level); hicache_backup_bytes_total and "
        "load_back_bytes_total (per-shard bytes, TP ranks summed); hicache_dropped_tokens_total{reason}; "
        "storage_prefetch_hit_tokens_total, backuped_tokens_total, prefetched_tokens_total, "
        "hicache_backup_dropped_tokens_total (logical, one TP rank)",
        quantity="increase over the dashboard window ($__range), one row per node and PP stage. Final reuse per "
        "tier is what the engine reports as reused at prefill (S9). "
        "'GPU KV dropped before Host backup' (hicache_dropped_tokens_total) is device KV destroyed without a Host "
        "copy, one column per reason, never added (S30): "
        + "; ".join(f"{reason} {meaning}" for reason, meaning in sg.DROPPED_REASONS.items())
        + ". It is NOT Host eviction (S10)",
        limit=f"a prefetch is an attempt, not a reuse: prefetched tokens may be dropped afterwards (S9). Each PP "
        "stage counts the same request once, so rows are never added (S3). Request-level reuse comes from the "
        f"tokenizer of each replica's entry node ({entries}) and has no node or rank label: other nodes show "
        f"'{NOT_SPLITTABLE}' (the query's marker value -1, never a count) instead of a faked split (S14). "
        + ABSENT_NOTE,
        notes="Under DP attention the DP groups of a stage are added (disjoint requests), the TP ranks of a group "
        "read once. Store reuse is never split by Store node (the master's hit counter has no storage-node label). "
        "Directions: GPU→Host backup is D2H bytes (hicache_backup_bytes_total), Host→GPU load-back is H2D "
        "bytes, Host→Store backed-up is acknowledged L3 writes (backuped_tokens_total), Store→Host prefetched is L3 "
        "reads (prefetched_tokens_total) (S8). 'Store query hit' (storage_prefetch_hit_tokens_total) is the "
        "metadata layer: tokens an L3 query found in the Store before any allocation or transfer — a lookup, not a "
        "transfer and not a reuse. 'Host→Store dropped before backup' (hicache_backup_dropped_tokens_total) is "
        "backup tokens that never reached the Store. 'Reuse share from <tier>' is that tier's stage-scheduler final "
        f"reuse / the stage's prefill input, in %, over the window and over the {RECENT_TITLE} side by side (S34): a "
        "recent collapse shows in the second while an hour of health still holds up the first. Counters that appear "
        "only at their first event (cached_tokens_total, the two byte counters, dropped, backed-up and prefetched "
        "tokens) count a series created inside the window from 0, so its first event is kept; a reset after "
        "creation inside the window can undercount by the creation value; prefill_effective_tokens_total is "
        "pre-seeded and uses the plain increase",
    )
    marker = {"type": "value", "options": {str(sg.NOT_SPLITTABLE): {"text": NOT_SPLITTABLE, "index": 0}}}
    return per_node_table(
        profile,
        "reuse_io",
        "Same-window final reuse and physical reads/writes, per node",
        reuse_columns(profile, topology),
        evidence,
        extra_mappings=(marker,),
        unit="short",
        decimals=None,
    )


def reasons_table(profile: Profile) -> PanelSpec:
    layers = nodata.layers(profile)
    columns = [(layer.title, nodata.reason_code(profile, layer)) for layer in layers]
    share = f"{profile.insufficient_samples_share:g}"
    evidence = Evidence(
        layer="collection health (missing-data reasons, S6)",
        source="the scraper's up{job} per node, each layer's own series ("
        + "; ".join(
            f"{layer.title}: presence {layer.presence.split('{')[0]}"
            + (f", uninitialised: {layer.switch}" if layer.switch else "")  # S35: name the switch
            for layer in layers
        )
        + ") and the profile's node list, read from the recorded node inventory "
        f"({INVENTORY}: one rule per node in rules/{profile.name}.yml)",
        quantity="one row per node, one column per evidence layer; each cell is the first reason that applies, in "
        "priority order: collection failed (up == 0, or the target missing from up) > segment host not mapped "
        "(Store layer) > uninitialised (target up, series absent in the window; GPU layers: no GPU reporting at the "
        "window end) > GPU missing (GPU layers: fewer (node, GPU) series than cluster.gpus_per_node, shown "
        "'GPU missing (k of N)', S22) > insufficient samples (fewer "
        f"than {share} x window / sample interval) > no traffic (engine token counter flat or "
        "absent) / no I/O (the layer's read/write counters flat or absent) > ok",
        limit="the codes are reason codes, not metric values: building rows from the profile's node list (the "
        "recorded inventory) is not zero-filling (S7). 'segment host not mapped' "
        "means fix the profile, not that the Store is empty; "
        "'ok' means the layer can be read, not that its numbers are good",
        notes="Without the rule file loaded (vmalert or Prometheus) there is no inventory, and a node missing from up "
        "then has no row at all. Nodes missing from up are listed even when not selected in $node (a gone node "
        "cannot be selected). A counter created inside the window is activity, not no I/O. Segment host not "
        "mapped: no segment with the node's profile address, while segments with hosts the profile does not know "
        "exist. Scrape interval and one sample expected per: "
        + "; ".join(f"{layer.title} {layer.scrape_seconds:g} s, {layer.sample_seconds:g} s" for layer in layers)
        + ". The sample interval is the spacing the central store keeps, the scrape interval unless the profile "
        "sets sample_interval, e.g. for an exporter that collects more slowly than it is scraped or a store that "
        "deduplicates. up is read at the window end: a target that failed earlier shows as insufficient samples. "
        "The sample count is the node's sparsest series. The Store segment layer depends on the single master "
        "target and on the profile's segment hosts (cluster.node_addresses, else node names, recorded in the "
        "inventory's segment_host label) (S11)",
    )
    return per_node_table(
        profile,
        "reasons",
        "Missing-data reasons per node and evidence layer",
        columns,
        evidence,
        stage=False,
        extra_mappings=nodata.reason_states().mappings(),
        decimals=0,
        cells="color-text",
    )


def expected_lag(profile: Profile, layer: nodata.Layer) -> float:
    """How old the newest sample of a layer may be on a healthy store: one stored sample interval plus the
    store's latency offset (S24)."""
    return layer.sample_seconds + profile.store.latency_offset_seconds


def freshness_table(profile: Profile) -> PanelSpec:
    node = profile.label("node")
    layers = nodata.layers(profile)
    columns = []
    for layer in layers:
        stamps = f"timestamp({layer.presence})"
        if layer.node_from is not None:
            stamps = layer.node_from(stamps)
        columns.append(
            (
                f"{layer.title}: newest sample age (s; expected at most {expected_lag(profile, layer):g})",
                newest_sample_age([node], stamps),
            )
        )
    worst = max(expected_lag(profile, layer) for layer in layers)
    evidence = Evidence(
        layer="collection health (freshness, S24)",
        source="each evidence layer's own presence series (the same as the Missing-data reasons table's), read "
        "with timestamp(); the profile's store settings (store.resolution "
        f"{profile.store.resolution}, store.latency_offset {profile.store.latency_offset})",
        quantity="per node and layer, the age in seconds of the newest stored sample at the end of the dashboard "
        "window: time() - max by (node) (timestamp(series)). Expected at most one stored sample interval plus "
        "the store's latency offset (each column header names its bound); orange past the largest bound, red "
        "past twice it",
        limit="a layer whose newest sample is older than the store's look-back (5 minutes by default) has no "
        "sample and so no age: its cell is empty and the Missing-data reasons table says why. The age is the "
        "store's view: a collector whose send queue is backed up delivers late, and its samples arrive with "
        "their scrape timestamps. Rows are never added up (S3)",
    )
    return per_node_table(
        profile,
        "freshness",
        "Newest sample age per node and evidence layer (s)",
        columns,
        evidence,
        stage=False,
        decimals=0,
        unit="s",
        thresholds=(("green", None), ("orange", worst), ("red", 2 * worst)),
        cells="color-text",
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Two rows: the three per-node evidence tables (and freshness); the Store's evidence (capacity, sources,
    prefetch). The capacity anatomy of S17 (limit, allocation, filesystem) is in ``reference``. A profile
    without a text pool (S25) has no cache tier: the missing-data and freshness tables stay, alone."""
    if not profile.has_kind(TEXT):
        return GroupSpec(key=KEY, title=NO_CACHE_TITLE, panels=(reasons_table(profile), freshness_table(profile)))
    tables = [
        occupancy_table(profile),
        reuse_table(profile, topology),
        reasons_table(profile),
        freshness_table(profile),
    ]
    side = store_capacity.panels(profile, topology)
    # the capacity anatomy (ANATOMY_KEYS) is reference material: the Reference group at the end shows it (S34)
    return split_rows(
        KEY,
        TITLE,
        [
            ("tables", TITLE, tables, False),
            (
                "store",
                "Cache evidence: Store capacity, sources and prefetch",
                [panel for panel in side if panel.key not in ANATOMY_KEYS],
                False,
            ),
        ],
    )


ANATOMY_KEYS = frozenset({f"{KEY}.capacity_limits", f"{KEY}.logical_allocation", f"{KEY}.filesystem_usage"})
