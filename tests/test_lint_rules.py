"""One small hand-written dashboard per lint rule: it fires on the fault, stays quiet when clean."""

from __future__ import annotations

from typing import Any

import pytest

from dashgen.document import load_dashboard
from dashgen.lint import ALL_RULES, lint_dashboard
from dashgen.lint.promql import RATE_INTERVAL_MS, expand_variables, parse

DS = {"type": "prometheus", "uid": "${datasource}"}
DS_VAR = {"name": "datasource", "type": "datasource", "query": "prometheus", "current": {"value": "vm"}}


def target(expr: str, legend: str = "", ref: str = "A", **extra: Any) -> dict[str, Any]:
    return {"refId": ref, "expr": expr, "legendFormat": legend, "datasource": DS, **extra}


def panel(
    title: str = "Tokens per second (SGLang)",
    exprs: tuple[str, ...] = ("sum by (node) (rate(sglang:generation_tokens_total[$__rate_interval]))",),
    type_: str = "timeseries",
    unit: str | None = "short",
    description: str = "Generated tokens per second, per node.",
    legend: str = "{{node}}",
    defaults: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    fc_defaults: dict[str, Any] = dict(defaults or {})
    if unit is not None:
        fc_defaults.setdefault("unit", unit)
    return {
        "id": extra.pop("id", 1),
        "type": type_,
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": [target(e, legend, chr(65 + i)) for i, e in enumerate(exprs)],
        "fieldConfig": {"defaults": fc_defaults, "overrides": extra.pop("overrides", [])},
        **extra,
    }


def dashboard(*panels: dict[str, Any], variables: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "title": "Test",
        "uid": "test",
        "panels": list(panels),
        "templating": {"list": [DS_VAR, *(variables or [])]},
    }


def rules_hit(doc: dict[str, Any], rule: str) -> list[str]:
    return [f.message for f in lint_dashboard(doc, "t.json") if f.rule == rule]


def test_clean_dashboard_has_no_findings() -> None:
    assert lint_dashboard(dashboard(panel()), "t.json") == []


def test_every_rule_has_id_severity_and_one_line_doc() -> None:
    ids = [r.id for r in ALL_RULES]
    assert len(ids) == len(set(ids))
    for rule in ALL_RULES:
        assert rule.doc and "\n" not in rule.doc
        assert str(rule.severity) in {"error", "warning", "info"}


# --- loader and variable expansion ----------------------------------------------------------


def test_loader_walks_collapsed_rows_legacy_rows_and_k8s_wrapper() -> None:
    inner = panel(title="inside collapsed row", id=3)
    doc = {
        "apiVersion": "dashboard.grafana.app/v1beta1",
        "spec": {
            "title": "Wrapped",
            "panels": [panel(id=1), {"type": "row", "id": 2, "title": "R", "collapsed": True, "panels": [inner]}],
            "rows": [{"title": "legacy", "panels": [panel(title="legacy panel", id=4)]}],
            "templating": {"list": [{"name": "q", "type": "query", "query": {"query": "label_values(up, job)"}}]},
        },
    }
    dash = load_dashboard(doc)
    assert [p.title for p in dash.panels] == [
        "Tokens per second (SGLang)",
        "R",
        "inside collapsed row",
        "legacy panel",
    ]
    assert dash.panels[2].row_title == "R"
    assert dash.variables[0].query == "label_values(up, job)"


def test_expansion_leaves_quoted_text_and_uses_magic_rate_interval() -> None:
    doc = dashboard(variables=[{"name": "win", "type": "interval", "current": {"value": "5m"}}])
    variables = {v.name: v for v in load_dashboard(doc).variables}
    out = expand_variables('rate(x{node=~"$node"}[$__rate_interval]) + rate(y[$win]) + rate(z[[[win]]])', variables)
    assert f"[{RATE_INTERVAL_MS}ms]" in out
    assert '"$node"' in out
    assert out.count("[5m]") == 2
    assert expand_variables("sum by (${grp:csv}) (up)", {}) == "sum by (grp,grp,grp) (up)"
    parse(expand_variables("increase(x_total[$__range]) / $__range_s", {}))


# --- S3 ---------------------------------------------------------------------------------


def test_s3_sum_without_by_node_on_per_node_table_is_an_error() -> None:
    p = panel(
        title="Final reuse per node", type_="table", exprs=("sum(increase(sglang:cached_tokens_total[$__range]))",)
    )
    assert rules_hit(dashboard(p), "S3")


def test_s3_footer_sum_on_per_node_table_is_an_error() -> None:
    p = panel(
        title="Final reuse",
        type_="table",
        exprs=("sum by (node) (increase(sglang:cached_tokens_total[$__range]))",),
        options={"footer": {"show": True, "reducer": ["sum"]}},
    )
    assert any("footer" in m for m in rules_hit(dashboard(p), "S3"))


def test_s3_grouped_by_node_or_stage_is_clean() -> None:
    exprs = (
        "sum by (node) (increase(sglang:cached_tokens_total[$__range]))",
        "max by (pp_rank) (sglang:num_running_reqs)",
    )
    assert rules_hit(dashboard(panel(title="Reuse per node", type_="table", exprs=exprs)), "S3") == []
    # the same sum on a time series (not a per-node table) is not S3's business
    assert rules_hit(dashboard(panel(exprs=("sum(sglang:num_running_reqs)",))), "S3") == []


# --- S5 ---------------------------------------------------------------------------------


def test_s5_percent_axis_without_max_is_an_error() -> None:
    p = panel(title="Disk busy", unit="percent", defaults={"min": 0})
    assert rules_hit(dashboard(p), "S5")


def test_s5_percentunit_override_without_range_is_an_error() -> None:
    override = {"matcher": {"id": "byName", "options": "x"}, "properties": [{"id": "unit", "value": "percentunit"}]}
    assert rules_hit(dashboard(panel(overrides=[override])), "S5")


def test_s5_legacy_graph_percent_yaxis_is_checked() -> None:
    p = panel(type_="graph", yaxes=[{"format": "percent", "min": None, "max": None}])
    assert rules_hit(dashboard(p), "S5")


def test_s5_fixed_ratio_axes_are_clean() -> None:
    p1 = panel(unit="percent", defaults={"min": 0, "max": 100})
    p2 = panel(unit="percentunit", defaults={"min": 0, "max": 1.0}, id=2)
    assert rules_hit(dashboard(p1, p2), "S5") == []


# --- S7 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr",
    [
        "sum by (node) (rate(sglang:generation_tokens_total[$__rate_interval])) or vector(0)",
        "sum by (node) (rate(sglang:generation_tokens_total[$__rate_interval])) or on() vector(0)",
    ],
)
def test_s7_or_vector_zero_is_an_error(expr: str) -> None:
    assert rules_hit(dashboard(panel(exprs=(expr,))), "S7")


