"""When a request is sent again: GET / HEAD only, with capped, jittered backoff, and a 429's ``Retry-After``
honoured up to a bound (``dashgen.net.http`` applies it)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for GET/HEAD only. ``retries`` extra attempts; sleeps ``backoff * 2**n`` capped at ``backoff_max``."""

    retries: int = 3
    backoff: float = 0.5
    backoff_max: float = 8.0
    statuses: frozenset[int] = frozenset({500, 502, 503, 504})
    retry_after_max: float = 60.0  # the longest 429 Retry-After honoured

    def rate_limit_delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait after a 429: its numeric ``Retry-After`` (capped), else the backoff."""
        seconds = retry_after_seconds(retry_after)
        return min(seconds, self.retry_after_max) if seconds is not None else self.delay(attempt)

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to sleep before attempt ``attempt + 1``; honours a numeric ``Retry-After`` up to the cap."""
        seconds = retry_after_seconds(retry_after)
        if seconds is not None:
            return min(seconds, self.backoff_max)
        base = min(self.backoff * (2 ** (attempt - 1)), self.backoff_max)
        return base / 2 + random.uniform(0, base / 2)  # jitter so parallel clients do not retry in step


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` of delay seconds as a finite number ≥ 0; None for anything else (``inf``, ``nan``, a
    date, words): the backoff applies then."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


NO_RETRY = RetryPolicy(retries=0)
