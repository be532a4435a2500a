"""P:D balance, in a PD-disaggregated deployment only (S27): which pool is the bottleneck. Per pool,
the work it does against its GPUs' busy share; the decode pool's running requests and KV headroom;
TTFT split into the parts the engines measure (queue wait, prefill forward, KV transfer, the decode
side's stages) where the metrics allow, saying plainly which part cannot be split; and the model
gateway's PD legs (``smg_pd_*``) where the gateway is exported, else a text saying it is not.

Pool membership comes from the engine's own ``engine_type`` label (``queries.pd``), never from a
node list in the profile: P:D ratios change. No panel puts prefill and decode on one axis or in one
sum; the table has one row per pool.
"""

from __future__ import annotations

from dataclasses import replace

from dashgen_panels.engine_load import pd_roles
from dashgen_queries import gateway as gw
from dashgen_queries import pd
from dashgen_queries import sglang as sg
from dashgen_queries.gpu import gpu_source

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, Column, ratio_axis, source_status_panel, table, timeseries
from dashgen.render.spec import Evidence, FanOut, GroupSpec, PanelSpec, Target

TITLE = "Prefill and decode balance (P:D)"
GROUP = "pd_balance"
WORKLOADS = ("text-generation",)
WORK_MODES = {"prefill": "prefill_compute|prefill_cache", "decode": "decode"}
POOL_FROM_ENGINE = (
    "the pool of a node is read from the engine's own engine_type label at each step (P:D ratios "
    "change; the profile's pool list is not used); prefill and decode are never added"
)
SCHEDULER = (
    "scheduler series of the first PP stage, TP copies removed with max, instances and DP groups of one "
    "pool added (distinct requests); updated at the scheduler's log interval"
)


def pools_table(profile: Profile) -> PanelSpec:
    """One row per pool at the window end: nodes, GPUs, work, GPU busy, requests, least KV headroom."""
    source = gpu_source(profile)
    columns = [Column("Nodes serving the pool", pd.instances_of_pool(profile), "engine_type")]
    if source is not None:
        columns += [
            Column("GPUs reporting busy", pd.gpus_of_pool(profile, source)),
            Column(
                "GPU busy, mean over the pool's GPUs", f"100 * {pd.pool_busy(profile, source)}", f"%, {source.short}"
            ),
        ]
    columns += [
        Column("Tokens processed", pd.pool_tokens(profile, "|".join(WORK_MODES.values())), "tokens/s"),
        Column("Running requests (all instances)", pd.pool_requests(profile, "sglang:num_running_reqs")),
        Column("Waiting requests (all instances)", pd.pool_requests(profile, "sglang:num_queue_reqs")),
        Column("Least KV headroom among instances", f"100 * {pd.least_kv_headroom(profile)}", "%"),
    ]
    busy = f"{source.name} {source.metric('busy')}" if source else "no GPU source exported"
    return table(
        key=f"{GROUP}.pools",
        title="P:D balance per pool at the window end",
        evidence=Evidence(
            source=f"SGLang scheduler (sglang:num_running_reqs, sglang:num_queue_reqs, sglang:realtime_tokens_total"
            f"{{mode}}, sglang:kv_used_tokens, sglang:max_total_num_tokens); GPU busy from the {busy}",
            quantity="one row per pool (engine_type): how many nodes serve it now, its GPUs, their mean busy "
            "share, the tokens it processes per second (prefill: prefill_compute + prefill_cache; decode: "
            "decode), its running and waiting requests, and the smallest KV headroom (1 - used / capacity) "
            "among its schedulers. The pool whose GPUs are busiest while the other waits is the "
            "bottleneck; a pool with waiting requests and little KV headroom is short of memory, not "
            "compute",
            limit=f"{POOL_FROM_ENGINE}; {SCHEDULER}; instant values at the window end (the time series below show "
            "the window); GPU busy is the engine-activity share, not SM active nor MFU (S18)",
            layer="P:D balance",
        ),
        labels={sg.ENGINE_TYPE: "Pool"},
        columns=columns,
        unit="none",
        decimals=1,
        width=24,
        height=5,
        no_value=NO_DATA_TEXT,
    )


