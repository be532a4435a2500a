"""Profiles: the four deployments load, and each kind of bad input gets an error naming file and field."""

from __future__ import annotations

import copy
import time
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
        (
            lambda d: d["capacity"].update(global_segment_size=274877906945),
            "capacity.global_segment_size",
            "must divide evenly",
        ),
        (
            lambda d: d["capacity"].update(nvme_bucket_limit_per_rank="260 GB"),
            "capacity.nvme_bucket_limit_per_rank",
            "exceeds the physical size",
        ),
        (
            lambda d: d["capacity"].update(disk_nominal_size="1.92 TB"),
            "capacity.nvme_physical_per_rank",
            "exceeds the disk's nominal size",
        ),
        (
            lambda d: d["capacity"].update(host_cache_per_rank="32 GB/s"),
            "capacity.host_cache_per_rank",
            "cannot read size",
        ),
        (
            lambda d: d["capacity"].pop("global_segment_size"),
            "capacity.global_segment_size",
            "required when hicache_storage is deployed",
        ),
        (lambda d: d["slo"].update(objective=99), "slo.objective", "between 0 and 1"),
        (lambda d: d["labels"].update(node="node-name"), "labels.node", "not a valid Prometheus label name"),
        (lambda d: d["cluster"].update(colour="blue"), "cluster.colour", "unknown field"),
        (
            lambda d: d["sources"]["sglang"].update(scrape_interval="5 seconds"),
            "sources.sglang.scrape_interval",
            "duration",
        ),
        (lambda d: d["dashboard"].update(grafana_version="10.4"), "dashboard.grafana_version", "11.6 and newer"),
        (lambda d: d["capacity"].update(global_segment_size=0), "capacity.global_segment_size", "must be positive"),
        (
            lambda d: d["capacity"].update(host_cache_per_rank="0 GiB"),
            "capacity.host_cache_per_rank",
            "must be positive",
        ),
        (lambda d: d["dashboard"].update(time_from=""), "dashboard.time_from", "relative time like 'now-1h'"),
        (lambda d: d["dashboard"].update(time_from="yesterday"), "dashboard.time_from", "got 'yesterday'"),
        (lambda d: d["dashboard"].update(refresh="-1m"), "dashboard.refresh", "got '-1m'"),
        (lambda d: d["dashboard"].update(refresh="1x"), "dashboard.refresh", "like '30s'"),
        (lambda d: d["dashboard"].update(refresh="0s"), "dashboard.refresh", "like '30s'"),
        (
            lambda d: d["cluster"]["node_addresses"].update({"lc-node-99": "10.0.0.99"}),
            "cluster.node_addresses.lc-node-99",
            "not a node of this profile",
        ),
        (
            lambda d: d["cluster"]["node_addresses"].update({"lc-node-01": ""}),
            "cluster.node_addresses.lc-node-01",
            "non-empty address",
        ),
        (
            lambda d: d["cluster"]["node_addresses"].update({"lc-node-01": 7}),
            "cluster.node_addresses.lc-node-01",
            "non-empty address",
        ),
        (
            lambda d: d["cluster"]["node_addresses"].update({"lc-node-01": "10.12.0.10"}),
            "cluster.node_addresses",
            "repeated: 10.12.0.10",
        ),
        (lambda d: d["cluster"].update(node_addresses="10.12.0.10"), "cluster.node_addresses", "expected a table"),
        (
            lambda d: d["sources"]["dcgm"].update(sample_interval="15s"),
            "sources.dcgm.sample_interval",
            "shorter than the scrape interval",
        ),
        # HiCache's series are on the engine's /metrics: no scrape of their own, so no collection alert of their own
        (
            lambda d: d["sources"]["sglang"].update(status="not-exported"),
            "sources.hicache.status",
            "cannot be exported while sglang is not-exported",
        ),
        (lambda d: d["sources"]["hicache"].update(job="hicache"), "sources.hicache.job", "scraped with it"),
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
    with pytest.raises(ProfileError, match=r"broken.toml: not valid TOML"):
        load_profile(path)


