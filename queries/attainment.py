"""SLO attainment over the dashboard's window: per SLI the share of requests within its bound, the bounds
histograms allow on the share within every bound at once, and goodput in requests per second.

Each SLI's share is ``queries.sglang_slo.good_ratio`` over ``$__range`` (bad = finished over the bucket
bound the profile's threshold maps to, plus aborted requests; the threshold must be a bucket edge, or the
next edge above is used and said). The SLIs come from separate histograms, which do not say which request
was slow in which SLI, so the joint attainment is only bounded: at most the lowest SLI share, at least
``1 - sum of the SLIs' bad shares`` (Fréchet), floored at 0. Exact joint attainment needs one record per
request (a request log or a per-request "met all SLOs" counter). Goodput is the lower bound times the
requests per second the window saw; in tokens per second it is not derivable from these series (a
histogram does not carry a request's tokens), so it is not shown.
"""

from __future__ import annotations

from dashgen_queries import sglang_slo as slo
from dashgen_queries.promql import WINDOW, agg, rate, selector

from dashgen.deployment.profile import Profile


def _by(profile: Profile) -> tuple[str, ...]:
    return (slo.model_label(profile),)


def sli_share(profile: Profile, sli: slo.Sli) -> str:
    """Share of requests within ``sli``'s bound over the window, per model (no sample without requests)."""
    return slo.good_ratio(profile, sli, WINDOW, _by(profile), scoped=True)


def joint_upper(profile: Profile) -> str:
    """The share within every bound at most: the lowest SLI share, per model."""
    shares = [sli_share(profile, sli) for sli in slo.slis(profile)]
    return agg(
        "min", _by(profile), " or ".join(f'label_replace({s}, "sli", "{i}", "", "")' for i, s in enumerate(shares))
    )


def joint_lower(profile: Profile) -> str:
    """The share within every bound at least: 1 - the SLIs' bad shares added, floored at 0, per model."""
    bad = " + ".join(
        f"({slo.error_ratio(profile, sli, WINDOW, _by(profile), scoped=True)})" for sli in slo.slis(profile)
    )
    return f"clamp_min(1 - ({bad}), 0)"


def requests_per_second(profile: Profile) -> str:
    """Requests per second that finished or were aborted over the window (the E2E histogram's count plus
    aborts), per model."""
    base = slo.request_matchers(profile, True)
    finished = agg("sum", _by(profile), rate(selector(f"{slo.E2E_METRIC}_count", *base), WINDOW))
    aborted = agg("sum", _by(profile), rate(selector(slo.ABORTED, *base), WINDOW))
    return f"({finished} + {aborted} or {finished})"


def goodput_lower(profile: Profile) -> str:
    """Requests per second within every bound, at least (the joint lower bound times the request rate)."""
    return f"({joint_lower(profile)}) * {requests_per_second(profile)}"
