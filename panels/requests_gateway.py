"""Requests and gateway: throughput (token/s, tokens per minute), latency percentiles (TTFT,
end-to-end, inter-token, TPOT, queue wait), running and waiting requests per PP stage, PD queues,
the engine's HTTP layer, and the model gateway's layers (admission, router, per-backend view).

Rules this group carries:
- S3: engine request counts are per (node, PP stage); nothing is summed across ``pp_rank``;
- S4: every gateway layer has its own panel, and no expression adds a gateway series to another
  layer or to an engine queue — one request passes several layers and is counted in each;
- percentiles come from summed buckets ``sum by (le, ...)``, never from averaged ratios;
- tokenizer (request-level) series exist on node 0 of each instance only, without rank labels.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dashgen_panels.engine_load import pd_roles, pool_key, pool_matchers
from dashgen_panels.gateway import gateway_panels
from dashgen_queries import sglang as sg
from dashgen_queries import stage_bands, stage_rates
from dashgen_queries.promql import FIRST_EVENT_RATE, scale

from dashgen.deployment.profile import TEXT, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import source_status_panel, timeseries
from dashgen.render.spec import Evidence, FanOut, GroupSpec, PanelSpec, Target, split_rows

TITLE = "Requests and gateway"
WORKLOADS = (TEXT,)  # S25: the workload kinds this group serves (dashgen.dashboard)
GROUP = "requests_gateway"

TOKENS_PER_SECOND = "count:tok/s"  # Grafana custom unit: K/M scaling plus the quantity's name
TOKENS_PER_MINUTE = "count:tok/min"

TOKENIZER_LIMIT = (
    "emitted by the tokenizer manager on node 0 of each instance only (no tp/pp rank labels), so the node in "
    "the legend is the instance's entry node and a $node selection without that node shows nothing; counters "
    "count finished requests and appear only after the first one"
)
SCHEDULER_LIMIT = (
    "scheduler gauges are reported by the stats-logging TP rank of each PP stage (every TP rank with "
    "--enable-metrics-for-all-schedulers, all with the same value), so each stage shows the max over its TP "
    "ranks; stages are never summed (S3): one request is counted once in each PP stage it passes"
)


def _ts(
    key: str, title: str, evidence: Evidence, targets: list[Target], unit: str, width: int = 12, **kw: Any
) -> PanelSpec:
    return timeseries(
        key=f"{GROUP}.{key}", title=title, evidence=evidence, targets=tuple(targets), unit=unit, width=width, **kw
    )


def _slo_line(seconds: float) -> dict[str, Any]:
    return {"thresholds": (("green", None), ("red", seconds)), "threshold_style": "line"}


# --- throughput ---------------------------------------------------------------------------------


def throughput_panels(profile: Profile) -> list[PanelSpec]:
    pools = sg.instance_labels(profile)[1:]  # engine_type: PD pools count the same request each
    tps = [
        Target(sg.tokenizer_rate(profile, "sglang:prompt_tokens_total", pools), "prompt" + sg.pool_legend(profile)),
        Target(
            sg.tokenizer_rate(profile, "sglang:generation_tokens_total", pools), "generation" + sg.pool_legend(profile)
        ),
    ]
    tpm = [
        Target(
            scale(sg.tokenizer_rate(profile, "sglang:prompt_tokens_total", pools), 60),
            "prompt TPM" + sg.pool_legend(profile),
        ),
        Target(
            scale(sg.tokenizer_rate(profile, "sglang:generation_tokens_total", pools), 60),
            "generation TPM" + sg.pool_legend(profile),
        ),
    ]
    pd_note = (
        " Prefill and decode pools are kept apart by engine_type: a PD request is counted by both "
        "pools' tokenizers, so the pools are not added."
        if sg.is_pd(profile)
        else ""
    )
    return [
        _ts(
            "tokens_per_second",
            "Token throughput: prompt and generation (tokens/s)",
            Evidence(
                "SGLang tokenizer (sglang:prompt_tokens_total, sglang:generation_tokens_total)",
                "rate(...[$__rate_interval]) of prompt and generation tokens of finished requests, tokens per "
                "second, summed over the selected instances (distinct requests)" + pd_note,
                TOKENIZER_LIMIT + "; tokens are booked when a request finishes, so long generations arrive in steps",
            ),
            tps,
            TOKENS_PER_SECOND,
        ),
        _ts(
            "tokens_per_minute",
            "Tokens per minute (TPM, tokens/min): prompt and generation",
            Evidence(
                "SGLang tokenizer (sglang:prompt_tokens_total, sglang:generation_tokens_total)",
                "tokens per minute = rate(...[$__rate_interval]) x 60, unit tokens/min (the axis shows "
                "tokens per minute, not per second)" + pd_note,
                TOKENIZER_LIMIT + "; a per-minute rate of a window average, not a count of one calendar minute",
            ),
            tpm,
            TOKENS_PER_MINUTE,
        ),
        *(
            _ts(
                pool_key("generation_per_instance", role),
                "Generation tokens/s per instance (entry node" + (f", {role} pool)" if role else ")"),
                Evidence(
                    "SGLang tokenizer (sglang:generation_tokens_total)",
                    "generation tokens per second of each instance, one series per entry node"
                    + (f", {role} pool only (the other pool on its own panel)" if role else ""),
                    TOKENIZER_LIMIT + "; to compare instances and spot a slow one",
                ),
                [
                    Target(
                        sg.tokenizer_rate(
                            profile, "sglang:generation_tokens_total", sg.instance_labels(profile), *pool_matchers(role)
                        ),
                        "{{node}}" + sg.pool_legend(profile),
                    )
                ],
                TOKENS_PER_SECOND,
            )
            for role in pd_roles(profile)
        ),
    ] + [
        _ts(
            pool_key("scheduler_tokens_per_stage", role),
            _stage_title(profile, "tokens", role),
            Evidence(
                "SGLang scheduler (sglang:realtime_tokens_total{mode=prefill_compute|prefill_cache|decode})",
                "tokens per second each PP stage's scheduler processed, split by mode, max over the TP ranks "
                "of a stage" + (f"; {role} pool only (engine_type), the other pool on its own panel" if role else ""),
                SCHEDULER_LIMIT + "; updated at the scheduler's log interval, so short bursts are smoothed",
            ),
            [
                Target(
                    sg.named_stage(
                        profile,
                        sg.per_stage_rate(
                            profile, "sglang:realtime_tokens_total", *pool_matchers(role), extra=("mode",)
                        ),
                    ),
                    sg.stage_legend(profile) + " {{mode}}",
                )
            ],
            TOKENS_PER_SECOND,
            width=24 if not role else 12,
        )
        for role in pd_roles(profile)
    ]


def request_rate_panel(profile: Profile) -> PanelSpec:
    labels = sg.instance_labels(profile)[1:]
    return _ts(
        "finished_and_aborted",
        "Finished and aborted requests (req/s)",
        Evidence(
            "SGLang tokenizer (sglang:num_requests_total, sglang:num_aborted_requests_total)",
            "finished and aborted requests per second over the selected instances, two series not added",
            TOKENIZER_LIMIT + "; sglang:num_aborted_requests_total is absent (not 0) until the first "
            "abort, and " + FIRST_EVENT_RATE,
        ),
        [
            Target(
                sg.tokenizer_rate(profile, "sglang:num_requests_total", labels), "finished" + sg.pool_legend(profile)
            ),
            Target(
                sg.tokenizer_rate(profile, "sglang:num_aborted_requests_total", labels),
                "aborted" + sg.pool_legend(profile),
            ),
        ],
        "reqps",
    )


# --- latency ------------------------------------------------------------------------------------


def _quantile_targets(
    profile: Profile,
    histogram: str,
    labels: list[str],
    legend: str,
    quantiles: tuple[float, ...] = sg.QUANTILES,
    stage: bool = False,
) -> list[Target]:
    series = sg.engine(profile, f"{histogram}_bucket", stage=stage)
    return [Target(sg.histogram_quantile(q, series, labels), f"{sg.quantile_legend(q)}{legend}") for q in quantiles]


def latency_panels(profile: Profile) -> list[PanelSpec]:
    pools = sg.instance_labels(profile)[1:]
    pool_legend = sg.pool_legend(profile)
    slo = profile.slo
    quantile_note = (
        "percentiles from histogram_quantile over bucket rates summed by (le, engine_type) across the "
        "selected instances; the value is interpolated inside a bucket, so it is only as precise as "
        "the bucket bounds. The SLO group's 'Latency P50 / P99 as the SLO counts it' reads the same "
        "histograms over the whole deployment (prefill servers of a PD pair left out, so a request "
        "counts once): a different scope, not a different definition"
    )
    panels = [
        _ts(
            "ttft",
            "Time to first token p50 / p95 / p99, selected instances (s)",
            Evidence(
                "SGLang tokenizer (sglang:time_to_first_token_seconds histogram)",
                f"TTFT percentiles, seconds; the red line is the profile's TTFT SLO {slo.ttft_seconds:g} s",
                TOKENIZER_LIMIT + "; " + quantile_note,
            ),
            _quantile_targets(profile, "sglang:time_to_first_token_seconds", pools, pool_legend),
            "s",
            width=8,
            **_slo_line(slo.ttft_seconds),
        ),
        _ts(
            "e2e",
            "End-to-end request latency p50 / p95 / p99, selected instances (s)",
            Evidence(
                "SGLang tokenizer (sglang:e2e_request_latency_seconds histogram)",
                f"end-to-end latency percentiles, seconds; red line: e2e SLO {slo.e2e_seconds:g} s",
                TOKENIZER_LIMIT + "; " + quantile_note + "; the gateway's own time is not included",
            ),
            _quantile_targets(profile, "sglang:e2e_request_latency_seconds", pools, pool_legend),
            "s",
            width=8,
            **_slo_line(slo.e2e_seconds),
        ),
        _ts(
            "itl",
            "Inter-token latency p50 / p95 / p99 (s)",
            Evidence(
                "SGLang tokenizer (sglang:inter_token_latency_seconds histogram)",
                "gap between consecutive output chunks, seconds (token-weighted: long generations weigh more)",
                TOKENIZER_LIMIT + "; " + quantile_note,
            ),
            _quantile_targets(profile, "sglang:inter_token_latency_seconds", pools, pool_legend),
            "s",
            width=8,
        ),
        _ts(
            "tpot",
            "Time per output token per request p50 / p95 / p99, selected instances (s)",
            Evidence(
                "SGLang tokenizer (sglang:request_time_per_output_token_seconds histogram)",
                f"per-request mean time per output token (TPOT), seconds; red line: TPOT SLO "
                f"{slo.tpot_seconds:g} s. Request-weighted, unlike the inter-token latency",
                TOKENIZER_LIMIT + "; " + quantile_note,
            ),
            _quantile_targets(profile, "sglang:request_time_per_output_token_seconds", pools, pool_legend),
            "s",
            width=8,
            **_slo_line(slo.tpot_seconds),
        ),
        *(
            _ts(
                pool_key("ttft_p95_per_instance", role),
                "TTFT p95 per instance" + (f" ({role} pool, s)" if role else " (s)"),
                Evidence(
                    "SGLang tokenizer (sglang:time_to_first_token_seconds histogram)",
                    "TTFT p95 of each instance (buckets summed by le, node, engine_type), to find the slow one",
                    TOKENIZER_LIMIT + "; an instance with few requests in the window has a coarse percentile",
                ),
                [
                    Target(
                        sg.histogram_quantile(
                            0.95,
                            sg.engine(
                                profile, "sglang:time_to_first_token_seconds_bucket", *pool_matchers(role), stage=False
                            ),
                            sg.instance_labels(profile),
                        ),
                        "{{node}}" + pool_legend,
                    )
                ],
                "s",
                width=8,
            )
            for role in pd_roles(profile)
        ),
        *(
            _ts(
                pool_key("queue_time", role),
                _stage_title(profile, "queue_time", role),
                Evidence(
                    "SGLang scheduler (sglang:queue_time_seconds histogram)",
                    "time a request waited in a scheduler's waiting queue, seconds, percentiles per PP stage "
                    "(buckets summed by le, pp_rank, engine_type over the selected nodes)",
                    "scheduler histograms come from the logging TP rank of each stage (every rank with "
                    "--enable-metrics-for-all-schedulers, which repeats the same requests and leaves the "
                    "percentile unchanged); stages are not pooled together (S3)",
                ),
                [
                    Target(
                        sg.histogram_quantile(
                            q,
                            sg.engine(profile, "sglang:queue_time_seconds_bucket", *pool_matchers(role)),
                            [profile.label("pp_rank"), sg.ENGINE_TYPE],
                        ),
                        f"{sg.quantile_legend(q)}{' PP{{pp_rank}}' if profile.has_pp else ''}{pool_legend}",
                    )
                    for q in (0.95, 0.99)
                ],
                "s",
                width=8,
            )
            for role in pd_roles(profile)
        ),
        _ts(
            "prompt_length",
            "Prompt length p50 / p95 / p99 (tokens)",
            Evidence(
                "SGLang tokenizer (sglang:prompt_tokens_histogram)",
                "prompt length distribution of finished requests, tokens per request (long-context load "
                "shows here before it shows in latency)",
                TOKENIZER_LIMIT + "; " + quantile_note,
            ),
            _quantile_targets(profile, "sglang:prompt_tokens_histogram", pools, pool_legend),
            "short",
            width=8,
        ),
    ]
    if sg.is_pd(profile):
        panels.append(
            _ts(
                "pd_stage_latency",
                "PD request stage latency p95 by stage (s)",
                Evidence(
                    "SGLang scheduler (sglang:per_stage_req_latency_seconds{stage} histogram)",
                    "p95 time a request spends in each PD stage (bootstrap, prealloc, transfer, ...), seconds, "
                    "per pool",
                    "one series per (stage, engine_type); the stages are consecutive parts of one request and "
                    "are not added into a total here",
                ),
                [
                    Target(
                        sg.histogram_quantile(
                            0.95,
                            sg.engine(profile, "sglang:per_stage_req_latency_seconds_bucket"),
                            ["stage", sg.ENGINE_TYPE],
                        ),
                        "p95 {{stage}} · {{engine_type}}",
                    )
                ],
                "s",
                width=8,
            )
        )
    return panels


# --- engine queues per PP stage -----------------------------------------------------------------


STAGE_TITLES = {
    ("running", True): "Running requests per PP stage, per DP group (engine)",
    ("running", False): "Running requests per instance, per DP group (engine)",
    ("waiting", True): "Waiting requests per PP stage, per DP group (engine queue)",
    ("waiting", False): "Waiting requests per instance, per DP group (engine queue)",
    ("retractions", True): "Retracted requests per PP stage (req/s)",
    ("retractions", False): "Retracted requests per instance (req/s)",
    ("tokens", True): "Tokens processed per PP stage by mode (scheduler, tokens/s)",
    ("tokens", False): "Tokens processed per instance by mode (scheduler, tokens/s)",
    ("queue_time", True): "Queue wait per PP stage p95 / p99 (s)",
    ("queue_time", False): "Queue wait p95 / p99, selected instances (s)",
}


def _stage_title(profile: Profile, key: str, role: str) -> str:
    """The per-stage title ("instance" where the profile has no PP), with the pool in a PD deployment."""
    title = STAGE_TITLES[(key, profile.has_pp)]
    return f"{title} ({role} pool)" if role else title


def engine_queue_panels(profile: Profile) -> list[PanelSpec]:
    """Running, waiting and retracted requests per stage: once per pool in a PD deployment (S27)."""
    legend = sg.stage_legend(profile)
    panels = []
    for role in pd_roles(profile):
        pool = pool_matchers(role)
        fan_out = FanOut("dp_group", (*sg.stage_labels(profile), sg.STAGE_NAME), "top", role)
        retracted = stage_rates.retracted_read(profile, *pool)
        running, waiting = stage_bands.RUNNING_PER_DP_GROUP, stage_bands.WAITING_PER_DP_GROUP
        bands = {
            pool_key(key, role): stage_bands.read(profile, band, role)
            for key, band in (("running_per_stage", running), ("waiting_per_stage", waiting))
        }
        panels += [
            replace(panel, fan_out=replace(fan_out, band=bands.get(panel.key.removeprefix(f"{GROUP}."), "")))
            for panel in (
                _ts(
                    pool_key("running_per_stage", role),
                    _stage_title(profile, "running", role),
                    Evidence(
                        "SGLang scheduler (sglang:num_running_reqs)",
                        "requests in the running batch of each scheduler, per node, stage and DP group: one series "
                        "per DP group (the SLO group's 'Batch size ... DP groups summed' adds the DP groups of a "
                        "stage; the two answer different questions and are named apart)",
                        SCHEDULER_LIMIT,
                    ),
                    [Target(sg.named_stage(profile, stage_bands.expression(profile, running, role)), legend)],
                    "short",
                    width=8,
                    decimals=0,
                ),
                _ts(
                    pool_key("waiting_per_stage", role),
                    _stage_title(profile, "waiting", role),
                    Evidence(
                        "SGLang scheduler (sglang:num_queue_reqs)",
                        "requests in each scheduler's waiting queue, per node, stage and DP group (the SLO group's "
                        "'Queue length ... DP groups summed' adds the DP groups of a stage)",
                        SCHEDULER_LIMIT + "; this is the engine layer only: gateway admission queues are on their "
                        "own panels and are not added here (S4)",
                    ),
                    [Target(sg.named_stage(profile, stage_bands.expression(profile, waiting, role)), legend)],
                    "short",
                    width=8,
                    decimals=0,
                ),
                _ts(
                    pool_key("retractions", role),
                    _stage_title(profile, "retractions", role),
                    Evidence(
                        "SGLang scheduler (sglang:num_retracted_requests_total)",
                        "requests retracted (pushed back to waiting for lack of KV slots) per second, per stage",
                        SCHEDULER_LIMIT
                        + "; the counter is absent, not 0, until the first retraction, and "
                        + FIRST_EVENT_RATE
                        + retracted.note,
                    ),
                    [Target(sg.named_stage(profile, retracted.expr), legend, interval=retracted.step)],
                    "reqps",
                    width=8,
                    **({"no_value": retracted.no_value} if retracted.no_value else {}),
                ),
            )
        ]
    if sg.is_pd(profile):
        pd_queues = (
            (
                "prefill_bootstrap_queue",
                "sglang:num_prefill_bootstrap_queue_reqs",
                "Prefill bootstrap queue per node (requests)",
                "requests on a prefill instance waiting for the decode side's bootstrap handshake",
            ),
            (
                "prefill_inflight_queue",
                "sglang:num_prefill_inflight_queue_reqs",
                "Prefill in-flight (KV sending) queue per node (requests)",
                "requests whose prefill finished and whose KV is being sent to decode",
            ),
            (
                "decode_prealloc_queue",
                "sglang:num_decode_prealloc_queue_reqs",
                "Decode prealloc queue per node (requests)",
                "requests on a decode instance waiting for KV slots to be preallocated",
            ),
            (
                "decode_transfer_queue",
                "sglang:num_decode_transfer_queue_reqs",
                "Decode transfer queue per node (requests)",
                "requests on a decode instance waiting for their KV to arrive from prefill",
            ),
        )
        for key, metric, title, meaning in pd_queues:
            panels.append(
                _ts(
                    key,
                    title,
                    Evidence(
                        f"SGLang scheduler ({metric})",
                        meaning + ", per node",
                        "a PD request passes the prefill queues and then the decode queues and is counted in "
                        "each; the queues are not added to each other or to the waiting queue (S4). " + SCHEDULER_LIMIT,
                    ),
                    [Target(sg.named_stage(profile, sg.per_stage_gauge(profile, metric)), legend)],
                    "short",
                    width=6,
                    decimals=0,
                )
            )
        panels.append(
            _ts(
                "pd_failures",
                "PD bootstrap and KV transfer failures (req/s)",
                Evidence(
                    "SGLang scheduler (sglang:num_bootstrap_failed_reqs_total, sglang:num_transfer_failed_reqs_total)",
                    "requests whose bootstrap or KV transfer failed, per second, per node; two series per node, "
                    "not added",
                    "counters absent (not 0) until the first failure, and " + FIRST_EVENT_RATE + "; " + SCHEDULER_LIMIT,
                ),
                [
                    Target(
                        sg.named_stage(profile, sg.per_stage_rate(profile, "sglang:num_bootstrap_failed_reqs_total")),
                        legend + " bootstrap",
                    ),
                    Target(
                        sg.named_stage(profile, sg.per_stage_rate(profile, "sglang:num_transfer_failed_reqs_total")),
                        legend + " transfer",
                    ),
                ],
                "reqps",
                width=24,
            )
        )
    return panels


def engine_http_panels(profile: Profile) -> list[PanelSpec]:
    node = profile.label("node")
    limit = (
        "the HTTP server runs on node 0 of each instance; this layer counts HTTP requests, which include "
        "health and metrics probes, so it is not the tokenizer's request count"
    )
    return [
        _ts(
            "engine_http_active",
            "Engine HTTP requests in progress by endpoint",
            Evidence(
                "SGLang HTTP server (sglang:http_requests_active)",
                "HTTP requests in progress per node and endpoint (the engine's HTTP layer)",
                limit,
            ),
            [
                Target(
                    f"max by ({node}, endpoint) ({sg.tokenizer(profile, 'sglang:http_requests_active')})",
                    "{{node}} {{endpoint}}",
                )
            ],
            "short",
            decimals=0,
        ),
        _ts(
            "engine_http_responses",
            "Engine HTTP responses by status code (req/s)",
            Evidence(
                "SGLang HTTP server (sglang:http_responses_total)",
                "HTTP responses per second per node and status code (5xx = server errors)",
                limit,
            ),
            [
                Target(
                    sg.tokenizer_rate(profile, "sglang:http_responses_total", [node, "status_code"]),
                    "{{node}} {{status_code}}",
                )
            ],
            "reqps",
        ),
    ]


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Five rows, in incident order (S34): engine queues (PD queues included), latency, the gateway's layers
    (S4: each layer apart), throughput, the engine's HTTP layer."""
    if not profile.exported("sglang"):
        unavailable = [
            source_status_panel(
                f"{GROUP}.engine_unavailable", profile, ["sglang"], "Engine requests and latency: not available"
            )
        ]
        rows = [("throughput", "Requests: throughput", unavailable, False)]
    else:
        # In an incident (S34): where first (the stage's queues, latency per instance, the gateway), then the
        # throughput and the HTTP layer. The per-stage queues open with the dashboard where the pool is split in
        # PP stages (a stalled stage is found there; three queries); a PD pool's P:D balance row, open, does that.
        rows = [
            (
                "queues",
                "Requests: engine queues" + (" per PP stage" if profile.has_pp else " per instance"),
                engine_queue_panels(profile),
                not stage_bands.queues_open(profile),
            ),
            ("latency", "Requests: latency per pool and instance", latency_panels(profile), True),
        ]
    rows.append(("gateway", "Gateway", gateway_panels(profile), True))
    if profile.exported("sglang"):
        rows += [
            ("throughput", "Requests: throughput", [*throughput_panels(profile), request_rate_panel(profile)], True),
            ("http", "Engine HTTP layer", engine_http_panels(profile), True),
        ]
    return split_rows(GROUP, TITLE, rows)
