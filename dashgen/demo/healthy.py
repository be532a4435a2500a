"""What keeps the healthy demo inside the profile's SLO: latency medians low enough that the slowest series at
its slowest moment spends a small share of the error budget, and an abort rate that is a small share of it too.

The demo draws each latency histogram log-normal around a median that varies per series
(``MEDIAN_SPREAD``) and drifts over time (``MEDIAN_DRIFT``); a fixed median cannot fit every profile (a
0.05 s TPOT bound, a 99 % objective), so a histogram that measures an SLI takes the lower of its own median
and the one that keeps its tail past the SLI's bound under ``TAIL_BUDGET_SHARE`` of the budget.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from dashgen_queries.sglang_slo import error_budget, slis

from dashgen.deployment.profile import Profile

MEDIAN_SPREAD = (0.8, 1.25)  # a series' median is the model's times a uniform draw in this range
MEDIAN_DRIFT = 0.3  # ... and swings by this share over time
TAIL_BUDGET_SHARE = 0.1  # the slowest series at its slowest spends at most this share of the budget per SLI
ABORT_BUDGET_SHARE = 0.05  # aborts (counted bad by every SLI) spend about this share of the budget


def slo_bound(profile: Profile, sli: str) -> float | None:
    """The bucket bound the SLO counts good requests under for ``sli`` (``ttft`` / ``tpot`` / ``e2e``), or None
    when the profile measures no such SLI (a threshold of 0: a video-only profile states none)."""
    return next((found.bound for found in slis(profile) if found.key == sli and found.threshold > 0), None)


def median(profile: Profile, sli: str, default: float, sigma: float) -> float:
    """``default``, lowered where needed so that P(latency > bound) <= TAIL_BUDGET_SHARE x budget for a series
    drawn at the top of MEDIAN_SPREAD at the peak of its drift."""
    bound = slo_bound(profile, sli) if sli else None
    if bound is None:
        return default
    tail = error_budget(profile) * TAIL_BUDGET_SHARE
    z = NormalDist().inv_cdf(1 - tail)
    worst = MEDIAN_SPREAD[1] * (1 + MEDIAN_DRIFT)
    return min(default, bound / math.exp(z * sigma) / worst)


def abort_share(profile: Profile) -> float:
    """Aborted requests per request in the healthy demo."""
    return error_budget(profile) * ABORT_BUDGET_SHARE