def test_every_source_must_be_stated():
    assert set(raw()["sources"]) == set(KNOWN_SOURCES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("256 GiB", 274877906944), ("240 GB", 240_000_000_000), ("3.84 TB", 3_840_000_000_000), (8, 8), ("1_024", 1024)],
)
def test_sizes_parse(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["-1", "1.5 B", "12 parsecs", "", "GiB", 10**400, -(10**400), 2**62 + 1])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    "value",
    [[{"a": 10**400, "b": "x" * 5000}], {"x" * 5000: 1}, ["x" * 5000] * 4, "a\rb\u2028c\x0bd", 10**400],
    ids=["huge-int-in-list", "huge-key", "long-strings", "line-separators", "huge-int"],
)
def test_a_quoted_bad_value_gives_one_bounded_line_naming_file_and_field(value):
    data = copy.deepcopy(raw())
    data["capacity"]["host_cache_per_rank"] = value
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(data, "team.toml")
    text = str(caught.value)
    assert text.startswith("team.toml: capacity.host_cache_per_rank: "), text[:200]
    assert len(text.splitlines()) == 1 and len(text) < 1000, text[:200]


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


# -- issue 18: hostile and huge profiles ----------------------------------------------------------------


def _fails(data: dict, field: str, *words: str) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        profile_from_dict(data, "p.toml")
    assert info.value.field == field, str(info.value)
    for word in words:
        assert word in str(info.value), str(info.value)
    return info.value


def test_a_quote_in_a_job_name_fails_naming_the_field():
    data = raw()
    data["sources"]["sglang"]["job"] = 'sg"lang'
    _fails(data, "sources.sglang.job", "not allowed", "letters")


def test_a_node_named_like_a_regex_is_refused_before_it_reaches_an_anchored_matcher():
    data = raw("h20-16")
    del data["cluster"]["node_name_format"]
    data["cluster"]["node_names"] = ["n.*", "b"]
    _fails(data, "cluster.node_names[0]", "'n.*'")
    data["cluster"]["node_names"] = ['a"b', "b"]
    _fails(data, "cluster.node_names[0]")


@pytest.mark.parametrize("pattern", ["n{index:099999999}", "n{index:>1000}", "n{index:{index}}"])
def test_a_node_name_format_whose_width_would_fill_memory_is_refused_before_formatting(pattern):
    """``n{index:099999999}`` padded each of the nodes' names to 100 MB before any check (100,000 nodes: 10 TB);
    a width past 999, or one read from a field, is refused before any name is made."""
    data = raw("h20-16")
    data["cluster"]["nodes"] = 100_000
    data["cluster"]["node_name_format"] = pattern
    began = time.monotonic()
    _fails(data, "cluster.node_name_format", "a width of 1,000 or more")
    assert time.monotonic() - began < 5


def test_a_quote_in_a_node_name_format_is_refused():
    data = raw("h20-16")
    data["cluster"]["node_name_format"] = 'h"{index}'
    _fails(data, "cluster.node_name_format", "node 0")


@pytest.mark.parametrize(
    "regex, construct",
    [
        ("nvme(?=0)", "lookahead"),
        ("nvme(?!0)", "negative lookahead"),
        ("(?<=a)nvme", "lookbehind"),
        (r"(a)\1", "back-reference"),
        ("a*+", "possessive"),
        ("(?>a)", "atomic"),
        ("nvme[", "not a valid"),
        ('nvme"0', "quote"),
        ("^nvme[0-9]+$", "'$'"),
        ("${x}", "variable"),
    ],
)
def test_a_cache_device_regex_re2_refuses_is_rejected_by_name(regex, construct):
    data = raw("h20-16")
    data["disks"] = {"cache_device_regex": regex}
    _fails(data, "disks.cache_device_regex", construct)


def test_two_pools_sharing_one_node_name_the_pool_not_an_index_error():
    data = raw("h20-16")
    data["pools"] = [
        {"name": "a", "replicas": 1, "tp": 4},
        {"name": "b", "replicas": 1, "tp": 4},
        {"name": "c", "replicas": 1, "tp": 8},
    ]
    _fails(data, "pools[0].replicas", "cannot share a node")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0, "8s", True])
def test_an_slo_threshold_must_be_a_positive_finite_number(value):
    data = raw("h20-16")
    data["slo"]["ttft_seconds"] = value
    _fails(data, "slo.ttft_seconds")


@pytest.mark.parametrize("field, value", [("nodes", 10**7), ("nodes", 10**100), ("gpus_per_node", 1000)])
def test_a_count_over_its_bound_names_the_bound(field, value):
    data = raw("h20-16")
    data["cluster"][field] = value
    error = _fails(data, f"cluster.{field}", "at most")
    assert len(str(error)) < 300


@pytest.mark.parametrize("size", ["9" * 60 + " PiB", "9" * 5000, 2**80, "1" * 100])
def test_a_huge_size_is_an_error_not_an_overflow(size):
    data = raw("long-context-64")
    data["capacity"]["disk_nominal_size"] = size
    error = _fails(data, "capacity.disk_nominal_size")
    assert len(str(error)) < 300


