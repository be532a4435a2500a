"""What the demo generator knows about each metric: its type, who emits it (scope), its extra labels
and a value model; its source comes from ``dashgen.live.sources`` (the table validate-queries reads
too). Data only; the series are made in ``dashgen.demo.series``.

Scopes (the label contract of the metric catalogue, per source):

- ``gpu``           one series per GPU: DCGM (``gpu``, ``UUID``, ``device``, ``modelName``, ``Hostname``)
                    or GPM (``gpu``, ``uuid``)
- ``rank``          every engine rank (radix / HiCache and storage collectors): ``tp_rank``, ``pp_rank``, ``dp_rank``
- ``logging_rank``  the stats-logging TP rank (first TP rank) of each PP stage: scheduler gauges/counters
- ``seeded_rank``   pre-seeded scheduler counters: every rank, real values on the logging rank, 0 elsewhere
- ``tokenizer``     the API server on node_rank 0 of each replica: no rank labels
- ``node`` / ``disk`` / ``filesystem`` / ``cpu`` / ``netdev``   node_exporter, per node (and device/mount/cpu)
- ``master`` / ``segment``   the Mooncake master's exporter on the master node; ``segment="<address>:<port>"``
  per rank, the host being the profile's node address
- ``gateway``       the model gateway's node
- ``client``        Mooncake client per rank (only when that source is exported)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from dashgen_queries.gateway_runtime import MODEL_CAP, OTHER_MODEL

from dashgen.demo import healthy
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.live.sources import HISTOGRAM_SUFFIXES, is_histogram, source_of

Number = float | Callable[[Profile, Topology], float]

# SGLang's default latency buckets (TTFT; e2e adds the long tail).
SECONDS_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
E2E_BUCKETS = (*SECONDS_BUCKETS, 600, 1200, 1800, 2400)
SHORT_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1)
SIZE_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096)
TOKEN_BUCKETS = (128, 1024, 8192, 32768, 131072, 262144, 524288)
GIB = 1 << 30
REQUESTS = 0.8  # requests per second per engine (tokenizer)
WORKERS = ("http://replica-0:30000", "http://replica-1:30000")


def capped_models(models: tuple[str, ...], cap: int = MODEL_CAP) -> tuple[str, ...]:
    """The ``model`` values the gateway writes for ``models`` (in the order it first sees them): the first ``cap``
    as they are, every later one added into ``model="other"`` (smg#2093). Below the cap there is no "other"."""
    return models[:cap] + ((OTHER_MODEL,) if len(models) > cap else ())


TENANTS = ("tenant-a", "tenant-b")  # the Store's tenants (Mooncake 0.3.12 multi-tenancy)
GATEWAY_MODELS = capped_models(("demo-model",))  # one served model: far below the cap, so no "other"
# (source, label, value) written only past an exporter's own cap: a panel's matcher on it (the share under
# "other") does not make the demo invent it, as a matcher on any other label value does.
CAP_ONLY_VALUES = frozenset({("gateway", "model", OTHER_MODEL)})


MetricKind = Literal["gauge", "counter", "histogram"]


@dataclass(frozen=True)
class Wave:
    """A gauge: ``base + amp*sin(2*pi*t/period + phase) + noise*N(0,1)`` clamped to [lo, hi].

    ``load`` gauges follow traffic: with no traffic they sit at ``idle``.
    ``integer`` rounds. Numbers may be callables of (profile, topology) for sizes (S1).
    """

    base: Number
    amp: Number = 0.0
    noise: Number = 0.0
    lo: Number = 0.0
    hi: Number = float("inf")
    period: float = 1800.0
    integer: bool = False
    load: bool = False
    idle: Number = 0.0


@dataclass(frozen=True)
class Rate:
    """A counter growing at about ``per_second`` (a Wave of rates); ``traffic`` says what makes it grow:
    ``requests`` (flat with no traffic), ``io`` (flat with no disk I/O) or ``time`` (always grows)."""

    per_second: Number
    amp: float = 0.3
    traffic: str = "requests"
    integer: bool = True
    rare: bool = False  # absent-until-first-event counter whose first event is rare (appears mid-window)
    # (label, value, factor): the series with that label value grows at ``factor`` × the rate — parts of one whole
    # (reuse hits of the input tokens) must stay parts
    factors: tuple[tuple[str, str, float], ...] = ()
    # a counter counting a part of another (valid gets of all gets): it draws its randomness as the named counter
    # does, so at every instant it grows at per_second / the whole's per_second of the whole, never past it
    share_of: str = ""

    def for_labels(self, labels: Mapping[str, str]) -> Rate:
        """This rate for the series with ``labels`` (its ``factors`` applied)."""
        factor = math.prod(f for label, value, f in self.factors if labels.get(label) == value)
        if factor == 1.0:
            return self
        base = self.per_second
        scaled: Number = (lambda p, t: base(p, t) * factor) if callable(base) else base * factor
        return replace(self, per_second=scaled, factors=())


@dataclass(frozen=True)
class Histogram:
    """Observations at ``per_second``, log-normal around ``median`` (spread ``sigma``) over ``buckets``."""

    per_second: float
    median: float
    sigma: float = 0.6
    buckets: tuple[float, ...] = SECONDS_BUCKETS
    traffic: str = "requests"
    sli: str = ""  # the SLI it measures (ttft / tpot / e2e): its median stays within the SLO (``healthy.median``)


@dataclass(frozen=True)
class MetricModel:
    name: str
    source: str
    kind: MetricKind
    scope: str
    model: Wave | Rate | Histogram
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    first_event: bool = False  # counter absent until its first non-zero increment


def _source(name: str, histogram: bool) -> str:
    """The metric's source from ``dashgen.live.sources``, which must list it (as a histogram for ``_h``)."""
    source = source_of(name)
    if source is None or is_histogram(name) != histogram:
        raise ValueError(f"{name}: not listed{' as a histogram' if histogram else ''} in dashgen.live.sources")
    return source


def _g(name: str, scope: str, model: Wave, /, **labels: tuple[str, ...]) -> MetricModel:
    return MetricModel(name, _source(name, False), "gauge", scope, model, dict(labels))


def _c(name: str, scope: str, model: Rate, first_event: bool = False, /, **labels: tuple[str, ...]) -> MetricModel:
    return MetricModel(name, _source(name, False), "counter", scope, model, dict(labels), first_event)


def _h(name: str, scope: str, model: Histogram, /, **labels: tuple[str, ...]) -> MetricModel:
    return MetricModel(name, _source(name, True), "histogram", scope, model, dict(labels))


def _ratio(base: float, amp: float = 0.1, noise: float = 0.03, load: bool = True) -> Wave:
    return Wave(base, amp, noise, 0.0, 1.0, load=load, idle=0.0)


def _store_per_rank(p: Profile, t: Topology) -> float:
    return float(t.capacity.store_per_rank or 8 * GIB)


def _store_total(p: Profile, t: Topology) -> float:
    return float(t.capacity.store_total or 0) or _store_per_rank(p, t) * len(t.ranks)


def _host_tokens(p: Profile, t: Topology) -> float:
    # Host tier in tokens: the per-rank byte quota at ~160 KiB per token (per-rank shard of a long-context model).
    return float((t.capacity.host_per_rank or 32 * GIB) // (160 * 1024))


def _kv_tokens(p: Profile, t: Topology) -> float:
    return 400_000.0


def _gpu_tdp(p: Profile, t: Topology) -> float:
    return p.capacity.gpu_tdp_watts or 700.0


def _power_base(p: Profile, t: Topology) -> float:
    return _gpu_tdp(p, t) * 0.62


def _power_amp(p: Profile, t: Topology) -> float:
    return _gpu_tdp(p, t) * 0.12


STAGES_MODE = ("prefill_compute", "prefill_cache", "decode")
EFFECTIVE_MODES = ("input", "device_hit", "host_hit", "storage_hit")
REUSE_PARTS = (("mode", "device_hit", 0.15), ("mode", "host_hit", 0.15), ("mode", "storage_hit", 0.05))
UNFULFILLED = (
    "below_threshold",
    "host_capacity",
    "device_capacity",
    "device_covered",
    "storage_transfer",
    "deadline",
    "anchor_lost",
    "aux_window_trim",
    "device_overlap",
    "cache_admission_shortfall",
    "dropped",
)

_MODELS: list[MetricModel] = [
    # --- SGLang scheduler (logging rank of each PP stage) ---------------------------------------
    _g("sglang:num_running_reqs", "logging_rank", Wave(24, 10, 3, 0, integer=True, load=True)),
    _g("sglang:num_queue_reqs", "logging_rank", Wave(4, 4, 2, 0, integer=True, load=True)),
    _g("sglang:num_grammar_queue_reqs", "logging_rank", Wave(0, integer=True)),
    _g("sglang:num_paused_reqs", "logging_rank", Wave(0, integer=True)),
    _g("sglang:num_retracted_reqs", "logging_rank", Wave(0, 0.4, 0.3, 0, integer=True, load=True)),
    _g("sglang:gen_throughput", "logging_rank", Wave(900, 300, 80, 0, load=True)),
    _g("sglang:cache_hit_rate", "logging_rank", _ratio(0.55, 0.1, 0.05)),
    _g("sglang:token_usage", "logging_rank", _ratio(0.6)),
    _g("sglang:full_token_usage", "logging_rank", _ratio(0.55)),
    _g("sglang:utilization", "logging_rank", _ratio(0.7)),
    _g("sglang:num_used_tokens", "logging_rank", Wave(180_000, 60_000, 10_000, 0, integer=True, load=True)),
    _g("sglang:kv_used_tokens", "logging_rank", Wave(120_000, 50_000, 8_000, 0, 180_000, integer=True, load=True)),
    _g("sglang:kv_evictable_tokens", "logging_rank", Wave(110_000, 30_000, 8_000, 0, 150_000, integer=True)),
    _g("sglang:kv_available_tokens", "logging_rank", Wave(90_000, 20_000, 8_000, 50_000, 120_000, integer=True)),
    _g("sglang:max_total_num_tokens", "logging_rank", Wave(_kv_tokens, integer=True)),
    _g("sglang:decode_sum_seq_lens", "logging_rank", Wave(3_000_000, 1_000_000, 100_000, 0, integer=True, load=True)),
    _g("sglang:context_len", "logging_rank", Wave(524_288, integer=True)),
    _g("sglang:page_size", "logging_rank", Wave(64, integer=True)),
    _g("sglang:kv_cache_memory_usage_gb", "logging_rank", Wave(48.0)),
    _g("sglang:weight_memory_usage_gb", "logging_rank", Wave(22.0)),
    _g(
        "sglang:hicache_host_used_tokens",
        "logging_rank",
        Wave(
            lambda p, t: _host_tokens(p, t) * 0.55,
            lambda p, t: _host_tokens(p, t) * 0.2,
            2000,
            0,
            _host_tokens,
            integer=True,
        ),
    ),
    _g("sglang:hicache_host_total_tokens", "logging_rank", Wave(_host_tokens, integer=True)),
    _g("sglang:num_prefill_bootstrap_queue_reqs", "logging_rank", Wave(1, 1, 1, 0, integer=True, load=True)),
    _g("sglang:num_prefill_inflight_queue_reqs", "logging_rank", Wave(2, 1, 1, 0, integer=True, load=True)),
    _g("sglang:num_decode_prealloc_queue_reqs", "logging_rank", Wave(1, 1, 1, 0, integer=True, load=True)),
    _g("sglang:num_decode_transfer_queue_reqs", "logging_rank", Wave(1, 1, 1, 0, integer=True, load=True)),
    _h("sglang:kv_transfer_latency_ms", "logging_rank", Histogram(1.0, 40, 0.6, (5, 10, 25, 50, 100, 250, 500, 1000))),
    _h("sglang:kv_transfer_speed_gb_s", "logging_rank", Histogram(1.0, 12, 0.5, (1, 2, 5, 10, 20, 50, 100))),
    _h("sglang:kv_transfer_total_mb", "logging_rank", Histogram(1.0, 400, 0.8, (10, 50, 100, 500, 1000, 5000))),
    _h("sglang:queue_time_seconds", "logging_rank", Histogram(2.0, 0.4, 0.9)),
    _h(
        "sglang:per_stage_req_latency_seconds",
        "logging_rank",
        Histogram(2.0, 0.05, 0.8, SHORT_BUCKETS),
        stage=("prefill_forward", "decode_forward"),
    ),
    _c("sglang:realtime_tokens_total", "logging_rank", Rate(900), mode=STAGES_MODE),
    _g("sglang:spec_accept_length", "logging_rank", Wave(3.1, 0.4, 0.15, lo=1.0, hi=5.0, load=True, idle=1.0)),
    _g("sglang:spec_accept_rate", "logging_rank", Wave(0.62, 0.1, 0.04, lo=0.0, hi=1.0, load=True)),
    _c("sglang:spec_verify_calls_total", "logging_rank", Rate(40)),
    _c("sglang:num_retracted_requests_total", "logging_rank", Rate(0.01), True),
    _c("sglang:num_bootstrap_failed_reqs_total", "logging_rank", Rate(0.002)),
    _c("sglang:num_transfer_failed_reqs_total", "logging_rank", Rate(0.002)),
    # hits are parts of the input: with each series' ±15 % rate and ±30 % wave, the hits' sum stays below 90 % of
    # the input and the host-hit share above the host-tier-collapse alert's 5 % floor
    _c("sglang:prefill_effective_tokens_total", "seeded_rank", Rate(3000, factors=REUSE_PARTS), mode=EFFECTIVE_MODES),
    _c(
        "sglang:forward_execution_seconds_total",
        "rank",
        Rate(0.7, 0.1, traffic="requests", integer=False),
        category=("extend", "decode"),
    ),
    _c("sglang:scheduler_idle_seconds_total", "seeded_rank", Rate(0.3, 0.1, traffic="time", integer=False)),
    # --- SGLang tokenizer (API server, node_rank 0 of each replica) -------------------------------
    _c("sglang:prompt_tokens_total", "tokenizer", Rate(6000), is_streaming=("true",)),
    _c("sglang:generation_tokens_total", "tokenizer", Rate(900), is_streaming=("true",)),
    _c("sglang:num_requests_total", "tokenizer", Rate(REQUESTS), is_streaming=("true",)),
    _c("sglang:num_aborted_requests_total", "tokenizer", Rate(lambda p, _t: REQUESTS * healthy.abort_share(p))),
    _c("sglang:cached_tokens_total", "tokenizer", Rate(2500), True, cache_source=("device", "host", "storage")),
    _h(
        "sglang:time_to_first_token_seconds",
        "tokenizer",
        Histogram(REQUESTS, 1.2, 0.8, sli="ttft"),
        is_streaming=("true",),
    ),
    _h(
        "sglang:e2e_request_latency_seconds",
        "tokenizer",
        Histogram(REQUESTS, 40, 0.6, E2E_BUCKETS, sli="e2e"),
        is_streaming=("true",),
    ),
    _h("sglang:inter_token_latency_seconds", "tokenizer", Histogram(900, 0.03, 0.4, SHORT_BUCKETS)),
    _h(
        "sglang:request_time_per_output_token_seconds",
        "tokenizer",
        Histogram(REQUESTS, 0.035, 0.4, SHORT_BUCKETS, sli="tpot"),
        is_streaming=("true",),
    ),
    _c("sglang:http_requests_total", "tokenizer", Rate(0.8), endpoint=("/generate",), method=("POST",)),
    _c(
        "sglang:http_responses_total",
        "tokenizer",
        Rate(0.8),
        endpoint=("/generate",),
        method=("POST",),
        status_code=("200",),
    ),
    _g(
        "sglang:http_requests_active",
        "tokenizer",
        Wave(24, 8, 3, 0, integer=True, load=True),
        endpoint=("/generate",),
        method=("POST",),
    ),
    _h("sglang:prompt_tokens_histogram", "tokenizer", Histogram(0.8, 60000, 1.0, TOKEN_BUCKETS)),
    _h("sglang:generation_tokens_histogram", "tokenizer", Histogram(0.8, 1000, 0.8, TOKEN_BUCKETS)),
    # --- HiCache GPU <-> Host (radix collector, every rank) ---------------------------------------
    _c("sglang:hicache_backup_bytes_total", "rank", Rate(2.0e8)),
    _c("sglang:hicache_backup_tokens_total", "rank", Rate(1500), pool=("kv",)),
    _h("sglang:hicache_backup_duration_seconds", "rank", Histogram(2, 0.01, 0.5, SHORT_BUCKETS)),
    _c("sglang:load_back_bytes_total", "rank", Rate(1.2e8)),
    _c("sglang:load_back_tokens_total", "rank", Rate(900), True, pool=("kv",)),
    _h("sglang:load_back_duration_seconds", "rank", Histogram(2, 0.008, 0.5, SHORT_BUCKETS)),
    _c("sglang:evicted_tokens_total", "rank", Rate(1200), True),
    _h("sglang:eviction_duration_seconds", "rank", Histogram(1, 0.004, 0.5, SHORT_BUCKETS)),
    _c(
        "sglang:hicache_dropped_tokens_total",
        "rank",
        Rate(5, rare=True),
        True,
        reason=("host_pressure", "write_through_unbacked_eviction"),
        pool=("kv",),
    ),
    # --- HiCache Host <-> Store (storage collector, every rank) -----------------------------------
    _c("sglang:backuped_tokens_total", "rank", Rate(1100), True),
    _c("sglang:prefetched_tokens_total", "rank", Rate(700), True),
    _c("sglang:storage_prefetch_hit_tokens_total", "rank", Rate(800), True),
    _c("sglang:storage_prefetch_unfulfilled_tokens_total", "rank", Rate(20), reason=UNFULFILLED),
    _c("sglang:storage_prefetch_deferred_tokens_total", "rank", Rate(10), reason=("host_capacity", "device_capacity")),
    _c("sglang:hicache_backup_dropped_tokens_total", "rank", Rate(3, rare=True), True),
    _c("sglang:hicache_prefetch_aux_alloc_failed_tokens_total", "rank", Rate(1, rare=True), True),
    _h("sglang:prefetch_pgs", "rank", Histogram(1, 32, 0.8, SIZE_BUCKETS)),
    _h("sglang:backup_pgs", "rank", Histogram(1, 32, 0.8, SIZE_BUCKETS)),
    _h("sglang:prefetch_bandwidth", "rank", Histogram(1, 8, 0.5, (1, 2, 4, 8, 16, 32, 64))),
    _h("sglang:backup_bandwidth", "rank", Histogram(1, 6, 0.5, (1, 2, 4, 8, 16, 32, 64))),
    # --- Model gateway ------------------------------------------------------------------------------
    _g("smg_admission_inflight", "gateway", Wave(48, 16, 4, 0, integer=True, load=True)),
    _g("smg_admission_queue_depth", "gateway", Wave(3, 3, 2, 0, integer=True, load=True)),
    _c("smg_admission_queue_rejected_total", "gateway", Rate(0.01), reason=("full", "timeout")),
    _g("smg_worker_requests_active", "gateway", Wave(24, 8, 3, 0, integer=True, load=True), worker=WORKERS),
    _g(
        "smg_engine_running_requests",
        "gateway",
        Wave(24, 8, 3, 0, integer=True, load=True),
        worker=WORKERS,
        dp_rank=("0",),
    ),
    _g(
        "smg_engine_waiting_requests",
        "gateway",
        Wave(3, 3, 2, 0, integer=True, load=True),
        worker=WORKERS,
        dp_rank=("0",),
    ),
    _c("smg_http_requests_total", "gateway", Rate(1.6), method=("POST",), path=("/generate",)),
    _c(
        "smg_router_requests_total",
        "gateway",
        Rate(1.6),
        router_type=("regular",),
        backend_type=("regular",),
        model=GATEWAY_MODELS,
        endpoint=("/generate",),
    ),
    _c("smg_http_responses_total", "gateway", Rate(1.6), path=("/generate",), status_code=("200",), error_code=("",)),
    _c(
        "smg_router_request_errors_total",
        "gateway",
        Rate(0.01),
        True,
        router_type=("regular",),
        backend_type=("regular",),
        model=GATEWAY_MODELS,
        endpoint=("/generate",),
        error_type=("upstream_error",),
    ),
    _g("smg_worker_health", "gateway", Wave(1, integer=True), worker=WORKERS),
    _g("smg_worker_cb_state", "gateway", Wave(0, integer=True), worker=WORKERS),
    _c("smg_worker_selection_total", "gateway", Rate(0.8), policy=("cache_aware",), worker=WORKERS),
    _h(
        "smg_router_request_duration_seconds",
        "gateway",
        Histogram(1.6, 40, 0.6, sli="e2e"),
        router_type=("regular",),
        backend_type=("regular",),
        model=GATEWAY_MODELS,
        endpoint=("/generate",),
    ),
    _h(
        "smg_tokio_event_loop_delay_seconds",
        "gateway",
        Histogram(1.0, 0.0008, 0.8, (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1)),
    ),
    _c("smg_tokio_event_loop_stalls_total", "gateway", Rate(0.02)),
    _g(
        "smg_tokio_worker_busy_ratio",
        "gateway",
        Wave(0.35, 0.15, 0.05, 0.0, 1.0, load=True),
        worker=("0", "1", "2", "3"),
    ),
    _g("smg_tokio_global_queue_depth", "gateway", Wave(2, 2, 1, 0, integer=True, load=True)),
    _g("smg_workers_overloaded", "gateway", Wave(0, integer=True), model=GATEWAY_MODELS),
    _c("smg_worker_overload_shed_total", "gateway", Rate(0.005), True, stage=("selection", "dispatch")),
    _g(
        "smg_worker_retry_backoff_seconds",
        "gateway",
        Wave(0.05, 0.02, 0.01, 0.0),
        attempt=("1", "2"),
        quantile=("0.99",),
    ),
    _c(
        "smg_kv_event_subscription_failures_total", "gateway", Rate(0.001), True, worker=WORKERS, reason=("join_error",)
    ),
    _c("smg_pd_bootstrap_failures_total", "gateway", Rate(0.002), True),
    _c("smg_pd_kv_transfer_failures_total", "gateway", Rate(0.002), True),
    # --- Mooncake master (one node) -----------------------------------------------------------------
    _g("master_total_capacity_bytes", "master", Wave(_store_total)),
    _g(
        "master_allocated_bytes",
        "master",
        Wave(lambda p, t: _store_total(p, t) * 0.6, lambda p, t: _store_total(p, t) * 0.1, 0, 0, _store_total),
    ),
    _g("segment_total_capacity_bytes", "segment", Wave(_store_per_rank)),
    _g(
        "segment_allocated_bytes",
        "segment",
        Wave(
            lambda p, t: _store_per_rank(p, t) * 0.6,
            lambda p, t: _store_per_rank(p, t) * 0.15,
            lambda p, t: _store_per_rank(p, t) * 0.02,
            0,
            _store_per_rank,
        ),
    ),
    _g("master_key_count", "master", Wave(2_000_000, 300_000, 10_000, 0, integer=True)),
    _g("master_active_clients", "master", Wave(lambda p, t: float(len(t.ranks)), integer=True)),
    _g("mem_cache_nums_", "master", Wave(1_500_000, 200_000, 10_000, 0, integer=True)),
    _g("file_cache_nums_", "master", Wave(500_000, 50_000, 5_000, 0, integer=True)),
    _g("master_total_file_capacity_bytes", "master", Wave(0.0)),
    _g("master_allocated_file_size_bytes", "master", Wave(0.0)),
    _c("mem_cache_hit_nums_", "master", Rate(280, share_of="total_get_nums_")),
    _c("file_cache_hit_nums_", "master", Rate(40, share_of="total_get_nums_")),
    _c("mem_cache_hit_bytes_total", "master", Rate(3.0e9)),
    _c("file_cache_hit_bytes_total", "master", Rate(4.0e8)),
    _c("valid_get_nums_", "master", Rate(330, share_of="total_get_nums_")),
    _c("total_get_nums_", "master", Rate(420)),
    _c("master_successful_evictions_total", "master", Rate(2)),
    _c("master_attempted_evictions_total", "master", Rate(2.2)),
    _c("master_evicted_key_count", "master", Rate(50)),
    _c("master_evicted_size_bytes", "master", Rate(5.0e8)),
    _c("master_put_start_requests_total", "master", Rate(200)),
    _c("master_put_start_failures_total", "master", Rate(0.1)),
    _c("master_put_start_alloc_failures_total", "master", Rate(0.05, rare=True), True),
    _c("master_get_replica_list_requests_total", "master", Rate(420)),
    _c("master_get_replica_list_failures_total", "master", Rate(0.1)),
    # --- Mooncake client (per rank; only when exported) ---------------------------------------------
    _c("mooncake_transfer_read_bytes", "client", Rate(1.0e8)),
    _c("mooncake_transfer_write_bytes", "client", Rate(1.5e8)),
    _c("mooncake_ssd_read_bytes_total", "client", Rate(2.0e7, traffic="io")),
    _c("mooncake_ssd_write_bytes_total", "client", Rate(3.0e7, traffic="io")),
    _c("mooncake_ssd_read_ops_total", "client", Rate(50, traffic="io")),
    _c("mooncake_ssd_write_ops_total", "client", Rate(70, traffic="io")),
    # --- DCGM (per GPU; units as exported: W, MiB, MHz, %, ratios) ----------------------------------
    _g("DCGM_FI_DEV_POWER_USAGE", "gpu", Wave(_power_base, _power_amp, 15, 60, _gpu_tdp, load=True, idle=90)),
    _c("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gpu", Rate(450_000, 0.1, traffic="time")),
    _g("DCGM_FI_DEV_GPU_TEMP", "gpu", Wave(62, 8, 1.5, 30, 90, load=True, idle=38)),
    _g("DCGM_FI_DEV_MEMORY_TEMP", "gpu", Wave(68, 6, 1.5, 30, 95, load=True, idle=40)),
    _g("DCGM_FI_DEV_SM_CLOCK", "gpu", Wave(1850, 80, 20, 210, 1980, integer=True, load=True, idle=345)),
    _g("DCGM_FI_DEV_MEM_CLOCK", "gpu", Wave(2619, integer=True)),
    _g("DCGM_FI_DEV_GPU_UTIL", "gpu", Wave(82, 12, 4, 0, 100, integer=True, load=True)),
    _g("DCGM_FI_DEV_MEM_COPY_UTIL", "gpu", Wave(40, 12, 4, 0, 100, integer=True, load=True)),
    _g("DCGM_FI_DEV_FB_USED", "gpu", Wave(72_000, 3_000, 300, 0, 81_559, integer=True)),
    _g("DCGM_FI_DEV_FB_FREE", "gpu", Wave(9_000, 3_000, 300, 0, 81_559, integer=True)),
    _g("DCGM_FI_DEV_FB_RESERVED", "gpu", Wave(600, integer=True)),
    _g("DCGM_FI_DEV_FB_TOTAL", "gpu", Wave(81_559, integer=True)),
    _g("DCGM_FI_DEV_XID_ERRORS", "gpu", Wave(0, integer=True)),
    _g("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gpu", Wave(0, integer=True)),
    _g("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpu", _ratio(0.8)),
    _g("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gpu", _ratio(0.35)),
    _g("DCGM_FI_PROF_DRAM_ACTIVE", "gpu", _ratio(0.45)),
    _g("DCGM_FI_PROF_SM_ACTIVE", "gpu", _ratio(0.7)),
    _g("DCGM_FI_PROF_SM_OCCUPANCY", "gpu", _ratio(0.35)),
    _g("DCGM_FI_PROF_PCIE_TX_BYTES", "gpu", Wave(2.0e9, 1.0e9, 2e8, 0, load=True)),
    _g("DCGM_FI_PROF_PCIE_RX_BYTES", "gpu", Wave(3.0e9, 1.0e9, 2e8, 0, load=True)),
    _c("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "gpu", Rate(5.0e4)),
    _c("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "gpu", Rate(0, traffic="time")),
    # Hardware health (S22): healthy GPUs have no remapped row, no failure and no NVLink error; the gpu-missing
    # scenario gives its lost GPU an Xid 79 before it vanishes (dashgen.demo.series).
    _c("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "gpu", Rate(0, traffic="time")),
    _c("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "gpu", Rate(0, traffic="time")),
    _g("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpu", Wave(0, integer=True)),
    _c("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "gpu", Rate(0, traffic="time")),
    _c("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "gpu", Rate(0, traffic="time")),
    _c("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "gpu", Rate(0, traffic="time")),
    _c("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "gpu", Rate(0, traffic="time")),
    # --- GPM sampler (per GPU, 1 s) ----------------------------------------------------------------
    _g("gpm_sm_active_ratio", "gpu", _ratio(0.7)),
    _g("gpm_sm_occupancy_ratio", "gpu", _ratio(0.35)),
    _g("gpm_tensor_active_ratio", "gpu", _ratio(0.35)),
    _g("gpm_dram_active_ratio", "gpu", _ratio(0.45)),
    _g("gpm_gpu_busy_ratio", "gpu", _ratio(0.82)),
    _g("gpm_memory_used_bytes", "gpu", Wave(72 * 1e9, 3e9, 3e8, 0, 80 * GIB)),
    _g("gpm_memory_total_bytes", "gpu", Wave(80 * GIB)),
    _g("gpm_power_watts", "gpu", Wave(_power_base, _power_amp, 20, 60, _gpu_tdp, load=True, idle=90)),
    _g("gpm_temperature_celsius", "gpu", Wave(62, 8, 1.5, 30, 90, load=True, idle=38)),
    _g("gpm_sm_clock_hertz", "gpu", Wave(1.85e9, 8e7, 2e7, 2.1e8, 1.98e9, load=True, idle=3.45e8)),
    _g("gpm_clock_event_reasons", "gpu", Wave(0, integer=True)),
    _g("gpm_sample_valid", "gpu", Wave(1, integer=True)),
    # --- node_exporter ------------------------------------------------------------------------------
    _c("node_disk_read_bytes_total", "disk", Rate(4.0e8, traffic="io")),
    _c("node_disk_written_bytes_total", "disk", Rate(6.0e8, traffic="io")),
    _c("node_disk_reads_completed_total", "disk", Rate(3000, traffic="io")),
    _c("node_disk_writes_completed_total", "disk", Rate(4500, traffic="io")),
    _c("node_disk_reads_merged_total", "disk", Rate(100, traffic="io")),
    _c("node_disk_writes_merged_total", "disk", Rate(200, traffic="io")),
    _c("node_disk_read_time_seconds_total", "disk", Rate(0.9, traffic="io", integer=False)),
    _c("node_disk_write_time_seconds_total", "disk", Rate(1.6, traffic="io", integer=False)),
    _c("node_disk_io_time_seconds_total", "disk", Rate(0.45, 0.3, traffic="io", integer=False)),
    _c("node_disk_io_time_weighted_seconds_total", "disk", Rate(2.5, traffic="io", integer=False)),
    _c("node_disk_discards_completed_total", "disk", Rate(1, traffic="io")),
    _c("node_disk_flush_requests_total", "disk", Rate(5, traffic="io")),
    _g("node_disk_io_now", "disk", Wave(6, 4, 2, 0, integer=True, load=True)),
    _g("node_disk_info", "disk", Wave(1)),
    _g("node_filesystem_size_bytes", "filesystem", Wave(1.0)),
    _g("node_filesystem_avail_bytes", "filesystem", Wave(1.0)),
    _g("node_filesystem_free_bytes", "filesystem", Wave(1.0)),
    _g("node_filesystem_files", "filesystem", Wave(2.0e8, integer=True)),
    _g("node_filesystem_files_free", "filesystem", Wave(1.8e8, integer=True)),
    _g("node_filesystem_readonly", "filesystem", Wave(0)),
    _g("node_filesystem_device_error", "filesystem", Wave(0)),
    _g("node_filesystem_mount_info", "filesystem", Wave(1)),
    _c(
        "node_cpu_seconds_total",
        "cpu",
        Rate(0.25, 0.2, traffic="time", integer=False),
        mode=("user", "system", "iowait", "idle"),
    ),
    _g("node_memory_MemTotal_bytes", "node", Wave(2048 * GIB)),
    _g("node_memory_MemAvailable_bytes", "node", Wave(900 * GIB, 80 * GIB, 5 * GIB, 0)),
    _g("node_memory_MemFree_bytes", "node", Wave(300 * GIB, 50 * GIB, 5 * GIB, 0)),
    _g("node_memory_Cached_bytes", "node", Wave(500 * GIB, 40 * GIB, 5 * GIB, 0)),
    _g("node_memory_Buffers_bytes", "node", Wave(8 * GIB)),
    _g("node_load1", "node", Wave(40, 10, 3, 0, load=True, idle=2)),
    _g("node_load5", "node", Wave(40, 8, 2, 0, load=True, idle=2)),
    _g("node_load15", "node", Wave(40, 6, 1, 0, load=True, idle=2)),
    _c("node_network_receive_bytes_total", "netdev", Rate(1.0e9)),
    _c("node_network_transmit_bytes_total", "netdev", Rate(1.0e9)),
    _c("node_network_receive_errs_total", "netdev", Rate(0, traffic="time")),
    _c("node_network_transmit_errs_total", "netdev", Rate(0, traffic="time")),
    _c("node_vmstat_oom_kill", "node", Rate(0, traffic="time")),
    _g("node_uname_info", "node", Wave(1)),
    _g("node_timex_offset_seconds", "node", Wave(0.0002, 0.0001, 0.00005, -0.01, 0.01)),  # an NTP-synced clock
]

CATALOGUE: dict[str, MetricModel] = {m.name: m for m in _MODELS}
CPUS_PER_NODE = 8  # node_cpu_seconds_total series per node (a real node has more; the demo keeps it small)


def lookup(name: str) -> tuple[MetricModel, str] | None:
    """The model of an exposed series name and the histogram suffix it names ("" for the base)."""
    if name in CATALOGUE:
        return CATALOGUE[name], ""
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            model = CATALOGUE.get(name[: -len(suffix)])
            if model is not None and model.kind == "histogram":
                return model, suffix
    return None
