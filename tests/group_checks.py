"""Shared helpers for the panel-group tests: build every profile in process, pick one group's
rendered panels, expand Grafana variables and parse the PromQL, and the checks every group must
pass (S5, S7, histogram ``le``, ``$__rate_interval``, catalogue names, evidence and units).

Only the repository is read (profiles/, the packaged metric catalogue); nothing under ../shared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import promql_parser as pp

from dashgen.build import build_profile
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.deployment.topology import Topology
from dashgen.lint.catalogue import load_catalogue
from dashgen.lint.promql import func_name, grouping, metric_names, walk

PROFILES: dict[str, Profile] = {profile.name: profile for profile in load_profiles()}
PROFILE_NAMES = sorted(PROFILES)
GRAPH_KINDS = {"timeseries", "state-timeline"}
GLOBALS = (("$__rate_interval", "5m"), ("$__range_s", "3600"), ("$__range", "1h"), ("$__interval", "1m"))
RATE_FUNCS = {"rate", "irate", "increase"}


@cache
def document(name: str) -> dict[str, Any]:
    """The rendered, validated dashboard of a profile (build_profile raises on any problem)."""
    (built,) = build_profile(PROFILES[name])
    return built.document


def group_row(name: str, title: str) -> dict[str, Any]:
    rows = [p for p in document(name)["panels"] if p.get("type") == "row" and p.get("title") == title]
    assert len(rows) == 1, f"{name}: expected one row titled {title!r}, found {len(rows)}"
    return rows[0]


def group_panels(name: str, title: str) -> list[dict[str, Any]]:
    """The panels of one group: nested in its row when collapsed, else those following the row."""
    row = group_row(name, title)
    if row.get("collapsed"):
        return list(row.get("panels") or [])
    panels, inside = [], False
    for panel in document(name)["panels"]:
        if panel.get("type") == "row":
            inside = panel is row
            continue
        if inside:
            panels.append(panel)
    return panels


def group_spec(name: str, module: Any) -> Any:
    profile = PROFILES[name]
    return module.build(profile, Topology(profile))


def targets(panels: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for panel in panels:
        for target in panel.get("targets") or []:
            yield panel, target


def expand(expr: str) -> str:
    """Grafana's globals replaced; dashboard variables may only appear inside quoted matchers."""
    for name, value in GLOBALS:
        expr = expr.replace(name, value)
    outside = expr.split('"')[0::2]
    assert not any("$" in piece for piece in outside), f"variable outside quotes: {expr}"
    return expr


def parse(expr: str) -> Any:
    return pp.parse(expand(expr))


def names(expr: str) -> set[str]:
    return metric_names(parse(expr))


def aggregations(expr: str) -> list[Any]:
    return [node for node, _ in walk(parse(expr)) if isinstance(node, pp.AggregateExpr)]


# --- checks every panel of the dashboard passes (run by test_every_panel.py) ---------------------


def check_every_query_parses(panels: list[dict[str, Any]]) -> None:
    for panel, target in targets(panels):
        try:
            parse(target["expr"])
        except BaseException as exc:  # promql_parser raises pyo3 errors
            raise AssertionError(f"{panel['title']}: {target['expr']}: {exc}") from None


def check_metric_names_in_catalogue(panels: list[dict[str, Any]]) -> None:
    catalogue = load_catalogue()
    for panel, target in targets(panels):
        unknown = {n for n in names(target["expr"]) if not catalogue.is_known(n)}
        assert not unknown, f"{panel['title']}: metric(s) not in the catalogue: {unknown}"


def check_s5_ratio_axes_fixed(panels: list[dict[str, Any]]) -> int:
    fixed = {"percent": (0, 100), "percentunit": (0, 1)}
    seen = 0
    for panel in panels:
        defaults = (panel.get("fieldConfig") or {}).get("defaults") or {}
        unit = defaults.get("unit")
        if unit in fixed:
            seen += 1
            assert (defaults.get("min"), defaults.get("max")) == fixed[unit], panel["title"]
    return seen


def check_s7_no_zero_fill(panels: list[dict[str, Any]]) -> None:
    for panel, target in targets(panels):
        assert not re.search(r"\bor\s+vector\s*\(", target["expr"]), f"{panel['title']}: or vector(...)"
    for panel in panels:
        defaults = (panel.get("fieldConfig") or {}).get("defaults") or {}
        custom = defaults.get("custom") or {}
        if panel["type"] == "timeseries":
            assert custom.get("spanNulls") is False, f"{panel['title']}: spanNulls must be false"
        assert str(defaults.get("noValue", "")).strip() not in {"0", "0%"}, panel["title"]
        for key in ("nullValueMode", "nullPointMode"):
            assert panel.get(key) not in {"null as zero", "connected"}, panel["title"]
        for mapping in defaults.get("mappings") or []:
            options = mapping.get("options") or {}
            if mapping.get("type") == "special":
                assert str((options.get("result") or {}).get("text", "")).strip() != "0", panel["title"]


def check_histogram_quantile_keeps_le(panels: list[dict[str, Any]]) -> int:
    found = 0
    for panel, target in targets(panels):
        for node, _ in walk(parse(target["expr"])):
            if func_name(node) != "histogram_quantile":
                continue
            found += 1
            inner = [n for n, _ in walk(node.args[1]) if isinstance(n, pp.AggregateExpr)]
            assert inner, f"{panel['title']}: histogram_quantile without summing buckets"
            for agg in inner:
                assert grouping(agg).by and "le" in grouping(agg).labels, f"{panel['title']}: {target['expr']}"
    return found


def check_rates_use_rate_interval(panels: list[dict[str, Any]]) -> None:
    for panel, target in targets(panels):
        expr = target["expr"]
        unquoted = "".join(expr.split('"')[0::2])  # regex matchers may hold brackets
        windows = re.findall(r"\[([^\]]+)\]", unquoted)
        if panel["type"] in GRAPH_KINDS and not target.get("instant"):
            assert all(w == "$__rate_interval" for w in windows), f"{panel['title']}: {expr}"
        for node, parents in walk(parse(expr)):
            if isinstance(node, pp.MatrixSelector) and parents and func_name(parents[-1]) in RATE_FUNCS:
                assert pp.display_duration(node.range) in {"5m", "1h"}, f"{panel['title']}: {expr}"


def check_evidence_and_units(panels: list[dict[str, Any]]) -> None:
    for panel in panels:
        if panel["type"] == "text":
            continue
        description = panel.get("description") or ""
        for part in ("Source:", "Quantity:", "Limit:"):
            assert part in description, f"{panel['title']}: description lacks {part}"
        unit = ((panel.get("fieldConfig") or {}).get("defaults") or {}).get("unit")
        assert unit, f"{panel['title']}: no unit"