@pytest.mark.parametrize(
    "defaults",
    [
        {"custom": {"spanNulls": True}},
        {"noValue": "0"},
        {"nullValueMode": "null as zero"},
        {"mappings": [{"type": "special", "options": {"match": "null", "result": {"text": "0"}}}]},
    ],
)
def test_s7_null_as_zero_and_span_nulls_are_errors(defaults: dict[str, Any]) -> None:
    assert rules_hit(dashboard(panel(defaults=defaults)), "S7")


def test_s7_span_nulls_threshold_is_a_warning() -> None:
    findings = [
        f for f in lint_dashboard(dashboard(panel(defaults={"custom": {"spanNulls": 60000}})), "t") if f.rule == "S7"
    ]
    assert [str(f.severity) for f in findings] == ["warning"]


def test_s7_no_data_mapping_to_text_is_clean() -> None:
    defaults = {
        "custom": {"spanNulls": False},
        "mappings": [{"type": "special", "options": {"match": "nan", "result": {"text": "No traffic"}}}],
    }
    assert rules_hit(dashboard(panel(defaults=defaults)), "S7") == []


# --- S12 --------------------------------------------------------------------------------


def test_s12_share_divided_by_total_gets_is_an_error() -> None:
    expr = "increase(mem_cache_hit_nums_[$__range]) / increase(total_get_nums_[$__range])"
    assert rules_hit(dashboard(panel(title="RAM share", exprs=(expr,))), "S12")


def test_s12_share_of_returns_is_clean() -> None:
    expr = (
        "increase(mem_cache_hit_nums_[$__range]) / "
        "(increase(mem_cache_hit_nums_[$__range]) + increase(file_cache_hit_nums_[$__range]))"
    )
    assert rules_hit(dashboard(panel(title="RAM share", exprs=(expr,))), "S12") == []


# --- S18 --------------------------------------------------------------------------------


def test_s18_mixing_gpm_and_dcgm_utilisation_on_one_axis_is_an_error() -> None:
    p = panel(
        title="GPM SM active vs DCGM GPU util",
        exprs=("gpm_sm_active_ratio", "DCGM_FI_DEV_GPU_UTIL / 100"),
        legend="{{node}} {{gpu}}",
        unit="percentunit",
        defaults={"min": 0, "max": 1},
    )
    assert any("mixes" in m for m in rules_hit(dashboard(p), "S18"))


