"""The checks every panel of every profile's whole rendered dashboard must pass, whatever its group.

The rules themselves are the lint's (``dashgen/lint``), enforced once: every built dashboard is linted
with the project's exclusions (.dashgen-lint.toml) and must give no finding at all — queries parse after
variable expansion, metric names are in the catalogue, ratio axes are fixed (S5), no zero-fill and no
spanNulls (S7), histogram_quantile keeps ``le``, rates use ``$__rate_interval`` (``$__range`` in tables and
stats), per-node tables never sum across nodes or stages (S3), units and descriptions are set. What is
dashgen's own contract and no lint rule is checked here: every data panel's description states its
source, quantity and limit; the panels the exclusions exempt from $__rate_interval use exactly their
fixed window; each group keeps its ratio panels and histogram quantiles; panel keys are unique and
prefixed by their group."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from dashgen_panels import GROUPS, gpu_timelines, jobs, kv_cache_nvme, requests_gateway
from group_checks import PROFILE_NAMES, PROFILES, document, group_panels, group_spec

from dashgen.dashboard import serving
from dashgen.lint.exclusions import apply_exclusions, shipped_exclusions
from dashgen.lint.runner import lint_dashboard
from dashgen.render.ids import panel_id
from dashgen.render.spec import MAX_DESCRIPTION, NOTES_POINTER

ROOT = Path(__file__).resolve().parent.parent
EXCLUSIONS = shipped_exclusions()

# Panel key -> (its fixed range window, why it is not $__rate_interval). The burn rates over 1h / 6h / 3d and the
# budget are SLO windows fixed by design, independent of the dashboard range (slo_health). Burn over 1h needs no
# exemption: 1h is one of the ranges the check allows on a stat panel.
FIXED_RATE_WINDOWS: dict[str, tuple[str, str]] = {
    "slo_health.budget": (
        "{window_days}d",
        "error budget left over the profile's whole SLO window "
        "(slo.window_days), a rolling window ending at the end of the "
        "dashboard range",
    ),
    "slo_health.burn_6h": ("6h", "burn rate over the fixed 6h window of the slow-burn alert"),
    "slo_health.burn_3d": ("3d", "burn rate over a fixed 3d window, shown beside 1h and 6h"),
    # S25: the video job SLO's windows, as the text SLO's; a stuck instance and jobs per hour over fixed windows
    "video_slo.budget": ("{window_days}d", "job error budget left over the profile's SLO window"),
    "video_slo.burn_6h": ("6h", "job burn rate over the fixed 6h window of the slow-burn alert"),
    "video_slo.burn_3d": ("3d", "job burn rate over a fixed 3d window"),
    "video_slo.stuck": ("1200s", "no job finished over 2 x slo.job_latency_seconds, VideoInstanceStuck's window"),
    "jobs.jobs_per_hour": ("1h", "minutes-long jobs per hour, over a fixed hour"),
}

# (what is counted, group title) -> the least a group must keep, so a group that silently lost them fails.
AT_LEAST: dict[tuple[str, str], int] = {
    ("ratio panels", kv_cache_nvme.TITLE): 5,
    # 4: h20-16's DCGM default CSV collects neither SM active nor SM occupancy, shown as "not collected" texts (S22)
    ("ratio panels", gpu_timelines.TITLE): 4,
    ("histogram quantiles", requests_gateway.TITLE): 10,
    ("ratio panels", kv_cache_nvme.VIDEO_TITLE): 5,  # S25: the same group without KV panels
    ("histogram quantiles", jobs.TITLE): 8,
}


def _count(what: str, panels: list[dict[str, Any]]) -> int:
    if what == "ratio panels":
        return sum(
            p.get("fieldConfig", {}).get("defaults", {}).get("unit") in ("percent", "percentunit") for p in panels
        )
    return sum(target["expr"].count("histogram_quantile(") for p in panels for target in p.get("targets") or [])


def _serving(name: str) -> tuple:
    """The group modules on the profile's dashboard: those of its workload kinds (S25)."""
    return serving(PROFILES[name], GROUPS)


def _keys(name: str) -> dict[int, str]:
    return {panel_id(p.key): p.key for module in _serving(name) for p in group_spec(name, module).panels}


