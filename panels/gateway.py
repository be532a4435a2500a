"""The model gateway's layers in the Requests and gateway group: admission (in flight, queue,
rejections), router (latency, errors), its per-backend view of the engines, backend health and
circuit breakers. S4: each layer has its own panel and no expression adds a gateway series to
another layer or to an engine queue: one request passes several layers and is counted in each.
"""

from __future__ import annotations

from typing import Any

from dashgen_queries import gateway as gw
from dashgen_queries import sglang as sg
from dashgen_queries.promql import FIRST_EVENT_RATE

from dashgen.deployment.profile import Profile
from dashgen.exporters.availability import flag_text
from dashgen.exporters.table import ENGINE_METRICS, GATEWAY, MAX_CONCURRENT
from dashgen.render.kit import source_status_panel, state_timeline, timeseries
from dashgen.render.spec import Evidence, PanelSpec, Target

GROUP = "requests_gateway"
GATEWAY_LAYERS = (
    "one request passes several layers — gateway admission, gateway router, the backend (worker) the gateway "
    "picked, then the engine's own waiting and running queues — and is counted in each, so these numbers are "
    "never added to one another or to engine queues (S4)"
)
WORKER_LEGEND = "{{worker}} (gateway {{node}})"
GATEWAY_SCOPE = (
    "the gateway's series are not narrowed by $node: the gateway is an entry layer serving every pool, and its "
    "node label names where the gateway runs"
)


def _only_with(flag: str) -> str:
    """What a panel of series the gateway writes only behind ``flag`` says: the switch, from the exporter table."""
    needs = flag_text(GATEWAY, flag)
    return f"written only with a switch a default gateway leaves off, so No data there is that: it {needs}"


def _ts(
    key: str, title: str, evidence: Evidence, targets: list[Target], unit: str, width: int = 8, **kw: Any
) -> PanelSpec:
    return timeseries(f"{GROUP}.{key}", title, evidence, targets, unit=unit, width=width, **kw)


def _gw_evidence(metric: str, quantity: str, extra_limit: str = "") -> Evidence:
    limit = GATEWAY_LAYERS + "; " + GATEWAY_SCOPE
    if extra_limit:
        limit = f"{extra_limit}; {limit}"
    return Evidence(f"SGLang model gateway smg ({metric})", quantity, limit, layer="gateway")


HEALTH_MAPPINGS = (
    {
        "type": "value",
        "options": {
            "1": {"text": "healthy", "color": "green", "index": 0},
            "0": {"text": "unhealthy", "color": "red", "index": 1},
            "-1": {"text": "removed", "color": "gray", "index": 2},
        },
    },
)
BREAKER_MAPPINGS = (
    {
        "type": "value",
        "options": {
            "0": {"text": "closed", "color": "green", "index": 0},
            "1": {"text": "open", "color": "red", "index": 1},
            "2": {"text": "half-open", "color": "orange", "index": 2},
        },
    },
)


