"""The five No Data reasons of S6 as PromQL: one expression per evidence layer, one row per node,
whose value is a reason code (not a metric value).

Codes, in priority order (the first that applies wins):

====  =====================  ==============================================================
code  reason                 recognised by
====  =====================  ==============================================================
5     collection failed      ``up == 0`` for a target of the layer's job on the node, or the
                             node (from the profile's node list) missing from ``up``; for a
                             shared target (the Mooncake master, an HA pair): no copy answers
6     segment host not       Store layer only, instead of 4: the node has no segment whose host is
      mapped                 its profile address while segments with hosts the profile does not
                             know exist (fix ``cluster.node_addresses``; the data may be there)
4     uninitialised          target up, but the layer's presence series has no sample in the
                             window (feature off, never exported, not warmed up); GPU layers:
                             no GPU reports at the window end (never exported, or every GPU gone)
100N  GPU missing (k of N)   GPU layers only: the target is up and k GPUs report at the window end,
+k                           fewer than the profile's N = ``cluster.gpus_per_node`` (S22); the
                             code carries both counts so the value mapping prints "k of N"
3     insufficient samples   the presence series holds fewer samples than
                             ``insufficient_samples_share x $__range_s / sample interval`` (the
                             source's ``sample_interval``: the spacing the central store keeps,
                             the scrape interval unless the profile says otherwise)
1     no traffic             the engine's token counter did not increase (or never appeared)
2     no I/O                 the layer's read/write counters did not increase (or never appeared)
0     ok                     none of the above
====  =====================  ==============================================================

Shape of every layer's expression (``B`` = one series per node, value irrelevant)::

    c5 or on(node) ((c3_or_enough or on(node) (B * 0 + 4)) != -1) [or on(node) c_idle] or on(node) (B * 0)

and for a GPU layer (``k`` = the node's GPUs reporting, ``N`` = the profile's GPUs per node)::

    c5 or on(node) (((k + 100N) or on(node) (B * 0 + 4)) < 101N) or on(node) c3 or on(node) (B * 0)

``or`` keeps its left side and adds right-side rows for nodes not yet present, so each node gets
exactly one row carrying the first reason that applies. Two reasons that never meet on one node
(uninitialised needs the presence series absent, insufficient samples and GPU missing need it) share one
branch, so the series they read is read once: the branch gives every node with that series a value, and a
comparison at its end drops the nodes neither reason applies to. Every branch ends with the label set
``{node}`` only. Activity counters count a series created inside the window as activity (they
appear only at their first event). The profile's node list enters through the node inventory series
(``queries.inventory``: one recording rule per profile node, ``max by (node) (inventory) * 0 + 5``),
not as text, so the query is the same size at any node count: the profile is the source of truth of
what should exist, so a node missing from ``up`` is reported, not silently dropped. That is not
zero-filling (S7): the constant is a reason code, never a value of the measured quantity. Without
the inventory recorded (rule file not loaded) a node missing from ``up`` has no row at all.

The Now row's node x layer matrix (S26) reads the same codes *recorded*: one recording rule per layer
(``dashgen rules``, group ``dashgen-<profile>-layer-health``) writes
``node:dashgen_layer_reason:code{node, layer="<layer key>"}`` from :func:`reason_code` over the last
``RECORDED_WINDOW_SECONDS`` for every node, and the matrix reads the newest recorded value. The raw
expressions select every engine and GPU series of the deployment several times; on open at 1,024 GPUs
they were half of the dashboard's query time (0.35 s of 0.71 s), growing with the GPU count, while a
recorded code is one short series per node and layer. The price: the matrix's window is fixed (the last
15 minutes, "now"), not the dashboard's range, and without the rule file loaded its layer cells are
empty (the Collector column is read live); the Missing-data reasons table computes the same codes live
over the dashboard's range.

Known limits: the node list is not narrowed by ``$node`` (a node missing from ``up`` cannot be
picked in that variable, which is built from ``up``); ``up`` is read at the window end, so a target
that failed earlier in the window shows as insufficient samples, not collection failed; sample
counts are the minimum over the node's series (one sparse GPU or rank marks the whole node). The
value mappings print "k of N" for N up to ``MAX_GPUS_PER_NODE`` (the mapping is one list for every
profile); a larger node reads "GPU missing" without the counts. A GPU that vanished inside the
window still holds samples, so it also lowers the sample count: GPU missing is checked first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from dashgen_queries import diffusion as df
from dashgen_queries import hicache as sg
from dashgen_queries import inventory as inv
from dashgen_queries import mooncake as mc
from dashgen_queries import node_exporter as fs
from dashgen_queries import store_tent as tq
from dashgen_queries.exported import written
from dashgen_queries.gpu import GpuSource, gpu_sources, gpus_seen
from dashgen_queries.promql import (
    agg,
    job,
    matcher,
    newest_per_node,
    node_var,
    scoped_job,
    selector,
    window_moved,
)
from dashgen_queries.sglang import logging_rank_matchers, node_first_rank_matchers

from dashgen.deployment.profile import TEXT, VIDEO, Profile
from dashgen.exporters.availability import source_switch
from dashgen.render.states import Beyond, States

OK, NO_TRAFFIC, NO_IO, INSUFFICIENT, UNINITIALISED, FAILED, UNMAPPED, GPU_MISSING = 0, 1, 2, 3, 4, 5, 6, 7

REASONS: dict[int, tuple[str, str]] = {
    FAILED: ("collection failed", "red"),
    UNMAPPED: ("segment host not mapped", "purple"),
    UNINITIALISED: ("uninitialised", "orange"),
    INSUFFICIENT: ("insufficient samples", "yellow"),
    NO_TRAFFIC: ("no traffic", "blue"),
    NO_IO: ("no I/O", "blue"),
    OK: ("ok", "green"),
}
PRIORITY = (FAILED, UNMAPPED, UNINITIALISED, GPU_MISSING, INSUFFICIENT, NO_TRAFFIC, NO_IO, OK)
# GPU missing is not one code but 100 x expected + seen (``gpu_missing_code``): the cell tells "k of N".
GPU_MISSING_TEXT, GPU_MISSING_COLOUR = "GPU missing", "dark-red"
GPU_MISSING_BASE = 100
MAX_GPUS_PER_NODE = 16  # the value mappings print "k of N" up to this many GPUs per node (HGX-2 / DGX-2)


def gpu_missing_code(seen: int, expected: int) -> int:
    """The cell value of a node where ``seen`` of ``expected`` GPUs report."""
    if not 0 < seen < expected:
        raise ValueError(f"GPU missing needs 0 < seen < expected, got {seen} of {expected}")
    return GPU_MISSING_BASE * expected + seen


@dataclass(frozen=True)
class Layer:
    """One evidence layer as the reasons table checks it.

    ``presence`` is a selector whose samples prove the layer is initialised and whose sample count
    is compared with one sample per ``sample_seconds`` (the source's sample interval;
    ``scrape_seconds`` is only shown); ``activity`` are counters whose increase (or creation) in the
    window proves traffic (``idle_code`` 1) or I/O (``idle_code`` 2); ``idle_code`` 0 means the
    layer has no such notion. ``per_node_target`` is False for a source scraped from one place for
    all nodes (the Mooncake master): its ``up`` applies to every node and its series are mapped to
    nodes by ``node_from`` (a function wrapping an expression in the mapping); ``unmapped`` selects
    the series no node maps to that have a sample in the window, whose presence turns "uninitialised"
    into "segment host not mapped".
    ``gpus_seen`` (GPU layers) counts the node's GPUs reporting at the window end; with it the layer is
    uninitialised when none reports and "GPU missing" when fewer than ``expected_gpus`` do.
    """

    key: str
    title: str
    job: str
    sample_seconds: float
    presence: str
    activity: tuple[str, ...] = ()
    idle_code: int = OK
    per_node_target: bool = True
    node_from: Callable[[str], str] | None = None
    base_job: str = ""
    scrape_seconds: float = 0.0
    unmapped: str | None = None
    gpus_seen: str | None = None
    expected_gpus: int = 0
    switch: str = ""  # what an uninitialised layer needs switched on (the exporter table's, S35); "" = nothing
    source: str = ""  # the profile source whose series the layer reads (``[sources.<name>]``)


def expected_nodes(profile: Profile, code: int = FAILED) -> str:
    """The profile's nodes as series ``{node="<name>"} code``, read from the recorded node inventory."""
    return inv.expected_nodes(profile, code)