def test_the_node_address_check_is_linear_at_100000_nodes():
    import time

    data = raw("video-200")
    data["cluster"]["nodes"] = 100_000
    data["cluster"]["node_name_format"] = "n{index}"
    data["pools"][0]["replicas"] = 100_000
    data["cluster"]["node_addresses"] = {
        f"n{i}": f"10.{i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(0, 100_000, 2)
    }
    began = time.monotonic()
    profile = profile_from_dict(data, "p.toml")
    assert len(profile.node_names) == 100_000
    assert time.monotonic() - began < 10
    data["cluster"]["node_addresses"]["n1"] = "10.0.0.0"
    _fails(data, "cluster.node_addresses", "10.0.0.0")


def test_a_non_utf8_profile_is_an_input_error_naming_the_file(tmp_path):
    (tmp_path / "x.toml").write_bytes(b'name = "x\xff"\n')
    with pytest.raises(ProfileError) as info:
        load_profile(tmp_path / "x.toml")
    assert "UTF-8" in str(info.value) and "x.toml" in str(info.value)


def test_no_profiles_in_the_folder_exits_2_naming_the_folder(tmp_path):
    from click.testing import CliRunner

    from dashgen.cli.app import main

    for command in (
        ["build", "--out", str(tmp_path / "out")],
        ["rules", "--out", str(tmp_path / "r")],
        ["profiles"],
        ["check"],
        ["index", "--out", str(tmp_path / "i.md")],
    ):
        result = CliRunner().invoke(main, ["--profiles-dir", str(tmp_path), *command])
        assert result.exit_code == 2, result.output
        assert str(tmp_path) in result.output and "no profiles" in result.output
    assert not (tmp_path / "out").exists()


def test_a_generated_query_that_is_not_promql_fails_the_build_naming_the_profile_field():
    from dashgen.build import check_queries, syntax_problem

    (profile,) = load_profiles(["h20-16"], PROFILES)
    assert syntax_problem('rate(up{job="sglang", node=~"$node"}[$__rate_interval])') is None
    document = {
        "panels": [{"type": "timeseries", "title": "T", "targets": [{"refId": "A", "expr": 'up{job="sglang"} +'}]}]
    }
    (problem,) = check_queries(document, profile, "h20-16/x")
    assert "panel 'T' target A" in problem and "sources.sglang.job" in problem and "h20-16.toml" in problem


@pytest.mark.slow  # 1.5 s: a 20 000-term chain parsed piece by piece
def test_a_long_or_chain_is_checked_piece_by_piece_never_whole():
    from dashgen.build import syntax_problem

    chain = " or on(node) ".join(f'label_replace(vector(1), "node", "n{i}", "", "")' for i in range(20_000))
    assert syntax_problem(f"(up == 0) or on(node) ({chain})") is None
    assert "budget" in syntax_problem("up" + " + up" * 5000)
    assert syntax_problem(chain + ' or on(node) label_replace(vector(1), "node", "n", "", ""') is not None


@pytest.mark.parametrize("title", ["", "   ", "a\nb", "x" * 201])
def test_an_empty_or_multi_line_title_is_refused_before_the_schema_sees_it(title):
    data = raw("h20-16")
    data["title"] = title
    _fails(data, "title", "printable")


@pytest.mark.parametrize(
    "description",
    ["a \x1b]8;;https://evil.example\x07b", "\u202egnp.exe", "a\x9b2J", "a\rb", "a\x0bb", "a\u2028b", "x" * 2001],
)
def test_a_description_with_control_characters_or_too_long_is_refused(description):
    data = raw("h20-16")
    data["description"] = description
    _fails(data, "description", "printable")


def test_a_multi_line_description_is_accepted_and_kept():
    """A TOML multi-line string (\"\"\"...\"\"\") gives a description with line breaks and tabs: text, not controls."""
    data = raw("h20-16")
    data["description"] = "Serving pool of the\nsouth region.\n\tOwned by the inference team."
    assert profile_from_dict(data, "h20-16.toml").description == data["description"]


@pytest.mark.parametrize(
    ("time_from", "refresh"), [("now-7d/d", ""), ("now", "30s"), ("2026-01-01", "1h"), ("2026-01-01T00:00:00Z", "1d")]
)
def test_grafana_time_and_refresh_forms_are_accepted(time_from, refresh):
    data = raw()
    data["dashboard"].update(time_from=time_from, refresh=refresh)
    profile = profile_from_dict(data, "p.toml")
    assert (profile.dashboard.time_from, profile.dashboard.refresh) == (time_from, refresh)
