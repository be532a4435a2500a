"""Job SLO and health (video generation, S25): the north-star number of a video pool is the share of
non-warm-up jobs that succeed within the profile's job-latency bound (``slo.job_latency_seconds``, a
bucket bound of SGLang Diffusion's request-latency histogram); the error budget left; burn rates over
1 h / 6 h / 3 d with the same multiwindow alert levels as the text SLO; and the instances that are stuck
(jobs waiting or running, none finished for twice the bound).

No TTFT / TPOT and no token quantity: a diffusion engine streams none. Health and its trend follow
``$node`` (one instance per node); budget and burn rates cover the deployment's video pools, as the
alerts see them, evaluated from the raw histograms so they work without the rule files loaded.
"""

from __future__ import annotations

from dashgen_panels.slo_health import BUDGET_STATES, BURN_STATES, INSTANT_BURN_WINDOWS, health_states
from dashgen_queries import diffusion as df
from dashgen_queries.promql import WINDOW
from dashgen_queries.sglang_slo import (
    BURN_PANEL_WINDOWS,
    FAST_BURN,
    RECORDED_WINDOWS,
    SLOW_BURN,
    check_objective,
    error_budget,
)

from dashgen.deployment.profile import VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import Column, ratio_axis, source_status_panel, stat, table, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Job SLO and health (video generation)"
KEY = "video_slo"
WORKLOADS = (VIDEO,)
BURN_TITLES = {"1h": "Job burn rate over 1h", "6h": "Job burn rate over 6h", "3d": "Job burn rate over 3d"}


def _source(profile: Profile) -> str:
    return (
        f'{df.ENGINE}: {df.LATENCY}_bucket{{status="success", is_warmup="false"}} and _count{{is_warmup='
        f'"false"}} (job {profile.source("sglang").job})'
    )


def _sli(profile: Profile) -> str:
    return (
        f"good = jobs finished with status success within {df.job_bound(profile):g} s (slo.job_latency_seconds, "
        f"the bucket le={df.job_bound(profile):g} exactly), all = every finished non-warm-up job (success and "
        f"error); objective {profile.slo.objective:g}"
    )


def _limit() -> str:
    return (
        "a job still queued or running counts only when it finishes, so a stuck instance does not lower it: see "
        f"Stuck instances; latency excludes HTTP preprocessing and media delivery; {df.CANNOT_PROVE}"
    )


def health_panels(profile: Profile) -> list[PanelSpec]:
    states = health_states(profile)
    health = stat(
        key=f"{KEY}.health",
        title="Health: share of jobs meeting the SLO",
        evidence=Evidence(
            source=_source(profile),
            quantity=f"over the dashboard window, good / all jobs, rates summed before dividing; {_sli(profile)}",
            limit=f"{_limit()}. No job finished in the window -> No data, not 100 %",
        ),
        targets=(Target(df.job_good_ratio(profile, WINDOW, scoped=True), legend="jobs", instant=True),),
        **ratio_axis("percentunit"),
        decimals=2,
        width=6,
        height=7,
        no_value="No jobs finished in window",
        thresholds=states,
    )
    trend = timeseries(
        key=f"{KEY}.health_trend",
        title="Good share of jobs over time",
        evidence=Evidence(
            source=_source(profile),
            quantity=f"good / all jobs per rate interval; {_sli(profile)}",
            limit=(
                f"jobs last minutes, so a short interval holds few jobs and swings; gaps mean no "
                f"job finished, not 0 % (S7); {_limit()}"
            ),
        ),
        targets=(Target(df.job_good_ratio(profile, "$__rate_interval", scoped=True), legend="jobs"),),
        **ratio_axis("percentunit"),
        width=10,
        height=7,
        thresholds=states,
        threshold_style="line+area",
    )
    return [health, trend]