def _up(profile: Profile, job: str, *, selected: bool = True) -> str:
    matchers = [scoped_job(profile, job)]
    if selected:
        matchers.append(node_var(profile))
    return selector("up", *matchers)


def node_base(profile: Profile, job: str) -> str:
    """One series per node: the selected nodes with a target of ``job`` in ``up``, plus the profile's
    nodes missing from ``up``; values are not meaningful (multiply by 0)."""
    node = profile.label("node")
    present = agg("max", [node], _up(profile, job))
    missing = f"({expected_nodes(profile)} unless on({node}) {_up(profile, job, selected=False)})"
    return f"({present} or on({node}) {missing})"


def collection_failed(profile: Profile, layer: Layer) -> str:
    """Code 5: a failed scrape (``up == 0``) or the target gone from ``up``. A shared target (``per_node_target``
    False, e.g. the Mooncake master's HA pair) fails every node only when none of its copies has ``up == 1``."""
    node = profile.label("node")
    if layer.per_node_target:
        failed = f"(({agg('min', [node], _up(profile, layer.job))} == 0) + {FAILED})"
        missing = f"({expected_nodes(profile)} unless on({node}) {_up(profile, layer.job, selected=False)})"
        return f"({failed} or on({node}) {missing})"
    nodes = f"({node_base(profile, layer.base_job)} * 0 + {FAILED})"
    # An HA pair (S32): every node fails only when no copy of the shared target answers; one dead copy fails
    # nothing while another is up (the node list written once).
    answering = f"({_up(profile, layer.job, selected=False)} == 1)"
    return f"({nodes} unless on() {answering})"


