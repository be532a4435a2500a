"""Alerting rules: multiwindow multi-burn-rate SLO alerts (Google SRE workbook, "Alerting on SLOs") on the
engine-side SLIs and, where the gateway is exported, on the client-side SLI counted at the gateway (S33:
``queries.client_slo``, with its recording rules), GPU memory / temperature / clock-throttle alerts, the engine
alerts (metrics scrape failing, a PP stage restarted, a stage stalled), and per exported source's scrape job a
collection alert (more than a quarter of its scrapes failing: ``catalogue.conditions.scrape_failing``) and a
target-missing alert (no ``up`` series where the profile says one must exist). Only exported sources get alerts.
Every alert keeps the labels of what it is about (S31).

Engine: SGLang exports no /health metric, and ``up{job=<sglang>}`` only proves the /metrics scrape.
A failed scrape does not prove the ranks are down (vmagent or network), and a hung scheduler keeps
serving /metrics (multiprocess collector), so the scrape alert is named for what it sees
(EngineMetricsScrapeFailing). What the data can show of a hung engine is a stage with waiting or
running requests whose token counter stopped (EngineStalled). A blackbox ``probe_success`` of
/health_generate would catch it directly; no profile deploys a blackbox exporter.

Target missing: ``up`` is written by each node's vmagent, which also adds the ``node`` label, so a
dead node or vmagent makes ``up`` disappear rather than read 0. The profile's node list is the
source of truth of what should exist: one constant vector per node (``label_replace(vector(1), …)``)
``unless on (node)`` the job's ``up`` series. One ``or`` chain per rule stays readable up to
``NODES_PER_RULE`` (25) nodes; larger profiles get several rules of the same alert, one per block of
25 nodes. The Mooncake master and the gateway run on some nodes only: for them, "no ``up`` series at
all for the job" (``absent``).

Each GPU alert is written only where the source collects the metrics it reads (DCGM: the clock-event
reasons, field 112, are not in the default CSV; an alert that can never fire is not written, S22).
Clock throttling: PromQL has no bitwise operators; bit b of an integer bitmask x >= 0 is
``floor(x / 2^b) % 2``. Power and thermal reasons (0x4, 0x20, 0x40, 0x80) alert as GpuClockThrottled, HW slowdown
alone (0x8, no power or thermal bit beside it) as GpuHwSlowdown; 0x2 (application clocks set, common with locked
clocks), 0x10 (sync boost) and 0x100 (display clocks) are configuration, not throttling.
"""

from __future__ import annotations

from dashgen_queries.client_slo import (
    RESPONSES,
    client_error_ratio,
    client_error_ratio_name,
    expected_backends,
    silent_with_backends_missing,
)
from dashgen_queries.client_slo import SLO_KEY as CLIENT_SLO
from dashgen_queries.gpu import (
    CLOCK_EVENT_REASONS,
    HW_SLOWDOWN_BITS,
    MEMORY_FULL_SHARE,
    POWER_BITS,
    TEMPERATURE_HIGH_CELSIUS,
    THERMAL_BITS,
    THROTTLE_MEANINGS,
    GpuSource,
    gpu_memory_used_share_formula,
    with_uuid,
)
from dashgen_queries.health import clock_events_set
from dashgen_queries.promql import in_deployment, scoped_job, selector
from dashgen_queries.sglang import RESTART_COUNTERS, RESTART_WINDOW, restarted_ranks
from dashgen_queries.sglang_slo import (
    BAD_EVENTS,
    FAST_BURN,
    RECORDED_WINDOWS,
    SLOW_BURN,
    STALL_WINDOW,
    burn_condition,
    slis,
    stalled_stages,
)

from dashgen.catalogue.conditions import SCRAPE_FAILED_SHARE, SCRAPE_WINDOW, scrape_failing
from dashgen.deployment.profile import TEXT, Profile, Source
from dashgen.deployment.topology import topology_of
from dashgen.rules.model import AlertRule, RecordingRule
from dashgen.rules.recording import GPU_CLOCK_REASONS, GPU_MEMORY, GPU_TEMPERATURE, slo_error_ratio_name

