"""The one table per metric source: every series dashgen reads, the first exporter version that writes it (and
the old name of a renamed one), the flags it needs, the deployment shapes it is written in, and the prefix a
scrape path writes (metric catalogue §12, S35).

Everything that knows a metric name reads it from here: validate-queries and the demo (which source exports
a series, ``dashgen.live.sources``), the lint catalogue (``dashgen.lint.catalogue``: a name here is known), the
build (``dashgen.exporters.availability``: what a profile's stated version, features and prefix make of each
panel and rule) and ``dashgen doctor`` (what the store's names say about the deployment). A new metric is one
row here plus its query builder and, for the demo, its value model.

Read from SGLang wheels 0.5.10-0.5.23, the model gateway's tags v1.4.0-v1.9.0 and main (smg @ f8daa88),
Mooncake's tags v0.3.9-v0.3.12, dcgm-exporter's CSVs and a real node_exporter. "since" is the first version read
that has the series: a name absent from 0.5.16 and present in 0.5.20 says "0.5.20" (releases between were not
checked). smg's main after the v1.9.0 tag still calls itself 1.9.0 (model_gateway/Cargo.toml): the names it
added (admission, overload vetoes, the model-label cap) say "1.9.0", and a v1.9.0-tag build lacks them.
"""

from __future__ import annotations

from collections.abc import Mapping

from dashgen.exporters.model import Flag, Series, SourceTable


def M(name: str, **fields: object) -> Series:  # noqa: N802 - a table row reads better short
    """A counter or gauge."""
    return Series(name, False, **fields)  # type: ignore[arg-type]


def H(name: str, **fields: object) -> Series:  # noqa: N802
    """A histogram, by its base name."""
    return Series(name, True, **fields)  # type: ignore[arg-type]


ENGINE_METRICS = "--engine-metrics"
MAX_CONCURRENT = "--max-concurrent-requests"
ALL_SCHEDULERS = "--enable-metrics-for-all-schedulers"
SPECULATIVE = "--speculative-algorithm"
PREFILL_ONLY = "written on the prefill side of a PD pair only (SGLang records it in disaggregation/prefill.py)"
VLLM_GRPC_ONLY = "written only when the gateway routes PD to vLLM over gRPC; never with SGLang backends"
VLLM_NIXL_ONLY = "written only for vLLM NIXL dispatches whose prefill leg returned no kv_transfer_params"
NOT_SGLANG_GRPC = "not written when the gateway talks gRPC to SGLang"
SGLANG_VERSIONS = ("0.5.10", "0.5.16", "0.5.20", "0.5.21", "0.5.22", "0.5.23")  # the wheels read
ROUTER_PREFIX_NOTE = "scraped through the router's combined /engine_metrics endpoint, which rewrites sglang: to sglang_"