def _presence_counts(profile: Profile, layer: Layer) -> str:
    """``count_over_time`` of the presence series over the window, one series per source series,
    carrying the node the data belongs to."""
    counted = f"count_over_time({layer.presence}[$__range])"
    return counted if layer.node_from is None else layer.node_from(counted)


def _base(profile: Profile, layer: Layer) -> str:
    """Nodes the lower-priority branches evaluate. For a per-node target, nodes missing from ``up``
    already carry code 5, so the selected ``up`` rows suffice; the master's layer keeps the full list."""
    if layer.per_node_target:
        return agg("max", [profile.label("node")], _up(profile, layer.job))
    return node_base(profile, layer.base_job)


def any_unmapped(profile: Profile, layer: Layer) -> str | None:
    """A scalar: 1 when any series of the layer has a host no node maps to in the window, 0 when none
    does while the layer's target is in ``up``. The 0 is carried by ``up`` because VictoriaMetrics
    returns no sample (not NaN) for ``scalar()`` of nothing."""
    if layer.unmapped is None:
        return None
    label_job = profile.label("job")
    seen = agg("count", [label_job], layer.unmapped)
    target = agg("max", [label_job], _up(profile, layer.job, selected=False))
    return f"scalar(({seen} > bool 0) or on() ({target} * 0))"


def uninitialised(profile: Profile, layer: Layer) -> str:
    """Code 4 on every node of the layer's base: the rows the presence (or GPU) check leaves for the nodes it
    found nothing on (the target up, the presence series without a sample in the window; GPU layers: no GPU
    reporting at the window end).

    For a layer with a host mapping (the Store segments) the same rows read 6, "segment host not
    mapped", when series with unmapped hosts exist: 4 + 2 x any_unmapped. One branch for both keeps
    the mapping chain once in the query (VictoriaMetrics' query length limit, 25 nodes)."""
    rows = f"({_base(profile, layer)} * 0 + {UNINITIALISED})"
    unmapped = any_unmapped(profile, layer)
    return rows if unmapped is None else f"({rows} + {UNMAPPED - UNINITIALISED} * {unmapped})"


# What the presence check gives a node whose layer has enough samples: a value no reason code takes, dropped
# by the check's last comparison so that the node falls through to the lower-priority branches.
ENOUGH_SAMPLES = -1


def presence_checked(profile: Profile, layer: Layer) -> str:
    """Codes 4 (uninitialised) and 3 (insufficient samples) of a layer without GPU counts, reading its presence
    series once: a node with presence samples gets 3 when its sparsest series is below the expected count and
    ``ENOUGH_SAMPLES`` otherwise (dropped by the final ``!=``, the node falls through); a node of the base with no
    presence sample at all has no row on the left of ``or`` and gets :func:`uninitialised`'s 4 (or 6). The two
    reasons never meet on one node (one needs the presence series, the other its absence), so their order
    is kept. Reading the presence series once instead of once per reason halves that read, which on the
    HiCache Store layer at 1,024 GPUs was most of the reasons table's series fetched."""
    node = profile.label("node")
    low = f"({agg('min', [node], _presence_counts(profile, layer))} < bool {expected_samples(profile, layer)})"
    counted = f"(({low} * {INSUFFICIENT - ENOUGH_SAMPLES}) + {ENOUGH_SAMPLES})"
    return f"(({counted} or on({node}) {uninitialised(profile, layer)}) != {ENOUGH_SAMPLES})"