NODES_PER_RULE = 25
# GpuMemoryNearlyFull: a share above the threshold alerts only when it grew this much over its lowest
# value in this window (SGLang reserves KV memory statically: 95 % flat is the healthy steady state).
MEMORY_GROWTH = 0.02
MEMORY_BASELINE = "6h"
# Sources that run on some nodes only and describe the whole cluster: absence is "no up series at all".
CLUSTER_SOURCES = ("mooncake_master", "gateway")
# (bit, meaning) of the clock-event reasons that are power or thermal throttling.
CLUSTER_EFFECT = {
    "mooncake_master": (
        "the master's series describe the whole Store, so the effect is cluster-wide: the Store "
        "capacity and allocation panels and the Store-segment columns of every node's cache-evidence "
        "and missing-data tables are 'collection failed' (S6), not zero"
    ),
    "gateway": (
        "the gateway is the entry of the whole deployment, so the effect is cluster-wide: its admission "
        "queue, in-flight and backend panels are 'collection failed' (S6), not zero, for every node"
    ),
}
SLO_WHERE = (
    "Node and GPU: request histograms come from the tokenizer on the entry node of each engine and carry no "
    "rank or GPU label, so this alert is per model; open the dashboard's SLO and health group and drill down "
    "cluster -> node -> GPU."
)


def _burn_alert(profile: Profile, name: str, spec: tuple[str, str, float], for_: str, severity: str) -> AlertRule:
    burn = burn_condition(profile, spec, slo_error_ratio_name)
    notes = " ".join(f"{sli.evaluation_note()}." for sli in slis(profile))
    return AlertRule(
        alert=name,
        expr=burn.expr,
        for_=for_,
        severity=severity,
        summary=f"{{{{ $labels.slo }}}} SLO of model {{{{ $labels.model_name }}}} burns its error budget "
        f"{burn.burn:g}x too fast",
        description=(
            f"Model {{{{ $labels.model_name }}}}, SLI {{{{ $labels.slo }}}}: the error ratio is above "
            f"{burn.burn:g} x the budget {burn.budget:g} (objective {profile.slo.objective:g}) over both "
            f"{burn.long_window} and {burn.short_window}; at this rate {burn.spent:.0%} of the "
            f"{profile.slo.window_days}-day budget goes in {burn.long_window}. SLIs: TTFT, TPOT, E2E; "
            f"{BAD_EVENTS}. {SLO_WHERE} {notes}"
        ),
    )


def slo_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    return (
        _burn_alert(profile, "SloErrorBudgetFastBurn", FAST_BURN, "2m", "critical"),
        _burn_alert(profile, "SloErrorBudgetSlowBurn", SLOW_BURN, "15m", "warning"),
    )


def client_slo_records(profile: Profile) -> tuple[RecordingRule, ...]:
    """The client-side error ratio (S33, ``queries.client_slo``) at the burn windows, labelled ``slo="client"``;
    none when the profile does not export the gateway."""
    if not profile.exported("gateway"):
        return ()
    return tuple(
        RecordingRule(client_error_ratio_name(window), client_error_ratio(profile, window), (("slo", CLIENT_SLO),))
        for window in RECORDED_WINDOWS
    )


def _client_burn_alert(
    profile: Profile, name: str, spec: tuple[str, str, float], for_: str, severity: str, *, stalled: bool = False
) -> AlertRule:
    burn = burn_condition(profile, spec, client_error_ratio_name)
    expr = burn.expr
    if stalled:  # the same alert (labels slo and deployment) while the gateway sends nothing and backends are out
        silent = silent_with_backends_missing(profile, burn.short_window, expected_backends(topology_of(profile)))
        expr = f'{expr} or on() label_replace({silent}, "slo", "{CLIENT_SLO}", "", "")'
    return AlertRule(
        alert=name,
        expr=expr,
        for_=for_,
        severity=severity,
        summary=f"Client-side SLO (at the gateway, slo={{{{ $labels.slo }}}}) burns its error budget "
        f"{burn.burn:g}x too fast",
        description=(
            f"Cluster-wide, every gateway instance of the deployment (SLI {{{{ $labels.slo }}}}, as the "
            f"client sees it at the gateway): the share of responses that were shed (429), timed out "
            f"(408 / 504) or failed (5xx) among all but the clients' own 4xx ({RESPONSES}) is above "
            f"{burn.burn:g} x the budget {burn.budget:g} (objective {profile.slo.objective:g}) over both "
            f"{burn.long_window} and {burn.short_window}; at this rate {burn.spent:.0%} of the "
            f"{profile.slo.window_days}-day budget goes in {burn.long_window}. These requests never reached "
            "an engine, so the engine-side SLO alerts may stay silent. Which gateway instance and which "
            "class: the first screen's gateway panel and the Gateway group (non-2xx share by class per "
            "instance, admission queue, healthy backends)."
            + (
                f" Also firing while no valid response was counted over {burn.short_window} and a gateway instance "
                "sees fewer healthy backends than the profile's replicas: the gateway stopped sending traffic (open "
                "circuit, backends out), not the fault going away."
                if stalled
                else ""
            )
        ),
    )


