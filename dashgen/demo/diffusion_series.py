"""Demo series of video-generation pools (S25): SGLang Diffusion engines, one instance per node, simulated
job by job so every series agrees with the others (metric catalogue §11, ``queries.diffusion``).

Each instance is a FIFO queue with one running batch: jobs arrive as a Poisson stream (about 11 an hour),
a dispatch takes one job, or two when two wait (a batch of 2 runs ~1.6 x longer); a job takes minutes
(log-normal around ~100 s); about 0.4 % fail part-way. Healthy means within the SLO: with queueing, about
0.1 % of jobs pass the 10 min bound, so errors and slow jobs together spend under a tenth of video-200's 5 %
budget (tests/test_demo_invariants.py). A successful job
passes the pipeline stages TextEncodingStage, ``DENOISING_STEPS`` x DenoisingStep and DecodingStage, each
observed in the stage histogram as host wall time. One warm-up job (``is_warmup="true"``) ran at the
engine's start, before the window. The simulation starts ``HISTORY`` seconds before the window so queue,
counters and histograms hold a past.

Scenario faults (``dashgen.demo.scenarios``): a down node or an engine absent on it has no series; a sparse
node keeps few samples; a no-traffic node served only its warm-up job (the non-warm-up series never exist);
a ``stuck`` node's running batch never finishes from ``STUCK_AT`` of the window on, while jobs keep
queueing (up to ``STUCK_QUEUE_CAP``) and its counters stay flat.

The generic generator (``dashgen.demo.series``) calls :func:`diffusion_series`; ``dashgen.demo.wanted``
leaves these names to it (:func:`is_diffusion`).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from dashgen_queries import diffusion as df

from dashgen.demo.scenarios import NodeFault
from dashgen.demo.scopes import Plan, target_labels
from dashgen.demo.values import import_object, series_rng, timestamps
from dashgen.deployment.profile import VIDEO

ARRIVALS_PER_HOUR = 11.0
SERVICE_MEDIAN, SERVICE_SIGMA = 100.0, 0.35
BATCH_OF_TWO_FACTOR = 1.6
JobStatus = Literal["success", "error"]  # the status label of a finished job, in the order series are written
ERROR_SHARE = 0.004
DENOISING_STEPS = 40
STAGE_SHARES = {"TextEncodingStage": 0.01, "DenoisingStep": 0.9, "DecodingStage": 0.09}
WARMUP_LATENCY = 280.0
HISTORY = 3 * 3600.0
STUCK_AT = 0.25
STUCK_QUEUE_CAP = 8
ROLE = "monolithic"


def is_diffusion(name: str) -> bool:
    """Whether a series name belongs to this module (``sglang:diffusion_*``)."""
    return name.startswith("sglang:diffusion_")


@dataclass
class Job:
    arrival: float
    dispatch: float = math.inf
    finish: float = math.inf
    status: JobStatus = "success"
    batch: int = 1
    service: float = 0.0


@dataclass
class Simulation:
    """One instance's jobs and the dispatches (time, batch size) its scheduler made."""

    jobs: list[Job] = field(default_factory=list)
    dispatches: list[tuple[float, int]] = field(default_factory=list)


def simulate(rng: random.Random, start: float, end: float, traffic: bool, stuck_at: float | None) -> Simulation:
    sim = Simulation()
    if not traffic:
        return sim
    t, arrivals = start, []
    while True:
        t += rng.expovariate(ARRIVALS_PER_HOUR / 3600)
        if t >= end:
            break
        arrivals.append(t)
    free_at, index = start, 0
    waiting: list[Job] = []
    while index < len(arrivals) or waiting:
        now = max(free_at, arrivals[index] if not waiting else free_at)
        while index < len(arrivals) and arrivals[index] <= now:
            waiting.append(Job(arrivals[index]))
            index += 1
        if not waiting:
            continue
        if stuck_at is not None and now >= stuck_at:  # the scheduler stopped: the rest only queues
            sim.jobs.extend(waiting[:STUCK_QUEUE_CAP])
            sim.jobs.extend(Job(a) for a in arrivals[index : index + max(0, STUCK_QUEUE_CAP - len(waiting))])
            break
        batch = waiting[:2] if len(waiting) >= 2 else waiting[:1]
        waiting = waiting[len(batch) :]
        service = rng.lognormvariate(math.log(SERVICE_MEDIAN), SERVICE_SIGMA)
        service *= BATCH_OF_TWO_FACTOR if len(batch) == 2 else 1.0
        sim.dispatches.append((now, len(batch)))
        hangs = stuck_at is not None and now + service >= stuck_at
        for job in batch:
            job.dispatch, job.batch, job.service = now, len(batch), service
            if hangs:
                continue  # dispatched before the stall, never finishes
            job.status = "error" if rng.random() < ERROR_SHARE else "success"
            job.finish = now + (service * rng.uniform(0.1, 0.9) if job.status == "error" else service)
        sim.jobs.extend(batch)
        if hangs:
            sim.jobs.extend(waiting)
            sim.jobs.extend(Job(a) for a in arrivals[index : index + max(0, STUCK_QUEUE_CAP - len(waiting))])
            break
        free_at = now + service
    return sim


def _le(bound: float) -> str:
    return "+Inf" if bound == math.inf else (repr(float(bound)) if bound != int(bound) else f"{bound:.1f}")


