"""Evidence rules of domain.md that can be checked statically: S3, S5, S7, S12, S18, S38.

Recognisers used here:
- a *per-node table* is a ``table`` panel whose title or description says per node / per
  stage (``per node``, ``per-node``, ``by node``, ``each node``, ``per PP stage``), or one of
  whose queries groups its outermost aggregation by a node label or ``pp_rank``;
- a *utilisation quantity* is one of the GPU-activity metrics in ``UTILISATION`` below, each
  with its source (GPM, DCGM, SGLang, vLLM) and what it measures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import promql_parser as pp

from dashgen.document import Panel
from dashgen.lint.context import LintContext
from dashgen.lint.findings import Hit, Rule, Severity
from dashgen.lint.promql import (
    Walked,
    agg_op,
    func_name,
    grouping,
    metric_names,
    outer_aggregations_in,
    unparen,
)
from dashgen.render.impossible import NEGATIVE, missing_impossible_texts
from dashgen.render.spec import RATIO_UNITS, ratio_axis_problem

NODE_LABELS = frozenset({"node", "instance", "Hostname", "hostname", "nodename", "host"})
STAGE_LABELS = frozenset({"pp_rank"})
MERGING_AGGREGATIONS = frozenset(
    {"sum", "avg", "count", "min", "max", "group", "stddev", "stdvar", "quantile", "count_values"}
)
_PER_NODE_TEXT = re.compile(
    r"\bper[- ]?node\b|\bby node\b|\beach node\b|\bper[- ]?(pp[- ]?)?stage\b|\bone row per node\b", re.I
)


SHARE_FAMILIES: tuple[tuple[str, str], ...] = (
    ("mem_cache_hit_nums_", "file_cache_hit_nums_"),
    ("mem_cache_hit_bytes_total", "file_cache_hit_bytes_total"),
)
TOTAL_GETS = frozenset({"total_get_nums_", "valid_get_nums_"})

UTILISATION: Mapping[str, tuple[str, str]] = {
    "gpm_sm_active_ratio": ("GPM", "SM active"),
    "gpm_sm_occupancy_ratio": ("GPM", "SM occupancy"),
    "gpm_tensor_active_ratio": ("GPM", "tensor active"),
    "gpm_dram_active_ratio": ("GPM", "DRAM active"),
    "gpm_gpu_busy_ratio": ("GPM", "GPU busy"),
    "DCGM_FI_PROF_SM_ACTIVE": ("DCGM", "SM active"),
    "DCGM_FI_PROF_SM_UTIL_RATIO": ("DCGM", "SM active"),
    "DCGM_FI_PROF_SM_OCCUPANCY": ("DCGM", "SM occupancy"),
    "DCGM_FI_PROF_SM_OCCUPANCY_RATIO": ("DCGM", "SM occupancy"),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("DCGM", "tensor active"),
    "DCGM_FI_PROF_TENSOR_UTIL_RATIO": ("DCGM", "tensor active"),
    "DCGM_FI_PROF_DRAM_ACTIVE": ("DCGM", "DRAM active"),
    "DCGM_FI_PROF_DRAM_UTIL_RATIO": ("DCGM", "DRAM active"),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("DCGM", "GPU busy"),
    "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO": ("DCGM", "GPU busy"),
    "DCGM_FI_DEV_GPU_UTIL": ("DCGM", "GPU utilisation"),
    "DCGM_FI_DEV_GPU_UTIL_RATIO": ("DCGM", "GPU utilisation"),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("DCGM", "memory copy utilisation"),
    "sglang:forward_execution_seconds_total": ("SGLang", "engine busy"),
    "sglang:utilization": ("SGLang", "scheduler utilisation"),
    "sglang:estimated_flops_per_gpu_total": ("SGLang", "MFU"),
    "vllm:estimated_flops_per_gpu_total": ("vLLM", "MFU"),
}
SOURCE_WORDS: Mapping[str, re.Pattern[str]] = {
    "GPM": re.compile(r"\bGPM\b", re.I),
    "DCGM": re.compile(r"\bDCGM\b", re.I),
    "SGLang": re.compile(r"sglang|\bengine\b", re.I),
    "vLLM": re.compile(r"vllm|\bengine\b", re.I),
}


# --- S3 ---------------------------------------------------------------------------------


def _keeps_node_or_stage(node: Any) -> bool:
    g = grouping(node)
    if g.by:
        return bool(g.labels & (NODE_LABELS | STAGE_LABELS))
    return not (g.labels & (NODE_LABELS | STAGE_LABELS))


def is_per_node_table(panel: Panel, ctx: LintContext) -> bool:
    if panel.type != "table":
        return False
    if _PER_NODE_TEXT.search(f"{panel.title}\n{panel.description}"):
        return True
    return any(
        grouping(agg).by and grouping(agg).labels & (NODE_LABELS | STAGE_LABELS)
        for q in ctx.parsed_of(panel)
        for agg in outer_aggregations_in(q.nodes)
    )


def _footer_sums(panel: Panel) -> bool:
    footer = panel.options.get("footer")
    if isinstance(footer, Mapping) and footer.get("show") and "sum" in (footer.get("reducer") or []):
        return True
    custom = panel.field_defaults.get("custom")
    ng_footer = custom.get("footer") if isinstance(custom, Mapping) else None
    return isinstance(ng_footer, Mapping) and "sum" in (ng_footer.get("reducers") or [])


def check_s3(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        if not is_per_node_table(panel, ctx):
            continue
        if _footer_sums(panel):
            yield Hit(panel, "per-node table has a footer sum: it adds the PP stages into a cluster total")
        for q in ctx.parsed_of(panel):
            for node, _ in q.nodes:
                if agg_op(node) in MERGING_AGGREGATIONS and not _keeps_node_or_stage(node):
                    yield Hit(
                        panel,
                        f"target {q.target.ref_id or q.target.index}: `{agg_op(node)}` without `by` a node "
                        "label or pp_rank merges nodes / PP stages on a per-node table",
                    )
                    break


# --- S5 ---------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _override_props(override: Mapping[str, Any]) -> dict[str, Any]:
    props = override.get("properties")
    return {p["id"]: p.get("value") for p in props or [] if isinstance(p, Mapping) and "id" in p}


def ratio_axes(panel: Panel) -> Iterator[tuple[str, str, Any, Any]]:
    """Every (where, unit, min, max) whose unit is a ratio unit: defaults, overrides, graph yaxes."""
    defaults = panel.field_defaults
    unit = defaults.get("unit")
    if unit in RATIO_UNITS:
        yield "fieldConfig.defaults", unit, defaults.get("min"), defaults.get("max")
    for i, override in enumerate(panel.field_overrides):
        props = _override_props(override)
        if not {"unit", "min", "max"} & props.keys():
            continue
        eff_unit = props.get("unit", unit)
        if eff_unit in RATIO_UNITS:
            yield (
                f"fieldConfig.overrides[{i}]",
                eff_unit,
                props.get("min", defaults.get("min")),
                props.get("max", defaults.get("max")),
            )
    yaxes = panel.raw.get("yaxes")
    for i, axis in enumerate(yaxes if isinstance(yaxes, list) else []):
        if isinstance(axis, Mapping) and axis.get("format") in RATIO_UNITS:
            yield f"yaxes[{i}]", axis["format"], axis.get("min"), axis.get("max")


def check_s5(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        if panel.type == "row":
            continue
        for where, unit, lo, hi in ratio_axes(panel):
            if problem := ratio_axis_problem(unit, lo, hi):
                yield Hit(panel, f"{where}: {problem}: an auto-scaled ratio axis turns idle noise into violent swings")


# --- S38 --------------------------------------------------------------------------------


def bounded_fields(panel: Panel) -> Iterator[tuple[str, Any, Any, Any, Any]]:
    """Every (where, unit, min, max, mappings) of the panel's field config: the defaults, and each override that
    sets a unit, a min, a max or mappings (what it does not set it takes from the defaults)."""
    defaults = panel.field_defaults
    unit, low, high, mappings = (defaults.get(name) for name in ("unit", "min", "max", "mappings"))
    yield "fieldConfig.defaults", unit, low, high, mappings
    for i, override in enumerate(panel.field_overrides):
        props = _override_props(override)
        if {"unit", "min", "max", "mappings"} & props.keys():
            yield (
                f"fieldConfig.overrides[{i}]",
                props.get("unit", unit),
                props.get("min", low),
                props.get("max", high),
                props.get("mappings", mappings),
            )


def check_s38(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        if panel.type in ("row", "text"):
            continue
        for where, unit, low, high, mappings in bounded_fields(panel):
            missing = missing_impossible_texts(mappings if isinstance(mappings, list) else [], unit, low, high)
            if missing:
                texts = ", ".join(repr(text) for text in missing)
                # a ratio's bounds are its unit's; another axis fixed at 0 may be a team's styling, so only a warning
                severity = Severity.WARNING if missing == [NEGATIVE] else Severity.ERROR
                yield Hit(
                    panel,
                    f"{where}: unit {unit} (min {low}, max {high}) has no range mapping to {texts}: "
                    "a value past its fixed axis would be hidden instead of shown as a fault",
                    severity,
                )


# --- S7 ---------------------------------------------------------------------------------

_ZERO_TEXTS = frozenset({"0", "0.0", "0%", "0.00"})


def _is_vector_literal(node: Any) -> bool:
    node = unparen(node)
    return func_name(node) == "vector" and isinstance(unparen(node.args[0]), pp.NumberLiteral)


def _zero_fill_in_query(walked: Walked) -> str | None:
    for node, _ in walked:
        if not isinstance(node, pp.BinaryExpr):
            continue
        if str(node.op) == "or" and _is_vector_literal(node.rhs):
            return "`or vector(...)` turns No Data into a number"
        fill = getattr(node.modifier, "fill_values", None) if node.modifier is not None else None
        if fill is not None and (fill.lhs is not None or fill.rhs is not None):
            return "a `fill(...)` modifier invents values for missing series"
    return None


def _mappings(panel: Panel) -> Iterator[Mapping[str, Any]]:
    sources: list[Any] = [panel.field_defaults.get("mappings")]
    sources += [_override_props(o).get("mappings") for o in panel.field_overrides]
    for mappings in sources:
        yield from (m for m in mappings or [] if isinstance(m, Mapping))


def _null_to_zero_mapping(mapping: Mapping[str, Any]) -> bool:
    if mapping.get("type") != "special":
        return False
    options = mapping.get("options") or {}
    result = options.get("result") or {}
    return (
        options.get("match") in {"null", "nan", "null+nan", "empty"}
        and str(result.get("text", "")).strip() in _ZERO_TEXTS
    )


def _span_nulls_values(panel: Panel) -> Iterator[Any]:
    custom = panel.field_defaults.get("custom")
    if isinstance(custom, Mapping) and "spanNulls" in custom:
        yield custom["spanNulls"]
    for override in panel.field_overrides:
        props = _override_props(override)
        if "custom.spanNulls" in props:
            yield props["custom.spanNulls"]


def check_s7(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        if panel.type == "row":
            continue
        for q in ctx.parsed_of(panel):
            if problem := _zero_fill_in_query(q.nodes):
                yield Hit(panel, f"target {q.target.ref_id or q.target.index}: {problem}")
        for key in ("nullValueMode", "nullPointMode"):
            for holder in (panel.raw, panel.field_defaults):
                if holder.get(key) == "null as zero":
                    yield Hit(panel, f'{key} "null as zero" shows missing data as 0')
                elif holder.get(key) == "connected":
                    yield Hit(panel, f'{key} "connected" draws over gaps in the data')
        if str(panel.field_defaults.get("noValue", "")).strip() in _ZERO_TEXTS:
            yield Hit(panel, 'noValue "0" shows No Data as the value 0')
        if any(_null_to_zero_mapping(m) for m in _mappings(panel)):
            yield Hit(panel, "a value mapping shows null / NaN as 0")
        for value in _span_nulls_values(panel):
            if value is True:
                yield Hit(panel, "custom.spanNulls: true connects over missing scrapes and hides gaps")
            elif (threshold := _number(value)) is not None and threshold > 0:
                yield Hit(
                    panel,
                    f"custom.spanNulls: {value} connects over gaps shorter than that threshold",
                    Severity.WARNING,
                )


# --- S12 --------------------------------------------------------------------------------


def _share_problem(walked: Walked) -> str | None:
    for node, _ in walked:
        if not (isinstance(node, pp.BinaryExpr) and str(node.op) == "/"):
            continue
        num, den = metric_names(node.lhs), metric_names(node.rhs)
        for mem, file in SHARE_FAMILIES:
            if len(num & {mem, file}) != 1:
                continue
            if den & TOTAL_GETS:
                return (
                    f"divides {sorted(num & {mem, file})[0]} by {', '.join(sorted(den & TOTAL_GETS))}: "
                    f"a RAM/SSD share is RAM (or SSD) returns / ({mem} + {file}), not a request hit rate"
                )
            if not {mem, file} <= den:
                return f"the share's denominator must be {mem} + {file} (RAM + SSD returns)"
            return None
    return None


def check_s12(ctx: LintContext) -> Iterator[Hit]:
    for q in ctx.queries:
        if q.ast is not None and (problem := _share_problem(q.nodes)):
            yield Hit(q.panel, f"target {q.target.ref_id or q.target.index}: {problem}")


# --- S18 --------------------------------------------------------------------------------


def utilisation_quantities(panel: Panel, ctx: LintContext) -> set[tuple[str, str]]:
    return {UTILISATION[name] for q in ctx.parsed_of(panel) for name in q.metrics if name in UTILISATION}


def check_s18(ctx: LintContext) -> Iterator[Hit]:
    for panel in ctx.dashboard.panels:
        quantities = utilisation_quantities(panel, ctx)
        if not quantities:
            continue
        if len(quantities) > 1 and panel.type != "table":
            names = ", ".join(f"{src} {what}" for src, what in sorted(quantities))
            yield Hit(panel, f"one axis mixes different utilisation quantities: {names}")
        text = f"{panel.title}\n{panel.description}"
        unnamed = sorted({src for src, _ in quantities if not SOURCE_WORDS[src].search(text)})
        if unnamed:
            yield Hit(
                panel,
                f"utilisation panel does not name its source ({', '.join(unnamed)}) in title or description",
                Severity.WARNING,
            )


RULES: tuple[Rule, ...] = (
    Rule(
        "S3",
        Severity.ERROR,
        "per-node tables never add nodes / PP stages up: no sum without by node, no footer sum",
        check_s3,
    ),
    Rule("S5", Severity.ERROR, "percent axes are fixed 0-100, percentunit axes 0-1", check_s5),
    Rule(
        "S7",
        Severity.ERROR,
        "No Data is never zero-filled: no or vector(0), null-as-zero, noValue 0, spanNulls",
        check_s7,
    ),
    Rule("S12", Severity.ERROR, "RAM/SSD share divides by RAM + SSD returns, not by total gets", check_s12),
    Rule(
        "S18",
        Severity.ERROR,
        "utilisation panels name their source and never mix quantities on one axis",
        check_s18,
    ),
    Rule(
        "S38",
        Severity.ERROR,
        "a value a bounded quantity cannot take (a share past 0-100 %, a negative rate) maps to a red error text",
        check_s38,
    ),
)


def rules() -> Iterable[Rule]:
    return RULES
