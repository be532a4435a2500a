"""Requests and gateway group, rendered for every profile: S3 (no aggregation drops pp_rank for
engine request counts), S4 (gateway layers never combined with each other or with engine
queues), pools apart. The checks every panel passes (S5, S7, histogram ``le``, ``$__rate_interval``,
parsing, catalogue names) are in test_every_panel.py."""

from __future__ import annotations

import pytest
from dashgen_panels import GROUPS, requests_gateway
from dashgen_queries import stage_rates
from dashgen_queries.promql import FIRST_EVENT_RATE
from group_checks import (
    PROFILES,
    TEXT_PROFILE_NAMES,
    aggregations,
    group_panels,
    names,
    targets,
)

from dashgen.deployment.topology import Topology

TITLE = requests_gateway.TITLE
ENGINE_REQUEST_COUNTS = {
    "sglang:num_running_reqs",
    "sglang:num_queue_reqs",
    "sglang:num_prefill_bootstrap_queue_reqs",
    "sglang:num_prefill_inflight_queue_reqs",
    "sglang:num_decode_prealloc_queue_reqs",
    "sglang:num_decode_transfer_queue_reqs",
    "sglang:realtime_tokens_total",
    "sglang:num_retracted_requests_total",
    "sglang:queue_time_seconds_bucket",
}
TOKENIZER_METRICS = {
    "sglang:prompt_tokens_total",
    "sglang:generation_tokens_total",
    "sglang:num_requests_total",
    "sglang:num_aborted_requests_total",
    "sglang:time_to_first_token_seconds_bucket",
    "sglang:e2e_request_latency_seconds_bucket",
    "sglang:inter_token_latency_seconds_bucket",
    "sglang:request_time_per_output_token_seconds_bucket",
    "sglang:prompt_tokens_histogram_bucket",
}


def _panels(name: str) -> list[dict]:
    return group_panels(name, TITLE)


def test_s34_requests_localise_right_after_the_slo_rows() -> None:
    """The requests and gateway rows come before GPU health and the cache-evidence review (S34); inside the group
    the per-stage queues first (open where the pool has PP stages), the throughput and HTTP layer last."""
    order = [module.TITLE for module in GROUPS]
    assert (
        order.index("SLO and health") < order.index(TITLE) < order.index("GPU health") < order.index("Cache evidence")
    )
    assert TITLE == "Requests and gateway"
    for name in TEXT_PROFILE_NAMES:
        profile = PROFILES[name]
        rows = requests_gateway.build(profile, Topology(profile)).shown_rows()
        assert rows[0].title.startswith("Requests: engine queues") and rows[0].collapsed == (not profile.has_pp)
        assert [row.title for row in rows][-2:] == ["Requests: throughput", "Engine HTTP layer"]


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_s3_engine_request_counts_never_aggregated_across_pp_rank(name: str) -> None:
    checked = 0
    for panel, target in targets(_panels(name)):
        if not names(target["expr"]) & ENGINE_REQUEST_COUNTS:
            continue
        checked += 1
        for agg in aggregations(target["expr"]):
            labels = agg.modifier.labels if agg.modifier else []
            assert agg.modifier and "pp_rank" in labels, f"{panel['title']}: {target['expr']}"
            if "le" not in labels:  # a gauge or logical counter: max over TP ranks, never a sum
                assert str(agg.op) == "max", f"{panel['title']}: {target['expr']}"
    assert checked >= 4


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_s4_gateway_series_never_added_to_engine_or_other_layers(name: str) -> None:
    read = [(p, t) for p, t in targets(_panels(name)) if any(n.startswith("smg_") for n in names(t["expr"]))]
    if PROFILES[name].exported("gateway"):
        assert len(read) >= 10, f"{name}: the gateway's panels read smg_ series"
    else:
        assert read == [], f"{name}: no gateway exported"
    for panel, target in read:
        found = names(target["expr"])
        gateway = {n for n in found if n.startswith("smg_")}
        assert not any(n.startswith("sglang:") for n in found), f"{panel['title']}: {target['expr']}"
        assert len(gateway) == 1, f"{panel['title']}: one layer per expression, got {gateway}"
        assert "several layers" in panel["description"] and "S4" in panel["description"], panel["title"]


@pytest.mark.parametrize("name", [n for n in TEXT_PROFILE_NAMES if PROFILES[n].exported("gateway")])
def test_s4_each_gateway_layer_on_its_own_panel(name: str) -> None:
    panel_of: dict[str, str] = {}
    for panel, target in targets(_panels(name)):
        for metric in names(target["expr"]):
            panel_of.setdefault(metric, panel["title"])
    layers = (
        "smg_admission_inflight",
        "smg_admission_queue_depth",
        "smg_worker_requests_active",
        "smg_engine_running_requests",
        "smg_engine_waiting_requests",
    )
    assert len({panel_of[m] for m in layers}) == len(layers)
    admission = next(p for p in _panels(name) if "smg_admission_inflight" in p["description"])
    assert "no entry or backend label" in admission["description"]


