"""SLO and health: the north-star number first (share of requests meeting the profile's SLO:
TTFT, TPOT and E2E, aborted requests counted as bad), the error budget left, burn rates over
1 h / 6 h / 3 d side by side, latency percentiles on one time axis, batch size beside queue length
per PP stage (a stage with waiting requests and none running shows "stalled"), KV usage and
prefix reuse, and the GPU memory watermark per node and per GPU, with drill-down links
cluster -> node -> GPU that keep the time range and variables.

Request-level panels are not narrowed by ``$node`` where a replica spans several nodes (the
tokenizer histograms exist only on its entry node; ``queries.sglang_slo.request_scope``). Budget and burn
rates are per model over the whole deployment, as the alerts see them; the burn rates evaluate the
recording rules' expressions from the raw histograms (so they work without the rules loaded); the long
windows (6 h, 3 d, the budget) are instant queries: a stat needs one value, not a long-window rate
at every step.

Colours: health and burn rate use the profile's budget (burn 1 / 6 / 14.4 = busy / high /
overloaded, the burn rates of the rule files' alerts); KV usage and queue pressure use fixed
shares. Thresholds come from the profile; sizes are never literals (S1).
"""

from __future__ import annotations

from dataclasses import replace

from dashgen_panels.drilldown import gpu_link, node_link, per_gpu_rows_link
from dashgen_panels.engine_load import stage_panels
from dashgen_queries import client_slo, request_rates
from dashgen_queries.gpu import (
    GPU_SOURCE_KEYS,
    MEMORY_FULL_SHARE,
    gpu_memory_used_share,
    gpu_memory_used_share_formula,
    gpu_source,
)
from dashgen_queries.promql import WINDOW, agg
from dashgen_queries.sglang_slo import (
    BAD_EVENTS,
    BUCKET_SOURCE,
    BURN_PANEL_WINDOWS,
    FAST_BURN,
    RECORDED_WINDOWS,
    SLOW_BURN,
    budget_left,
    burn_rate,
    check_objective,
    error_budget,
    good_ratio,
    left_out_notes,
    request_scope_variable,
    slis,
    slo_error_ratio_name,
    worst_good_ratio,
)

from dashgen.deployment.profile import TEXT, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, ratio_axis, source_status_panel, stat, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target, split_rows

TITLE = "SLO and health"
WORKLOADS = (TEXT,)  # S25: the workload kinds this group serves (dashgen.dashboard)
KEY = "slo_health"
# Burn windows read once at the range end (a stat needs one value, not a long-window rate at every step).
INSTANT_BURN_WINDOWS = ("6h", "3d")
# The 1h burn's sparkline steps: a point is the error ratio over the whole hour, so consecutive 30 s points share
# 59 of its 60 minutes; at the store's 30 s steps it reread the hour 120 times per hour drawn (0.28 M samples at
# 1,024 GPUs on open).
SPARKLINE_STEP = "5m"
AT_ENGINE = "at the engine"  # S33: which SLI a panel shows, where both stand side by side
AS_CLIENT = "as the client sees it (at the gateway)"


def health_states(profile: Profile) -> tuple[tuple[str, float | None], ...]:
    """Health colours from the budget: green meets the objective; yellow (busy) burns up to 6x;
    orange (high) up to 14.4x; red (overloaded) beyond the fast-burn page level."""
    budget = error_budget(profile)
    return (
        ("red", None),
        ("orange", round(1 - FAST_BURN[2] * budget, 6)),
        ("yellow", round(1 - SLOW_BURN[2] * budget, 6)),
        ("green", profile.slo.objective),
    )


BURN_TITLES = {"1h": "Burn rate over 1h", "6h": "Burn rate over 6h", "3d": "Burn rate over 3d"}
BURN_STATES = (("green", None), ("yellow", 1.0), ("orange", SLOW_BURN[2]), ("red", FAST_BURN[2]))
# Error budget left: red once overspent, orange under a quarter, yellow under a half.
BUDGET_STATES = (("red", None), ("orange", 0.0), ("yellow", 0.25), ("green", 0.5))


def _slo_notes(profile: Profile, buckets: bool = True) -> str:
    notes = "; ".join(sli.evaluation_note() for sli in slis(profile)) + (
        f". Buckets: {BUCKET_SOURCE}" if buckets else ""
    )
    return notes + left_out_notes(profile)