def test_s18_utilisation_panel_without_source_is_a_warning() -> None:
    p = panel(title="GPU Utilization", exprs=("DCGM_FI_DEV_GPU_UTIL",), legend="{{node}} {{gpu}}")
    findings = [f for f in lint_dashboard(dashboard(p), "t") if f.rule == "S18"]
    assert [str(f.severity) for f in findings] == ["warning"]


def test_s18_single_named_source_is_clean() -> None:
    p = panel(title="SM active (GPM)", exprs=("gpm_sm_active_ratio",), legend="{{node}} GPU {{gpu}}")
    assert rules_hit(dashboard(p), "S18") == []


# --- hygiene ------------------------------------------------------------------------------


def test_datasource_hard_coded_uid_is_an_error() -> None:
    p = panel()
    p["datasource"] = {"type": "prometheus", "uid": "ddyfngn31dg5cf"}
    assert any("hard-coded" in m for m in rules_hit(dashboard(p), "datasource-templated"))


def test_datasource_variable_missing_is_reported() -> None:
    doc = dashboard(panel())
    doc["templating"]["list"] = []
    assert rules_hit(doc, "datasource-variable")
    assert rules_hit(dashboard(panel()), "datasource-variable") == []


def test_panel_units_missing_is_reported() -> None:
    assert rules_hit(dashboard(panel(unit=None)), "panel-units")


def test_panel_description_missing_is_reported() -> None:
    assert rules_hit(dashboard(panel(description="")), "panel-description")


def test_promql_parse_failure_is_an_error() -> None:
    assert rules_hit(dashboard(panel(exprs=("sum by (node) (rate(x[5m]",))), "promql-parse")


@pytest.mark.parametrize(
    ("expr", "type_"),
    [
        ("sum by (node) (rate(sglang:generation_tokens_total[5m]))", "timeseries"),
        ("sum by (node) (rate(sglang:generation_tokens_total[$__interval]))", "timeseries"),
        ("sum by (node) (increase(sglang:generation_tokens_total[$__range]))", "timeseries"),
    ],
)
def test_rate_interval_fixed_or_wrong_window_is_reported(expr: str, type_: str) -> None:
    assert rules_hit(dashboard(panel(exprs=(expr,), type_=type_)), "rate-interval")


def test_rate_interval_range_in_window_table_is_clean() -> None:
    p = panel(type_="table", exprs=("sum by (node) (increase(sglang:generation_tokens_total[$__range]))",))
    assert rules_hit(dashboard(p), "rate-interval") == []


def test_metric_known_flags_names_missing_from_catalogue() -> None:
    messages = rules_hit(dashboard(panel(exprs=("sglang:num_waiting_reqs",))), "metric-known")
    assert messages and "sglang:num_waiting_reqs" in messages[0]
    known = (
        "histogram_quantile(0.99, sum by (le, node) "
        "(rate(sglang:time_to_first_token_seconds_bucket[$__rate_interval])))",
    )
    assert rules_hit(dashboard(panel(exprs=known)), "metric-known") == []


def test_histogram_quantile_without_le_is_an_error() -> None:
    expr = "histogram_quantile(0.99, sum by (node) (rate(sglang:time_to_first_token_seconds_bucket[$__rate_interval])))"
    assert rules_hit(dashboard(panel(exprs=(expr,))), "histogram-quantile-le")
    ok = expr.replace("by (node)", "by (le, node)")
    assert rules_hit(dashboard(panel(exprs=(ok,))), "histogram-quantile-le") == []


def test_counter_raw_is_reported_even_with_matchers() -> None:
    raw = 'sglang:generation_tokens_total{node="a"}'
    assert rules_hit(dashboard(panel(exprs=(raw,))), "counter-raw")
    assert rules_hit(dashboard(panel()), "counter-raw") == []


def test_legend_node_gpu_ambiguous_gpu_legend_is_reported() -> None:
    p = panel(title="Temperature (DCGM)", exprs=("DCGM_FI_DEV_GPU_TEMP",), legend="GPU {{gpu}}", unit="celsius")
    assert rules_hit(dashboard(p), "legend-node-gpu")
    grouped = panel(exprs=("max by (node, gpu) (DCGM_FI_DEV_GPU_TEMP)",), legend="{{gpu}}", unit="celsius")
    assert rules_hit(dashboard(grouped), "legend-node-gpu")


def test_legend_node_gpu_with_both_labels_is_clean() -> None:
    p = panel(title="Temperature (DCGM)", exprs=("DCGM_FI_DEV_GPU_TEMP",), legend="{{node}} GPU {{gpu}}")
    assert rules_hit(dashboard(p), "legend-node-gpu") == []