def gateway_panels(profile: Profile) -> list[PanelSpec]:
    if not profile.exported("gateway"):
        return [
            source_status_panel(
                f"{GROUP}.gateway_unavailable", profile, ["gateway"], "Model gateway layers: not available"
            )
        ]
    unlabelled = (
        "upstream smg exports the admission gauges without labels (no entry or backend label): one "
        "series per gateway process; per-backend load is on the worker/engine panels"
    )
    # S35: series a default gateway does not write say which switch they need, as the exporter table states it
    admission = _only_with(MAX_CONCURRENT) + " (no smg_admission_* series without admission control)"
    engine_metrics = _only_with(ENGINE_METRICS) + " (it polls each engine's /v1/loads)"
    panels = [
        _ts(
            "gateway_admission_inflight",
            "Gateway admission: requests in flight (layer 1)",
            _gw_evidence(
                "smg_admission_inflight",
                "requests holding an admission token, per gateway process (compare with the gateway's "
                "--max-concurrent-requests)",
                f"{admission}; {unlabelled}",
            ),
            [Target(gw.gauge(profile, "smg_admission_inflight"), "gateway {{node}} in flight")],
            "short",
            width=8,
            decimals=0,
        ),
        _ts(
            "gateway_admission_queue",
            "Gateway admission: queue depth (layer 1)",
            _gw_evidence(
                "smg_admission_queue_depth",
                "requests parked in the admission queue, per gateway process (bounded by --queue-size)",
                f"{admission}; {unlabelled}",
            ),
            [Target(gw.gauge(profile, "smg_admission_queue_depth"), "gateway {{node}} queued")],
            "short",
            width=8,
            decimals=0,
        ),
        _ts(
            "gateway_admission_rejected",
            "Gateway admission rejections by reason (req/s)",
            _gw_evidence(
                "smg_admission_queue_rejected_total{reason}",
                "requests shed by admission per second: reason full (HTTP 429) or timeout (HTTP 503)",
                f"{admission}; absent (not 0) until the first rejection, and " + FIRST_EVENT_RATE,
            ),
            [
                Target(
                    gw.counter_rate(profile, "smg_admission_queue_rejected_total", "reason"),
                    "gateway {{node}} {{reason}}",
                )
            ],
            "reqps",
            width=8,
        ),
        _ts(
            "gateway_worker_active",
            "Gateway view: requests active per backend (layer 3)",
            _gw_evidence(
                "smg_worker_requests_active{worker}",
                "requests the gateway has in progress on each backend worker (URL)",
                "the worker label is the backend URL, not a node name",
            ),
            [Target(gw.gauge(profile, "smg_worker_requests_active", "worker"), WORKER_LEGEND)],
            "short",
            width=8,
            decimals=0,
        ),
        _ts(
            "gateway_engine_running",
            "Gateway view: engine running requests per backend",
            _gw_evidence(
                "smg_engine_running_requests{worker,dp_rank}",
                "running requests per backend and DP rank, as the gateway last polled them from the engine's /v1/loads",
                f"{engine_metrics}; a polled copy of the engine's own gauge, lagging by the poll interval; "
                "it is the same requests as the engine panels, so it is never added to them",
            ),
            [
                Target(
                    gw.gauge(profile, "smg_engine_running_requests", "worker", "dp_rank"),
                    "{{worker}} dp{{dp_rank}} (gateway {{node}})",
                )
            ],
            "short",
            width=8,
            decimals=0,
        ),
        _ts(
            "gateway_engine_waiting",
            "Gateway view: engine waiting requests per backend",
            _gw_evidence(
                "smg_engine_waiting_requests{worker,dp_rank}",
                "waiting requests per backend and DP rank, as polled from /v1/loads",
                f"{engine_metrics}; a polled copy of the engine queue (same requests as the engine waiting panel)",
            ),
            [
                Target(
                    gw.gauge(profile, "smg_engine_waiting_requests", "worker", "dp_rank"),
                    "{{worker}} dp{{dp_rank}} (gateway {{node}})",
                )
            ],
            "short",
            width=8,
            decimals=0,
        ),
        _ts(
            "gateway_http_responses",
            "Gateway HTTP responses by status code (req/s)",
            _gw_evidence(
                "smg_http_responses_total{status_code}",
                "HTTP responses the gateway returned per second, by status code",
            ),
            [
                Target(
                    gw.counter_rate(profile, "smg_http_responses_total", "status_code"),
                    "gateway {{node}} {{status_code}}",
                )
            ],
            "reqps",
            width=8,
        ),
        _ts(
            "gateway_router_latency",
            "Gateway router request duration p95 / p99 (s)",
            _gw_evidence(
                "smg_router_request_duration_seconds histogram",
                "time the gateway router spent on a request including the backend call, seconds, by "
                "backend type (buckets summed by le)",
                "includes the engine's time; not comparable bucket-for-bucket with engine latency",
            ),
            [
                Target(
                    gw.quantile(profile, q, "smg_router_request_duration_seconds", "backend_type"),
                    f"{sg.quantile_legend(q)} gateway {{{{node}}}} {{{{backend_type}}}}",
                )
                for q in (0.95, 0.99)
            ],
            "s",
            width=8,
        ),
        _ts(
            "gateway_router_errors",
            "Gateway router errors by type (req/s)",
            _gw_evidence(
                "smg_router_request_errors_total{error_type}",
                "router request errors per second by error type",
                "absent (not 0) until the first error, and " + FIRST_EVENT_RATE,
            ),
            [
                Target(
                    gw.counter_rate(profile, "smg_router_request_errors_total", "error_type"),
                    "gateway {{node}} {{error_type}}",
                )
            ],
            "reqps",
            width=8,
        ),
        state_timeline(
            key=f"{GROUP}.gateway_worker_health",
            title="Gateway: backend health",
            evidence=_gw_evidence(
                "smg_worker_health{worker}",
                "health of each backend worker as the gateway sees it (1 healthy, 0 unhealthy, -1 removed)",
                "gaps are missing scrapes, not a state",
            ),
            targets=(Target(gw.gauge(profile, "smg_worker_health", "worker"), WORKER_LEGEND),),
            unit="none",
            width=12,
            height=8,
            mappings=HEALTH_MAPPINGS,
        ),
        state_timeline(
            key=f"{GROUP}.gateway_circuit_breaker",
            title="Gateway: circuit breaker state per backend",
            evidence=_gw_evidence(
                "smg_worker_cb_state{worker}",
                "circuit breaker state per backend (0 closed, 1 open, 2 half-open, as smg's metrics.rs describes it)",
                "an open or half-open breaker takes the backend out of routing while the engine itself may be healthy",
            ),
            targets=(Target(gw.gauge(profile, "smg_worker_cb_state", "worker"), WORKER_LEGEND),),
            unit="none",
            width=12,
            height=8,
            mappings=BREAKER_MAPPINGS,
        ),
    ]
    return panels