def _request_source(profile: Profile) -> str:
    return (
        f"SGLang tokenizer request histograms and sglang:num_aborted_requests_total (job "
        f"{profile.source('sglang').job}, the entry node of each engine, no rank labels; prefill servers of a PD "
        "pair excluded so a request counts once)"
    )


def _request_scope(profile: Profile) -> str:
    """What the node / replica variables do to the request-level panels, said plainly."""
    variable = request_scope_variable(profile)
    if variable == "node":
        return "$node narrows it exactly: each node runs one whole engine and is its own entry node"
    if variable == "replica":
        return (
            "$node does not narrow it (the tokenizer histograms exist only on each replica's entry node, so a "
            "non-entry node would read no requests); the Replica variable does"
        )
    return (
        "$node does not narrow it: it covers the whole deployment (the tokenizer histograms exist only on each "
        "engine's entry node"
        + (", and a request passes both a prefill and a decode server)" if profile.has_pools else ")")
    )


def _whole_deployment() -> str:
    return (
        "per model over the whole deployment, as the burn-rate alerts see it: the node and replica variables do "
        "not narrow it"
    )


def _beside_client(profile: Profile) -> bool:
    """S33: where the profile exports the gateway, the client-side SLI stands beside the engine's."""
    return profile.exported("gateway")


def _engine_side(profile: Profile) -> str:
    """The engine-side panels' words for which SLI they show, where the client-side one stands beside them."""
    if not _beside_client(profile):
        return ""
    return (
        f"{AT_ENGINE} (SGLang's own request histograms; the client-side SLI beside it also counts the gateway's "
        "sheds, failures and timeouts): "
    )


def health_panel(profile: Profile) -> PanelSpec:
    return stat(
        key=f"{KEY}.health",
        title=(
            "Health: share of requests meeting the SLO at the engine"
            if _beside_client(profile)
            else "Health: share of requests meeting the SLO"
        ),
        evidence=Evidence(
            source=_request_source(profile),
            quantity=(
                f"{_engine_side(profile)}over the dashboard window, the lowest of the TTFT, TPOT and E2E good "
                f"shares per model (1 - bad "
                f"events / all events, rates summed across engines, then divided; never an average of "
                f"per-series ratios); {BAD_EVENTS}. Objective {profile.slo.objective:g}. "
                f"{_slo_notes(profile, buckets=False)}"
            ),
            limit=(
                "the SLIs come from separate histograms, so the share of requests meeting all of them is not "
                "derivable: the lowest SLI is an upper bound of it. Requests still waiting or running in a hung "
                "engine are not counted until they finish or are aborted (see the EngineStalled alert and Queue "
                f"pressure). {_request_scope(profile)}. Colours: green meets the objective, yellow (busy) burns "
                f"the budget up to {SLOW_BURN[2]:g}x, orange (high) up to {FAST_BURN[2]:g}x, red (overloaded) "
                "beyond. No requests in the window -> No data, not 100 %"
            ),
            notes=f"Buckets: {BUCKET_SOURCE}",
        ),
        targets=(Target(worst_good_ratio(profile, WINDOW), legend="{{model_name}}", instant=True),),
        **ratio_axis("percentunit"),
        decimals=2,
        width=6,
        height=7,
        no_value="No requests in window",
        thresholds=health_states(profile),
    )


def recorded_note(profile: Profile, what: str) -> str:
    """What a panel reading the request-rates records says about them: what they are, the rate window, and what
    the panel shows without them."""
    return (
        f"{what} from dashgen's recording rules (rules/{profile.name}.yml, group {request_rates.GROUP}: the rates of "
        f"the same series over each {request_rates.INTERVAL_SECONDS:g} s rule interval, summed over the deployment "
        f"per model), {request_rates.AVERAGED}. Without the rules loaded: '{request_rates.NO_VALUE}'"
    )