def gpus_checked(profile: Profile, layer: Layer) -> str:
    """Codes 4 (uninitialised) and 100 x N + k (GPU missing, S22) of a GPU layer, reading its GPUs reporting
    once: a node where k GPUs report gets 100 x N + k, kept by the final ``<`` only while k is below the
    profile's N = ``cluster.gpus_per_node`` (a full node falls through); a node of the base with no GPU
    reporting has no row on the left of ``or`` and gets :func:`uninitialised`'s 4. Uninitialised comes
    first in priority and the two never meet on one node."""
    node = profile.label("node")
    expected = layer.expected_gpus
    seen = f"({layer.gpus_seen} + {GPU_MISSING_BASE * expected})"
    return f"(({seen} or on({node}) {uninitialised(profile, layer)}) < {GPU_MISSING_BASE * expected + expected})"


def expected_samples(profile: Profile, layer: Layer) -> str:
    """The scalar sample count below which a window counts as insufficient (Grafana fills ``$__range_s``)."""
    return f"{profile.insufficient_samples_share:g} * $__range_s / {layer.sample_seconds:g}"


def insufficient_samples(profile: Profile, layer: Layer) -> str:
    """Code 3: the sparsest presence series of the node is below the expected sample count."""
    node = profile.label("node")
    fewest = agg("min", [node], _presence_counts(profile, layer))
    return f"(({fewest} < {expected_samples(profile, layer)}) * 0 + {INSUFFICIENT})"


def idle(profile: Profile, layer: Layer) -> str | None:
    """Code 1 or 2: no activity counter of the node increased in the window (absent counts as idle:
    these counters appear only at their first event; a series created inside the window is activity).
    ``window_moved`` keeps the series whose first-event-aware increase is above 0, reading each counter three
    times, not the five of the increase itself: the amount is not needed, only whether it is above 0."""
    if layer.idle_code == OK or not layer.activity:
        return None
    node = profile.label("node")
    expr = f"({_base(profile, layer)} * 0 + {layer.idle_code})"
    for counter in layer.activity:
        moved = agg("max", [node], window_moved(counter))  # any series moved; nothing is added
        expr = f"({expr} unless on({node}) {moved})"
    return expr


def reason_code(profile: Profile, layer: Layer) -> str:
    """The layer's reason code per node, highest-priority reason first."""
    node = profile.label("node")
    branches = [collection_failed(profile, layer)]
    if layer.gpus_seen is not None:  # GPU layers: the GPUs reporting decide 4 and GPU missing, before the samples
        branches += [gpus_checked(profile, layer), insufficient_samples(profile, layer)]
    else:
        branches.append(presence_checked(profile, layer))
    idle_branch = idle(profile, layer)
    if idle_branch:
        branches.append(idle_branch)
    branches.append(f"({_base(profile, layer)} * 0 + {OK})")
    return f" or on({node}) ".join(branches)


def reason_states() -> States:
    """Each code as its reason text and colour: the reasons, then every "GPU missing (k of N)" up to
    ``MAX_GPUS_PER_NODE``, and one range for larger nodes (Grafana takes the first mapping that matches)."""
    texts = {code: (text, color) for code, (text, color) in REASONS.items()}
    for expected in range(2, MAX_GPUS_PER_NODE + 1):
        for seen in range(1, expected):
            texts[gpu_missing_code(seen, expected)] = (f"{GPU_MISSING_TEXT} ({seen} of {expected})", GPU_MISSING_COLOUR)
    larger = Beyond(
        GPU_MISSING_BASE * (MAX_GPUS_PER_NODE + 1),
        GPU_MISSING_BASE * 10_000,
        f"{GPU_MISSING_TEXT} (fewer GPUs report than cluster.gpus_per_node)",
        GPU_MISSING_COLOUR,
    )
    return States.by_code(texts, larger)


# --- the layers -------------------------------------------------------------------------------


