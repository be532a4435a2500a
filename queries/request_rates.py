"""The request SLO's rates recorded once per rule interval for the whole deployment (group
``dashgen-<profile>-request-rates``), read by the SLO and health group's graphs that draw the whole deployment.

Computed from the raw tokenizer histograms on every refresh, *Latency P50 / P99* re-read every engine's buckets
for each of its six quantiles at every step (4.8 M samples on open at 4,096 GPUs on the bench store), and the 1h
burn rate's sparkline the good bucket, the count and the abort counter of every engine. The rules record, per rule
interval (``INTERVAL_SECONDS``), the rates those panels sum, at the level they draw (per model over the whole
deployment, as the SLO, its budget and its alerts count):

- each latency histogram's bucket rates summed ``by (model_name, le)``: the quantiles sum them ``by (le)``, the
  error ratio reads the SLI's bound;
- each histogram's count rate and the abort counter's rate ``by (model_name)``.

The job, the prefill-server exclusion and the deployment are the raw expression's, so the recorded rates are the
same rates, one series per model (and bound) whatever the engine count. Panels that the request scope narrows
(``$node`` or the replica variable: the health stat, the good share over time) keep reading the raw series: a
deployment-wide record cannot be narrowed.

**The rate window.** A rule records the rate over one rule interval, so consecutive evaluations tile time; a panel
reads ``avg_over_time(<record>[<window>])``: the mean of the interval rates within its own window
(``$__rate_interval``, or the burn rate's 1h), which is the rate over that window to the rule interval (a window
of two minutes averages the two evaluations it holds). A coarse step therefore widens the window exactly as
``rate(...[$__rate_interval])`` does; it never silently keeps a one-minute rate. On VictoriaMetrics (its ``rate``
counts from the sample before the window) the tiles add up to the counter's increase; Prometheus extrapolates each
interval from the samples inside it, an estimate from the same samples. A recorded read's Min step is the raw
query's (``min_step_of``) and never under a quarter of the rule interval, so ``$__rate_interval`` holds at least
one evaluation.

Without the rules loaded the recorded series do not exist: the panels read No data and say why (their no-value
text and description name the rule file; ``validate-queries`` explains an empty ``:dashgen_`` series the same way).
``records`` is the one definition: the rule file writes exactly what the panels read.
"""

from __future__ import annotations

from dataclasses import dataclass

from dashgen_queries.exported import written
from dashgen_queries.gpu_source import seconds_text
from dashgen_queries.nodata import RULE_INTERVAL_SECONDS
from dashgen_queries.promql import agg, coarser_step, in_deployment, min_step, over_time, rate, selector
from dashgen_queries.sglang import histogram_quantile_of
from dashgen_queries.sglang_slo import (
    ABORTED,
    E2E_METRIC,
    TPOT_METRIC,
    TTFT_METRIC,
    RateReader,
    model_label,
    request_matchers,
)

from dashgen.deployment.profile import Profile

INTERVAL_SECONDS = RULE_INTERVAL_SECONDS  # what one recorded sample summarises: one evaluation interval
GROUP = "request-rates"
# The level of every record: summed over the deployment's nodes and engines (the model and bucket bound kept), like
# the client-side SLO's deployment:... records; no node label.
LEVEL = "deployment"
# The latency histograms the SLO group draws (TTFT, TPOT, E2E), by the name the panels show.
LATENCY_METRICS = (("TTFT", TTFT_METRIC), ("TPOT", TPOT_METRIC), ("E2E", E2E_METRIC))
NO_VALUE = "No data: no requests, or the request-rates rules not loaded"
# What a panel averaging these records over its window shows, said the same way on every such panel.
AVERAGED = (
    "averaged over the window: the rate over that window, to the rule interval (counters miss no event, so a "
    "spike within the window is counted)"
)


@dataclass(frozen=True)
class RecordedRate:
    """One recorded rate: the series name and its rule expression (no dashboard variable)."""

    record: str
    rule: str


