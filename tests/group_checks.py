"""Shared helpers for the panel-group tests: build every profile in process, pick one group's
rendered panels, expand Grafana variables and parse the PromQL. The rules every panel must pass
are the lint's, run once over every dashboard by test_every_panel.py.

Only the repository is read (profiles/, the packaged metric catalogue); nothing under ../shared.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

import promql_parser as pp

from dashgen.build import build_profile
from dashgen.deployment.profile import Profile, load_profiles
from dashgen.deployment.topology import Topology
from dashgen.lint.promql import metric_names, walk

PROFILES: dict[str, Profile] = {profile.name: profile for profile in load_profiles()}
PROFILE_NAMES = sorted(PROFILES)
# S25: the profiles with a text-generation pool; text-only groups and panels exist only on these.
TEXT_PROFILE_NAMES = [name for name in PROFILE_NAMES if PROFILES[name].has_kind("text-generation")]
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
    """The panels of one group module (``title`` = its ``TITLE``), over every row it shows (a module may
    split its panels into several rows); a title no module has is read as one row's title."""
    from dashgen_panels import GROUPS

    for module in GROUPS:
        if getattr(module, "TITLE", None) == title:
            spec = group_spec(name, module)
            if spec is None:
                return []
            return [panel for row in spec.shown_rows() for panel in row_panels(name, row.title)]
    return row_panels(name, title)


def row_panels(name: str, title: str) -> list[dict[str, Any]]:
    """The panels of one row: nested in it when collapsed, else those following the row."""
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


@cache
def group_spec(name: str, module: Any) -> Any:
    """The group the module builds for the profile: pure (a frozen spec of the profile's content), so built once
    per session for every test that reads it (~0.04 s for every group of the four profiles, read a dozen times)."""
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