SGLANG = SourceTable(
    source="sglang",
    job="sglang",
    what="SGLang engine (scheduler, tokenizer)",
    exporter="SGLang",
    switch="--enable-metrics",
    versions=SGLANG_VERSIONS,
    flags=(
        Flag(ALL_SCHEDULERS, "off by default: only the stats-logging TP rank of each PP stage reports", ALL_SCHEDULERS),
        Flag(
            SPECULATIVE,
            "unset by default: no speculative decoding",
            f"{SPECULATIVE} ALGORITHM (EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM)",
        ),
    ),
    prefixes=("sglang:", "sglang_"),
    prefix_note=ROUTER_PREFIX_NOTE,
    series=(
        M("sglang:num_running_reqs"),
        M("sglang:num_queue_reqs"),
        M("sglang:num_grammar_queue_reqs"),
        M("sglang:num_paused_reqs"),
        M("sglang:num_retracted_reqs"),
        M("sglang:gen_throughput"),
        M("sglang:cache_hit_rate"),
        M("sglang:token_usage"),
        M("sglang:full_token_usage"),
        M("sglang:utilization"),
        M("sglang:num_used_tokens"),
        M("sglang:kv_used_tokens", since="0.5.16", absent_beside="sglang:max_total_num_tokens"),
        M("sglang:kv_evictable_tokens", since="0.5.16"),
        M("sglang:kv_available_tokens", since="0.5.16"),
        M("sglang:max_total_num_tokens"),
        M("sglang:decode_sum_seq_lens"),
        M("sglang:context_len"),
        M("sglang:page_size"),
        M("sglang:kv_cache_memory_usage_gb"),
        M("sglang:weight_memory_usage_gb"),
        M(
            "sglang:num_prefill_bootstrap_queue_reqs",
            old_name="sglang:num_prefill_prealloc_queue_reqs",
            renamed_in="0.5.16",
        ),
        M("sglang:num_prefill_inflight_queue_reqs"),
        M("sglang:num_decode_prealloc_queue_reqs"),
        M("sglang:num_decode_transfer_queue_reqs"),
        M("sglang:realtime_tokens_total"),
        M("sglang:num_retracted_requests_total"),
        M("sglang:num_bootstrap_failed_reqs_total"),
        M("sglang:num_transfer_failed_reqs_total"),
        M("sglang:prefill_effective_tokens_total", since="0.5.20", absent_beside="sglang:realtime_tokens_total"),
        M("sglang:forward_execution_seconds_total"),
        M("sglang:scheduler_idle_seconds_total"),
        M("sglang:prompt_tokens_total"),
        M("sglang:generation_tokens_total"),
        M("sglang:num_requests_total"),
        M("sglang:num_aborted_requests_total"),
        M("sglang:cached_tokens_total"),
        M("sglang:http_requests_total"),
        M("sglang:http_responses_total"),
        M("sglang:http_requests_active"),
        M("sglang:diffusion_num_queue_reqs", since="0.5.21"),
        M("sglang:diffusion_num_running_reqs", since="0.5.21"),
        M("sglang:diffusion_requests_total", since="0.5.21"),
        H("sglang:kv_transfer_latency_ms", role=PREFILL_ONLY),
        H("sglang:kv_transfer_speed_gb_s", role=PREFILL_ONLY),
        H("sglang:kv_transfer_total_mb", role=PREFILL_ONLY),
        H("sglang:queue_time_seconds"),
        H("sglang:per_stage_req_latency_seconds"),
        H("sglang:time_to_first_token_seconds"),
        H("sglang:e2e_request_latency_seconds"),
        H("sglang:inter_token_latency_seconds"),
        H(
            "sglang:request_time_per_output_token_seconds",
            since="0.5.22",
            absent_beside="sglang:time_to_first_token_seconds",
        ),
        H("sglang:prompt_tokens_histogram"),
        H("sglang:generation_tokens_histogram"),
        H("sglang:diffusion_request_latency_seconds", since="0.5.21"),
        H("sglang:diffusion_queue_time_seconds", since="0.5.21"),
        H("sglang:diffusion_generation_batch_size", since="0.5.21"),
        H("sglang:diffusion_stage_host_latency_seconds", since="0.5.21"),
        # Speculative decoding: scheduler gauges over the last log interval, written only with a draft algorithm.
        M("sglang:spec_accept_length", needs=(SPECULATIVE,)),
        M("sglang:spec_accept_rate", needs=(SPECULATIVE,)),
        M("sglang:spec_verify_calls_total", needs=(SPECULATIVE,)),
    ),
)

HICACHE = SourceTable(
    source="hicache",
    job="sglang",
    what="SGLang HiCache GPU<->Host tier (--enable-hierarchical-cache)",
    exporter="SGLang HiCache",
    switch="--enable-hierarchical-cache",
    version_of="sglang",
    versions=SGLANG_VERSIONS,
    prefixes=("sglang:", "sglang_"),
    prefix_note=ROUTER_PREFIX_NOTE,
    series=(
        M("sglang:hicache_host_used_tokens"),
        M("sglang:hicache_host_total_tokens"),
        M("sglang:hicache_backup_bytes_total", since="0.5.20", absent_beside="sglang:hicache_backup_tokens_total"),
        M("sglang:hicache_backup_tokens_total"),
        M("sglang:load_back_bytes_total", since="0.5.20"),
        M("sglang:load_back_tokens_total"),
        M("sglang:evicted_tokens_total"),
        M("sglang:hicache_dropped_tokens_total"),
        H("sglang:hicache_backup_duration_seconds"),
        H("sglang:load_back_duration_seconds"),
        H("sglang:eviction_duration_seconds"),
    ),
)