@pytest.mark.parametrize("name", [n for n in TEXT_PROFILE_NAMES if not PROFILES[n].exported("gateway")])
def test_profile_without_gateway_gets_one_status_panel_and_no_gateway_query(name: str) -> None:
    panels = _panels(name)
    assert not any(n.startswith("smg_") for _, t in targets(panels) for n in names(t["expr"]))
    status = [p for p in panels if p["type"] == "text"]
    assert len(status) == 1 and "gateway" in status[0]["options"]["content"]


def test_pd_pools_are_kept_apart_by_engine_type() -> None:
    checked = 0
    for panel, target in targets(_panels("pd-128")):
        if names(target["expr"]) & TOKENIZER_METRICS:
            checked += 1
            for agg in aggregations(target["expr"]):
                assert "engine_type" in agg.modifier.labels, f"{panel['title']}: {target['expr']}"
            assert "engine_type" in target["legendFormat"], panel["title"]
    assert checked >= 10
    pd_queues = {"sglang:num_prefill_bootstrap_queue_reqs", "sglang:num_decode_transfer_queue_reqs"}
    assert pd_queues <= {n for _, t in targets(_panels("pd-128")) for n in names(t["expr"])}


@pytest.mark.parametrize("name", [n for n in TEXT_PROFILE_NAMES if not PROFILES[n].has_pools])
def test_pd_only_panels_absent_without_pd_pools(name: str) -> None:
    found = {n for _, t in targets(_panels(name)) for n in names(t["expr"])}
    assert not any("prefill_bootstrap" in n or "decode_transfer" in n for n in found)


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_tokens_per_minute_states_its_unit_and_scales_a_rate(name: str) -> None:
    (tpm,) = [p for p in _panels(name) if "TPM" in p["title"]]
    assert "tokens/min" in tpm["title"] and "tokens/min" in tpm["description"]
    assert all(t["expr"].endswith("* 60") and "rate(" in t["expr"] for t in tpm["targets"])


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_tokenizer_panels_say_they_come_from_node_0(name: str) -> None:
    tokenizer = [panel for panel, target in targets(_panels(name)) if names(target["expr"]) & TOKENIZER_METRICS]
    assert len(tokenizer) >= 20, f"{name}: {len(tokenizer)} targets read the tokenizer's counters"
    for panel in tokenizer:
        assert "node 0" in panel["description"], panel["title"]


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_stage_variable_used_only_where_the_profile_has_pp(name: str) -> None:
    exprs = [t["expr"] for _, t in targets(_panels(name))]
    uses_stage = any('pp_rank=~"$stage"' in e for e in exprs)
    assert uses_stage == PROFILES[name].has_pp


RATE_OF_FIRST_EVENT_COUNTERS = {
    "sglang:num_aborted_requests_total",
    "sglang:num_retracted_requests_total",
    "smg_admission_queue_rejected_total",
    "smg_router_request_errors_total",
    "sglang:num_bootstrap_failed_reqs_total",
}
# A recorded rate of such a counter (each rule rates it over one interval) carries the same first-event gap.
RECORDED_RATES = {stage_rates.RETRACTED: stage_rates.RETRACTED_COUNTER}


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_token_rates_state_tokens_per_second_or_minute_in_the_unit(name: str) -> None:
    units = {}
    for panel in _panels(name):
        if panel["type"] == "timeseries":
            units[panel["title"]] = panel["fieldConfig"]["defaults"]["unit"]
    per_second = [t for t in units if "tokens/s" in t]
    per_minute = [t for t in units if "tokens/min" in t]
    assert len(per_second) >= 3 and len(per_minute) == 1
    assert all(units[t] == requests_gateway.TOKENS_PER_SECOND == "count:tok/s" for t in per_second)
    assert units[per_minute[0]] == requests_gateway.TOKENS_PER_MINUTE == "count:tok/min"


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_s7_first_event_counters_say_rate_cannot_show_their_first_event(name: str) -> None:
    checked = 0
    for panel, target in targets(_panels(name)):
        read = names(target["expr"])
        if {RECORDED_RATES.get(name, name) for name in read} & RATE_OF_FIRST_EVENT_COUNTERS:
            checked += 1
            assert "rate(" in target["expr"] or read & set(RECORDED_RATES), panel["title"]
            assert "increase(" not in target["expr"], panel["title"]
            assert FIRST_EVENT_RATE in panel["description"], panel["title"]
    assert checked >= 2


@pytest.mark.parametrize("name", TEXT_PROFILE_NAMES)
def test_stage_legends_name_the_dp_rank_where_the_aggregation_keeps_it(name: str) -> None:
    checked = 0
    for panel, target in targets(_panels(name)):
        kept = [a for a in aggregations(target["expr"]) if a.modifier and "dp_rank" in a.modifier.labels]
        if not kept or any(n.startswith("smg_") for n in names(target["expr"])):
            continue
        checked += 1
        # with PP "PP<stage> [dp<rank>]"; without PP an instance, "[dp<rank>]", never "PP0" (S27)
        want = "PP{{stage_name}}" if PROFILES[name].has_pp else "}} {{stage_name}}"
        assert want in target["legendFormat"] and (PROFILES[name].has_pp or "PP" not in target["legendFormat"]), (
            panel["title"],
            target["legendFormat"],
        )
        assert target["expr"].startswith("label_replace(label_join("), panel["title"]
    assert checked >= 4
