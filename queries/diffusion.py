"""PromQL for video-generation pools (S25): the SGLang Diffusion engine (``sglang serve ... --enable-metrics``,
``python/sglang/multimodal_gen/runtime/observability/metrics.py``, sgl-project/sglang#19084; metric catalogue §11).

Only each DP replica's leader publishes, so one instance is one series set: labels ``role`` and ``replica``
(the scheduler endpoint) from the engine, ``node`` from the node's vmagent; **no model label**. An
instance is keyed by (node, replica): one per node in the video pool, never summed across replicas
unless a panel says "pool".

What the series can and cannot prove (every Jobs panel's limit says the part it needs):

- latency runs from scheduler acceptance to completion: HTTP preprocessing, media encoding and delivery
  are not in it; a job still queued or running is in no histogram until it finishes;
- counts are per original request (a job), not per image or video, and not per GPU batch;
- stage latency is host wall time around a pipeline stage, not GPU time (no synchronisation);
- there is no frames, steps-per-second or output-size metric (the nearest to steps/s is the
  ``DenoisingStep`` stage's ``_count`` and ``_sum``);
- warm-up jobs (``is_warmup="true"``) run at start-up and are excluded from outcomes, throughput, the SLO
  and the No Data traffic check.

Bucket bounds are pinned from that source (``LATENCY_BUCKETS``: request latency and queue time;
``STAGE_BUCKETS``; ``BATCH_BUCKETS``); the job-latency SLO must sit on one of them (``job_bound``).
"""

from __future__ import annotations

from dashgen_queries.promql import agg, divide, increase, job, matcher, node_var, rate, selector
from dashgen_queries.sglang import histogram_quantile
from dashgen_queries.sglang_slo import le_matcher

from dashgen.deployment.profile import Profile
from dashgen.errors import ProfileError
from dashgen.exporters.table import SGLANG

QUEUE = SGLANG.name("sglang:diffusion_num_queue_reqs")
RUNNING = SGLANG.name("sglang:diffusion_num_running_reqs")
REQUESTS = SGLANG.name("sglang:diffusion_requests_total")
LATENCY = SGLANG.name("sglang:diffusion_request_latency_seconds")
QUEUE_TIME = SGLANG.name("sglang:diffusion_queue_time_seconds")
BATCH = SGLANG.name("sglang:diffusion_generation_batch_size")
STAGE = SGLANG.name("sglang:diffusion_stage_host_latency_seconds")
METRICS = (QUEUE, RUNNING, REQUESTS, LATENCY, QUEUE_TIME, BATCH, STAGE)

LATENCY_BUCKETS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200)
STAGE_BUCKETS: tuple[float, ...] = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 1200)
BATCH_BUCKETS: tuple[float, ...] = (1, 2, 4, 8, 16, 32, 64)
ENGINE = (
    "SGLang Diffusion (sglang serve --enable-metrics; python/sglang/multimodal_gen/runtime/observability/"
    "metrics.py), published by each DP replica's leader, labels role and replica, no model label"
)
NOT_WARMUP = matcher("is_warmup", "=", "false")
# A job not finished within this many times the SLO bound means its instance is stuck (VideoInstanceStuck).
STUCK_FACTOR = 2
JOBS_PER_HOUR_WINDOW = "1h"
CANNOT_PROVE = (
    "counts are per job (original request), not per image or video; there is no frames or steps-per-second metric"
)


def instance(profile: Profile) -> tuple[str, str]:
    """The labels of one engine instance: its node and its scheduler endpoint (``replica``)."""
    return (profile.label("node"), "replica")


def pool_key(profile: Profile) -> tuple[str]:
    """What a "pool" figure is summed by: the deployment label (every video-generation pool of the deployment)."""
    return (profile.label("deployment"),)


def series(profile: Profile, metric: str, *matchers: str, scoped: bool = True) -> str:
    """``metric{cluster, job="sglang", node=~"$node", ...}`` (``scoped=False``: no dashboard variable, for rules)."""
    return selector(metric, job(profile, "sglang"), node_var(profile) if scoped else "", *matchers)


def job_bound(profile: Profile) -> float:
    """The profile's job-latency bound, which must be a bucket bound of the request-latency histogram: the
    SLO counts the bucket ``le`` = the bound, so any other value could not be evaluated exactly."""
    bound = profile.slo.job_latency_seconds
    if not any(abs(bound - b) < 1e-9 for b in LATENCY_BUCKETS):
        raise ProfileError(
            profile.path,
            "slo.job_latency_seconds",
            f"{bound:g} s is not a bucket bound of sglang:diffusion_request_latency_seconds; use one "
            f"of {', '.join(f'{b:g}' for b in LATENCY_BUCKETS)} (s)",
        )
    return float(bound)