def budget_panel(profile: Profile) -> PanelSpec:
    days = profile.slo.window_days
    return stat(
        key=f"{KEY}.budget",
        title=f"Job error budget left ({days} d)",
        evidence=Evidence(
            source=_source(profile),
            quantity=(
                f"1 - (job error ratio over {days} days) / budget, budget = 1 - objective = "
                f"{error_budget(profile):g}; every video pool of the deployment; negative once "
                "overspent"
            ),
            limit=(
                f"a rolling {days}-day window ending at the end of the dashboard range; counter "
                f"resets and series younger than the window shorten it; {_limit()}"
            ),
        ),
        targets=(
            Target(
                f"1 - ({df.job_error_ratio(profile, f'{days}d')}) / {error_budget(profile):g}",
                legend="jobs",
                instant=True,
            ),
        ),
        **ratio_axis("percentunit", signed=True),
        decimals=1,
        width=8,
        height=7,
        no_value="No jobs finished in window",
        thresholds=BUDGET_STATES,
    )


def burn_panel(profile: Profile, window: str) -> PanelSpec:
    instant = window in INSTANT_BURN_WINDOWS
    return stat(
        key=f"{KEY}.burn_{window}",
        title=BURN_TITLES[window],
        evidence=Evidence(
            source=_source(profile),
            quantity=(
                f"job error ratio over a fixed {window} window / the budget "
                f"{error_budget(profile):g}: 1 spends the budget exactly over the SLO window. "
                f"Alerts: VideoJobSloFastBurn {FAST_BURN[2]:g}x over {FAST_BURN[0]} and "
                f"{FAST_BURN[1]}, VideoJobSloSlowBurn {SLOW_BURN[2]:g}x over {SLOW_BURN[0]} and "
                f"{SLOW_BURN[1]} (rules/{profile.name}.yml)"
            ),
            limit=(
                f"the {window} window is fixed by design; "
                + (
                    f"the same expression as the recording rule {df.job_slo_error_ratio_name(profile, window)}"
                    if window in RECORDED_WINDOWS
                    else "evaluated raw (no alert reads this window, so no rule records it)"
                )
                + f"; the short alert windows hold few minutes-long jobs; {_limit()}"
            ),
        ),
        targets=(
            Target(
                f"({df.job_error_ratio(profile, window)}) / {error_budget(profile):g}", legend="jobs", instant=instant
            ),
        ),
        unit="none",
        min=0,
        decimals=2,
        width=8,
        height=6,
        no_value="No jobs finished in window",
        thresholds=BURN_STATES,
        graph_mode="none" if instant else "area",
    )


def stuck_panel(profile: Profile) -> PanelSpec:
    window = df.stuck_window(profile)
    node, endpoint = df.instance(profile)
    return table(
        key=f"{KEY}.stuck",
        title="Stuck instances: jobs waiting or running, none finished",
        evidence=Evidence(
            source=f'{df.ENGINE}: {df.QUEUE}, {df.RUNNING}, {df.REQUESTS}{{is_warmup="false"}}',
            quantity=(
                f"per instance at the window end, the jobs queued + running where jobs waited or ran at every "
                f"sample of the last {window} ({df.STUCK_FACTOR} x the job-latency bound) and no non-warm-up "
                "job finished in it; the VideoInstanceStuck alert's expression"
            ),
            limit=(
                "an empty table means no instance is stuck or no engine reports (see Missing-data "
                "reasons); a hung engine that stopped updating its gauges keeps its last queue; a "
                "single job legitimately longer than the window reads stuck; 'waited throughout' is judged at "
                "the scrape step, so a spike of idleness shorter than one scrape is missed"
            ),
        ),
        # the instance's labels and its count, named: the columns are known before any data comes back
        labels={node: "Node", endpoint: "Instance"},
        columns=[Column("Jobs waiting or running", df.stuck_instances(profile, scoped=True), aliases=("Value",))],
        unit="short",
        width=24,
        height=6,
        no_value="No instance stuck (or no engine reports)",
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    check_objective(profile)
    if not profile.exported("sglang"):
        panels: list[PanelSpec] = [
            source_status_panel(f"{KEY}.engine_unavailable", profile, ["sglang"], "Job SLO: not available")
        ]
    else:
        panels = [
            *health_panels(profile),
            budget_panel(profile),
            *(burn_panel(profile, window) for window in BURN_PANEL_WINDOWS),
            stuck_panel(profile),
        ]
    return GroupSpec(key=KEY, title=TITLE, panels=tuple(panels))