def engine_layer(profile: Profile) -> Layer:
    """SGLang engine: initialised when the KV pool size gauge exists; traffic = tokens processed. A
    video-generation pool's SGLang Diffusion engine (S25): its queue gauge (published from start-up), traffic =
    finished non-warm-up jobs. A mixed profile reads either family on each node (``__name__`` regex)."""
    src = profile.source("sglang")
    text, video = profile.has_kind(TEXT), profile.has_kind(VIDEO)
    presence = sg.presence(profile, sg.KV_MAX) if text else df.presence(profile)
    if text and video:
        presence = selector(
            "", matcher("__name__", "=~", f"{sg.KV_MAX}|{df.QUEUE}"), job(profile, "sglang"), node_var(profile)
        )
    traffic = (*((sg.traffic_counter(profile),) if text else ()), *((df.traffic_counter(profile),) if video else ()))
    title = "Engine (SGLang)" if text else "Engine (SGLang Diffusion)"
    return Layer(
        "engine",
        title,
        src.job,
        src.sample_interval_seconds,
        presence,
        traffic,
        NO_TRAFFIC,
        scrape_seconds=src.scrape_interval_seconds,
        switch=source_switch("sglang"),
        source=src.name,
    )


def hicache_host_layer(profile: Profile) -> Layer:
    """HiCache Host tier: initialised when the host pool gauge exists; I/O = GPU<->Host bytes (tokens where the
    stated SGLang version writes no byte counters, before 0.5.20)."""
    src = profile.source("hicache")
    io = (sg.BACKUP_BYTES, sg.LOAD_BACK_BYTES)
    if not all(written(profile, counter) for counter in io):
        io = (sg.BACKUP_TOKENS, sg.LOAD_BACK_TOKENS)
    return Layer(
        "hicache_host",
        "HiCache Host tier",
        src.job,
        src.sample_interval_seconds,
        sg.presence(profile, sg.HOST_TOTAL),
        # per-shard counters: one TP rank per node and DP group moves iff the node's cache moves
        tuple(sg.series(profile, counter, ranks) for counter in io for ranks in node_first_rank_matchers(profile)),
        NO_IO,
        scrape_seconds=src.scrape_interval_seconds,
        switch=source_switch("hicache"),
        source=src.name,
    )


def hicache_storage_layer(profile: Profile) -> Layer:
    """HiCache Store tier (engine side): a pre-seeded prefetch-reason counter (``sg.storage_presence``) proves
    the storage collector exists; I/O = Host->Store or Store->Host tokens."""
    src = profile.source("hicache_storage")
    return Layer(
        "hicache_storage",
        "HiCache Store tier (engine)",
        src.job,
        src.sample_interval_seconds,
        sg.storage_presence(profile),
        # logical counts: only the logging rank of each DP group counts (``on_logging_ranks``'s two selectors)
        tuple(
            sg.series(profile, counter, ranks)
            for counter in (sg.BACKUPED, sg.PREFETCHED)
            for ranks in logging_rank_matchers(profile)
        ),
        NO_IO,
        scrape_seconds=src.scrape_interval_seconds,
        switch=source_switch("hicache_storage"),
        source=src.name,
    )


def mooncake_layer(profile: Profile) -> Layer:
    """Mooncake Store as the master sees each node: its segments, mapped to nodes by the profile's
    segment hosts (S11). One master target for all nodes, so its ``up`` applies to every engine node;
    no per-node I/O counter exists. Segments with a host no node maps to are reported as such."""
    src = profile.source("mooncake_master")
    return Layer(
        "mooncake",
        "Store segments (Mooncake master)",
        src.job,
        src.sample_interval_seconds,
        mc.presence(profile),
        per_node_target=False,
        node_from=partial(mc.to_node, profile),
        base_job=profile.source("sglang").job,
        scrape_seconds=src.scrape_interval_seconds,
        unmapped=mc.unmapped_in_window(profile),
        source=src.name,
    )


def gpu_layer(profile: Profile, source: GpuSource) -> Layer:
    """Per-GPU telemetry of one exported source (GPM sampler or DCGM exporter): its GPUs reporting at the
    window end against ``cluster.gpus_per_node`` (none: uninitialised; fewer: GPU missing), and the sample
    count of its power series (or the first metric it collects)."""
    src = profile.source(source.key)
    return Layer(
        source.key,
        f"GPU ({source.name})",
        src.job,
        src.sample_interval_seconds,
        selector(source.presence_metric(), scoped_job(profile, src.job), node_var(profile)),
        scrape_seconds=src.scrape_interval_seconds,
        gpus_seen=gpus_seen(profile, source),
        expected_gpus=profile.gpus_per_node,
        source=src.name,
    )


