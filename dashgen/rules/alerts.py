"""Alerting rules: multiwindow multi-burn-rate SLO alerts (Google SRE workbook, "Alerting on SLOs"),
GPU memory / temperature / clock-throttle alerts, the engine health alert and one collection
alert per exported source's scrape job. Only exported sources get alerts.

Engine health: SGLang exports no /health metric. Its /metrics endpoint is served by the same HTTP
server that answers /health (the API server on node 0, the "dummy health-check server" on the other
node ranks; metric catalogue §1.1), so ``up{job=<sglang>} == 0`` is the engine health probe here. A
blackbox ``probe_success`` of /health would also catch a hung scheduler behind a live HTTP server;
no profile deploys a blackbox exporter, so none is generated.

Clock throttling: PromQL has no bitwise operators. For an integer bitmask x >= 0,
``x & ~0x1 != 0`` (any reason other than GPU idle) holds exactly when x >= 2, because
``x & ~0x1 = x - (x mod 2)``, which is non-zero iff x >= 2. ``x >= 2``, ``x > 1`` and
``floor(x / 2) > 0`` are the same predicate; ``x >= 2`` keeps the bitmask itself as the alert value.
"""

from __future__ import annotations

from dashgen.profile import Profile
from dashgen.rules.model import AlertRule
from dashgen.rules.recording import GPU_CLOCK_REASONS, GPU_MEMORY, GPU_TEMPERATURE, slo_error_ratio_name
from queries.gpu import GpuSource
from queries.promql import matcher, selector
from queries.slo import FAST_BURN, SLOW_BURN, error_budget, slis

GPU_MEMORY_SHARE = 0.95
GPU_TEMPERATURE_CELSIUS = 85
IDLE_BIT = 0x1
CLOCK_REASONS = ("0x2 clocks setting, 0x4 SW power cap, 0x8 HW slowdown, 0x10 sync boost, 0x20 SW thermal, "
                 "0x40 HW thermal, 0x80 HW power brake, 0x100 display clocks")
SLO_WHERE = ("Node and GPU: request histograms come from the tokenizer on node 0 of each engine and carry no rank "
             "or GPU label, so this alert is per model; open the dashboard's SLO and health group and drill down "
             "cluster -> node -> GPU.")


def _burn_alert(profile: Profile, name: str, spec: tuple[str, str, float], for_: str, severity: str) -> AlertRule:
    long_window, short_window, burn = spec
    budget = error_budget(profile)
    threshold = f"({burn:g} * {budget:g})"
    expr = (f"{slo_error_ratio_name(long_window)} > {threshold} "
            f"and {slo_error_ratio_name(short_window)} > {threshold}")
    hours = int(long_window.removesuffix("h"))  # the long windows are whole hours (1h, 6h)
    spent = burn * hours / (24 * profile.slo.window_days)
    notes = " ".join(f"{sli.evaluation_note()}." for sli in slis(profile))
    return AlertRule(
        alert=name,
        expr=expr,
        for_=for_,
        severity=severity,
        summary=f"{{{{ $labels.slo }}}} SLO of model {{{{ $labels.model_name }}}} burns its error budget "
                f"{burn:g}x too fast",
        description=(f"Model {{{{ $labels.model_name }}}}, SLI {{{{ $labels.slo }}}}: the error ratio is above "
                     f"{burn:g} x the budget {budget:g} (objective {profile.slo.objective:g}) over both {long_window} "
                     f"and {short_window}; at this rate {spent:.0%} of the {profile.slo.window_days}-day budget goes "
                     f"in {long_window}. {SLO_WHERE} {notes}"),
    )


def slo_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    return (
        _burn_alert(profile, "SloErrorBudgetFastBurn", FAST_BURN, "2m", "critical"),
        _burn_alert(profile, "SloErrorBudgetSlowBurn", SLOW_BURN, "15m", "warning"),
    )


def _gpu_alert(profile: Profile, alert: str, expr: str, for_: str, severity: str, summary: str,
               description: str) -> AlertRule:
    """A per-GPU alert: the summary ends with "on <node> GPU <gpu>", the description starts with the node and GPU."""
    node, gpu = f"{{{{ $labels.{profile.label('node')} }}}}", f"{{{{ $labels.{profile.label('gpu')} }}}}"
    return AlertRule(alert=alert, expr=expr, for_=for_, severity=severity, summary=f"{summary} on {node} GPU {gpu}",
                     description=f"Node {node}, GPU {gpu}: {description}")


