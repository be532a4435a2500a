"""The model gateway's own health and PD transfer failures: is the gateway starved (event-loop stalls, busy
worker threads), vetoing workers (overload protection), backing off retries or losing its KV-event
subscriptions; and how many PD requests fail to bootstrap or transfer their KV cache, as a rate and as a
share, on the engines' side per pool of the prefill -> decode pair and on the gateway's side.

Gateway panels exist where the gateway is exported (else one text saying why); PD panels where the profile
runs prefill and decode apart. The series are smg 1.9's; an older gateway writes none of them, which the
panels say rather than showing zero.
"""

from __future__ import annotations

from dashgen_queries import gateway_runtime as gr
from dashgen_queries import sglang as sg

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import ratio_axis, source_status_panel, text, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Gateway runtime and PD transfer failures"
GROUP = "gateway_runtime"
WORKLOADS = ("text-generation",)
SMG_19 = (
    "smg 1.6.0 and later (1.7.0 for PD failures, main's 1.9.0 for overload vetoes); an older gateway writes none "
    "of these series (absent, not zero), and a profile stating its [sources.gateway] version gets a text instead"
)
PER_PROCESS = "per gateway process; the gateway's series are not narrowed by $node"
LABEL_CAP = (
    f"smg records at most {gr.MODEL_CAP:,} values of the model label; requests of further models are recorded "
    f'under model="{gr.OTHER_MODEL}", so a per-model figure of "other" is several models added'
)


def runtime_panels(profile: Profile) -> list[PanelSpec]:
    """Event loop, worker threads, overload vetoes and sheds, retry backoff, KV-event subscriptions."""
    legend = "{{node}} {{instance}}"
    return [
        timeseries(
            f"{GROUP}.event_loop",
            "Gateway event loop: stalls per second and p99 wake delay",
            Evidence(
                f"smg ({gr.STALLS}, {gr.DELAY} histogram)",
                "stalls per second (the 10 ms canary woke more than 5 ms late: every task of the gateway was "
                "delayed at least that long) and the canary's p99 wake delay in seconds",
                f"{SMG_19}; {PER_PROCESS}; the delay histogram's top bucket is 1 s",
                layer="gateway runtime",
            ),
            (
                Target(gr.stall_rate(profile), f"stalls/s {legend}"),
                Target(gr.delay_p99(profile), f"p99 wake delay (s) {legend}"),
            ),
            unit="none",
            min=0,
            width=8,
            height=7,
        ),
        timeseries(
            f"{GROUP}.workers_busy",
            "Gateway runtime: busiest worker thread's busy share",
            Evidence(
                f"smg ({gr.BUSY}, sampled every 1 s)",
                "the busy share of the busiest runtime worker thread of each gateway process, 0-100 % fixed "
                "axis; near 100 % with a growing global queue means the gateway itself is saturated",
                f"{SMG_19}; {PER_PROCESS}; a 1 s sample read at the scrape interval",
                layer="gateway runtime",
            ),
            (Target(gr.busiest_worker(profile), legend),),
            **ratio_axis("percentunit"),
            width=8,
            height=7,
        ),
        timeseries(
            f"{GROUP}.overload",
            "Gateway overload protection: vetoed workers per model and sheds per second",
            Evidence(
                f"smg ({gr.OVERLOADED} gauge per model, {gr.SHED} counter per stage)",
                "workers excluded from routing as overloaded, per model, and requests shed with 503 "
                "worker_overload_protection_shed per second, per stage (selection, dispatch, pd_admission)",
                f"{SMG_19}; written only with overload protection on (--worker-overload-protection or a "
                f"threshold flag), except the pd_admission stage; {PER_PROCESS}; {LABEL_CAP}",
                layer="gateway runtime",
            ),
            (
                Target(gr.overloaded_workers(profile), "vetoed workers {{model}} " + legend),
                Target(gr.shed_rate(profile), "sheds/s {{stage}} " + legend),
            ),
            unit="none",
            min=0,
            width=8,
            height=7,
        ),
        timeseries(
            f"{GROUP}.retries_kv_events",
            "Gateway retry backoff p99 and KV-event subscription failures",
            Evidence(
                f"smg ({gr.BACKOFF} summary, {gr.KV_EVENT_FAILURES} counter)",
                "the summary's own p99 backoff before each retry, per attempt (seconds, a rolling one-minute "
                "window inside the gateway), and KV-event subscription failures per second per worker and "
                "reason (event-driven cache-aware routing loses that worker's cache view)",
                f"{SMG_19}; summary quantiles are never averaged or added; subscription failures are written "
                f"only with gRPC workers and KV events; {PER_PROCESS}",
                layer="gateway runtime",
            ),
            (
                Target(gr.backoff_p99(profile), "p99 backoff attempt {{attempt}} " + legend),
                Target(gr.kv_event_failure_rate(profile), "subscription failures/s {{worker}} {{reason}}"),
            ),
            unit="none",
            min=0,
            width=12,
            height=7,
        ),
        model_other_panel(profile),
    ]