def pool_panels(profile: Profile, role: str) -> list[PanelSpec]:
    """The pool's work and its GPUs' busy share, side by side (two axes, two panels)."""
    panels = [
        timeseries(
            f"{GROUP}.tokens_{role}",
            f"Tokens processed per second by mode ({role} pool)",
            Evidence(
                "SGLang scheduler (sglang:realtime_tokens_total{mode})",
                f"tokens per second the {role} pool processed, one series per mode, its instances added",
                f"{SCHEDULER}; {POOL_FROM_ENGINE}",
                layer="P:D balance",
            ),
            (Target(pd.pool_tokens(profile, WORK_MODES[role], role, "mode"), "{{mode}}"),),
            unit="count:tok/s",
            width=12,
            height=7,
        )
    ]
    source = gpu_source(profile)
    if source is not None:
        panels.append(
            timeseries(
                f"{GROUP}.gpu_busy_{role}",
                f"GPU busy per node ({role} pool, {source.title_caption()})",
                Evidence(
                    f"{source.name} ({source.metric('busy')}), joined by node to the engines' engine_type",
                    f"GPU busy share, mean over each {role} node's GPUs, 0-100 % fixed axis",
                    f"{POOL_FROM_ENGINE}; {source.sampling()}; GPU busy is not SM active nor MFU (S18)",
                    layer="P:D balance",
                ),
                (Target(pd.node_busy(profile, source, role), "{{node}}"),),
                **ratio_axis("percentunit"),
                width=12,
                height=7,
            )
        )
        # one series per node of the pool: the busiest few and a band when there are more than fit a screen
        panels[-1] = replace(
            panels[-1], fan_out=FanOut("node", (profile.label("node"),), "top", role, ("engine_type",))
        )
    return panels


def decode_panels(profile: Profile) -> list[PanelSpec]:
    """The decode pool's load and memory: running requests of the pool, and its least KV headroom."""
    return [
        timeseries(
            f"{GROUP}.decode_running",
            "Decode pool: running requests, all decode instances summed",
            Evidence(
                'SGLang scheduler (sglang:num_running_reqs{engine_type="decode"})',
                "requests decoding at once in the whole decode pool (the Engine load row shows them per instance)",
                f"{SCHEDULER}; {POOL_FROM_ENGINE}",
                layer="P:D balance",
            ),
            (Target(pd.pool_requests(profile, "sglang:num_running_reqs", "decode"), "decode running"),),
            unit="short",
            decimals=0,
            width=12,
            height=7,
        ),
        timeseries(
            f"{GROUP}.decode_kv_headroom",
            "Decode pool: least KV headroom among decode instances (1 − used / capacity)",
            Evidence(
                "SGLang scheduler (sglang:kv_used_tokens, sglang:max_total_num_tokens) of the decode pool",
                "the smallest share of KV token slots not locked by running requests among the decode "
                "schedulers, 0-100 % fixed axis: near 0 the decode pool retracts or stops admitting transfers",
                "evictable radix-cache slots count as headroom (they are reclaimed on demand); the same slots "
                "as 'KV pool locked by running requests' (its complement, the worst instance); " + POOL_FROM_ENGINE,
                layer="P:D balance",
            ),
            (Target(pd.least_kv_headroom(profile, "decode"), "least headroom"),),
            **ratio_axis("percentunit"),
            width=12,
            height=7,
        ),
    ]


UNSPLIT = (
    "what cannot be split: the first decode step has no series of its own (SGLang's per-stage stages of "
    "the decode side include it in their decode stage), and network time between gateway, prefill and "
    "decode is on no engine series; the stage names are SGLang's own 'stage' label values, so which stages "
    "appear depends on the engine version. Means add up, percentiles do not: a p95 of TTFT is not the sum "
    "of the parts' p95s"
)