def gpu_alerts(profile: Profile, source: GpuSource) -> tuple[AlertRule, ...]:
    measured = f"{source.name} {source.caption()}"
    memory_metrics = ("gpm_memory_used_bytes / gpm_memory_total_bytes" if source.key == "gpm"
                      else "DCGM_FI_DEV_FB_USED / (FB_USED + FB_FREE + FB_RESERVED)")
    reasons_note = ("" if source.key == "gpm" else
                    " DCGM_FI_DEV_CLOCKS_EVENT_REASONS (field 112) is not in dcgm-exporter's default CSV: without it "
                    "this alert cannot fire.")
    return (
        _gpu_alert(
            profile, "GpuMemoryNearlyFull", f"{GPU_MEMORY} > {GPU_MEMORY_SHARE:g}", "1m", "critical",
            f"GPU memory above {GPU_MEMORY_SHARE:.0%}",
            f"memory used / total is {{{{ $value | humanizePercentage }}}} (above {GPU_MEMORY_SHARE:.0%} for 1m; "
            f"{measured}, {memory_metrics}). An out-of-memory failure of the engine rank on this GPU is likely.",
        ),
        _gpu_alert(
            profile, "GpuTemperatureHigh", f"{GPU_TEMPERATURE} > {GPU_TEMPERATURE_CELSIUS}", "2m", "warning",
            f"GPU temperature above {GPU_TEMPERATURE_CELSIUS} °C",
            f"temperature {{{{ $value }}}} °C, above {GPU_TEMPERATURE_CELSIUS} °C for 2m ({measured}). Thermal "
            "slowdown lowers clocks and throughput.",
        ),
        _gpu_alert(
            profile, "GpuClockThrottled", f"{GPU_CLOCK_REASONS} >= 2", "5m", "warning",
            "GPU clocks held back for a reason other than idle",
            f"clock-event reasons bitmask {{{{ $value }}}} has bits other than 0x1 (GPU idle) set for 5m "
            f"({measured}). Bits: {CLOCK_REASONS}.{reasons_note}",
        ),
    )


def engine_alert(profile: Profile) -> AlertRule:
    node = profile.label("node")
    job_name = profile.source("sglang").job
    return AlertRule(
        alert="EngineHealthProbeFailing",
        expr=f"{selector('up', matcher(profile.label('job'), '=', job_name))} == 0",
        for_="1m",
        severity="critical",
        summary=f"SGLang engine endpoint down on {{{{ $labels.{node} }}}}",
        description=(f"Node {{{{ $labels.{node} }}}} ({{{{ $labels.instance }}}}): the SGLang endpoint of job "
                     f"{job_name} has not answered a scrape for 1m. It is served by the same HTTP server as /health "
                     "(API server on node 0, health-check server on other node ranks), so the engine ranks on every "
                     "GPU of this node are unreachable or down; their panels show collection failed."),
    )


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def collection_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """``up == 0`` per exported source's job; the engine job is covered by EngineHealthProbeFailing."""
    node, job_label = profile.label("node"), profile.label("job")
    seen = {profile.source("sglang").job} if profile.exported("sglang") else set()
    alerts = []
    for name, source in profile.sources.items():
        if not source.exported or source.job in seen:
            continue
        seen.add(source.job)
        alerts.append(AlertRule(
            alert=f"{_camel(name)}CollectionFailed",
            expr=f"{selector('up', matcher(job_label, '=', source.job))} == 0",
            for_="5m",
            severity="warning",
            summary=f"{source.what}: scrape failing on {{{{ $labels.{node} }}}}",
            description=(f"Node {{{{ $labels.{node} }}}} ({{{{ $labels.instance }}}}): scrapes of job {source.job} "
                         f"({source.what}) have failed for 5m. Its series on this node (every GPU, for per-GPU "
                         "sources) are 'collection failed' (S6), not zero."),
            anchor="collectionfailed",
        ))
    return tuple(alerts)