def client_slo_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """Multiwindow burn alerts on the client-side error ratio; none without an exported gateway."""
    if not profile.exported("gateway"):
        return ()
    return (
        _client_burn_alert(profile, "ClientSloErrorBudgetFastBurn", FAST_BURN, "2m", "critical", stalled=True),
        _client_burn_alert(profile, "ClientSloErrorBudgetSlowBurn", SLOW_BURN, "15m", "warning"),
    )


def _gpu_alert(
    profile: Profile, source: GpuSource, alert: str, expr: str, for_: str, severity: str, summary: str, description: str
) -> AlertRule:
    """A per-GPU alert: the summary ends with "on <node> GPU <gpu>", the description starts with the node and GPU;
    the alert carries the GPU's UUID label where its source reports one (S31)."""
    node, gpu = f"{{{{ $labels.{profile.label('node')} }}}}", f"{{{{ $labels.{profile.label('gpu')} }}}}"
    return AlertRule(
        alert=alert,
        expr=with_uuid(profile, source, expr),
        for_=for_,
        severity=severity,
        summary=f"{summary} on {node} GPU {gpu}",
        description=f"Node {node}, GPU {gpu}: {description}",
    )


def memory_growth_expr(profile: Profile) -> str:
    """Memory share above the alert threshold and above its own static level: more than ``MEMORY_GROWTH``
    over its lowest value of the last ``MEMORY_BASELINE`` (the engine's reservation is flat)."""
    share = in_deployment(profile, GPU_MEMORY)
    return (
        f"{share} > {MEMORY_FULL_SHARE:g} and ({share} - min_over_time({share}[{MEMORY_BASELINE}])) > {MEMORY_GROWTH:g}"
    )


def throttle_expr(profile: Profile) -> str:
    """The clock-event bitmask, kept only where a power or thermal bit is set (alert value = the bitmask)."""
    return clock_events_set(profile, in_deployment(profile, GPU_CLOCK_REASONS), THERMAL_BITS + POWER_BITS)


def hw_slowdown_expr(profile: Profile) -> str:
    """The clock-event bitmask where HW slowdown is set and no power or thermal bit (those name the cause)."""
    keys = f"{profile.label('node')}, {profile.label('gpu')}"
    slowed = clock_events_set(profile, in_deployment(profile, GPU_CLOCK_REASONS), HW_SLOWDOWN_BITS)
    return f"({slowed}) unless on ({keys}) ({throttle_expr(profile)})"


def _memory_reservation(profile: Profile) -> str:
    """What the engine holds from start-up: a text pool's KV reservation; a video pool has no KV cache (S25)."""
    if profile.has_kind(TEXT):
        return "The engine reserves its KV pool at start-up (--mem-fraction-static, plus CUDA graphs)"
    return "A diffusion engine holds its model weights and working buffers from start-up"


def gpu_alerts(profile: Profile, source: GpuSource) -> tuple[AlertRule, ...]:
    measured = f"{source.name} {source.caption()}"
    memory_metrics = gpu_memory_used_share_formula(source)
    bits = ", ".join(f"0x{bit:x} {THROTTLE_MEANINGS[bit]}" for bit in THERMAL_BITS + POWER_BITS)
    alerts = (
        _gpu_alert(
            profile,
            source,
            "GpuMemoryNearlyFull",
            memory_growth_expr(profile),
            "1m",
            "warning",
            f"GPU memory above {MEMORY_FULL_SHARE:.0%} and growing",
            f"memory used / total is {{{{ $value | humanizePercentage }}}}: above {MEMORY_FULL_SHARE:.0%} for 1m and "
            f"more than {MEMORY_GROWTH:.0%} above its lowest share of the last {MEMORY_BASELINE} ({measured}, "
            f"{memory_metrics}). {_memory_reservation(profile)}, so {MEMORY_FULL_SHARE:.0%} flat since the engine "
            "started is that static reservation and does not alert; growth above it points to a leak or a foreign "
            "process on the GPU. A warning: what pages is what breaks (an engine restart, a fatal Xid, a GPU "
            "missing).",
        ),
        _gpu_alert(
            profile,
            source,
            "GpuTemperatureHigh",
            f"{in_deployment(profile, GPU_TEMPERATURE)} > {TEMPERATURE_HIGH_CELSIUS:g}",
            "2m",
            "warning",
            f"GPU temperature above {TEMPERATURE_HIGH_CELSIUS:g} °C",
            f"temperature {{{{ $value }}}} °C, above {TEMPERATURE_HIGH_CELSIUS:g} °C for 2m ({measured}). Thermal "
            "slowdown lowers clocks and throughput.",
        ),
        _gpu_alert(
            profile,
            source,
            "GpuClockThrottled",
            throttle_expr(profile),
            "5m",
            "warning",
            "GPU clocks throttled for power or thermal reasons",
            f"clock-event reasons bitmask {{{{ $value }}}} has a power or thermal bit set for 5m ({measured}). "
            f"Alerting bits: {bits}; 0x8 HW slowdown alone is GpuHwSlowdown; 0x1 idle, 0x2 clocks setting, 0x10 "
            "sync boost and 0x100 display clocks alone do not alert.",
        ),
        _gpu_alert(
            profile,
            source,
            "GpuHwSlowdown",
            hw_slowdown_expr(profile),
            "5m",
            "warning",
            "GPU clocks held down by HW slowdown with no power or thermal cause",
            f"clock-event reasons bitmask {{{{ $value }}}} has 0x8 HW slowdown set and no power or thermal bit for 5m "
            f"({measured}): the board's own protection (fast power-draw, an external slowdown signal) holds the "
            "clocks; a failing PSU, power sensor or the baseboard's slowdown line.",
        ),
    )
    reads = {
        "GpuMemoryNearlyFull": (source.metric("memory_used"), *source.memory_total_metrics),
        "GpuTemperatureHigh": (source.metric("temperature"),),
        "GpuClockThrottled": (source.metric(CLOCK_EVENT_REASONS),),
        "GpuHwSlowdown": (source.metric(CLOCK_EVENT_REASONS),),
    }
    return tuple(a for a in alerts if not source.missing(reads[a.alert]))