HICACHE_STORAGE = SourceTable(
    source="hicache_storage",
    job="sglang",
    what="SGLang HiCache Host<->Store tier (storage backend)",
    exporter="SGLang HiCache storage",
    switch="--hicache-storage-backend",
    version_of="sglang",
    versions=SGLANG_VERSIONS,
    prefixes=("sglang:", "sglang_"),
    prefix_note=ROUTER_PREFIX_NOTE,
    series=(
        M("sglang:backuped_tokens_total"),
        M("sglang:prefetched_tokens_total"),
        M("sglang:storage_prefetch_hit_tokens_total", since="0.5.20"),
        M("sglang:storage_prefetch_unfulfilled_tokens_total", since="0.5.20"),
        M("sglang:storage_prefetch_deferred_tokens_total", since="0.5.20"),
        M("sglang:hicache_backup_dropped_tokens_total"),
        M("sglang:hicache_prefetch_aux_alloc_failed_tokens_total"),
        H("sglang:prefetch_pgs"),
        H("sglang:backup_pgs"),
        H("sglang:prefetch_bandwidth"),
        H("sglang:backup_bandwidth"),
    ),
)

SMG_VERSIONS = ("1.4.0", "1.5.0", "1.6.0", "1.7.0", "1.8.0", "1.9.0")  # the tags read, and main @ f8daa88 (1.9.0)
SMG_MAIN = "1.9.0"  # the version main after the v1.9.0 tag reports: its new names say this
SMG_MODEL_CAP_SINCE = SMG_MAIN  # smg#2093: the model label capped at 1,024 values, the rest model="other"

GATEWAY = SourceTable(
    source="gateway",
    job="gateway",
    what="SGLang model gateway (smg)",
    exporter="the model gateway (smg)",
    versions=SMG_VERSIONS,
    flags=(
        Flag(ENGINE_METRICS, "off by default", ENGINE_METRICS),
        Flag(MAX_CONCURRENT, "default -1: no admission control", f"{MAX_CONCURRENT} N with N > 0"),
    ),
    series=(
        M("smg_admission_inflight", needs=(MAX_CONCURRENT,), since=SMG_MAIN),
        M("smg_admission_queue_depth", needs=(MAX_CONCURRENT,), since=SMG_MAIN),
        M("smg_admission_queue_rejected_total", needs=(MAX_CONCURRENT,), since=SMG_MAIN),
        M("smg_worker_requests_active"),
        M("smg_engine_running_requests", needs=(ENGINE_METRICS,), since="1.7.0"),
        M("smg_engine_waiting_requests", needs=(ENGINE_METRICS,), since="1.7.0"),
        M("smg_http_requests_total"),
        M("smg_router_requests_total"),
        M("smg_http_responses_total"),
        M("smg_router_request_errors_total"),
        M("smg_worker_health"),
        M("smg_worker_cb_state"),
        M("smg_worker_selection_total"),
        H("smg_router_request_duration_seconds"),
        H("smg_pd_prefill_duration_seconds", role=NOT_SGLANG_GRPC, since="1.7.0"),
        H("smg_pd_kv_transfer_duration_seconds", role=VLLM_GRPC_ONLY, since="1.7.0"),
        H("smg_pd_ttft_seconds", since="1.7.0"),
        # Runtime health (a canary task and a 1 s sampler, always on) from 1.6.0, KV-event subscriptions from
        # 1.6.0, the PD failure counters from 1.7.0, overload protection on main (1.9.0).
        H("smg_tokio_event_loop_delay_seconds", since="1.6.0"),
        M("smg_tokio_event_loop_stalls_total", since="1.6.0"),
        M("smg_tokio_worker_busy_ratio", since="1.6.0", absent_beside="smg_worker_health"),
        M("smg_tokio_global_queue_depth", since="1.6.0"),
        M("smg_workers_overloaded", since=SMG_MAIN),
        M("smg_worker_overload_shed_total", since=SMG_MAIN),
        M("smg_worker_retry_backoff_seconds"),
        M("smg_kv_event_subscription_failures_total", since="1.6.0"),
        M("smg_pd_bootstrap_failures_total", since="1.7.0"),
        M("smg_pd_kv_transfer_failures_total", role=VLLM_NIXL_ONLY, since="1.7.0"),
    ),
)