def tent_layer(profile: Profile) -> Layer:
    """The Mooncake transfer engine's metrics server (TENT, one per process running an engine): its read-request
    counter proves the server runs (compiled in and switched on); I/O = transfer requests in either direction."""
    src = profile.source(tq.SOURCE)
    requests = tuple(selector(tq.REQUESTS[d], scoped_job(profile, src.job), node_var(profile)) for d in tq.DIRECTIONS)
    return Layer(
        "tent",
        "Transfer engine (TENT)",
        src.job,
        src.sample_interval_seconds,
        requests[0],
        requests,
        NO_IO,
        scrape_seconds=src.scrape_interval_seconds,
        switch=source_switch(tq.SOURCE),
        source=src.name,
    )


def disk_layer(profile: Profile) -> Layer:
    """Cache disks (node_exporter): initialised when the cache devices' counters exist; I/O = ops."""
    src = profile.source("node_exporter")
    title = "Cache disk (node_exporter)" if profile.has_kind(TEXT) else "Scratch disk (node_exporter)"  # S25
    return Layer(
        "disk",
        title,
        src.job,
        src.sample_interval_seconds,
        fs.disk(profile, fs.READS),
        (fs.disk(profile, fs.READS), fs.disk(profile, fs.WRITES)),
        NO_IO,
        scrape_seconds=src.scrape_interval_seconds,
        source=src.name,
    )


def layers(profile: Profile) -> list[Layer]:
    """The layers this profile exports, in reading order (engine first, disk last)."""
    found = []
    if profile.exported("sglang"):
        found.append(engine_layer(profile))
    if profile.exported("hicache"):
        found.append(hicache_host_layer(profile))
    if profile.exported("hicache_storage"):
        found.append(hicache_storage_layer(profile))
    if profile.exported("mooncake_master") and profile.exported("sglang"):
        found.append(mooncake_layer(profile))
    if profile.exported(tq.SOURCE):
        found.append(tent_layer(profile))
    found.extend(gpu_layer(profile, source) for source in gpu_sources(profile))
    if profile.exported("node_exporter") and profile.disks.has_cache_tier:
        found.append(disk_layer(profile))
    return found


# -- recorded for the Now row (S26) --------------------------------------------------------------------------

LAYER_REASON = "node:dashgen_layer_reason:code"
# One series per deployment (``vector(1)`` in the layer-health group): whether the rule evaluator runs this
# deployment's rule file is read from it alone, never by counting every node's recorded reasons.
EVALUATOR_HEARTBEAT = "deployment:dashgen_rule_evaluator:heartbeat"
LAYER_LABEL = "layer"
RECORDED_WINDOW_SECONDS = 900  # the matrix's "now": reasons over the last 15 minutes
# Prometheus' and vmalert's default evaluation interval: the rule file sets none, so the evaluator's applies.
RULE_INTERVAL_SECONDS = 60
RECORDED_LOOKBACK_INTERVALS = 3  # the newest recorded code counts while it is at most this many evaluations old
_GRAFANA_VARIABLE = re.compile(r"\$(?:\{\w+\}|[A-Za-z_]\w*)")  # $node, ${node}, $__range; not label_replace's $1


def recorded_reason_rule(profile: Profile, layer: Layer) -> str:
    """:func:`reason_code` as a recording rule evaluates it: every node (``$node`` = All) over the last
    ``RECORDED_WINDOW_SECONDS``. Raises ValueError if a Grafana variable would be left in the rule."""
    node = profile.label("node")
    window = RECORDED_WINDOW_SECONDS
    expr = (
        reason_code(profile, layer)
        .replace(node_var(profile), f'{node}=~".+"')
        .replace("$__range_s", f"{window}")
        .replace("$__range", f"{window}s")
    )
    left = _GRAFANA_VARIABLE.search(expr)
    if left:
        raise ValueError(f"the {layer.title} layer's reason code keeps a Grafana variable: {left.group(0)}")
    return expr


def recorded_lookback_seconds(profile: Profile) -> float:
    """How old the newest recorded code may be: a few evaluation intervals, plus the store's latency offset (S24).
    The one staleness bound of the Now row (S32): every matrix cell, the collector's silence and the rule
    evaluator's freshness read this number."""
    return RECORDED_LOOKBACK_INTERVALS * RULE_INTERVAL_SECONDS + profile.store.latency_offset_seconds


def recorded_reason(profile: Profile, layer: Layer) -> str:
    """The newest recorded reason code of each selected node for ``layer`` (one series per node)."""
    return newest_per_node(profile, LAYER_REASON, recorded_lookback_seconds(profile), f'{LAYER_LABEL}="{layer.key}"')