def engine_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    node, stage = profile.label("node"), profile.label("pp_rank")
    job_name = profile.source("sglang").job
    window = STALL_WINDOW
    return (
        AlertRule(
            alert="EngineMetricsScrapeFailing",
            expr=scrape_failing(profile, job_name),
            for_="1m",
            severity="critical",
            summary=f"SGLang /metrics scrape failing on {{{{ $labels.{node} }}}}",
            description=(
                f"Node {{{{ $labels.{node} }}}} ({{{{ $labels.instance }}}}): more than "
                f"{SCRAPE_FAILED_SHARE:.0%} of the scrapes of the SGLang /metrics endpoint (job {job_name}) over "
                f"{SCRAPE_WINDOW} failed, for 1m (down, or timing out now and then). This does not prove the "
                "engine ranks are down (the node's vmagent or the network can fail the scrape), and a hung "
                "scheduler keeps serving /metrics, so this alert is silent for a hung engine (see EngineStalled). "
                "The node's engine panels show collection failed (S6)."
            ),
        ),
        AlertRule(
            alert="EngineRestarted",
            expr=restarted_ranks(profile, RESTART_WINDOW),
            for_="0m",
            severity="critical",
            summary=(
                f"SGLang engine restarted on {{{{ $labels.{node} }}}} PP stage {{{{ $labels.{stage} }}}} "
                "({{ $labels.engine_type }})"
            ),
            description=(
                f"Node {{{{ $labels.{node} }}}}, PP stage {{{{ $labels.{stage} }}}} "
                f"({{{{ $labels.engine_type }}}}): a scheduler counter of this stage "
                f"({' or '.join(RESTART_COUNTERS)}) went down within {RESTART_WINDOW} "
                "({{ $value }} resets): the stage's engine process restarted (an OOM kill, a crash, or a "
                "deliberate restart). Every stage of a replica fires when the whole replica restarted; one "
                "stage alone means that node's ranks died and the replica's other stages are waiting for it. "
                "Requests in flight were lost and the replica served nothing while it reloaded; check the "
                "engine's log on the node and the GPU memory and Xid panels of its GPUs. A restart before "
                "the counters' first increment is not seen."
            ),
        ),
        AlertRule(
            alert="EngineStalled",
            expr=stalled_stages(profile, window),
            for_=window,
            severity="critical",
            summary=(
                f"SGLang stage stalled on {{{{ $labels.{node} }}}} PP stage {{{{ $labels.{stage} }}}} "
                "({{ $labels.engine_type }})"
            ),
            description=(
                f"Node {{{{ $labels.{node} }}}}, PP stage {{{{ $labels.{stage} }}}} "
                f"({{{{ $labels.engine_type }}}}): {{{{ $value }}}} "
                f"requests waiting or running (sglang:num_queue_reqs, sglang:num_running_reqs) and no token processed "
                f"(sglang:realtime_tokens_total, prefill and decode, absent or flat) over {window}, for "
                f"{window}: the scheduler makes no progress for at least twice {window}. A hung scheduler "
                "keeps serving /metrics with its last queue length, so EngineMetricsScrapeFailing stays "
                "silent; /health_generate on the replica's entry node would time out."
            ),
        ),
    )


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _alert_prefix(name: str) -> str:
    return "EngineMetrics" if name == "sglang" else _camel(name)