MOONCAKE_VERSIONS = ("0.3.9", "0.3.10", "0.3.11", "0.3.12")  # the tags read
MULTI_TENANTS = "--enable_multi_tenants"
PROMOTION_ON_HIT = "--promotion_on_hit"
TENT_METRICS = "-DTENT_METRICS_ENABLED=ON"
TENT_PORT = "9100"  # TENT_METRICS_HTTP_PORT's default, and node_exporter's
TENT_JOB = "mooncake-tent"
PROMOTION_ROLE = (
    "counts only with --promotion_on_hit=true on the master (default false: written, and 0 for ever); "
    "L2 (the master's LOCAL_DISK replicas) to L1 (MEMORY)"
)
TENANT_GAUGE_ROLE = "one series per tenant with quota state; none until a tenant holds or reserves bytes"

MOONCAKE_MASTER = SourceTable(
    source="mooncake_master",
    job="mooncake-master",
    what="Mooncake Store master",
    exporter="the Mooncake master",
    versions=MOONCAKE_VERSIONS,
    flags=(Flag(MULTI_TENANTS, "off by default: no tenant quota admission", f"{MULTI_TENANTS}=true"),),
    series=(
        M("master_total_capacity_bytes"),
        M("master_allocated_bytes"),
        M("segment_total_capacity_bytes"),
        M("segment_allocated_bytes"),
        M("master_key_count"),
        M("master_active_clients"),
        M("mem_cache_nums_"),
        M("file_cache_nums_"),
        M("master_total_file_capacity_bytes"),
        M("master_allocated_file_size_bytes"),
        M("mem_cache_hit_nums_"),
        M("file_cache_hit_nums_"),
        M("mem_cache_hit_bytes_total", since="0.3.12"),
        M("file_cache_hit_bytes_total", since="0.3.12"),
        M("valid_get_nums_"),
        M("total_get_nums_"),
        M("master_successful_evictions_total"),
        M("master_attempted_evictions_total"),
        M("master_evicted_key_count"),
        M("master_evicted_size_bytes"),
        M("master_put_start_requests_total"),
        M("master_put_start_failures_total"),
        M("master_put_start_alloc_failures_total", since="0.3.11"),
        M("master_get_replica_list_requests_total"),
        M("master_get_replica_list_failures_total"),
        # Tenant quotas (0.3.12, master_admin_service.cpp): per-tenant gauges appended to /metrics while the
        # master holds quota state; the reject and tenant-eviction counters appear at their first event.
        M("mooncake_tenant_quota_used_bytes", since="0.3.12", needs=(MULTI_TENANTS,), role=TENANT_GAUGE_ROLE),
        M("mooncake_tenant_quota_reserved_bytes", since="0.3.12", needs=(MULTI_TENANTS,), role=TENANT_GAUGE_ROLE),
        M("mooncake_tenant_quota_effective_bytes", since="0.3.12", needs=(MULTI_TENANTS,), role=TENANT_GAUGE_ROLE),
        M("mooncake_tenant_quota_over_quota", since="0.3.12", needs=(MULTI_TENANTS,), role=TENANT_GAUGE_ROLE),
        M("mooncake_tenant_quota_allocatable_capacity_bytes", since="0.3.12"),
        M("mooncake_tenant_quota_reject_total", since="0.3.12", needs=(MULTI_TENANTS,)),
        M("mooncake_tenant_evict_bytes_total", since="0.3.12", needs=(MULTI_TENANTS,)),
        # L2 -> L1 promotion on hit (0.3.12): always serialised, counting only with --promotion_on_hit.
        M("master_promotion_in_flight", since="0.3.12", role=PROMOTION_ROLE, absent_beside="master_key_count"),
        M("master_promotion_admitted_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_completed_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_completed_bytes_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_expired_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_failed_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_cancelled_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_rejected_frequency_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_rejected_watermark_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_rejected_cap_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_candidate_recorded_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_candidate_dropped_limit_total", since="0.3.12", role=PROMOTION_ROLE),
        M("master_promotion_candidate_expired_unevaluated_total", since="0.3.12", role=PROMOTION_ROLE),
    ),
)