def window() -> str:
    """The rate window of every rule: one rule interval."""
    return seconds_text(INTERVAL_SECONDS)


def _stem(metric: str) -> str:
    return metric.replace(":", "_")


def bucket_record(metric: str) -> str:
    """``deployment:dashgen_sglang_time_to_first_token_seconds_bucket:rate60s`` (labels ``model_name``, ``le``)."""
    return f"{LEVEL}:dashgen_{_stem(metric)}_bucket:rate{window()}"


def count_record(metric: str) -> str:
    """``deployment:dashgen_sglang_time_to_first_token_seconds_count:rate60s`` (label ``model_name``)."""
    return f"{LEVEL}:dashgen_{_stem(metric)}_count:rate{window()}"


def aborted_record() -> str:
    """``deployment:dashgen_sglang_num_aborted_requests_total:rate60s`` (label ``model_name``)."""
    return f"{LEVEL}:dashgen_{_stem(ABORTED)}:rate{window()}"


def latency_metrics(profile: Profile) -> tuple[tuple[str, str], ...]:
    """The latency histograms the profile's stated SGLang version writes (TPOT's is newer: S35), by panel name: a
    record of a histogram never written would be a target that can only read No data."""
    return tuple((name, metric) for name, metric in LATENCY_METRICS if written(profile, f"{metric}_bucket"))


def _names(profile: Profile) -> dict[str, str]:
    """Raw series name -> the record of its rate, for the histograms the profile's engine writes."""
    found = {ABORTED: aborted_record()}
    for _name, metric in latency_metrics(profile):
        found[f"{metric}_bucket"] = bucket_record(metric)
        found[f"{metric}_count"] = count_record(metric)
    return found


def is_rate_record(name: str) -> bool:
    """Whether ``name`` is one of dashgen's recorded rates (this module's or ``queries.stage_rates``'s): written by
    a rule evaluator, never scraped."""
    return ":dashgen_sglang_" in name and name.endswith(f":rate{window()}")


def records(profile: Profile) -> tuple[RecordedRate, ...]:
    """Every recorded rate the SLO group reads: the one definition of the rules. Each is the raw series' rate over
    one rule interval summed over the deployment by model (and ``le`` for buckets)."""
    base = request_matchers(profile, scoped=False)
    found = []
    for raw, record in _names(profile).items():
        model = model_label(profile)
        by = (model, "le") if raw.endswith("_bucket") else (model,)
        found.append(RecordedRate(record, agg("sum", by, rate(selector(raw, *base), window()))))
    return tuple(found)


def recorded_rate(profile: Profile, record: str, rate_window: str, *matchers: str) -> str:
    """The rate over ``rate_window`` from a recorded series: the mean of the interval rates within it."""
    return over_time("avg", in_deployment(profile, record, *matchers), rate_window)


def reader(profile: Profile) -> RateReader:
    """``sglang_slo.error_ratio``'s rates read from the records (the whole deployment: never narrowed)."""
    names = _names(profile)

    def read(metric: str, extra: tuple[str, ...], rate_window: str) -> str:
        return recorded_rate(profile, names[metric], rate_window, *extra)

    return read


def latency_quantile(profile: Profile, metric: str, quantile: float) -> str:
    """``histogram_quantile`` over the recorded bucket rates summed ``by (le)``: ``sglang_slo.latency_quantile``
    of the whole deployment, from the records."""
    buckets = recorded_rate(profile, bucket_record(metric), "$__rate_interval")
    return histogram_quantile_of(quantile, agg("sum", ["le"], buckets))


def min_step_of(profile: Profile) -> str:
    """The Min step of a recorded read: the raw tokenizer query's (the store's sample interval of the engine job),
    at least a quarter of the rule interval so that ``$__rate_interval`` (four Min steps at least) holds an
    evaluation."""
    raw = min_step(profile, selector(ABORTED, *request_matchers(profile, scoped=False)))
    return coarser_step(raw, seconds_text(INTERVAL_SECONDS / 4))
