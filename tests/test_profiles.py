"""Profiles: the four deployments load, and each kind of bad input gets an error naming file and field."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest

from dashgen.deployment.profile import KNOWN_SOURCES, load_profile, load_profiles, profile_from_dict
from dashgen.deployment.sizes import parse_size
from dashgen.errors import ProfileError

PROFILES = Path(__file__).resolve().parent.parent / "profiles"


def raw(name: str = "long-context-64") -> dict:
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


def test_four_profiles_load_with_their_sizes():
    profiles = {p.name: p for p in load_profiles(directory=PROFILES)}
    assert set(profiles) == {"long-context-64", "pd-128", "h20-16", "video-200"}
    assert profiles["long-context-64"].total_gpus == 64
    assert profiles["pd-128"].total_gpus == 128
    assert profiles["h20-16"].total_gpus == 16
    assert profiles["video-200"].total_gpus == 200
    assert profiles["long-context-64"].source("mooncake_client").status == "not-exported"
    assert not profiles["video-200"].has_pp and profiles["long-context-64"].max_pp == 4
    assert [p.role for p in profiles["pd-128"].pools] == ["prefill", "decode"]


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        (lambda d: d.pop("cluster"), "cluster", "missing required field"),
        (lambda d: d["cluster"].pop("nodes"), "cluster.nodes", "missing required field"),
        (lambda d: d["cluster"].update(nodes="eight"), "cluster.nodes", "expected an integer"),
        (lambda d: d["pools"][0].update(tp=True), "pools[0].tp", "expected an integer"),
        (lambda d: d["sources"].update(prometheus={"status": "exported"}), "sources.prometheus", "unknown source"),
        (lambda d: d["sources"]["gpm"].update(status="maybe"), "sources.gpm.status", "not one of"),
        (lambda d: d["sources"].pop("dcgm"), "sources.dcgm", "missing"),
        (lambda d: d["pools"][0].update(tp=3, pp=1), "pools[0]", "does not divide"),
        (lambda d: d["pools"][0].update(replicas=3), "pools", "the cluster has 8 nodes x 8 = 64 GPUs"),
        (lambda d: d["capacity"].update(global_segment_size=274877906945), "capacity.global_segment_size",
         "must divide evenly"),
        (lambda d: d["capacity"].update(nvme_bucket_limit_per_rank="260 GB"), "capacity.nvme_bucket_limit_per_rank",
         "exceeds the physical size"),
        (lambda d: d["capacity"].update(disk_nominal_size="1.92 TB"), "capacity.nvme_physical_per_rank",
         "exceeds the disk's nominal size"),
        (lambda d: d["capacity"].update(host_cache_per_rank="32 GB/s"), "capacity.host_cache_per_rank",
         "cannot read size"),
        (lambda d: d["capacity"].pop("global_segment_size"), "capacity.global_segment_size",
         "required when hicache_storage is deployed"),
        (lambda d: d["slo"].update(objective=99), "slo.objective", "between 0 and 1"),
        (lambda d: d["labels"].update(node="node-name"), "labels.node", "not a valid Prometheus label name"),
        (lambda d: d["cluster"].update(colour="blue"), "cluster.colour", "unknown field"),
        (lambda d: d["sources"]["sglang"].update(scrape_interval="5 seconds"), "sources.sglang.scrape_interval",
         "duration"),
        (lambda d: d["dashboard"].update(grafana_version="10.4"), "dashboard.grafana_version", "11.6 and newer"),
        (lambda d: d["cluster"]["node_addresses"].update({"lc-node-99": "10.0.0.99"}),
         "cluster.node_addresses.lc-node-99", "not a node of this profile"),
        (lambda d: d["cluster"]["node_addresses"].update({"lc-node-01": ""}), "cluster.node_addresses.lc-node-01",
         "non-empty address"),
        (lambda d: d["cluster"]["node_addresses"].update({"lc-node-01": 7}), "cluster.node_addresses.lc-node-01",
         "non-empty address"),
        (lambda d: d["cluster"]["node_addresses"].update({"lc-node-01": "10.12.0.10"}), "cluster.node_addresses",
         "repeated: 10.12.0.10"),
        (lambda d: d["cluster"].update(node_addresses="10.12.0.10"), "cluster.node_addresses", "expected a table"),
        (lambda d: d["sources"]["dcgm"].update(sample_interval="15s"), "sources.dcgm.sample_interval",
         "shorter than the scrape interval"),
    ],
)
def test_bad_profile_names_file_and_field(mutate, field, fragment):
    data = copy.deepcopy(raw())
    data.setdefault("labels", {})
    mutate(data)
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(data, "profiles/long-context-64.toml")
    assert caught.value.path == "profiles/long-context-64.toml"
    assert caught.value.field == field
    assert fragment in str(caught.value)


def test_file_name_must_match_profile_name(tmp_path):
    path = tmp_path / "other-name.toml"
    path.write_text((PROFILES / "h20-16.toml").read_text())
    with pytest.raises(ProfileError, match=r"other-name.toml: name: 'h20-16' differs from the file name"):
        load_profile(path)


def test_invalid_toml_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("name = \n")
    with pytest.raises(ProfileError, match=r"broken.toml: <toml>: not valid TOML"):
        load_profile(path)


def test_every_source_must_be_stated():
    assert set(raw()["sources"]) == set(KNOWN_SOURCES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("256 GiB", 274877906944), ("240 GB", 240_000_000_000), ("3.84 TB", 3_840_000_000_000), (8, 8), ("1_024", 1024)],
)
def test_sizes_parse(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["-1", "1.5 B", "12 parsecs", "", "GiB"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_s11_node_addresses_default_to_the_node_name():
    profiles = {p.name: p for p in load_profiles(directory=PROFILES)}
    lc = profiles["long-context-64"]
    assert [lc.node_address(n) for n in lc.node_names] == [f"10.12.0.{10 + i}" for i in range(8)]
    pd = profiles["pd-128"]
    assert pd.node_addresses == {} and pd.node_address("pd-node-03") == "pd-node-03"
    data = copy.deepcopy(raw())
    data["cluster"]["node_addresses"] = {"lc-node-00": "10.0.0.1"}  # a subset: the others keep their names
    partial = profile_from_dict(data, "profiles/long-context-64.toml")
    assert partial.node_address("lc-node-00") == "10.0.0.1" and partial.node_address("lc-node-01") == "lc-node-01"


def test_s24_a_source_is_read_at_the_stores_resolution_when_it_is_scraped_faster():
    profiles = {p.name: p for p in load_profiles(directory=PROFILES)}
    gpm = profiles["long-context-64"].source("gpm")
    assert profiles["long-context-64"].store.resolution_seconds == 30
    assert (gpm.scrape_interval_seconds, gpm.sample_interval_seconds) == (1, 30)
    dcgm = profiles["h20-16"].source("dcgm")
    assert (dcgm.scrape_interval_seconds, dcgm.sample_interval_seconds) == (15, 30)


def test_sample_interval_defaults_to_the_scrape_interval_on_a_store_that_keeps_every_sample(tmp_path):
    text = (PROFILES / "long-context-64.toml").read_text()
    text = text.replace('resolution = "30s"', 'resolution = "0s"')
    (tmp_path / "long-context-64.toml").write_text(text)
    (profile,) = load_profiles(directory=tmp_path)
    assert profile.source("gpm").sample_interval_seconds == 1
    assert profile.source("sglang").sample_interval_seconds == 5
