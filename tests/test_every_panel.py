"""The checks every panel of every profile's whole rendered dashboard must pass, whatever its group:
every query parses after variable expansion, metric names are in the catalogue, ratio axes are
fixed (S5), no zero-fill and no spanNulls (S7), histogram_quantile keeps ``le`` in its inner
``by``, rates use ``$__rate_interval``, every data panel states its evidence and unit, and panel
keys are unique and prefixed by their group.

A panel that legitimately differs is named below with the reason, and what it does instead is
checked; an exemption naming a panel the dashboard no longer has fails. Group-specific rules stay
in the group's own test module."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from group_checks import (
    PROFILE_NAMES,
    PROFILES,
    check_every_query_parses,
    check_evidence_and_units,
    check_histogram_quantile_keeps_le,
    check_metric_names_in_catalogue,
    check_rates_use_rate_interval,
    check_s5_ratio_axes_fixed,
    check_s7_no_zero_fill,
    document,
    group_panels,
    group_spec,
)

from dashgen.render.ids import panel_id
from panels import GROUPS, gpu_timelines, kv_cache_nvme, requests_gateway

# Panel key -> (its fixed range window, why it is not $__rate_interval). The burn rates over 1h / 6h / 3d and the
# budget are SLO windows fixed by design, independent of the dashboard range (slo_health). Burn over 1h needs no
# exemption: 1h is one of the ranges the check allows on a stat panel.
FIXED_RATE_WINDOWS: dict[str, tuple[str, str]] = {
    "slo_health.budget": ("{window_days}d", "error budget left over the profile's whole SLO window "
                                            "(slo.window_days), a rolling window ending at the end of the "
                                            "dashboard range"),
    "slo_health.burn_6h": ("6h", "burn rate over the fixed 6h window of the slow-burn alert"),
    "slo_health.burn_3d": ("3d", "burn rate over a fixed 3d window, shown beside 1h and 6h"),
}

# (check, group title) -> the least the check must find in that group (ratio panels, histogram quantiles), so a
# group that silently lost them fails.
AT_LEAST: dict[tuple[Callable[..., Any], str], int] = {
    (check_s5_ratio_axes_fixed, kv_cache_nvme.TITLE): 5,
    (check_s5_ratio_axes_fixed, gpu_timelines.TITLE): 5,
    (check_histogram_quantile_keeps_le, requests_gateway.TITLE): 10,
}


def _keys(name: str) -> dict[int, str]:
    return {panel_id(p.key): p.key for module in GROUPS for p in group_spec(name, module).panels}


def every_group(name: str) -> dict[str, list[dict[str, Any]]]:
    """Group title -> its rendered panels; together they are every non-row panel of the dashboard."""
    groups = {module.TITLE: group_panels(name, module.TITLE) for module in GROUPS}
    top = document(name)["panels"]
    every = [p for p in top if p.get("type") != "row"] + [n for p in top for n in p.get("panels") or []]
    assert sorted(p["id"] for ps in groups.values() for p in ps) == sorted(p["id"] for p in every), name
    return groups


def _run(name: str, check: Callable[[list[dict[str, Any]]], Any], exempt: dict[str, Any] | None = None) -> None:
    keys = _keys(name)
    for title, panels in every_group(name).items():
        found = check([p for p in panels if keys[p["id"]] not in (exempt or {})])
        least = AT_LEAST.get((check, title))
        if least is not None:
            assert found >= least, f"{name} {title}: {check.__name__} found {found}, expected at least {least}"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_query_parses_after_variable_expansion(name: str) -> None:
    _run(name, check_every_query_parses)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_metric_names_are_in_the_catalogue(name: str) -> None:
    _run(name, check_metric_names_in_catalogue)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s5_every_ratio_field_has_a_fixed_axis(name: str) -> None:
    _run(name, check_s5_ratio_axes_fixed)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s7_no_zero_fill_and_no_span_nulls(name: str) -> None:
    _run(name, check_s7_no_zero_fill)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_histogram_quantile_keeps_le_in_the_inner_by(name: str) -> None:
    _run(name, check_histogram_quantile_keeps_le)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_rates_use_rate_interval(name: str) -> None:
    _run(name, check_rates_use_rate_interval, exempt=FIXED_RATE_WINDOWS)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_panels_with_a_fixed_rate_window_use_exactly_that_window(name: str) -> None:
    keys = _keys(name)
    found = {keys[p["id"]]: p for panels in every_group(name).values() for p in panels}
    for key, (window, _reason) in FIXED_RATE_WINDOWS.items():
        assert key in found, f"{name}: exemption for {key}, which the dashboard no longer has"
        expected = window.format(window_days=PROFILES[name].slo.window_days)
        for target in found[key]["targets"]:
            windows = re.findall(r"\[([^\]]+)\]", "".join(target["expr"].split('"')[0::2]))
            assert windows and set(windows) == {expected}, f"{name} {key}: {target['expr']}"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_data_panel_states_evidence_and_unit(name: str) -> None:
    _run(name, check_evidence_and_units)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_panel_keys_unique_and_prefixed_by_their_group(name: str) -> None:
    for module in GROUPS:
        keys = [p.key for p in group_spec(name, module).panels]
        prefix = module.__name__.rsplit(".", 1)[-1] + "."
        assert len(keys) == len(set(keys)) and all(k.startswith(prefix) for k in keys), module.__name__