def model_other_panel(profile: Profile) -> PanelSpec:
    """The share under model="other"; a text on a gateway older than the label cap, which has no such value."""
    title = 'Gateway requests recorded under model="other" (past the label cap)'
    if not gr.caps_model_label(profile):
        version = profile.source("gateway").stated.version
        return text(
            f"{GROUP}.model_other",
            title,
            f"**{title}**: smg {version} (stated in [sources.gateway]) records every model under its own `model` "
            f'value; the cap of {gr.MODEL_CAP:,} values and the `model="{gr.OTHER_MODEL}"` bucket came with smg '
            f"{gr.MODEL_CAP_SINCE} (smg#2093). A model literally named `{gr.OTHER_MODEL}` is that one model.",
            width=12,
            height=5,
        )
    return timeseries(
        f"{GROUP}.model_other",
        title,
        Evidence(
            f"smg ({gr.ROUTER_REQUESTS}{{model}})",
            f'share of the routed requests recorded under model="{gr.OTHER_MODEL}", per gateway node: above '
            "0, the per-model gateway panels add several models into that one value; 0 while fewer than "
            f"{gr.MODEL_CAP:,} models have been seen since the gateway started",
            f"{LABEL_CAP}; the cap counts values since the gateway process started (a restart resets it); "
            f"smg {gr.MODEL_CAP_SINCE} and later",
            layer="gateway runtime",
        ),
        (Target(gr.other_model_share(profile), "{{node}}"),),
        **ratio_axis("percentunit"),
        width=12,
        height=7,
    )


def pd_failure_panels(profile: Profile) -> list[PanelSpec]:
    """PD bootstrap and transfer failures, per second and as a share, engine side and gateway side."""
    engine_targets = []
    for kind in gr.ENGINE_PD_FAILURES:
        engine_targets += [
            Target(
                gr.engine_failure_share(profile, kind), f"{kind} failed share · {{{{engine_type}}}} ({{{{{gr.PAIR}}}}})"
            ),
        ]
    panels = [
        timeseries(
            f"{GROUP}.pd_failures_engine",
            "PD bootstrap and KV-transfer failures, share of each pool's requests (engines)",
            Evidence(
                "SGLang scheduler (sglang:num_bootstrap_failed_reqs_total, sglang:num_transfer_failed_reqs_total) "
                "over the pool's tokenizer sglang:num_requests_total",
                "per pool of the prefill -> decode pair, the requests that failed to bootstrap or to transfer "
                "their KV cache per second, over the requests the pool received per second (0-1)",
                "engines do not label the peer of a transfer, so the pair is the profile's prefill -> decode "
                "pair, not a measured one; first PP stage, TP copies removed with max; SGLang exports no "
                "expiry counter of its own (a bootstrap or transfer timeout is counted as a failure)",
                layer="PD transfers",
            ),
            tuple(engine_targets),
            **ratio_axis("percentunit"),
            width=12,
            height=7,
        ),
    ]
    if profile.exported("gateway"):
        panels.append(
            timeseries(
                f"{GROUP}.pd_failures_gateway",
                "PD bootstrap and KV-transfer failures at the gateway, per second",
                Evidence(
                    "smg (smg_pd_bootstrap_failures_total, smg_pd_kv_transfer_failures_total)",
                    "PD requests whose body could not take the bootstrap fields, and vLLM NIXL dispatches whose "
                    "prefill leg returned no kv_transfer_params (the decode worker recomputes the prompt), per "
                    "second per gateway process",
                    f"{SMG_19}; the KV-transfer counter is written for vLLM NIXL only, never with SGLang "
                    f"backends; {PER_PROCESS}",
                    layer="PD transfers",
                ),
                tuple(
                    Target(gr.gateway_failure_rate(profile, kind), f"{kind} failures/s {{{{node}}}}")
                    for kind in gr.GATEWAY_PD_FAILURES
                ),
                unit="reqps",
                min=0,
                width=12,
                height=7,
            )
        )
    return panels


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Gateway runtime panels (or the text saying the gateway is not exported) and, in PD, the failures."""
    panels: list[PanelSpec] = []
    if profile.exported("gateway"):
        panels += runtime_panels(profile)
    elif profile.source("gateway").deployed or sg.is_pd(profile):
        panels.append(
            source_status_panel(
                f"{GROUP}.gateway_unavailable",
                profile,
                ["gateway"],
                "Gateway runtime health (smg_tokio_*): not available",
            )
        )
    if sg.is_pd(profile) and profile.exported("sglang"):
        panels += pd_failure_panels(profile)
    return GroupSpec(key=GROUP, title=TITLE, panels=tuple(panels))