def every_group(name: str) -> dict[str, list[dict[str, Any]]]:
    """Group title -> its rendered panels; together they are every non-row panel of the dashboard."""
    titles = [group_spec(name, module).title for module in _serving(name)]
    groups = {title: group_panels(name, title) for title in titles}
    top = document(name)["panels"]
    every = [p for p in top if p.get("type") != "row"] + [n for p in top for n in p.get("panels") or []]
    assert sorted(p["id"] for ps in groups.values() for p in ps) == sorted(p["id"] for p in every), name
    return groups


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_panel_passes_every_lint_rule(name: str) -> None:
    path = f"dashboards/{name}/dg-{name}-cluster.json"
    findings, _excluded = apply_exclusions(lint_dashboard(document(name), path), EXCLUSIONS)
    assert not findings, "\n".join(f"{f.panel}: {f.rule}: {f.message}" for f in findings)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_group_keeps_its_ratio_panels_and_quantiles(name: str) -> None:
    groups = every_group(name)
    applies = [(what, title, least) for (what, title), least in AT_LEAST.items() if title in groups]
    assert len(applies) >= 2, f"{name}: no AT_LEAST entry for its groups {sorted(groups)}"
    for what, title, least in applies:
        assert _count(what, groups[title]) >= least, f"{name} {title}: fewer than {least} {what}"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_panels_with_a_fixed_rate_window_use_exactly_that_window(name: str) -> None:
    keys = _keys(name)
    found = {keys[p["id"]]: p for panels in every_group(name).values() for p in panels}
    shown = {group_spec(name, module).key for module in _serving(name)}
    # the exemptions of the groups shown: a group of another workload kind (S25) is not on this dashboard
    exempt = {key: window for key, (window, _reason) in FIXED_RATE_WINDOWS.items() if key.split(".", 1)[0] in shown}
    assert len(exempt) >= 3, f"{name}: the SLO group's budget, 6h and 3d burn rates are exempt"
    for key, window in exempt.items():
        assert key in found, f"{name}: exemption for {key}, which the dashboard no longer has"
        expected = window.format(window_days=PROFILES[name].slo.window_days)
        assert found[key]["targets"], f"{name} {key}"
        for target in found[key]["targets"]:
            windows = re.findall(r"\[([^\]]+)\]", "".join(target["expr"].split('"')[0::2]))
            assert windows and set(windows) == {expected}, f"{name} {key}: {target['expr']}"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_data_panel_states_its_source_quantity_and_limit(name: str) -> None:
    data = [panel for panels in every_group(name).values() for panel in panels if panel["type"] != "text"]
    assert len(data) >= 70, f"{name}: {len(data)} data panels"
    for panel in data:
        for part in ("Source:", "Quantity:", "Limit:"):
            assert part in (panel.get("description") or ""), f"{panel['title']}: description lacks {part}"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_description_fits_a_tooltip_and_its_notes_are_in_the_panel_index(name: str) -> None:
    """A description is read in a tooltip: at most MAX_DESCRIPTION characters; what a panel has to say beyond
    that is its Evidence's notes, which docs/panels.md shows under the panel's key and the description points to."""
    data = [panel for panels in every_group(name).values() for panel in panels if panel["type"] != "text"]
    lengths = {p["title"]: len(p.get("description") or "") for p in data}
    assert not {t: n for t, n in lengths.items() if n > MAX_DESCRIPTION}, f"{name}: over {MAX_DESCRIPTION} characters"
    pointing = {p["title"] for p in data if NOTES_POINTER in (p.get("description") or "")}
    index = (ROOT / "docs" / "panels.md").read_text(encoding="utf-8")
    with_notes = set()
    for module in _serving(name):
        for spec in group_spec(name, module).panels:
            if spec.evidence is not None and spec.evidence.notes:
                with_notes.add(spec.title)
                assert spec.evidence.notes.rstrip(".") in index, f"{spec.key}: notes missing from docs/panels.md"
    assert pointing == with_notes and len(with_notes) >= 3, (pointing, with_notes)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_panel_keys_unique_and_prefixed_by_their_group(name: str) -> None:
    assert len(_serving(name)) >= 10, f"{name}: the groups of its workload kinds"
    for module in _serving(name):
        keys = [p.key for p in group_spec(name, module).panels]
        # the Reference group (S34) shows panels moved from other groups under their keys: their ids do not move
        prefixes = tuple(f"{group}." for group in getattr(module, "MOVED_FROM", (module.__name__.rsplit(".", 1)[-1],)))
        assert len(keys) == len(set(keys)) and all(k.startswith(prefixes) for k in keys), module.__name__
