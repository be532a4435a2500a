"""PromQL for the SGLang model gateway (``smg_*``, metric catalogue §2).

The gateway is a separate entry layer in front of the engines: its series are selected by the
gateway's scrape job only, not by ``$node`` (the gateway's ``node`` label names where the gateway
runs, and it serves every pool). Each layer — admission, router, per-backend worker view, engine
load re-exported by the gateway — is queried on its own; nothing here adds two layers (S4).
"""

from __future__ import annotations

from dashgen_queries.promql import agg, job, rate, selector
from dashgen_queries.sglang import histogram_quantile

from dashgen.deployment.profile import Profile


def gateway(profile: Profile, metric: str, *matchers: str) -> str:
    """A gateway series (all gateway instances of the profile's gateway job)."""
    return selector(metric, job(profile, "gateway"), *matchers)


def gateway_labels(profile: Profile, *extra: str) -> list[str]:
    """One series per gateway process (``node`` where it runs, ``instance``) plus ``extra``."""
    return [profile.label("node"), profile.label("instance"), *extra]


def gauge(profile: Profile, metric: str, *extra: str) -> str:
    """A gateway gauge per gateway process and ``extra`` labels (max: one value per series set)."""
    return agg("max", gateway_labels(profile, *extra), gateway(profile, metric))


def counter_rate(profile: Profile, metric: str, *extra: str, matchers: tuple[str, ...] = ()) -> str:
    return agg("sum", gateway_labels(profile, *extra), rate(gateway(profile, metric, *matchers)))


def quantile(profile: Profile, q: float, histogram: str, *extra: str) -> str:
    return histogram_quantile(q, gateway(profile, f"{histogram}_bucket"), gateway_labels(profile, *extra))
