"""Demo value models the P:D balance row reads beyond ``dashgen.demo.catalogue`` (which is at its size
limit): the model gateway's PD legs (``smg_pd_*`` histograms, metric catalogue §2). ``CATALOGUE`` and
``lookup`` here are the whole demo catalogue, the base one's models plus these; the demo resolves
metric names through them.
"""

from __future__ import annotations

from dashgen.demo import catalogue as base
from dashgen.demo.catalogue import SECONDS_BUCKETS, SHORT_BUCKETS, Histogram, MetricModel, _h

GATEWAY_PD = {"backend_type": ("pd",), "model": ("demo-model",), "runtime": ("sglang",)}

PD_MODELS: list[MetricModel] = [
    _h("smg_pd_prefill_duration_seconds", "gateway", Histogram(1.6, 0.6, 0.7), **GATEWAY_PD),
    _h("smg_pd_kv_transfer_duration_seconds", "gateway", Histogram(1.6, 0.04, 0.6, SHORT_BUCKETS), **GATEWAY_PD),
    _h("smg_pd_ttft_seconds", "gateway", Histogram(1.6, 0.9, 0.7, SECONDS_BUCKETS), **GATEWAY_PD),
]

CATALOGUE: dict[str, MetricModel] = {**base.CATALOGUE, **{model.name: model for model in PD_MODELS}}


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