def _expected_nodes(profile: Profile, name: str) -> tuple[str, ...]:
    """Nodes that must have an ``up`` series for the source: engine nodes for SGLang, every node otherwise."""
    if name == "sglang":
        return tuple(role.name for role in topology_of(profile).nodes if role.gpus)
    return profile.node_names


def _node_list(profile: Profile, nodes: tuple[str, ...]) -> str:
    node = profile.label("node")
    return " or ".join(f'label_replace(vector(1), "{node}", "{name}", "", "")' for name in nodes)


def _exported_jobs(profile: Profile) -> list[tuple[str, Source]]:
    """(source name, source) once per scrape job of exported sources; the engine job first."""
    seen: set[str] = set()
    jobs = []
    for name in ("sglang", *[n for n in profile.sources if n != "sglang"]):
        source = profile.sources.get(name)
        if source is None or not source.exported or source.job in seen:
            continue
        seen.add(source.job)
        jobs.append((name, source))
    return jobs


def target_missing_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """One absence alert per exported source's job (several rules of it past ``NODES_PER_RULE`` nodes)."""
    node, job_label = profile.label("node"), profile.label("job")
    alerts: list[AlertRule] = []
    for name, source in _exported_jobs(profile):
        up = selector("up", scoped_job(profile, source.job))
        alert = f"{_alert_prefix(name)}TargetMissing"
        if name in CLUSTER_SOURCES:
            alerts.append(
                AlertRule(
                    alert=alert,
                    expr=f"absent({up})",
                    for_="5m",
                    severity="warning",
                    summary=f"{source.what}: no scrape target at all (job {source.job})",
                    description=(
                        f"Cluster-wide: there has been no up series for job {source.job} ({source.what}) for "
                        f"5m: the target is gone from every node's vmagent (the node running it died, its "
                        f"vmagent died, or it left service discovery). It runs on some nodes only, and "
                        f"{CLUSTER_EFFECT[name]}."
                    ),
                    anchor="targetmissing",
                )
            )
            continue
        nodes = _expected_nodes(profile, name)
        for start in range(0, len(nodes), NODES_PER_RULE):
            block = nodes[start : start + NODES_PER_RULE]
            alerts.append(
                AlertRule(
                    alert=alert,
                    expr=f"({_node_list(profile, block)}) unless on ({node}) {up}",
                    for_="5m",
                    severity="critical" if name == "sglang" else "warning",
                    summary=f"{source.what}: target missing on {{{{ $labels.{node} }}}}",
                    description=(
                        f"Node {{{{ $labels.{node} }}}}: the profile lists this node, but there has been no up "
                        f"series for job {source.job} ({source.what}) on it for 5m. The target is gone, not "
                        "failing: the node is down, its vmagent is down, or the target left service discovery. "
                        "Its series on this node (every GPU, for per-GPU sources) are 'collection failed' "
                        "(S6), not zero."
                    ),
                    labels=((job_label, source.job),),
                    anchor="targetmissing",
                )
            )
    return tuple(alerts)


def collection_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """A failing scrape (``scrape_failing``) per exported source's job; the engine job is covered by
    EngineMetricsScrapeFailing."""
    node = profile.label("node")
    alerts = []
    for name, source in _exported_jobs(profile):
        if name == "sglang":
            continue
        effect = (
            f"{CLUSTER_EFFECT[name]}."
            if name in CLUSTER_SOURCES
            else "Its series on this node (every GPU, for per-GPU sources) are 'collection failed' (S6), not zero."
        )
        where = "Cluster-wide, target on node" if name in CLUSTER_SOURCES else "Node"
        alerts.append(
            AlertRule(
                alert=f"{_camel(name)}CollectionFailed",
                expr=scrape_failing(profile, source.job),
                for_="5m",
                severity="warning",
                summary=f"{source.what}: scrape failing on {{{{ $labels.{node} }}}}",
                description=(
                    f"{where} {{{{ $labels.{node} }}}} ({{{{ $labels.instance }}}}): more than "
                    f"{SCRAPE_FAILED_SHARE:.0%} of the scrapes of job {source.job} ({source.what}) over "
                    f"{SCRAPE_WINDOW} failed, for 5m (down, or timing out now and then). {effect}"
                ),
                anchor="collectionfailed",
            )
        )
    return tuple(alerts)
