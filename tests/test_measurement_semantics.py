"""S1, S19, S20 on the rendered output of every profile: sizes come from the profile, window
statistics say they depend on the step and can miss short spikes, and the dashboards say they locate
problems rather than measure formally."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path

import pytest

from dashgen.build import build_all, build_profile
from dashgen.deployment.profile import load_profiles, profile_from_dict
from dashgen.document import iter_panels

ROOT = Path(__file__).resolve().parent.parent
WINDOW_FUNCTIONS = re.compile(r"\b(avg|max|min|quantile)_over_time\(")


@pytest.fixture(scope="module")
def built():
    return build_all(load_profiles(directory=ROOT / "profiles"))


def _panels(document):
    return [panel for panel in (s.raw for s in iter_panels(document)) if panel.get("type") != "row"]


def test_s19_window_statistics_say_they_depend_on_the_step_and_miss_short_spikes(built):
    checked = 0
    for dashboard in built:
        for panel in _panels(dashboard.document):
            if any(WINDOW_FUNCTIONS.search(t.get("expr", "")) for t in panel.get("targets", [])):
                description = panel["description"].lower()
                assert "spike" in description and ("step" in description or "window" in description), (
                    dashboard.uid,
                    panel["title"],
                )
                checked += 1
    assert checked >= 4  # the per-GPU table of each profile at least


def test_s20_window_statistics_say_they_locate_problems_not_measure_formally(built):
    assert len(built) == len(list((ROOT / "profiles").glob("*.toml"))) >= 4
    for dashboard in built:
        tables = [p for p in _panels(dashboard.document) if p["title"].startswith("Window mean and peak per GPU")]
        assert len(tables) == 1, dashboard.uid
        for table in tables:
            description = table["description"]
            assert "duplicated or sparse samples" in description and "formal" in description


def _variant(name: str, edit) -> object:
    data = tomllib.loads((ROOT / "profiles" / f"{name}.toml").read_text())
    edit(data)
    return profile_from_dict(data, f"profiles/{name}.toml", expected_name=name)


def test_s1_node_names_come_from_the_profile():
    def rename(data):
        data["cluster"]["node_name_format"] = "gpu-host-{index:03d}"
        addresses = data["cluster"].get("node_addresses", {}).values()  # keyed by node name: follow the rename
        data["cluster"]["node_addresses"] = {f"gpu-host-{i:03d}": a for i, a in enumerate(addresses)}
        for master in data.get("mooncake", {}).get("masters", []):  # where the masters run: follow the rename
            master["nodes"] = [f"gpu-host-{int(n.rsplit('-', 1)[1]):03d}" for n in master.get("nodes", [])]

    renamed = _variant("long-context-64", rename)
    text = json.dumps([b.document for b in build_profile(renamed)])
    assert "lc-node-" not in text
    assert "gpu-host-007" in text and "gpu-host-008" not in text


def test_s1_cluster_size_comes_from_the_profile():
    """Half the cluster (4 nodes, one replica): every node list and per-node constant follows."""

    def halve(data):
        data["cluster"]["nodes"] = 4
        data["pools"][0]["replicas"] = 1
        addresses = data["cluster"].get("node_addresses", {})  # only the remaining nodes have addresses
        data["cluster"]["node_addresses"] = {n: a for n, a in addresses.items() if n < "lc-node-04"}
        data["mooncake"] = {"masters": [{"name": "store", "replicas": ["main-0"], "nodes": ["lc-node-00"]}]}

    small = _variant("long-context-64", halve)
    text = json.dumps([b.document for b in build_profile(small)])
    assert "lc-node-03" in text and "lc-node-04" not in text
    variables = {v["name"] for b in build_profile(small) for v in b.document["templating"]["list"]}
    assert "replica" not in variables  # one replica: no replica selector is offered


def test_s1_capacities_come_from_the_profile():
    """Doubling the Store quota per replica doubles every Store number of the capacity anatomy (S17)."""

    def double(data):
        data["capacity"]["global_segment_size"] = "512 GiB"

    base = json.dumps([b.document for b in build_profile(_variant("long-context-64", lambda d: None))])
    doubled = json.dumps([b.document for b in build_profile(_variant("long-context-64", double))])
    assert "512 GiB" in base and "1 TiB" in doubled
    for quota in ("16 GiB", "128 GiB"):
        assert quota in doubled


def test_s1_no_dashboard_repeats_another_profiles_sizes(built):
    """Node names and GPU counts of one profile never leak into another profile's dashboard."""
    names = {b.profile: [n for n in _profile(b.profile).node_names] for b in built}
    assert len(names) == len(list((ROOT / "profiles").glob("*.toml"))) >= 4 and all(names.values())
    for dashboard in built:
        text = json.dumps(dashboard.document)
        for other, nodes in names.items():
            if other != dashboard.profile:
                assert not any(node in text for node in nodes), (dashboard.profile, other)


def _profile(name: str):
    (profile,) = load_profiles([name], ROOT / "profiles")
    return profile


def test_s1_profile_is_the_only_input():
    """The same profile object renders identically however it is obtained (no hidden global state)."""
    profile = _profile("h20-16")
    copy = dataclasses.replace(profile)
    assert [b.data for b in build_profile(profile)] == [b.data for b in build_profile(copy)]
