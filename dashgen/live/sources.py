"""Which profile source exports which metric: the one table validate-queries and the demo read.

``METRIC_SOURCES`` lists, per source of ``dashgen.deployment.profile.KNOWN_SOURCES``, the metrics it
exports (counters and gauges by exposed name; histograms by base name, each exposing ``_bucket``,
``_sum`` and ``_count``). :func:`source_of` answers for an exposed series name (``up`` and names no
source lists: None); :func:`scrape_seconds_for` turns the sources an expression reads into the
scrape (or stored sample) interval Grafana's ``$__rate_interval`` and the sample checks assume.
The demo's value models (``dashgen.demo.catalogue``) take each metric's source from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dashgen.deployment.profile import Profile
from dashgen.live.expand import DEFAULT_SCRAPE_SECONDS
from dashgen.live.selectors import metric_names

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass(frozen=True)
class Exports:
    """The metrics of one source: plain metrics by name, histograms by base name."""

    metrics: tuple[str, ...] = ()
    histograms: tuple[str, ...] = ()

    def series(self) -> tuple[str, ...]:
        """Every exposed series name (histogram bases included, as their family name)."""
        suffixed = tuple(h + s for h in self.histograms for s in HISTOGRAM_SUFFIXES)
        return (*self.metrics, *self.histograms, *suffixed)


METRIC_SOURCES: Mapping[str, Exports] = {
    "sglang": Exports(
        metrics=(
            "sglang:num_running_reqs",
            "sglang:num_queue_reqs",
            "sglang:num_grammar_queue_reqs",
            "sglang:num_paused_reqs",
            "sglang:num_retracted_reqs",
            "sglang:gen_throughput",
            "sglang:cache_hit_rate",
            "sglang:token_usage",
            "sglang:full_token_usage",
            "sglang:utilization",
            "sglang:num_used_tokens",
            "sglang:kv_used_tokens",
            "sglang:kv_evictable_tokens",
            "sglang:kv_available_tokens",
            "sglang:max_total_num_tokens",
            "sglang:decode_sum_seq_lens",
            "sglang:context_len",
            "sglang:page_size",
            "sglang:kv_cache_memory_usage_gb",
            "sglang:weight_memory_usage_gb",
            "sglang:num_prefill_bootstrap_queue_reqs",
            "sglang:num_prefill_inflight_queue_reqs",
            "sglang:num_decode_prealloc_queue_reqs",
            "sglang:num_decode_transfer_queue_reqs",
            "sglang:realtime_tokens_total",
            "sglang:num_retracted_requests_total",
            "sglang:num_bootstrap_failed_reqs_total",
            "sglang:num_transfer_failed_reqs_total",
            "sglang:prefill_effective_tokens_total",
            "sglang:forward_execution_seconds_total",
            "sglang:scheduler_idle_seconds_total",
            "sglang:prompt_tokens_total",
            "sglang:generation_tokens_total",
            "sglang:num_requests_total",
            "sglang:num_aborted_requests_total",
            "sglang:cached_tokens_total",
            "sglang:http_requests_total",
            "sglang:http_responses_total",
            "sglang:http_requests_active",
            # SGLang Diffusion (video-generation pools, metric catalogue §11)
            "sglang:diffusion_num_queue_reqs",
            "sglang:diffusion_num_running_reqs",
            "sglang:diffusion_requests_total",
        ),
        histograms=(
            "sglang:kv_transfer_latency_ms",
            "sglang:kv_transfer_speed_gb_s",
            "sglang:kv_transfer_total_mb",
            "sglang:queue_time_seconds",
            "sglang:per_stage_req_latency_seconds",
            "sglang:time_to_first_token_seconds",
            "sglang:e2e_request_latency_seconds",
            "sglang:inter_token_latency_seconds",
            "sglang:request_time_per_output_token_seconds",
            "sglang:prompt_tokens_histogram",
            "sglang:generation_tokens_histogram",
            "sglang:diffusion_request_latency_seconds",
            "sglang:diffusion_queue_time_seconds",
            "sglang:diffusion_generation_batch_size",
            "sglang:diffusion_stage_host_latency_seconds",
        ),
    ),
    "hicache": Exports(
        metrics=(
            "sglang:hicache_host_used_tokens",
            "sglang:hicache_host_total_tokens",
            "sglang:hicache_backup_bytes_total",
            "sglang:hicache_backup_tokens_total",
            "sglang:load_back_bytes_total",
            "sglang:load_back_tokens_total",
            "sglang:evicted_tokens_total",
            "sglang:hicache_dropped_tokens_total",
        ),
        histograms=(
            "sglang:hicache_backup_duration_seconds",
            "sglang:load_back_duration_seconds",
            "sglang:eviction_duration_seconds",
        ),
    ),
    "hicache_storage": Exports(
        metrics=(
            "sglang:backuped_tokens_total",
            "sglang:prefetched_tokens_total",
            "sglang:storage_prefetch_hit_tokens_total",
            "sglang:storage_prefetch_unfulfilled_tokens_total",
            "sglang:storage_prefetch_deferred_tokens_total",
            "sglang:hicache_backup_dropped_tokens_total",
            "sglang:hicache_prefetch_aux_alloc_failed_tokens_total",
        ),
        histograms=(
            "sglang:prefetch_pgs",
            "sglang:backup_pgs",
            "sglang:prefetch_bandwidth",
            "sglang:backup_bandwidth",
        ),
    ),
    "gateway": Exports(
        metrics=(
            "smg_admission_inflight",
            "smg_admission_queue_depth",
            "smg_admission_queue_rejected_total",
            "smg_worker_requests_active",
            "smg_engine_running_requests",
            "smg_engine_waiting_requests",
            "smg_http_requests_total",
            "smg_router_requests_total",
            "smg_http_responses_total",
            "smg_router_request_errors_total",
            "smg_worker_health",
            "smg_worker_cb_state",
        ),
        histograms=(
            "smg_router_request_duration_seconds",
            "smg_pd_prefill_duration_seconds",
            "smg_pd_kv_transfer_duration_seconds",
            "smg_pd_ttft_seconds",
        ),
    ),
    "mooncake_master": Exports(
        metrics=(
            "master_total_capacity_bytes",
            "master_allocated_bytes",
            "segment_total_capacity_bytes",
            "segment_allocated_bytes",
            "master_key_count",
            "master_active_clients",
            "mem_cache_nums_",
            "file_cache_nums_",
            "master_total_file_capacity_bytes",
            "master_allocated_file_size_bytes",
            "mem_cache_hit_nums_",
            "file_cache_hit_nums_",
            "mem_cache_hit_bytes_total",
            "file_cache_hit_bytes_total",
            "valid_get_nums_",
            "total_get_nums_",
            "master_successful_evictions_total",
            "master_attempted_evictions_total",
            "master_evicted_key_count",
            "master_evicted_size_bytes",
            "master_put_start_requests_total",
            "master_put_start_failures_total",
            "master_put_start_alloc_failures_total",
            "master_get_replica_list_requests_total",
            "master_get_replica_list_failures_total",
        ),
    ),
    "mooncake_client": Exports(
        metrics=(
            "mooncake_transfer_read_bytes",
            "mooncake_transfer_write_bytes",
            "mooncake_ssd_read_bytes_total",
            "mooncake_ssd_write_bytes_total",
            "mooncake_ssd_read_ops_total",
            "mooncake_ssd_write_ops_total",
        ),
    ),
    "dcgm": Exports(
        metrics=(
            "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_MEMORY_TEMP",
            "DCGM_FI_DEV_SM_CLOCK",
            "DCGM_FI_DEV_MEM_CLOCK",
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_MEM_COPY_UTIL",
            "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_FB_FREE",
            "DCGM_FI_DEV_FB_RESERVED",
            "DCGM_FI_DEV_FB_TOTAL",
            "DCGM_FI_DEV_XID_ERRORS",
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            "DCGM_FI_PROF_DRAM_ACTIVE",
            "DCGM_FI_PROF_SM_ACTIVE",
            "DCGM_FI_PROF_SM_OCCUPANCY",
            "DCGM_FI_PROF_PCIE_TX_BYTES",
            "DCGM_FI_PROF_PCIE_RX_BYTES",
            "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
            "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
            "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        ),
    ),
    "gpm": Exports(
        metrics=(
            "gpm_sm_active_ratio",
            "gpm_sm_occupancy_ratio",
            "gpm_tensor_active_ratio",
            "gpm_dram_active_ratio",
            "gpm_gpu_busy_ratio",
            "gpm_memory_used_bytes",
            "gpm_memory_total_bytes",
            "gpm_power_watts",
            "gpm_temperature_celsius",
            "gpm_sm_clock_hertz",
            "gpm_clock_event_reasons",
            "gpm_sample_valid",
        ),
    ),
    "node_exporter": Exports(
        metrics=(
            "node_disk_read_bytes_total",
            "node_disk_written_bytes_total",
            "node_disk_reads_completed_total",
            "node_disk_writes_completed_total",
            "node_disk_reads_merged_total",
            "node_disk_writes_merged_total",
            "node_disk_read_time_seconds_total",
            "node_disk_write_time_seconds_total",
            "node_disk_io_time_seconds_total",
            "node_disk_io_time_weighted_seconds_total",
            "node_disk_discards_completed_total",
            "node_disk_flush_requests_total",
            "node_disk_io_now",
            "node_disk_info",
            "node_filesystem_size_bytes",
            "node_filesystem_avail_bytes",
            "node_filesystem_free_bytes",
            "node_filesystem_files",
            "node_filesystem_files_free",
            "node_filesystem_readonly",
            "node_filesystem_device_error",
            "node_filesystem_mount_info",
            "node_cpu_seconds_total",
            "node_memory_MemTotal_bytes",
            "node_memory_MemAvailable_bytes",
            "node_memory_MemFree_bytes",
            "node_memory_Cached_bytes",
            "node_memory_Buffers_bytes",
            "node_load1",
            "node_load5",
            "node_load15",
            "node_network_receive_bytes_total",
            "node_network_transmit_bytes_total",
            "node_uname_info",
            "node_timex_offset_seconds",
        ),
    ),
}

_SOURCE_OF: dict[str, str] = {name: source for source, exports in METRIC_SOURCES.items() for name in exports.series()}
_HISTOGRAMS = frozenset(h for exports in METRIC_SOURCES.values() for h in exports.histograms)


def source_of(name: str) -> str | None:
    """The profile source that exports the series ``name`` (``up`` and unknown names: None)."""
    return _SOURCE_OF.get(name)


def is_histogram(name: str) -> bool:
    """True when ``name`` is listed as a histogram's base name."""
    return name in _HISTOGRAMS


def scrape_seconds_for(
    expr: str, profile: Profile | None, default: float = DEFAULT_SCRAPE_SECONDS, *, stored: bool = False
) -> float:
    """The smallest scrape interval of the profile sources whose metrics the expression reads;
    with ``stored``, their sample interval (the spacing the central store keeps) instead."""
    if profile is None:
        return default
    intervals = []
    for name in metric_names(expr):
        source = source_of(name)
        if source and source in profile.sources:
            found = profile.source(source)
            intervals.append(found.sample_interval_seconds if stored else found.scrape_interval_seconds)
    return min(intervals) if intervals else default