def ttft_panels(profile: Profile) -> list[PanelSpec]:
    """TTFT split where the engines measure it: the prefill pool's parts, then the decode pool's."""
    prefill = (
        Target(pd.mean_seconds(profile, pd.QUEUE_TIME, "prefill"), "queue wait (prefill)"),
        Target(pd.mean_seconds(profile, pd.STAGE_LATENCY, "prefill", ("stage",)), "stage {{stage}} (prefill)"),
        Target(pd.mean_seconds(profile, pd.KV_TRANSFER_MS, "prefill", factor=0.001), "KV transfer (prefill side)"),
    )
    decode = (
        Target(pd.mean_ttft(profile, "decode"), "TTFT (decode tokenizer)"),
        Target(pd.mean_seconds(profile, pd.QUEUE_TIME, "decode"), "queue wait (decode)"),
        Target(pd.mean_seconds(profile, pd.STAGE_LATENCY, "decode", ("stage",)), "stage {{stage}} (decode)"),
    )  # no KV transfer target: SGLang records the transfer on the prefill side only (S35)
    source = (
        "SGLang scheduler histograms sglang:queue_time_seconds, sglang:per_stage_req_latency_seconds{stage}, "
        "sglang:kv_transfer_latency_ms (converted to seconds)"
    )
    return [
        timeseries(
            f"{GROUP}.ttft_parts_prefill",
            "TTFT parts measured by the prefill pool, mean per request (s)",
            Evidence(
                source,
                "mean seconds per request of each part the prefill pool measures: waiting queue, "
                "each of its stages (prefill_forward is the prefill compute), and the KV transfer to decode; "
                "parts are drawn apart, never added",
                UNSPLIT,
                layer="TTFT split",
            ),
            prefill,
            unit="s",
            width=12,
            height=8,
        ),
        timeseries(
            f"{GROUP}.ttft_parts_decode",
            "TTFT parts measured by the decode pool, mean per request (s)",
            Evidence(
                source + "; SGLang tokenizer sglang:time_to_first_token_seconds of the decode pool",
                "mean TTFT of the requests the decode pool's tokenizers finished, beside the mean seconds per "
                "request of the decode side's waiting queue and stages; the KV transfer is on the prefill "
                "pool's panel (SGLang records sglang:kv_transfer_* on the prefill side only); what TTFT holds "
                "beyond the parts of both panels is the unsplit rest",
                UNSPLIT,
                layer="TTFT split",
            ),
            decode,
            unit="s",
            width=12,
            height=8,
        ),
    ]


GATEWAY_LEGS = (
    ("smg_pd_prefill_duration_seconds", "prefill leg"),
    ("smg_pd_kv_transfer_duration_seconds", "KV transfer leg"),
    ("smg_pd_ttft_seconds", "TTFT"),
)


def gateway_legs_panel(profile: Profile) -> PanelSpec:
    """The gateway's PD legs where the gateway is exported, else the text saying it is not (S15)."""
    if not profile.exported("gateway"):
        return source_status_panel(
            f"{GROUP}.gateway_pd_unavailable", profile, ["gateway"], "Gateway PD legs (smg_pd_*): not available"
        )
    return timeseries(
        f"{GROUP}.gateway_pd_legs",
        "Gateway PD legs p95: prefill, KV transfer, TTFT (s)",
        Evidence(
            "SGLang model gateway smg (smg_pd_prefill_duration_seconds, smg_pd_kv_transfer_duration_seconds, "
            "smg_pd_ttft_seconds histograms)",
            "p95 of each PD leg as the gateway times it, seconds (buckets summed by le per gateway process), "
            "three series, never added",
            "smg records these only for requests it routes to a PD backend, and not every leg for every "
            "backend: the KV-transfer leg is recorded for vLLM over gRPC only, and the prefill leg is missing "
            "when the gateway talks gRPC to SGLang (S35). A missing leg is what this gateway and backend do not "
            "record, not zero and not proof the requests were not routed as PD. The gateway's legs include "
            "network time the engines' TTFT parts do not; its series are not narrowed by $node",
            layer="gateway",
        ),
        tuple(
            Target(gw.quantile(profile, 0.95, metric), f"p95 {leg} (gateway {{{{node}}}})")
            for metric, leg in GATEWAY_LEGS
        ),
        unit="s",
        width=24,
        height=7,
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """The row, for a PD deployment with the engine exported; no panel (so no row) otherwise."""
    if not sg.is_pd(profile) or not profile.exported("sglang"):
        return GroupSpec(key=GROUP, title=TITLE, panels=())
    panels = [pools_table(profile)]
    for role in pd_roles(profile):
        panels += pool_panels(profile, role)
    panels += [*decode_panels(profile), *ttft_panels(profile), gateway_legs_panel(profile)]
    return GroupSpec(key=GROUP, title=TITLE, panels=tuple(panels))