def stuck_window(profile: Profile) -> str:
    """No job finished for ``STUCK_FACTOR`` x the job-latency bound: longer than any job meeting the SLO."""
    return f"{int(STUCK_FACTOR * job_bound(profile))}s"


def per_instance(profile: Profile, metric: str) -> str:
    """A gauge per instance (one series each; ``max`` only drops duplicates)."""
    return agg("max", instance(profile), series(profile, metric))


DISPATCH_LOOKBACK = "2h"  # how far back "seconds since the last dispatch" looks (a subquery at 1-minute steps)


def waiting_since_dispatch(profile: Profile) -> str:
    """Per instance with jobs queued: seconds since it last dispatched a non-warm-up job (its queue-time
    histogram's count last grew), a lower bound of its oldest queued job's wait. The queue-time histogram
    records a job only at its dispatch, so a stuck instance draws no queue time at all; this line grows instead.
    Absent while nothing waits, and past ``DISPATCH_LOOKBACK`` without a dispatch."""
    by = instance(profile)
    dispatched = agg("sum", by, increase(series(profile, f"{QUEUE_TIME}_count", NOT_WARMUP), "1m"))
    last = f"last_over_time(timestamp({dispatched} > 0)[{DISPATCH_LOOKBACK}:1m])"
    return f"(time() - {last}) and on ({', '.join(by)}) ({per_instance(profile, QUEUE)} > 0)"


def pool_total(profile: Profile, metric: str) -> str:
    """A gauge summed over the instances of the deployment's video pools (queued or running jobs are disjoint)."""
    return agg("sum", pool_key(profile), series(profile, metric))


def outcomes_per_minute(profile: Profile) -> str:
    """Finished non-warm-up jobs per minute by instance and status (success / error)."""
    per_second = agg("sum", (*instance(profile), "status"), rate(series(profile, REQUESTS, NOT_WARMUP)))
    return f"{per_second} * 60"


def jobs_per_hour(profile: Profile) -> str:
    """Successful non-warm-up jobs per hour per instance, averaged over the last hour (jobs last minutes: a
    shorter window would read 0 or 1 job)."""
    good = series(profile, REQUESTS, NOT_WARMUP, matcher("status", "=", "success"))
    return f"{agg('sum', instance(profile), rate(good, JOBS_PER_HOUR_WINDOW))} * 3600"


def jobs_in_window(profile: Profile) -> str:
    """Non-warm-up jobs finished (any status) per instance over the dashboard window."""
    return agg("sum", instance(profile), increase(series(profile, REQUESTS, NOT_WARMUP)))


def quantile(profile: Profile, metric: str, q: float, by: tuple[str, ...] = (), *matchers: str) -> str:
    """``histogram_quantile`` of non-warm-up jobs (stage and batch histograms have no warm-up label)."""
    warm = (NOT_WARMUP,) if metric in (LATENCY, QUEUE_TIME) else ()
    return histogram_quantile(q, series(profile, f"{metric}_bucket", *warm, *matchers), by)


def stage_mean(profile: Profile) -> str:
    """Mean host wall time per stage over the pool: summed ``_sum`` rate / summed ``_count`` rate."""
    by = ("stage",)
    return divide(
        agg("sum", by, rate(series(profile, f"{STAGE}_sum"))), agg("sum", by, rate(series(profile, f"{STAGE}_count")))
    )


def mean_batch(profile: Profile) -> str:
    """Mean jobs per dispatched batch per instance (``_sum`` / ``_count`` rates)."""
    by = instance(profile)
    return divide(
        agg("sum", by, rate(series(profile, f"{BATCH}_sum"))), agg("sum", by, rate(series(profile, f"{BATCH}_count")))
    )


# --- the job SLO ---------------------------------------------------------------------------------