def health_trend_panel(profile: Profile) -> PanelSpec:
    targets = tuple(
        Target(
            good_ratio(profile, sli, "$__rate_interval", scoped=True),
            legend=f"{sli.name} ≤ {sli.bound:g} s · {{{{model_name}}}}",
        )
        for sli in slis(profile)
    )
    return timeseries(
        key=f"{KEY}.health_trend",
        title=(
            "Good share per SLI over time at the engine" if _beside_client(profile) else "Good share per SLI over time"
        ),
        evidence=Evidence(
            source=_request_source(profile),
            quantity=(
                f"{_engine_side(profile)}per SLI (TTFT, TPOT, E2E), the share of good events per rate "
                f"interval; {BAD_EVENTS}. " + _slo_notes(profile)
            ),
            limit=(
                f"a short rate interval is noisy at low traffic; gaps mean no finished or aborted requests, not "
                f"0 % (S7). {_request_scope(profile)}"
            ),
        ),
        targets=targets,
        **ratio_axis("percentunit"),
        width=12 if _beside_client(profile) else 10,
        height=7,
        thresholds=health_states(profile),
        threshold_style="line+area",
    )


def _per_sli(profile: Profile, expr, instant: bool) -> tuple[Target, ...]:
    """One target per SLI (TTFT, TPOT, E2E), legend ``<sli> · <model>``; ``expr(sli)`` gives its query."""
    return tuple(Target(expr(sli), legend=f"{sli.name} · {{{{model_name}}}}", instant=instant) for sli in slis(profile))


def budget_panel(profile: Profile) -> PanelSpec:
    days = profile.slo.window_days
    targets = _per_sli(profile, lambda sli: budget_left(profile, sli), instant=True)
    return stat(
        key=f"{KEY}.budget",
        title=f"Error budget left ({days} d)",
        evidence=Evidence(
            source=_request_source(profile),
            quantity=(
                f"1 - (error ratio over {days} days) / budget, budget = 1 - objective = "
                f"{error_budget(profile):g} (slo.objective, slo.window_days), per SLI; {BAD_EVENTS}; "
                f"{_whole_deployment()}; negative once overspent"
            ),
            limit=(
                f"a rolling {days}-day window ending at the end of the dashboard range (an instant query at the "
                "range's end time, not at now), whatever the range's length; counter resets and series younger "
                "than the window shorten it. " + _slo_notes(profile)
            ),
        ),
        targets=targets,
        **ratio_axis("percentunit", signed=True),
        decimals=1,
        width=8,
        height=7,
        no_value="No requests in window",
        thresholds=BUDGET_STATES,
    )


def burn_panel(profile: Profile, window: str) -> PanelSpec:
    # Long windows are evaluated once (instant): a stat needs one value, not a long-window rate at every step.
    instant = window in INSTANT_BURN_WINDOWS
    # the sparkline's window is short enough to read from the request-rates records; a long instant window reads
    # the raw histograms (records younger than 6 h or 3 d would shorten the window silently)
    read = None if instant else request_rates.reader(profile)
    targets = _per_sli(profile, lambda sli: burn_rate(profile, sli, window, read), instant=instant)
    if not instant:  # each point of the sparkline reads the whole window again: one point per SPARKLINE_STEP
        targets = tuple(replace(target, interval=SPARKLINE_STEP) for target in targets)
    if read is not None:
        recorded = recorded_note(
            profile, f"the same error ratio as the recording rule {slo_error_ratio_name(window)}{{slo}}, its rates read"
        )
    elif window in RECORDED_WINDOWS:
        recorded = (
            f"the same expression as the recording rule {slo_error_ratio_name(window)}{{slo}} "
            f"(rules/{profile.name}.yml), evaluated from the raw histograms so the panel works without the rules"
        )
    else:
        recorded = "evaluated from the raw histograms (no alert reads this window, so no rule records it)"
    shown = (
        "one instant value at the end of the dashboard range"
        if instant
        else f"the sparkline shows a point every {SPARKLINE_STEP} at least (each point reads the whole {window})"
    )
    return stat(
        key=f"{KEY}.burn_{window}",
        title=BURN_TITLES[window],
        evidence=Evidence(
            source=_request_source(profile),
            quantity=(
                f"error ratio over a fixed {window} window divided by the budget {error_budget(profile):g}, per "
                f"SLI (TTFT, TPOT, E2E): 1 spends the budget exactly over the SLO window; {BAD_EVENTS}; "
                f"{_whole_deployment()}. Alerts: fast burn {FAST_BURN[2]:g}x over {FAST_BURN[0]} and "
                f"{FAST_BURN[1]}, slow burn {SLOW_BURN[2]:g}x over {SLOW_BURN[0]} and {SLOW_BURN[1]} "
                f"(rules/{profile.name}.yml)"
            ),
            limit=(
                f"the {window} window is fixed by design (not the dashboard range); {shown}; {recorded}. "
                + _slo_notes(profile, buckets=False)
            ),
            notes=f"Buckets: {BUCKET_SOURCE}",
        ),
        targets=targets,
        unit="none",
        min=0,
        decimals=2,
        width=8,
        height=6,
        no_value="No requests in window" if read is None else request_rates.NO_VALUE,
        thresholds=BURN_STATES,
        graph_mode="none" if instant else "area",
    )


