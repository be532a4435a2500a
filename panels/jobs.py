"""Jobs (video generation, S25): what a video-generation pool's SGLang Diffusion engines do with their jobs.
Queue and running jobs per instance and for the pool; job outcomes (success / error) per minute,
warm-up jobs excluded; job latency and queue time p50 / p95 / p99 from the minutes-scale histograms;
host latency per pipeline stage (text encoding, denoising, decoding ...) so a slow stage shows; batch
size; throughput per instance (jobs per hour) and jobs finished per instance in the window, so an idle
or stuck instance among 25 stands out; the GPU memory peak per instance beside its jobs.

Never tokens, TTFT / TPOT, KV cache or cache evidence: a diffusion engine has none. Each description
says what the series cannot prove (``queries.diffusion``): latency is scheduler acceptance to
completion, stage latency is host wall time, counts are per job and not per video, and there is no
frames or steps-per-second metric. Instances are one per node, so ``$node`` narrows every panel exactly.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dashgen_panels.drilldown import node_link
from dashgen_queries import diffusion as df
from dashgen_queries.gpu import GPU_SOURCE_KEYS, gpu_memory_used_share, gpu_memory_used_share_formula, gpu_source
from dashgen_queries.promql import FIRST_EVENT_RATE, agg
from dashgen_queries.sglang import QUANTILES, quantile_legend

from dashgen.deployment.profile import VIDEO, Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, bargauge, ratio_axis, source_status_panel, timeseries
from dashgen.render.spec import Evidence, FanOut, GroupSpec, PanelSpec, RankedEnd, Target

TITLE = "Jobs (video generation)"
KEY = "jobs"
WORKLOADS = (VIDEO,)
NOT_LATENCY = (
    "latency runs from scheduler acceptance to completion: HTTP preprocessing, media encoding and "
    "delivery are not in it, and a job still queued or running is in no histogram until it finishes"
)


def _src(*metrics: str) -> str:
    return f"{df.ENGINE}: {', '.join(metrics)}"


def _legend(profile: Profile, suffix: str = "") -> str:
    return f"{{{{{profile.label('node')}}}}}{suffix}"


def _common(profile: Profile, **fields: Any) -> dict[str, Any]:
    return {"width": 12, "height": 8, "no_value": NO_DATA_TEXT, "data_links": (node_link(profile),), **fields}


def queue_panels(profile: Profile) -> list[PanelSpec]:
    gauges = "gauges set by the scheduler on every enqueue, dispatch and finish; sampled at the scrape interval"
    per_instance = [
        timeseries(
            key=f"{KEY}.{name}",
            title=title,
            evidence=Evidence(
                source=_src(metric),
                quantity=f"{what} per instance (node, replica)",
                limit=f"{gauges}, so a job shorter than one scrape can be missed; {df.CANNOT_PROVE}",
            ),
            targets=(Target(df.per_instance(profile, metric), legend=_legend(profile)),),
            unit="short",
            min=0,
            decimals=0,
            **_common(profile),
        )
        for name, title, metric, what in (
            ("queued", "Jobs queued per instance", df.QUEUE, "jobs waiting for their first dispatch"),
            ("running", "Jobs running per instance", df.RUNNING, "jobs dispatched and not yet finished"),
        )
    ]
    pool = timeseries(
        key=f"{KEY}.pool_queue",
        title="Jobs queued and running: pool",
        evidence=Evidence(
            source=_src(df.QUEUE, df.RUNNING),
            quantity="queued and running jobs summed over the instances of the deployment's video pools "
            "(each job is queued or running on one instance only, so the sum counts it once)",
            limit=f"{gauges}; every video pool of the deployment together; {df.CANNOT_PROVE}",
        ),
        targets=(
            Target(df.pool_total(profile, df.QUEUE), legend="queued"),
            Target(df.pool_total(profile, df.RUNNING), legend="running"),
        ),
        unit="short",
        min=0,
        decimals=0,
        width=24,
        height=7,
        no_value=NO_DATA_TEXT,
    )
    return [pool, *per_instance]


def outcomes_panel(profile: Profile) -> PanelSpec:
    return timeseries(
        key=f"{KEY}.outcomes",
        title="Job outcomes per instance (jobs/min, warm-up excluded)",
        evidence=Evidence(
            source=_src(f'{df.REQUESTS}{{status, is_warmup="false"}}'),
            quantity="finished jobs per minute by instance and status (success / error); warm-up jobs excluded",
            limit=(
                f"a job is counted when it finishes, so a stuck job never appears here; "
                f"{df.CANNOT_PROVE}; {FIRST_EVENT_RATE}"
            ),
        ),
        targets=(Target(df.outcomes_per_minute(profile), legend=_legend(profile, " {{status}}")),),
        unit="short",
        min=0,
        **_common(profile),
    )


def latency_panels(profile: Profile) -> list[PanelSpec]:
    bound = df.job_bound(profile)
    buckets = f"buckets {', '.join(f'{b:g}' for b in df.LATENCY_BUCKETS)} s"
    limit = (
        f"{NOT_LATENCY}; a quantile interpolates inside one bucket ({buckets}) and beyond the largest bound "
        "returns that bound"
    )
    pool = [
        timeseries(
            key=f"{KEY}.{name}",
            title=title,
            evidence=Evidence(
                source=_src(f'{metric}_bucket{{is_warmup="false"}}'),
                quantity=f"{what} p50 / p95 / p99 of non-warm-up jobs over the pool: histogram_quantile "
                f"over bucket rates summed by (le) across instances; SLO bound {bound:g} s "
                "(slo.job_latency_seconds)",
                limit=limit,
            ),
            targets=tuple(Target(df.quantile(profile, metric, q), legend=quantile_legend(q)) for q in QUANTILES),
            unit="s",
            width=12,
            height=8,
            no_value=NO_DATA_TEXT,
        )
        for name, title, metric, what in (
            ("latency", "Job latency p50 / p95 / p99 (s)", df.LATENCY, "job latency (success and error)"),
            ("queue_time", "Job queue time p50 / p95 / p99 (s)", df.QUEUE_TIME, "time until first dispatch"),
        )
    ]
    node = profile.label("node")
    per_instance = timeseries(
        key=f"{KEY}.latency_instance",
        title="Job latency p95 per instance (s)",
        evidence=Evidence(
            source=_src(f'{df.LATENCY}_bucket{{is_warmup="false"}}'),
            quantity=f"p95 job latency per instance, buckets summed by (le, {node}, replica)",
            limit=f"{limit}; an instance that finished no job in the interval draws nothing",
        ),
        targets=(Target(df.quantile(profile, df.LATENCY, 0.95, df.instance(profile)), legend=_legend(profile)),),
        unit="s",
        **_common(profile),
    )
    queue_instance = timeseries(
        key=f"{KEY}.queue_time_instance",
        title="Job queue time per instance: p95, and seconds since the last dispatch while jobs wait (s)",
        evidence=Evidence(
            source=_src(f'{df.QUEUE_TIME}_bucket{{is_warmup="false"}}', df.QUEUE),
            quantity=(
                f"p95 time until first dispatch per instance, buckets summed by (le, {node}, "
                "replica); and, while the instance has jobs queued, the seconds since it last "
                "dispatched one (a lower bound of its oldest queued job's wait)"
            ),
            limit=(
                f"{limit}; a job enters the histogram only when dispatched, so a stuck instance draws "
                "no p95 at all: its 'since last dispatch' line grows instead, for up to "
                f"{df.DISPATCH_LOOKBACK} (the Stuck instances table keeps it after that)"
            ),
        ),
        targets=(
            Target(df.quantile(profile, df.QUEUE_TIME, 0.95, df.instance(profile)), legend=_legend(profile, " p95")),
            Target(df.waiting_since_dispatch(profile), legend=_legend(profile, " since last dispatch")),
        ),
        unit="s",
        **_common(profile),
    )
    return [*pool, per_instance, queue_instance]


def stage_panel(profile: Profile) -> PanelSpec:
    return timeseries(
        key=f"{KEY}.stages",
        title="Host latency per pipeline stage: p95 and mean (s)",
        evidence=Evidence(
            source=_src(f"{df.STAGE}{{stage}}"),
            quantity=(
                "per pipeline stage (TextEncodingStage, DenoisingStep, DecodingStage ...), p95 and "
                "mean host wall time over the pool; DenoisingStep is one denoising step"
            ),
            limit=(
                "host wall time around a stage, not GPU time (no synchronisation): a stage that only "
                "launches kernels looks fast and the next one absorbs the wait; buckets "
                f"{', '.join(f'{b:g}' for b in df.STAGE_BUCKETS)} s; the DenoisingStep rate is the "
                f"nearest to steps per second, no such metric exists; {df.CANNOT_PROVE}"
            ),
        ),
        targets=(
            Target(df.quantile(profile, df.STAGE, 0.95, ("stage",)), legend="{{stage}} p95"),
            Target(df.stage_mean(profile), legend="{{stage}} mean"),
        ),
        unit="s",
        width=12,
        height=8,
        no_value=NO_DATA_TEXT,
        log_scale=10,
    )


def stage_instance_panel(profile: Profile) -> PanelSpec:
    node = profile.label("node")
    return timeseries(
        key=f"{KEY}.stages_instance",
        title="Host latency per pipeline stage p95, per instance (s)",
        evidence=Evidence(
            source=_src(f"{df.STAGE}{{stage}}"),
            quantity=(
                f"p95 host wall time of each pipeline stage on each instance, buckets summed by "
                f"(le, {node}, replica, stage): the pool view beside it, split so a slow "
                "instance's stage stands out"
            ),
            limit=(
                "host wall time, not GPU time (see the pool view); an instance that ran no stage in "
                f"the interval draws nothing; {df.CANNOT_PROVE}"
            ),
        ),
        targets=(
            Target(
                df.quantile(profile, df.STAGE, 0.95, (*df.instance(profile), "stage")),
                legend=_legend(profile, " {{stage}}"),
            ),
        ),
        unit="s",
        log_scale=10,
        **_common(profile),
    )


def batch_panel(profile: Profile) -> PanelSpec:
    return timeseries(
        key=f"{KEY}.batch",
        title="Batch size per instance (mean jobs per dispatched batch)",
        evidence=Evidence(
            source=_src(f"{df.BATCH}{{stop_reason}}"),
            quantity="mean jobs per batch the scheduler dispatched, per instance (_sum / _count rates)",
            limit=(
                "a mean over the rate interval: one large batch and many single jobs look alike; "
                f"an instance that dispatched nothing draws nothing; {df.CANNOT_PROVE}"
            ),
        ),
        targets=(Target(df.mean_batch(profile), legend=_legend(profile)),),
        unit="short",
        min=0,
        **_common(profile),
    )


def throughput_panels(profile: Profile) -> list[PanelSpec]:
    stuck = df.stuck_window(profile)
    timeline = timeseries(
        key=f"{KEY}.jobs_per_hour",
        title="Throughput per instance (successful jobs/hour, last hour)",
        evidence=Evidence(
            source=_src(f'{df.REQUESTS}{{status="success", is_warmup="false"}}'),
            quantity=(
                f"successful non-warm-up jobs per hour per instance, the rate over the last "
                f"{df.JOBS_PER_HOUR_WINDOW} (jobs last minutes, a shorter window reads 0 or 1)"
            ),
            limit=(
                f"an instance at 0 while its queue holds jobs is stuck (VideoInstanceStuck fires "
                f"after {stuck} without a finished job); an instance whose counter never existed "
                f"draws nothing rather than 0 (see Missing-data reasons); {df.CANNOT_PROVE}"
            ),
        ),
        targets=(Target(df.jobs_per_hour(profile), legend=_legend(profile)),),
        unit="short",
        min=0,
        **_common(profile),
    )
    window = bargauge(
        key=f"{KEY}.jobs_window",
        title="Jobs finished per instance in the window",
        evidence=Evidence(
            source=_src(f'{df.REQUESTS}{{is_warmup="false"}}'),
            quantity="non-warm-up jobs finished (success and error) per instance over the dashboard window, at its end",
            limit=(
                f"increase() over the window: an instance restarted inside it undercounts; an "
                f"instance with no finished job ever has no bar (absent, not 0); {df.CANNOT_PROVE}"
            ),
        ),
        targets=(Target(df.jobs_in_window(profile), legend=_legend(profile), instant=True),),
        unit="short",
        min=0,
        decimals=0,
        **_common(profile),
    )
    return [timeline, window]


def gpu_memory_panel(profile: Profile) -> PanelSpec:
    source = gpu_source(profile)
    if source is None:
        return source_status_panel(
            f"{KEY}.gpu_unavailable", profile, list(GPU_SOURCE_KEYS), "GPU memory beside the jobs: not available"
        )
    node = profile.label("node")
    return timeseries(
        key=f"{KEY}.gpu_memory",
        title="GPU memory peak per instance (fullest GPU, share)",
        evidence=Evidence(
            source=f"{source.name} ({gpu_memory_used_share_formula(source, valid_only=True)})",
            quantity="per instance (one per node), the highest memory used / total share among its GPUs",
            limit=(
                f"one sample per {source.interval}, so a short peak between samples is missed; a "
                "diffusion engine holds its weights and activations for the job, so a flat high "
                "share is not a leak by itself"
            ),
        ),
        targets=(
            Target(
                agg("max", (node,), gpu_memory_used_share(profile, source, valid_only=True)), legend=_legend(profile)
            ),
        ),
        **ratio_axis("percentunit"),
        **_common(profile),
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    if not profile.exported("sglang"):
        panels: list[PanelSpec] = [
            source_status_panel(
                f"{KEY}.engine_unavailable", profile, ["sglang"], "Video generation jobs: not available"
            )
        ]
    else:
        panels = [
            *queue_panels(profile),
            outcomes_panel(profile),
            *throughput_panels(profile),
            *latency_panels(profile),
            stage_panel(profile),
            stage_instance_panel(profile),
            batch_panel(profile),
        ]
    panels.append(gpu_memory_panel(profile))
    return GroupSpec(key=KEY, title=TITLE, panels=tuple(with_fan_out(profile, panel) for panel in panels))


# Per-instance graphs: which instances are worst when there are more than fit a screen (dashgen_panels.screenful):
# panel key -> (what makes one worse, the labels each instance's series are split by).
WORST_INSTANCES: dict[str, tuple[RankedEnd, tuple[str, ...]]] = {
    "queued": ("top", ()),
    "running": ("top", ()),
    "outcomes": ("top", ("status",)),
    "jobs_per_hour": ("bottom", ()),  # an instance finishing nothing is the one to look at
    "latency_instance": ("top", ()),
    "queue_time_instance": ("top", ()),
    "stages_instance": ("top", ("stage",)),
    "batch": ("top", ()),
}


def with_fan_out(profile: Profile, panel: PanelSpec) -> PanelSpec:
    """``panel`` marked as drawing one series per instance (the GPU memory one: per node), where it does."""
    name = panel.key.removeprefix(f"{KEY}.")
    if name == "gpu_memory":
        return replace(panel, fan_out=FanOut("node", (profile.label("node"),), "top"))
    if name not in WORST_INSTANCES:
        return panel
    worst, split = WORST_INSTANCES[name]
    return replace(panel, fan_out=FanOut("instance", df.instance(profile), worst, split=split))