def job_error_ratio(profile: Profile, window: str, scoped: bool = False) -> str:
    """Bad / all finished non-warm-up jobs over ``window`` for the deployment's video pools: bad = errors plus
    successes slower than the bound (``le`` = the bound of the success series). Rates summed before dividing;
    an idle window gives no sample, not 0."""
    by = pool_key(profile)
    good = agg(
        "sum",
        by,
        rate(
            series(
                profile,
                f"{LATENCY}_bucket",
                NOT_WARMUP,
                matcher("status", "=", "success"),
                le_matcher(job_bound(profile)),
                scoped=scoped,
            ),
            window,
        ),
    )
    total = agg("sum", by, rate(series(profile, f"{LATENCY}_count", NOT_WARMUP, scoped=scoped), window))
    return divide(f"{total} - {good}", total)


def job_good_ratio(profile: Profile, window: str, scoped: bool = False) -> str:
    return f"1 - ({job_error_ratio(profile, window, scoped)})"


def job_slo_error_ratio_name(profile: Profile, window: str) -> str:
    """The recording rule holding the job error ratio over ``window``."""
    return f"{profile.label('deployment')}:sglang_diffusion_job_errors:ratio_rate{window}"


def _held(profile: Profile, metric: str, by: tuple[str, ...] | list[str], scoped: bool) -> str:
    """``metric`` summed ``by``, at its lowest over ``stuck_window``: above 0 only when work waited throughout."""
    return agg("sum", by, f"min_over_time({series(profile, metric, scoped=scoped)}[{stuck_window(profile)}])")


def stuck_instances(profile: Profile, scoped: bool = False) -> str:
    """Instances that held jobs queued or running throughout ``stuck_window`` and finished no non-warm-up job in
    it: the value is the jobs waiting or running now. Work held throughout, not merely now: an idle instance
    (about 11 jobs an hour) that has just taken its first job after a quiet spell has finished none in the window
    and is not stuck. ``unless`` also covers an instance whose counter was never created."""
    by = instance(profile)
    waiting = (
        f"{agg('sum', by, series(profile, QUEUE, scoped=scoped))} + "
        f"{agg('sum', by, series(profile, RUNNING, scoped=scoped))}"
    )
    held = f"{_held(profile, QUEUE, by, scoped)} + {_held(profile, RUNNING, by, scoped)}"
    finished = agg("sum", by, increase(series(profile, REQUESTS, NOT_WARMUP, scoped=scoped), stuck_window(profile)))
    on = ", ".join(by)
    return f"(({waiting}) > 0) and on ({on}) (({held}) > 0) unless on ({on}) ({finished} > 0)"


def stuck_pool(profile: Profile) -> str:
    """The deployment's video pools with jobs queued throughout ``stuck_window`` and none finished in it (value:
    queued jobs now)."""
    by = pool_key(profile)
    queued = agg("sum", by, series(profile, QUEUE, scoped=False))
    held = _held(profile, QUEUE, by, False)
    finished = agg("sum", by, increase(series(profile, REQUESTS, NOT_WARMUP, scoped=False), stuck_window(profile)))
    on = ", ".join(by)
    return f"({queued} > 0) and on ({on}) ({held} > 0) unless on ({on}) ({finished} > 0)"


def presence(profile: Profile) -> str:
    """The No Data engine layer's presence series: the queue gauge, published from the engine's start."""
    return series(profile, QUEUE)


def traffic_counter(profile: Profile) -> str:
    """The No Data engine layer's traffic: finished non-warm-up jobs (a warm-up alone is no traffic)."""
    return series(profile, REQUESTS, NOT_WARMUP)


# --- the first screen (S26) --------------------------------------------------------------------------

FINISHING, STUCK, IDLE = 0, 2, 3
INSTANCE_STATES: dict[int, tuple[str, str]] = {
    FINISHING: ("finishing jobs", "green"),
    STUCK: ("stuck: jobs wait or run, none finished", "red"),
    IDLE: ("idle: no job", "blue"),
}


def instance_state(profile: Profile) -> str:
    """Per instance, the first that applies: finishing (a non-warm-up job finished over ``stuck_window``) > stuck
    (jobs queued or running, none finished) > idle (the engine is there, nothing waits or finishes)."""
    by = instance(profile)
    finished = agg("sum", by, increase(series(profile, REQUESTS, NOT_WARMUP), stuck_window(profile)))
    present = agg("max", by, series(profile, QUEUE))
    return (
        f"({FINISHING} * ({finished} > 0)) or ({STUCK} + 0 * ({stuck_instances(profile, scoped=True)})) "
        f"or ({IDLE} + 0 * {present})"
    )


def pool_slo_health(profile: Profile, window: str) -> str:
    """The job SLO's good share over ``window`` for the deployment: one number."""
    return f"min({job_good_ratio(profile, window, scoped=True)})"