def latency_panel(profile: Profile) -> PanelSpec:
    targets = tuple(
        Target(
            request_rates.latency_quantile(profile, metric, q),
            legend=f"{name} P{int(q * 100)}",
            interval=request_rates.min_step_of(profile),
        )
        for name, metric in request_rates.latency_metrics(profile)
        for q in (0.5, 0.99)
    )
    slo = profile.slo
    return timeseries(
        key=f"{KEY}.latency",
        title="Latency P50 / P99 as the SLO counts it: TTFT, TPOT, E2E (whole deployment)",
        evidence=Evidence(
            source=_request_source(profile) + "; TPOT from sglang:request_time_per_output_token_seconds",
            quantity=(
                "P50 and P99 of time to first token, time per output token (per request) and end-to-end "
                "latency of finished requests, in seconds: histogram_quantile over bucket rates summed by (le) "
                f"across engines; {recorded_note(profile, 'the bucket rates are read')}. Profile SLO thresholds: "
                f"TTFT {slo.ttft_seconds:g} s, TPOT "
                f"{slo.tpot_seconds:g} s, E2E {slo.e2e_seconds:g} s"
            ),
            limit=(
                "a quantile interpolates linearly inside one bucket, so it is only as precise as the bucket "
                "bounds; beyond the largest finite bound it returns that bound; aborted requests have no "
                f"latency and are not in it; {_whole_deployment()}. Log axis"
            ),
        ),
        targets=targets,
        unit="s",
        width=24,
        height=9,
        log_scale=10,
        no_value=request_rates.NO_VALUE,
    )


def gpu_memory_panels(profile: Profile) -> tuple[PanelSpec, ...]:
    source = gpu_source(profile)
    if source is None:
        return (
            source_status_panel(
                f"{KEY}.gpu_unavailable", profile, list(GPU_SOURCE_KEYS), "GPU memory watermark: not available"
            ),
        )
    node, gpu = profile.label("node"), profile.label("gpu")
    share = gpu_memory_used_share(profile, source, valid_only=True)
    metrics = gpu_memory_used_share_formula(source, valid_only=True)
    limit = (
        f"one sample per {source.interval}; the rule files alert at {MEMORY_FULL_SHARE:.0%} for 1 m "
        "(GpuMemoryNearlyFull)"
    )
    common = dict(
        **ratio_axis("percentunit"),
        width=12,
        height=8,
        thresholds=(("green", None), ("orange", 0.9), ("red", MEMORY_FULL_SHARE)),
        threshold_style="line",
        no_value=NO_DATA_TEXT,
    )
    per_node = timeseries(
        key=f"{KEY}.gpu_memory_node",
        title="GPU memory used share: fullest GPU per node",
        evidence=Evidence(
            source=f"{source.name} ({metrics})",
            quantity="the highest memory used / total share among each node's GPUs",
            limit=limit,
        ),
        targets=(Target(agg("max", (node,), share), legend=f"{{{{{node}}}}}"),),
        data_links=(node_link(profile),),
        links=(per_gpu_rows_link(profile),),
        **common,
    )
    per_gpu = timeseries(
        key=f"{KEY}.gpu_memory_gpu",
        title="GPU memory used share per GPU",
        evidence=Evidence(
            source=f"{source.name} ({metrics})", quantity="memory used / total share per GPU", limit=limit
        ),
        targets=(Target(share, legend=f"{{{{{node}}}}} GPU {{{{{gpu}}}}}"),),
        data_links=(gpu_link(profile),),
        links=(per_gpu_rows_link(profile),),
        **common,
    )
    return per_node, per_gpu


# --- the client-side SLI (S33), beside the engine's where the profile exports the gateway ---------------------