@pytest.mark.parametrize(
    "expr",
    [
        "histogram_quantile(0.99, sum(rate(vm_promscrape_scrape_duration_bucket[$__rate_interval])) by (job, vmrange))",
        "max(histogram_quantile(0.99, sum(rate(x_bucket[$__rate_interval])) by (job, vmrange))) by (job)",
    ],
)
def test_histogram_quantile_over_victoriametrics_vmrange_buckets_is_clean(expr: str) -> None:
    """VictoriaMetrics' own histograms carry ``vmrange``, not ``le``: keeping it is keeping the buckets."""
    assert rules_hit(dashboard(panel(exprs=(expr,))), "histogram-quantile-le") == []
    assert rules_hit(dashboard(panel(exprs=(expr.replace("job, vmrange", "job"),))), "histogram-quantile-le")
    dropped = "histogram_quantile(0.9, sum without (le) (rate(x_bucket[$__rate_interval])))"
    assert rules_hit(dashboard(panel(exprs=(dropped,))), "histogram-quantile-le")


@pytest.mark.parametrize(
    "expr",
    [
        'histogram_quantiles("phi", 0.5, 0.99, sum(rate(x_bucket[$__rate_interval])) by (vmrange))',
        "histogram_quantile(0.99, buckets_limit(10, sum(rate(x_bucket[$__rate_interval])) by (vmrange)))",
    ],
)
def test_metricsql_functions_are_a_warning_not_a_parse_error(expr: str) -> None:
    """A query using MetricsQL-only functions is VictoriaMetrics', not a broken query: a warning naming them."""
    findings = [f for f in lint_dashboard(dashboard(panel(exprs=(expr,))), "t.json") if f.rule == "promql-parse"]
    assert [f.severity.value for f in findings] == ["warning"], findings
    assert "MetricsQL" in findings[0].message and (
        "histogram_quantiles" in findings[0].message or "buckets_limit" in findings[0].message
    )
    broken = [
        f for f in lint_dashboard(dashboard(panel(exprs=("sum(rate(x[5m])",))), "t.json") if f.rule == "promql-parse"
    ]
    assert [f.severity.value for f in broken] == ["error"]


# --- state timelines ------------------------------------------------------------------------


def _timeline(color: dict[str, Any] | None, merge: bool | None, *, in_override: bool = False) -> dict[str, Any]:
    mappings = [{"type": "value", "options": {"0": {"text": "down", "color": "red"}, "1": {"text": "up"}}}]
    defaults: dict[str, Any] = {"mappings": mappings}
    overrides: list[dict[str, Any]] = []
    if color and in_override:
        overrides = [{"matcher": {"id": "byName", "options": "b1"}, "properties": [{"id": "color", "value": color}]}]
    elif color:
        defaults["color"] = color
    options = {} if merge is None else {"options": {"mergeValues": merge}}
    return panel(type_="state-timeline", unit="none", defaults=defaults, overrides=overrides, **options)


def test_a_state_timeline_merging_by_threshold_hides_its_mappings_and_is_an_error() -> None:
    """Grafana's timeline merges a thresholds-coloured field by threshold step and reads no mapping; mergeValues
    is on unless set false, and an override's colour mode counts as much as the defaults'."""
    thresholds = {"mode": "thresholds"}
    assert rules_hit(dashboard(_timeline(thresholds, True)), "timeline-mappings-merged-away")
    assert rules_hit(dashboard(_timeline(thresholds, None)), "timeline-mappings-merged-away")
    assert rules_hit(dashboard(_timeline(thresholds, None, in_override=True)), "timeline-mappings-merged-away")


def test_a_state_timeline_coloured_by_its_mappings_or_not_merging_is_clean() -> None:
    rule = "timeline-mappings-merged-away"
    assert rules_hit(dashboard(_timeline({"mode": "fixed"}, True)), rule) == []
    assert rules_hit(dashboard(_timeline({"mode": "thresholds"}, False)), rule) == []
    assert rules_hit(dashboard(_timeline(None, True)), rule) == []


# --- bar gauges ------------------------------------------------------------------------------


def test_a_bar_gauge_without_a_min_is_reported_and_one_with_a_min_is_clean() -> None:
    """Grafana scales a bar gauge without a min from the smallest value shown: that bar is drawn empty."""
    assert rules_hit(dashboard(panel(type_="bargauge", unit="bytes")), "bargauge-min")
    assert rules_hit(dashboard(panel(type_="bargauge", unit="bytes", defaults={"min": None})), "bargauge-min")
    assert rules_hit(dashboard(panel(type_="bargauge", unit="bytes", defaults={"min": 0})), "bargauge-min") == []
    assert rules_hit(dashboard(panel(type_="bargauge", unit="short", defaults={"min": -5})), "bargauge-min") == []