class Cumulative:
    """A histogram (or counter, with no bounds) whose observations are replayed up to each sample time."""

    def __init__(self, bounds: tuple[float, ...] | None) -> None:
        self.bounds = None if bounds is None else (*bounds, math.inf)
        self.events: list[tuple[float, float]] = []

    def observe(self, at: float, value: float = 1.0) -> None:
        self.events.append((at, value))

    def samples(self, stamps: list[int]) -> tuple[list[list[float]], list[float], list[float]]:
        """(per-bound cumulative counts, sums, counts) at every stamp."""
        self.events.sort()
        times = [at for at, _ in self.events]
        nbounds = len(self.bounds or ())
        buckets: list[list[float]] = [[] for _ in range(nbounds)]
        sums, counts = [], []
        running = [0.0] * nbounds
        total = count = 0.0
        position = 0
        for ms in stamps:
            upto = bisect.bisect_right(times, ms / 1000)
            for _at, value in self.events[position:upto]:
                count += 1
                total += value
                for i, bound in enumerate(self.bounds or ()):
                    if value <= bound:
                        running[i] += 1
            position = upto
            for i in range(nbounds):
                buckets[i].append(running[i])
            sums.append(round(total, 3))
            counts.append(count)
        return buckets, sums, counts


def _histogram(name: str, acc: Cumulative, labels: dict[str, str], stamps: list[int]) -> Iterator[dict[str, Any]]:
    buckets, sums, counts = acc.samples(stamps)
    for bound, values in zip(acc.bounds or (), buckets, strict=True):
        yield import_object(f"{name}_bucket", {**labels, "le": _le(bound)}, values, stamps)
    yield import_object(f"{name}_sum", labels, sums, stamps)
    yield import_object(f"{name}_count", labels, counts, stamps)


def instance_series(plan: Plan, node: str, fault: NodeFault) -> Iterator[dict[str, Any]]:
    """Every diffusion series of the instance on ``node``."""
    labels = {**target_labels(plan, node, "sglang"), "role": ROLE, "replica": f"tcp://{node}:30010"}
    rng = series_rng("sglang:diffusion", labels)
    stuck_at = plan.start + (plan.end - plan.start) * STUCK_AT if fault.stuck else None
    sim = simulate(rng, plan.start - HISTORY, plan.end, not fault.no_traffic, stuck_at)
    stamps = timestamps(plan, "sglang", fault)
    seconds = [ms / 1000 for ms in stamps]
    queue = [float(sum(1 for j in sim.jobs if j.arrival <= t < j.dispatch)) for t in seconds]
    running = [float(sum(1 for j in sim.jobs if j.dispatch <= t < j.finish)) for t in seconds]
    yield import_object(df.QUEUE, labels, queue, stamps)
    yield import_object(df.RUNNING, labels, running, stamps)
    engine_start = plan.start - HISTORY - WARMUP_LATENCY
    warm = {**labels, "is_warmup": "true"}
    warm_latency = Cumulative(df.LATENCY_BUCKETS)
    warm_latency.observe(engine_start + WARMUP_LATENCY, WARMUP_LATENCY)
    warm_queue = Cumulative(df.LATENCY_BUCKETS)
    warm_queue.observe(engine_start, 0.01)
    yield import_object(df.REQUESTS, {**warm, "status": "success"}, [1.0] * len(stamps), stamps)
    yield from _histogram(df.LATENCY, warm_latency, {**warm, "status": "success"}, stamps)
    yield from _histogram(df.QUEUE_TIME, warm_queue, warm, stamps)
    stages = {stage: Cumulative(df.STAGE_BUCKETS) for stage in STAGE_SHARES}
    batches = Cumulative(df.BATCH_BUCKETS)
    batches.observe(engine_start, 1.0)
    _stages(stages, engine_start + WARMUP_LATENCY, WARMUP_LATENCY)
    for at, size in sim.dispatches:
        batches.observe(at, float(size))
    if sim.jobs:
        cold = {**labels, "is_warmup": "false"}
        queue_time = Cumulative(df.LATENCY_BUCKETS)
        by_status = {status: (Cumulative(None), Cumulative(df.LATENCY_BUCKETS)) for status in get_args(JobStatus)}
        for job in sim.jobs:
            if job.dispatch != math.inf:
                queue_time.observe(job.dispatch, job.dispatch - job.arrival)
            if job.finish == math.inf:
                continue
            counter, latency = by_status[job.status]
            counter.observe(job.finish)
            latency.observe(job.finish, job.finish - job.arrival)
            if job.status == "success":
                _stages(stages, job.finish, job.service)
        for status, (counter, latency) in by_status.items():
            if counter.events:  # a counter child exists from its first job (prometheus_client labels)
                yield import_object(df.REQUESTS, {**cold, "status": status}, counter.samples(stamps)[2], stamps)
                yield from _histogram(df.LATENCY, latency, {**cold, "status": status}, stamps)
        yield from _histogram(df.QUEUE_TIME, queue_time, cold, stamps)
    for stage, acc in stages.items():
        yield from _histogram(df.STAGE, acc, {**labels, "stage": stage}, stamps)
    yield from _histogram(df.BATCH, batches, {**labels, "stop_reason": "unspecified"}, stamps)


def _stages(stages: dict[str, Cumulative], finish: float, service: float) -> None:
    """A finished job's stage observations, in pipeline order, ending at ``finish``."""
    at = finish - service
    for stage, share in STAGE_SHARES.items():
        steps = DENOISING_STEPS if stage == "DenoisingStep" else 1
        for _ in range(steps):
            at += service * share / steps
            stages[stage].observe(at, service * share / steps)


def diffusion_series(plan: Plan) -> Iterator[dict[str, Any]]:
    """The diffusion series of every node of the profile's video-generation pools (none for text pools)."""
    profile = plan.profile
    if not profile.exported("sglang") or not profile.has_kind(VIDEO):
        return
    video_pools = {pool.name for pool in profile.pools if pool.kind == VIDEO}
    for role in plan.topology.nodes:
        fault = plan.fault(role.name)
        if role.pool not in video_pools or fault.down or "sglang" in fault.absent_sources:
            continue
        yield from instance_series(plan, role.name, fault)
