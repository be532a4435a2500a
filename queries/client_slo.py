"""The client-side SLI (S33), counted at the model gateway: what the client sees, including the requests the
gateway sheds (429), fails (5xx) or lets time out, which never reach an engine and so never enter the engine-side
SLIs of ``queries.sglang_slo``.

Definition: the **non-error share** of the gateway's HTTP responses (``smg_http_responses_total{status_code}``,
metric catalogue §2), not a latency SLI. The gateway's duration histograms (``smg_http_request_duration_seconds``
by ``method, path``; ``smg_router_request_duration_seconds`` by router labels) carry no status code, so a fast 5xx
cannot be told from a fast 2xx and "2xx answered within the E2E bound" cannot be counted; their bucket bounds are
the exporter's configuration, not pinned anywhere. The engine-side E2E SLI keeps the latency part.

- bad: 429 (shed: admission queue full, rate limit), 408 / 504 (timed out), every other 5xx (failed; 503 is
  also the admission queue's timeout shed: the class "5xx" keeps it, the error ratio counts it either way);
- valid: every response except the client's own 4xx mistakes (400, 404, ...), which are neither good nor bad;
- good: valid and not bad (2xx, and 1xx/3xx should the gateway ever answer one).

Sums run over every gateway instance of the deployment (one SLO per deployment; the per-instance view is
``non_2xx_share_by_class``). An idle window gives no sample, never 0 or 1 (guarded division).
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries.gateway import gateway, gateway_labels
from dashgen_queries.promql import agg, divide, matcher, rate
from dashgen_queries.sglang_slo import le_matcher

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.exporters.table import GATEWAY

RESPONSES = GATEWAY.name("smg_http_responses_total")
STATUS = "status_code"
# Status codes of each bad class (regular expressions on ``status_code``, RE2 as Prometheus and VictoriaMetrics read).
SHED, TIMEOUT, FAILED = "429", "408|504", "5.."
BAD_STATUS = f"{SHED}|{TIMEOUT}|{FAILED}"
VALID_STATUS = f"[^4]..|{SHED}|{TIMEOUT}"  # every status but the client's own 4xx
SLO_KEY = "client"  # the ``slo`` label of the recorded client error ratio and its burn alerts
CLASS_LABEL = "class"
# The gateway shedding threshold of the first screen: more than this share of the instance's responses are 429.
SHED_RED_SHARE = 0.01
NOW_WINDOW = "5m"  # the first screen's per-instance shares: the last few minutes, not the dashboard range


@dataclass(frozen=True)
class BadClass:
    key: str  # the value of ``CLASS_LABEL``
    text: str
    matchers: tuple[str, ...]


# Every class is matched by regular expression, 429 too: an equality matcher is also what the demo generator reads
# as "a panel filters on this value" (dashgen.demo.wanted) and would fill healthy demo data with 429 responses.
BAD_CLASSES: tuple[BadClass, ...] = (
    BadClass("429", "429 shed", (matcher(STATUS, "=~", SHED),)),
    BadClass("5xx", "5xx failed", (matcher(STATUS, "=~", FAILED), matcher(STATUS, "!=", "504"))),
    BadClass("timeout", "timeout (408 / 504)", (matcher(STATUS, "=~", TIMEOUT),)),
)


def responses(profile: Profile, *matchers: str) -> str:
    return gateway(profile, RESPONSES, *matchers)


def _total(profile: Profile, by: tuple[str, ...], window: str, *matchers: str) -> str:
    series = rate(responses(profile, *matchers), window)
    return agg("sum", by, series) if by else f"sum({series})"


def client_error_ratio(profile: Profile, window: str, by: tuple[str, ...] = ()) -> str:
    """Bad / valid gateway responses over ``window`` (0-1), summed over every gateway instance (``by``: kept labels).
    No Grafana variable: the recording rules and alerts read it as it is."""
    bad = _total(profile, by, window, matcher(STATUS, "=~", BAD_STATUS))
    valid = _total(profile, by, window, matcher(STATUS, "=~", VALID_STATUS))
    # A deployment with no bad response yet has no bad series at all: its ratio is then exactly 0.
    return f"({divide(bad, valid)} or ({valid} > 0) * 0)"


def client_good_share(profile: Profile, window: str) -> str:
    """The client-side SLI for panels: the share of valid gateway responses that were not shed, failed or timed
    out, over ``window`` (a Grafana range or interval variable works too)."""
    return f"1 - {client_error_ratio(profile, window)}"


ROUTED = GATEWAY.name("smg_router_request_duration_seconds")  # per routed request, by router labels, no status


def slow_share(profile: Profile, window: str) -> str:
    """The share of the gateway's routed requests that took longer than the profile's E2E bound over ``window``
    (``smg_router_request_duration_seconds``, all instances). No sample where the histogram has no bucket at that
    bound (its buckets are the gateway's configuration) or routed nothing: latency cannot be counted there."""
    count = f"sum({rate(gateway(profile, f'{ROUTED}_count'), window)})"
    within = f"sum({rate(gateway(profile, f'{ROUTED}_bucket', le_matcher(profile.slo.e2e_seconds)), window)})"
    return f"(({count} - {within}) / ({count} > 0))"


def client_good_share_with_latency(profile: Profile, window: str) -> str:
    """The client's SLI on the first screen: 1 - (failed share + slow share), at least 0. A request both failed
    and slow (a 504 after the timeout) is counted twice, so the share never reads better than the client saw;
    where the gateway's duration histogram allows no latency count (``slow_share`` empty), the failed share
    alone (``client_good_share``)."""
    errors = client_error_ratio(profile, window)
    return f"(1 - clamp_max({errors} + {slow_share(profile, window)}, 1)) or ({client_good_share(profile, window)})"


def client_error_ratio_name(window: str) -> str:
    """The recording rule of ``client_error_ratio`` over ``window`` (label ``slo`` = ``SLO_KEY``)."""
    return f"deployment:smg_client_errors_per_response:ratio_rate{window}"


def class_share(profile: Profile, bad: BadClass, window: str) -> str:
    """One bad class's share of the valid responses per gateway process (node, instance) over ``window``; 0 where
    the instance answered but never with that class (the counter series does not exist until the first one), no
    sample where it answered nothing."""
    by = tuple(gateway_labels(profile))
    valid = _total(profile, by, window, matcher(STATUS, "=~", VALID_STATUS))
    share = f"{_total(profile, by, window, *bad.matchers)} / on({', '.join(by)}) ({valid} > 0)"
    return f"({share}) or ({valid} > 0) * 0"


def non_2xx_share_by_class(profile: Profile, window: str) -> str:
    """Per gateway process (node, instance) and bad class (``class`` = 429 / 5xx / timeout): that class's share of
    the instance's valid responses over ``window`` (``class_share`` of each, labelled)."""
    return " or ".join(
        f'label_replace({class_share(profile, bad, window)}, "{CLASS_LABEL}", "{bad.key}", "", "")'
        for bad in BAD_CLASSES
    )


def deployment_shares_by_class(profile: Profile, window: str) -> str:
    """Each bad class's share of the valid responses of every gateway instance together over ``window``, labelled
    ``class``: the client-side error ratio split by class (the parts add up to ``client_error_ratio``)."""
    valid = _total(profile, (), window, matcher(STATUS, "=~", VALID_STATUS))
    parts = []
    for bad in BAD_CLASSES:
        share = f"({_total(profile, (), window, *bad.matchers)} / ({valid} > 0) or ({valid} > 0) * 0)"
        parts.append(f'label_replace({share}, "{CLASS_LABEL}", "{bad.key}", "", "")')
    return " or ".join(parts)


WORKER_HEALTH = GATEWAY.name("smg_worker_health")  # per backend (``worker``), 1 healthy (metric catalogue §2)


def expected_backends(topology: Topology) -> int:
    """The backends the gateway should route to: one per engine replica (instance) of the profile."""
    return len(topology.replicas)


def healthy_backends(profile: Profile) -> str:
    """Backends (``worker``) a gateway process (node, instance) sees healthy at the evaluation time."""
    by = gateway_labels(profile)
    per_worker = agg("max", [*by, "worker"], gateway(profile, WORKER_HEALTH))
    return f"{agg('count', by, f'{per_worker} == 1')} or {agg('max', by, f'{per_worker} * 0')}"


def silent_with_backends_missing(profile: Profile, window: str, expected: int) -> str:
    """One series (no label) while no gateway instance of the deployment counted a valid response over ``window``
    and some instance sees fewer healthy backends than ``expected``: the gateway stopped sending traffic (an open
    circuit, every backend out) while the fault persists. The error ratio then has no sample, so a burn alert on it
    alone would resolve; this keeps it firing. No gateway series at all (a scrape failure) gives no sample."""
    valid = _total(profile, (), window, matcher(STATUS, "=~", VALID_STATUS))
    return f"(min({healthy_backends(profile)}) < {expected}) unless on() ({valid} > 0)"
