"""Demo value models the P:D balance row reads beyond ``dashgen.demo.catalogue`` (which is at its size
limit): the model gateway's PD legs (``smg_pd_*`` histograms, metric catalogue §2) and the Mooncake transfer
engine's own metrics (TENT, written only where the profile exports ``mooncake_tent``). ``CATALOGUE`` and
``lookup`` here are the whole demo catalogue, the base one's models plus these; the demo resolves
metric names through them.
"""

from __future__ import annotations

from dashgen.demo import catalogue as base
from dashgen.demo.catalogue import SECONDS_BUCKETS, SHORT_BUCKETS, Histogram, MetricModel, Rate, _c, _h

GATEWAY_PD = {"backend_type": ("pd",), "model": ("demo-model",), "runtime": ("sglang",)}

PD_MODELS: list[MetricModel] = [
    _h("smg_pd_prefill_duration_seconds", "gateway", Histogram(1.6, 0.6, 0.7), **GATEWAY_PD),
    _h("smg_pd_kv_transfer_duration_seconds", "gateway", Histogram(1.6, 0.04, 0.6, SHORT_BUCKETS), **GATEWAY_PD),
    _h("smg_pd_ttft_seconds", "gateway", Histogram(1.6, 0.9, 0.7, SECONDS_BUCKETS), **GATEWAY_PD),
]

# TENT per process running a transfer engine (one per rank): failures and failovers draw as a part of their
# requests (``share_of``): 0.2 % of reads and 0.1 % of writes fail, 1 % of reads fail over to another transport.
TENT_US_BUCKETS = (10, 50, 100, 500, 1000, 5000, 10000, 50000)  # transfer latencies, microseconds
TENT_MODELS: list[MetricModel] = [
    _c("tent_read_requests_total", "client", Rate(120)),
    _c("tent_write_requests_total", "client", Rate(80)),
    _c("tent_read_failures_total", "client", Rate(0.24, share_of="tent_read_requests_total")),
    _c("tent_write_failures_total", "client", Rate(0.08, share_of="tent_write_requests_total")),
    _c("tent_read_bytes_total", "client", Rate(120 * 4 * 2**20)),
    _c("tent_write_bytes_total", "client", Rate(80 * 4 * 2**20)),
    _c("tent_transport_failover_total", "client", Rate(1.2, share_of="tent_read_requests_total")),
    _c("tent_deadline_infeasible_total", "client", Rate(0.05)),
    _h("tent_read_latency_us", "client", Histogram(120, 800, 0.6, TENT_US_BUCKETS)),
    _h("tent_write_latency_us", "client", Histogram(80, 1200, 0.6, TENT_US_BUCKETS)),
    _h("tent_deadline_mlu_permille", "client", Histogram(200, 400, 0.4, (100, 250, 500, 750, 900, 1000))),
    _h("tent_stage_queue_wait_us", "client", Histogram(200, 60, 0.8, TENT_US_BUCKETS)),
    _h("tent_stage_transport_us", "client", Histogram(200, 700, 0.6, TENT_US_BUCKETS)),
]

CATALOGUE: dict[str, MetricModel] = {
    **base.CATALOGUE,
    **{model.name: model for model in (*PD_MODELS, *TENT_MODELS)},
}


def lookup(name: str) -> tuple[MetricModel, str] | None:
    """The model of an exposed series name and the histogram suffix it names ("" for the base), over the
    base catalogue and the models of this module."""
    if name in CATALOGUE:
        return CATALOGUE[name], ""
    for suffix in base.HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            model = CATALOGUE.get(name[: -len(suffix)])
            if model is not None and model.kind == "histogram":
                return model, suffix
    return None