MOONCAKE_CLIENT = SourceTable(
    source="mooncake_client",
    job="mooncake-client",
    what="Mooncake Store client (incl. SSD metrics)",
    exporter="the Mooncake client",
    versions=MOONCAKE_VERSIONS,
    series=(
        M("mooncake_transfer_read_bytes"),
        M("mooncake_transfer_write_bytes"),
        M("mooncake_ssd_read_bytes_total", since="0.3.11"),
        M("mooncake_ssd_write_bytes_total", since="0.3.11"),
        M("mooncake_ssd_read_ops_total", since="0.3.11"),
        M("mooncake_ssd_write_ops_total", since="0.3.11"),
    ),
)

# The transfer engine's own metrics server (TENT, tent_metrics.h): compiled out unless Mooncake is built with
# -DTENT_METRICS_ENABLED=ON, then served by each process that runs a transfer engine (an SGLang rank) on
# TENT_METRICS_HTTP_PORT, default 9100: node_exporter's default port, so on a node running both one of them
# cannot bind (``dashgen doctor`` names the clash). Unlabelled in 0.3.12 (one series per process); the per-attempt
# counters (tent_transport_attempts_total ...) are on main after 0.3.12.post1, not in a tag read.
MOONCAKE_TENT = SourceTable(
    source="mooncake_tent",
    job=TENT_JOB,
    what="Mooncake transfer engine metrics (TENT, built with -DTENT_METRICS_ENABLED=ON)",
    unstated="not-exported",
    exporter="Mooncake's TENT server (port 9100)",
    version_of="mooncake_client",
    versions=MOONCAKE_VERSIONS,
    switch=TENT_METRICS,
    not_exported=(
        f"TENT's metrics are compiled out unless Mooncake is built with `{TENT_METRICS}` and run with "
        f"`TENT_METRICS_ENABLED=true`; its server listens on `TENT_METRICS_HTTP_PORT`, default {TENT_PORT}, which "
        "is node_exporter's default port (`dashgen doctor` names the clash). Export it with its own scrape job "
        f'(default `{TENT_JOB}`) and state `[sources.mooncake_tent] status = "exported"`.'
    ),
    series=(
        M("tent_read_requests_total"),
        M("tent_write_requests_total"),
        M("tent_read_failures_total"),
        M("tent_write_failures_total"),
        M("tent_read_bytes_total"),
        M("tent_write_bytes_total"),
        M("tent_transport_failover_total", since="0.3.11"),
        M("tent_deadline_infeasible_total", since="0.3.12"),
        H("tent_read_latency_us"),
        H("tent_write_latency_us"),
        H("tent_deadline_mlu_permille", since="0.3.12", absent_beside="tent_read_latency_us"),
        H("tent_stage_queue_wait_us", since="0.3.12"),
        H("tent_stage_transport_us", since="0.3.12"),
    ),
)

