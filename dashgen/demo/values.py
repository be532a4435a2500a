"""The demo's value models made into samples: scrape timestamps, gauge waves, monotonic counters and
cumulative histogram buckets, and node filesystems that fill slowly.

Deterministic: each series seeds its own generator (:func:`series_rng`) from its name and labels.
Counters start as if the process had been up for ``UPTIME_SECONDS``; histogram buckets are
cumulative and monotonic in time.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import repeat
from typing import Any

from dashgen.demo import healthy
from dashgen.demo.catalogue import Histogram, Rate, Wave
from dashgen.demo.scenarios import NodeFault
from dashgen.demo.scopes import Plan

_NOISE_TABLE = 509
UPTIME_SECONDS = 2 * 86400  # counters start as if the process had been up this long


def _number(value: Any, plan: Plan) -> float:
    return float(value(plan.profile, plan.topology)) if callable(value) else float(value)


def series_rng(name: str, labels: dict[str, str]) -> random.Random:
    """The series' own generator, seeded from its name and labels."""
    key = name + "\x00" + "\x00".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return random.Random(int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big"))


# -- values ---------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _grid(start: float, end: float, step: float) -> tuple[int, ...]:
    first = math.ceil(start / step) * step
    count = int((end - first) // step) + 1
    return tuple(int(round((first + i * step) * 1000)) for i in range(max(count, 0)))


def timestamps(plan: Plan, source: str, fault: NodeFault, start: float | None = None) -> list[int]:
    """Scrape times (ms) of a source in the window; a sparse node keeps ``fault.sparse`` of them (the last included)."""
    stamps = _grid(plan.start if start is None else start, plan.end, plan.spacing(source))
    if fault.sparse and stamps:
        last = len(stamps) - 1
        picks = {last - last * k // fault.sparse for k in range(fault.sparse)}
        return [stamps[i] for i in sorted(picks)]
    return list(stamps)


def gauge_values(
    plan: Plan, model: Wave, rng: random.Random, stamps: list[int], idle: bool, override_base: float | None = None
) -> list[float]:
    lo, hi = _number(model.lo, plan), _number(model.hi, plan)
    if idle and model.load:
        value = _number(model.idle, plan)
        return [value] * len(stamps)
    base = override_base if override_base is not None else _number(model.base, plan)
    amp, noise = _number(model.amp, plan), _number(model.noise, plan)
    phase = rng.uniform(0, 2 * math.pi)
    base *= rng.uniform(0.93, 1.07) if amp or noise else 1.0
    if not amp and not noise:
        value = min(max(base, lo), hi)
        return [float(round(value)) if model.integer else round(value, 4)] * len(stamps)
    omega = 2 * math.pi / model.period / 1000
    # A per-series table of gaussian noise, walked with a stride: cheap, deterministic, not periodic to the eye.
    # A window much shorter than the table computes only the entries it walks (12 of 509 for six minutes at 30 s).
    if 2 * len(stamps) < _NOISE_TABLE and _PAIRS_AS_GAUSS:
        draws = drawn_gaussians(rng, _NOISE_TABLE)
        offset = rng.randrange(_NOISE_TABLE)
        noises = [noise * z for z in draws.at([(offset + 7 * i) % _NOISE_TABLE for i in range(len(stamps))])]
    else:
        table = [noise * z for z in gaussians(rng, _NOISE_TABLE)]
        offset = rng.randrange(_NOISE_TABLE)
        noises = walk(table, offset, len(stamps))
    sin = math.sin
    raw = [base + amp * sin(omega * ms + phase) + z for ms, z in zip(stamps, noises, strict=True)]
    inside = lo <= min(raw, default=lo) and max(raw, default=hi) <= hi  # then clamping changes no value
    # map() calls round without a bytecode loop: the demo rounds millions of samples
    if model.integer:
        return list(map(float, map(round, raw))) if inside else [float(round(min(max(v, lo), hi))) for v in raw]
    return list(map(round, raw, repeat(4))) if inside else [round(min(max(v, lo), hi), 4) for v in raw]


def walk(table: list[float], offset: int, count: int) -> list[float]:
    """``[table[(offset + 7 * i) % len(table)] for i in range(count)]``: the stride comes back to ``offset`` after
    ``len(table)`` steps, so one period is indexed and the list repeats it (a 1 s gauge of an hour: 509 indexings,
    not 3,600)."""
    size = len(table)
    period = [table[(offset + 7 * i) % size] for i in range(min(count, size))]
    return (period * (count // size + 1))[:count] if count > size else period


def gaussians(rng: random.Random, count: int) -> list[float]:
    """``[rng.gauss(0, 1) for _ in range(count)]``: the same numbers, and the generator left as those calls leave it,
    without a method call per number (the demo draws millions). Where this Python's ``gauss`` is not the pairs of
    Box-Muller draws :func:`_pairs` repeats (checked once, at import), ``gauss`` itself is called."""
    if not _PAIRS_AS_GAUSS:
        return [rng.gauss(0, 1) for _ in range(count)]
    return _pairs(rng, count)


class Gaussians:
    """The numbers of ``count`` calls of ``gauss(0, 1)``, each computed when it is read (its uniform draws are
    taken at once, so the generator is left as those calls leave it)."""

    __slots__ = ("_first", "_uniforms")

    def __init__(self, first: float | None, uniforms: list[float]) -> None:
        self._first = first  # a number the generator kept from an earlier call
        self._uniforms = uniforms  # two uniform draws per Box-Muller pair

    def at(self, indices: Iterable[int]) -> list[float]:
        """The numbers at ``indices`` (each below ``count``)."""
        first, uniforms, shift = self._first, self._uniforms, 0 if self._first is None else 1
        log, sqrt, cos, sin = math.log, math.sqrt, math.cos, math.sin
        out = []
        for k in indices:
            if k < shift:
                out.append(0 + first * 1)  # type: ignore[operator]  # shift is 1 only when first is a number
                continue
            second = (k - shift) & 1
            pair = k - shift - second  # the index of the pair's first uniform draw
            x2pi = uniforms[pair] * _TWO_PI
            g2rad = sqrt(-2.0 * log(1.0 - uniforms[pair + 1]))
            out.append(0 + (sin(x2pi) if second else cos(x2pi)) * g2rad * 1)
        return out


_TWO_PI = 2 * math.pi


def drawn_gaussians(rng: random.Random, count: int) -> Gaussians:
    """What :func:`gaussians` gives, number for number, the generator left in the same state; a number is computed
    only when it is read. Only where :func:`_pairs` is this Python's ``gauss`` (``_PAIRS_AS_GAUSS``)."""
    assert _PAIRS_AS_GAUSS, "drawn_gaussians repeats _pairs' draws; call gaussians where they are not gauss's"
    state = vars(rng)
    first = None
    if count and state.get("gauss_next") is not None:
        first, state["gauss_next"] = state["gauss_next"], None
        count -= 1
    draw = rng.random
    uniforms = [draw() for _ in range(2 * ((count + 1) // 2))]
    if count % 2:  # the last pair's second number is kept for the next call, as gauss keeps it
        x2pi = uniforms[-2] * _TWO_PI
        state["gauss_next"] = math.sin(x2pi) * math.sqrt(-2.0 * math.log(1.0 - uniforms[-1]))
    return Gaussians(first, uniforms)


def _pairs(rng: random.Random, count: int) -> list[float]:
    """CPython's ``gauss``: each pair of uniform draws gives two normal numbers, the second kept in ``gauss_next``
    for the next call."""
    state = vars(rng)
    out: list[float] = []
    if count and state.get("gauss_next") is not None:
        out.append(0 + state["gauss_next"] * 1)
        state["gauss_next"] = None
    draw, log, sqrt, cos, sin, two_pi = rng.random, math.log, math.sqrt, math.cos, math.sin, 2 * math.pi
    while len(out) < count:
        x2pi = draw() * two_pi
        g2rad = sqrt(-2.0 * log(1.0 - draw()))
        out.append(0 + cos(x2pi) * g2rad * 1)
        if len(out) < count:
            out.append(0 + sin(x2pi) * g2rad * 1)
        else:
            state["gauss_next"] = sin(x2pi) * g2rad
    return out


def _pairs_as_gauss() -> bool:
    """Whether :func:`_pairs` gives what ``gauss`` gives, number for number and state for state."""
    for seed, counts in ((7, (3, 4, 1, 0, 5, 2)), (11, (509, 509, 1, 1))):
        fast, slow = random.Random(seed), random.Random(seed)
        for count in counts:
            try:
                if _pairs(fast, count) != [slow.gauss(0, 1) for _ in range(count)]:
                    return False
            except (KeyError, TypeError, AttributeError):
                return False
            if fast.getstate() != slow.getstate() or vars(fast).get("gauss_next") != vars(slow).get("gauss_next"):
                return False
    return True


_PAIRS_AS_GAUSS = _pairs_as_gauss()


def counter_values(
    plan: Plan,
    model: Rate,
    rng: random.Random,
    stamps: list[int],
    flat: bool,
    from_zero: bool = False,
    seeded_zero: bool = False,
) -> list[float]:
    if seeded_zero or not stamps:
        return [0.0] * len(stamps)
    rate = _number(model.per_second, plan) * rng.uniform(0.85, 1.15)
    total = rng.uniform(1, 50) if from_zero else rate * UPTIME_SECONDS * rng.uniform(0.5, 1.0)
    phase = rng.uniform(0, 2 * math.pi)
    if flat:
        value = float(math.floor(total)) if model.integer else round(total, 3)
        return [value] * len(stamps)
    omega = 2 * math.pi / 1800000
    amp = model.amp
    sin = math.sin
    values = []
    previous = stamps[0]
    for ms in stamps:
        step = rate * (1 + amp * sin(omega * ms + phase)) * (ms - previous) / 1000
        if step > 0:  # max(0.0, step) without the call: a step of zero, below it or NaN adds nothing
            total += step
        previous = ms
        values.append(total)
    if model.integer:
        return list(map(float, map(math.floor, values)))
    return list(map(round, values, repeat(3)))


def histogram_series(
    plan: Plan,
    name: str,
    model: Histogram,
    labels: dict[str, str],
    rng: random.Random | None,
    stamps: list[int],
    flat: bool,
) -> Iterator[dict[str, Any]]:
    """``_bucket{le}`` (cumulative, monotonic), ``_sum`` and ``_count`` of one histogram child; ``rng`` None: their
    labels and timestamps only, ``values`` None."""
    bounds = [*model.buckets, math.inf]
    columns: list[list[float] | None] = [None] * len(bounds)
    sums = None
    if rng is not None:
        columns[:], sums = _histogram_samples(plan, model, bounds, rng, stamps, flat)
    for le, values in zip(bounds, columns, strict=True):
        yield import_object(f"{name}_bucket", {**labels, "le": "+Inf" if le == math.inf else _le(le)}, values, stamps)
    yield import_object(f"{name}_sum", labels, sums, stamps)
    yield import_object(f"{name}_count", labels, columns[-1], stamps)


def _histogram_samples(
    plan: Plan, model: Histogram, bounds: list[float], rng: random.Random, stamps: list[int], flat: bool
) -> tuple[list[list[float]], list[float]]:
    """Each bucket's samples (in ``bounds``' order) and the sum's."""
    median = healthy.median(plan.profile, model.sli, model.median, model.sigma) * rng.uniform(*healthy.MEDIAN_SPREAD)
    rate = model.per_second * rng.uniform(0.85, 1.15)
    buckets = [0.0] * len(bounds)
    start_count = math.floor(rate * UPTIME_SECONDS * rng.uniform(0.5, 1.0))
    for i, le in enumerate(bounds):
        buckets[i] = math.floor(start_count * _lognormal_cdf(le, median, model.sigma))
    total_sum = start_count * median * math.exp(model.sigma**2 / 2)
    series_buckets: list[list[float]] = [[] for _ in bounds]
    sums: list[float] = []
    previous = stamps[0] if stamps else 0
    # _lognormal_cdf's terms that do not change from sample to sample, computed once (the same operations, so the
    # same numbers): the log of each finite positive bound, the divisor
    logs = [math.log(le) if 0 < le < math.inf else None for le in bounds]
    root = model.sigma * math.sqrt(2)
    for ms in stamps:
        dt = (ms - previous) / 1000
        previous = ms
        if not flat and dt > 0:
            drift = median * (1 + healthy.MEDIAN_DRIFT * math.sin(2 * math.pi * ms / 2400000))
            observed = max(0, round(rate * dt * rng.uniform(0.7, 1.3)))
            log_drift = math.log(drift)
            for i, log_le in enumerate(logs):
                share = (
                    0.5 * (1 + math.erf((log_le - log_drift) / root))
                    if log_le is not None
                    else (1.0 if bounds[i] == math.inf else 0.0)
                )
                buckets[i] += round(observed * share)
            total_sum += observed * drift * math.exp(model.sigma**2 / 2)
        for i in range(len(bounds)):
            series_buckets[i].append(float(buckets[i]))
        sums.append(round(total_sum, 4))
    return series_buckets, sums


def _le(value: float) -> str:
    return repr(float(value)) if value != int(value) else f"{value:.1f}"


def _lognormal_cdf(x: float, median: float, sigma: float) -> float:
    if x == math.inf:
        return 1.0
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf((math.log(x) - math.log(median)) / (sigma * math.sqrt(2))))


def import_object(name: str, labels: dict[str, str], values: list[float] | None, stamps: list[int]) -> dict[str, Any]:
    """One series as VictoriaMetrics' ``/api/v1/import`` reads it (``values`` None: a series generated without its
    samples, ``dashgen.demo.series.metric_series``)."""
    return {"metric": {"__name__": name, **labels}, "values": values, "timestamps": stamps}


def filesystem_values(name: str, size: float, rng: random.Random, stamps: list[int]) -> list[float] | None:
    used_share = rng.uniform(0.35, 0.6)
    if name == "node_filesystem_size_bytes":
        return [round(size)] * len(stamps)
    if name in ("node_filesystem_avail_bytes", "node_filesystem_free_bytes"):
        reserve = 0.0 if name.endswith("free_bytes") else 0.02
        slope = size * 0.01 / 3600
        return [round(max(size * (1 - used_share - reserve) - slope * (ms - stamps[0]) / 1000, 0)) for ms in stamps]
    return None
