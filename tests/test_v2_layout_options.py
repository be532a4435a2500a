"""v2 authoring: a group that asks for Grafana's auto grid gets an ``AutoGridLayout`` row; in a profile that mixes
pool kinds, the rows of groups serving only one kind are shown only while they have data (``conditionalRendering``),
so the dashboard shows the rows of the pools that exist. Both are valid against the v2 and v2beta1 schemas, read
back (as Grafana's own down-conversion does) with every panel, and leave the v1 rendering untouched."""

from __future__ import annotations

from dataclasses import replace

import pytest
from dashgen_panels import GROUPS
from mixed_profile import mixed

from dashgen.build import build_profile
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profiles, profile_from_dict
from dashgen.document import classic_view
from dashgen.render.document import render_dashboard
from dashgen.render.v2 import render_v2, validate_v2
from dashgen.render.v2.resource import WHEN_DATA


def _rows(resource: dict) -> list[dict]:
    return [row for tab in resource["spec"]["layout"]["spec"]["tabs"] for row in tab["spec"]["layout"]["spec"]["rows"]]


def _only_some_kinds(profile) -> set[str]:
    """Titles of the rows of groups that serve only some of the profile's kinds."""
    from dashgen.deployment.topology import Topology

    titles = set()
    for module in GROUPS:
        if set(profile.kinds) & set(module.WORKLOADS) and not set(profile.kinds) <= set(module.WORKLOADS):
            group = module.build(profile, Topology(profile))
            titles |= {row.title for row in group.shown_rows()} if group is not None else set()
    return titles


@pytest.mark.parametrize("api_version", ["v2", "v2beta1"])
def test_a_mixed_profile_shows_the_rows_of_one_pool_kind_only_while_they_have_data(api_version):
    profile = profile_from_dict(mixed(), "profiles/mixed-4.toml")
    (spec,) = dashboard_specs(profile)
    resource = render_v2(spec, api_version)
    assert validate_v2(resource, "mixed-4") == []
    conditional = {row["spec"]["title"] for row in _rows(resource) if "conditionalRendering" in row["spec"]}
    expected = _only_some_kinds(profile)
    assert len(expected) >= 3 and conditional == expected  # e.g. the video jobs rows and the text cache ladder
    assert all(
        row["spec"]["conditionalRendering"] == WHEN_DATA for row in _rows(resource) if row["spec"]["title"] in expected
    )
    view = classic_view(resource)  # Grafana drops conditionalRendering when it down-converts: every panel is kept
    assert len([p for p in view["panels"] if p.get("type") != "row"]) + sum(
        len(p.get("panels") or []) for p in view["panels"] if p.get("type") == "row"
    ) == len(spec.panels())


def test_a_single_kind_profile_has_no_conditional_row_and_its_v1_build_is_unchanged():
    (profile,) = load_profiles(["pd-128"])
    (spec,) = dashboard_specs(profile)
    resource = render_v2(spec, "v2beta1")
    assert not [row for row in _rows(resource) if "conditionalRendering" in row["spec"]]
    mixed_profile = profile_from_dict(mixed(), "profiles/mixed-4.toml")
    (built,) = build_profile(mixed_profile, schema="v1")
    assert "conditionalRendering" not in built.data.decode() and "AutoGrid" not in built.data.decode()


@pytest.mark.parametrize("api_version", ["v2", "v2beta1"])
def test_a_group_that_asks_for_the_auto_grid_gets_an_autogridlayout_row(api_version):
    (profile,) = load_profiles(["pd-128"])
    (spec,) = dashboard_specs(profile)
    index, group = next((i, g) for i, g in enumerate(spec.groups) if len(g.panels) >= 3)
    asked = replace(spec, groups=(*spec.groups[:index], replace(group, auto_grid=True), *spec.groups[index + 1 :]))
    resource = render_v2(asked, api_version)
    assert validate_v2(resource, "pd-128") == []
    (row,) = [r for r in _rows(resource) if r["spec"]["title"] == group.title]
    layout = row["spec"]["layout"]
    assert layout["kind"] == "AutoGridLayout" and 1 <= layout["spec"]["maxColumnCount"] <= 4
    assert [i["spec"]["element"]["name"] for i in layout["spec"]["items"]] == [p.key for p in group.panels]
    others = [r for r in _rows(resource) if r["spec"]["title"] != group.title]
    assert {r["spec"]["layout"]["kind"] for r in others} == {"GridLayout"}  # only the group that asked
    view = classic_view(resource)
    columns = layout["spec"]["maxColumnCount"]
    titles = {p.title for p in group.panels}
    placed = [p for p in view["panels"] for p in ([p] + list(p.get("panels") or [])) if p.get("title") in titles]
    assert len(placed) == len(group.panels) and {p["gridPos"]["w"] for p in placed} == {24 // columns}
    assert render_dashboard(asked) == render_dashboard(spec)  # v1 does not read it