def _client_source(profile: Profile) -> str:
    return (
        f"the model gateway's HTTP responses ({client_slo.RESPONSES}{{status_code}}, job "
        f"{profile.source('gateway').job}, every gateway instance of the deployment)"
    )


def _client_quantity(profile: Profile) -> str:
    return (
        f"{AS_CLIENT}: the share of responses that were not shed (429), timed out (408 / 504) or failed (5xx), "
        "among all responses but the clients' own 4xx (neither good nor bad); requests the gateway sheds or "
        "fails never reach an engine, so the engine's SLIs cannot count them. The non-error share, not a "
        "latency SLI: the gateway's duration histograms carry no status code (the latency part is the engine's "
        f"E2E SLI). Objective {profile.slo.objective:g}, the same budget as the engine-side SLO; recorded as "
        f'{client_slo.client_error_ratio_name("<window>")}{{slo="{client_slo.SLO_KEY}"}}'
    )


def client_health_panel(profile: Profile) -> PanelSpec:
    return stat(
        key=f"{KEY}.client_health",
        title="Health: share of responses not shed, failed or timed out, as the client sees it (at the gateway)",
        evidence=Evidence(
            source=_client_source(profile),
            quantity=f"over the dashboard window, {_client_quantity(profile)}",
            limit=(
                "one number for the whole deployment (the gateway serves every pool and node: the node and replica "
                "variables do not narrow it); the first screen's gateway panel splits it per instance and class. "
                "Colours as the engine-side health beside it. No response in the window -> No data, not 100 %"
            ),
        ),
        targets=(Target(client_slo.client_good_share(profile, WINDOW), legend="client (gateway)", instant=True),),
        **ratio_axis("percentunit"),
        decimals=2,
        width=6,
        height=7,
        no_value="No responses in window",
        thresholds=health_states(profile),
    )


def client_trend_panel(profile: Profile) -> PanelSpec:
    targets = (
        Target(client_slo.client_good_share(profile, "$__rate_interval"), legend="good share (client)"),
        Target(
            client_slo.deployment_shares_by_class(profile, "$__rate_interval"),
            legend=f"{{{{{client_slo.CLASS_LABEL}}}}} share",
        ),
    )
    return timeseries(
        key=f"{KEY}.client_trend",
        title="Good share over time as the client sees it (at the gateway), and its non-2xx classes",
        evidence=Evidence(
            source=_client_source(profile),
            quantity=(
                f"per rate interval, {_client_quantity(profile)}; beside it the share of each bad class "
                "(429 shed, 5xx, timeout) of every gateway instance's responses together: the parts add up to "
                "1 - the good share"
            ),
            limit=(
                "one series per class for the whole deployment; the first screen's gateway panel has them per "
                "gateway instance. A short rate interval is noisy at low traffic; gaps mean no response, not 0 % "
                "(S7)"
            ),
        ),
        targets=targets,
        **ratio_axis("percentunit"),
        width=16,
        height=7,
        thresholds=health_states(profile),
        threshold_style="line+area",
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """Three rows: the SLO itself, engine load per stage (per pool in PD), the GPU memory watermark."""
    check_objective(profile)
    if not profile.exported("sglang"):
        slo: tuple[PanelSpec, ...] = (
            source_status_panel(f"{KEY}.engine_unavailable", profile, ["sglang"], "SLO and engine load: not available"),
        )
        load: tuple[PanelSpec, ...] = ()
    else:
        head: tuple[PanelSpec, ...] = (health_panel(profile), health_trend_panel(profile), budget_panel(profile))
        if _beside_client(profile):  # S33: the client's SLI beside the engine's, each saying which it is
            health, trend, budget = head
            head = (health, client_health_panel(profile), trend, budget, client_trend_panel(profile))
        slo = (
            *head,
            *(burn_panel(profile, window) for window in BURN_PANEL_WINDOWS),
            latency_panel(profile),
        )
        load = tuple(stage_panels(profile))
    load_title = "Engine load per PP stage" if profile.has_pp else "Engine load per instance"
    return split_rows(
        KEY,
        TITLE,
        [
            ("slo", TITLE, slo, False),
            ("engine_load", load_title, load, False),
            ("gpu_memory", "GPU memory watermark", gpu_memory_panels(profile), False),
        ],
    )