DCGM = SourceTable(
    source="dcgm",
    job="dcgm",
    what="NVIDIA DCGM exporter",
    exporter="dcgm-exporter",
    series=(
        M("DCGM_FI_DEV_POWER_USAGE"),
        M("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
        M("DCGM_FI_DEV_GPU_TEMP"),
        M("DCGM_FI_DEV_MEMORY_TEMP"),
        M("DCGM_FI_DEV_SM_CLOCK"),
        M("DCGM_FI_DEV_MEM_CLOCK"),
        M("DCGM_FI_DEV_GPU_UTIL"),
        M("DCGM_FI_DEV_MEM_COPY_UTIL"),
        M("DCGM_FI_DEV_FB_USED"),
        M("DCGM_FI_DEV_FB_FREE"),
        M("DCGM_FI_DEV_FB_RESERVED"),
        M("DCGM_FI_DEV_FB_TOTAL"),
        M("DCGM_FI_DEV_XID_ERRORS"),
        M("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"),
        M("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
        M("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
        M("DCGM_FI_PROF_DRAM_ACTIVE"),
        M("DCGM_FI_PROF_SM_ACTIVE"),
        M("DCGM_FI_PROF_SM_OCCUPANCY"),
        M("DCGM_FI_PROF_PCIE_TX_BYTES"),
        M("DCGM_FI_PROF_PCIE_RX_BYTES"),
        M("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"),
        M("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"),
        M("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"),
        M("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
        M("DCGM_FI_DEV_ROW_REMAP_FAILURE"),
        M("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"),
        M("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
        M("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
        M("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"),
    ),
)

GPM = SourceTable(
    source="gpm",
    job="gpm",
    what="GPM sampler, 1 s per GPU (in-house)",
    exporter="the GPM sampler",
    series=(
        M("gpm_sm_active_ratio"),
        M("gpm_sm_occupancy_ratio"),
        M("gpm_tensor_active_ratio"),
        M("gpm_dram_active_ratio"),
        M("gpm_gpu_busy_ratio"),
        M("gpm_memory_used_bytes"),
        M("gpm_memory_total_bytes"),
        M("gpm_power_watts"),
        M("gpm_temperature_celsius"),
        M("gpm_sm_clock_hertz"),
        M("gpm_clock_event_reasons"),
        M("gpm_sample_valid"),
    ),
)

NODE_EXPORTER = SourceTable(
    source="node_exporter",
    job="node",
    what="Prometheus node_exporter",
    exporter="node_exporter",
    series=(
        M("node_disk_read_bytes_total"),
        M("node_disk_written_bytes_total"),
        M("node_disk_reads_completed_total"),
        M("node_disk_writes_completed_total"),
        M("node_disk_reads_merged_total"),
        M("node_disk_writes_merged_total"),
        M("node_disk_read_time_seconds_total"),
        M("node_disk_write_time_seconds_total"),
        M("node_disk_io_time_seconds_total"),
        M("node_disk_io_time_weighted_seconds_total"),
        M("node_disk_discards_completed_total"),
        M("node_disk_flush_requests_total"),
        M("node_disk_io_now"),
        M("node_disk_info"),
        M("node_filesystem_size_bytes"),
        M("node_filesystem_avail_bytes"),
        M("node_filesystem_free_bytes"),
        M("node_filesystem_files"),
        M("node_filesystem_files_free"),
        M("node_filesystem_readonly"),
        M("node_filesystem_device_error"),
        M("node_filesystem_mount_info"),
        M("node_cpu_seconds_total"),
        M("node_memory_MemTotal_bytes"),
        M("node_memory_MemAvailable_bytes"),
        M("node_memory_MemFree_bytes"),
        M("node_memory_Cached_bytes"),
        M("node_memory_Buffers_bytes"),
        M("node_load1"),
        M("node_load5"),
        M("node_load15"),
        M("node_network_receive_bytes_total"),
        M("node_network_transmit_bytes_total"),
        M("node_network_receive_errs_total"),
        M("node_network_transmit_errs_total"),
        M("node_vmstat_oom_kill"),
        M("node_uname_info"),
        M("node_timex_offset_seconds"),
        M("node_timex_sync_status"),
        M("node_timex_maxerror_seconds"),
        M("node_timex_estimated_error_seconds"),
    ),
)

VMAGENT = SourceTable(
    source="vmagent",
    exporter="vmagent, the per-node collector (profile [collector]; up and scrape_* for every target it scrapes)",
    series=(
        M("up"),
        M("scrape_duration_seconds"),
        M("scrape_samples_scraped"),
        M("process_cpu_seconds_total"),
        M("process_cpu_cores_available"),
        M("process_resident_memory_bytes"),
        M("process_memory_limit_bytes"),
        M("process_num_threads"),
        M("vmagent_remotewrite_pending_data_bytes"),
        M("vm_persistentqueue_bytes_pending"),
        M("vmagent_remotewrite_packets_dropped_total"),
        M("vmagent_remotewrite_samples_dropped_total"),
        M("vm_persistentqueue_bytes_dropped_total"),
        M("vm_promscrape_scrapes_failed_total"),
    ),
)

RULE_EVALUATOR = SourceTable(
    source="rule_evaluator",
    exporter="the rule evaluator (vmalert or Prometheus) loading rules/<profile>.yml",
    series=(M("ALERTS"), M("ALERTS_FOR_STATE")),
)

TABLES: Mapping[str, SourceTable] = {
    table.source: table
    for table in (
        SGLANG,
        HICACHE,
        HICACHE_STORAGE,
        MOONCAKE_MASTER,
        MOONCAKE_CLIENT,
        GATEWAY,
        MOONCAKE_TENT,
        DCGM,
        GPM,
        NODE_EXPORTER,
        VMAGENT,
        RULE_EVALUATOR,
    )
}
