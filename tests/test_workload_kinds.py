"""S25 workload kinds: a pool is text-generation (SGLang, tokens) or video-generation (SGLang Diffusion, jobs);
the profile validates the kind and its SLO fields naming file and field; the dashboard, No Data layer, SLO
and rules follow the kinds of the profile's pools, and a profile may mix both."""

from __future__ import annotations

import copy
import re

import pytest
from dashgen_panels import GROUPS, jobs, slo_health, video_slo
from dashgen_queries import nodata
from mixed_profile import PROFILES, mixed, raw

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles, profile_from_dict
from dashgen.deployment.topology import Topology
from dashgen.errors import ProfileError
from dashgen.rules import rule_groups

ALL = {profile.name: profile for profile in load_profiles(directory=PROFILES)}
# What a video pool's panels must never read (S25): text-engine series, tokens, TTFT/TPOT/ITL, KV, cache evidence.
TEXT_QUANTITY = re.compile(
    r"token|ttft|tpot|time_to_first|per_output|inter_token|kv_|hicache|prefill|cache_hit|"
    r"mooncake|storage_|smg_"
)


def panels(document: dict) -> list[dict]:
    top = document["panels"]
    return [p for p in top if p["type"] != "row"] + [n for p in top for n in p.get("panels") or []]


def exprs(panel: dict) -> str:
    return " ".join(target.get("expr", "") for target in panel.get("targets") or [])


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        (lambda d: d["pools"][0].update(kind="image"), "pools[0].kind", "not one of text-generation, video-generation"),
        (lambda d: d["pools"][0].update(role="prefill"), "pools[0].role", "no prefill / decode split"),
        (lambda d: d["slo"].update(ttft_seconds=40.0), "slo.ttft_seconds", "no text-generation pool"),
        (lambda d: d["slo"].update(tpot_seconds=1.0), "slo.tpot_seconds", "no text-generation pool"),
        (lambda d: d["slo"].pop("job_latency_seconds"), "slo.job_latency_seconds", "missing"),
    ],
)
def test_s25_bad_workload_kind_or_slo_names_file_and_field(mutate, field, fragment):
    data = copy.deepcopy(raw("video-200"))
    mutate(data)
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(data, "profiles/video-200.toml")
    assert (caught.value.path, caught.value.field) == ("profiles/video-200.toml", field)
    assert fragment in str(caught.value)


def test_s25_a_text_pool_needs_its_ttft_and_refuses_a_job_latency_bound():
    data = copy.deepcopy(raw("h20-16"))
    data["slo"]["job_latency_seconds"] = 600.0
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(data, "profiles/h20-16.toml")
    assert caught.value.field == "slo.job_latency_seconds" and "no video-generation pool" in str(caught.value)


def test_s25_job_latency_bound_off_a_bucket_bound_stops_the_build_naming_the_field():
    data = copy.deepcopy(raw("video-200"))
    data["slo"]["job_latency_seconds"] = 500.0  # between the 300 and 600 s bounds
    profile = profile_from_dict(data, "profiles/video-200.toml")
    with pytest.raises(ProfileError) as caught:
        build_profile(profile)
    assert caught.value.field == "slo.job_latency_seconds" and "600" in str(caught.value)


def test_s25_video_dashboard_reads_only_diffusion_engine_series_and_no_token_quantity():
    (built,) = build_profile(ALL["video-200"])
    found = panels(built.document)
    engine = {name for panel in found for name in re.findall(r"\bsglang:[a-z_]+", exprs(panel))}
    assert engine and all(name.startswith("sglang:diffusion_") for name in engine), sorted(engine)
    wrong = [panel["title"] for panel in found if TEXT_QUANTITY.search((exprs(panel) + panel["title"]).lower())]
    assert not wrong, wrong
    rows = [p["title"] for p in built.document["panels"] if p["type"] == "row"]
    assert rows[:3] == ["Now", video_slo.TITLE, jobs.TITLE]  # the first screen first (S26)
    assert {"Per-GPU window statistics", "GPU health", "Per-GPU timelines", "Disks, CPU and host memory"} <= set(rows)
    assert slo_health.TITLE not in rows and "Requests and gateway" not in rows


def test_s25_text_dashboards_have_no_jobs_group():
    text_only = {name: profile for name, profile in ALL.items() if not profile.has_kind("video-generation")}
    assert len(text_only) >= 3, sorted(text_only)
    for name, profile in text_only.items():
        (built,) = build_profile(profile)
        assert not [p for p in panels(built.document) if "sglang:diffusion_" in exprs(p)], name
        assert jobs.TITLE not in {p["title"] for p in built.document["panels"] if p["type"] == "row"}, name


def test_s25_a_mixed_profile_gets_both_kinds_groups_slos_layers_and_rules():
    profile = profile_from_dict(mixed(), "profiles/mixed-4.toml")
    assert profile.kinds == ("text-generation", "video-generation")
    (built,) = build_profile(profile)
    rows = [p["title"] for p in built.document["panels"] if p["type"] == "row"]
    served = [module for module in GROUPS if set(profile.kinds) & set(module.WORKLOADS)]
    assert len(served) == len(GROUPS)  # a mixed profile is served by every group
    expected = [
        row.title
        for module in served
        for group in (module.build(profile, Topology(profile)),)
        if group is not None
        for row in group.shown_rows()
    ]
    assert rows == expected  # reading order kept
    assert {slo_health.TITLE, video_slo.TITLE, jobs.TITLE, "Cache evidence", "Requests: throughput"} <= set(rows)
    (engine,) = [layer for layer in nodata.layers(profile) if layer.key == "engine"]
    assert "sglang:max_total_num_tokens" in engine.presence and "sglang:diffusion_num_queue_reqs" in engine.presence
    assert len(engine.activity) == 2  # tokens processed, or a finished non-warm-up job
    alerts = {rule.alert for group in rule_groups(profile) for rule in group.alerts()}
    assert {"SloErrorBudgetFastBurn", "EngineStalled", "VideoJobSloFastBurn", "VideoInstanceStuck"} <= alerts


def test_s25_every_group_module_serves_a_kind_and_the_composition_follows_it():
    from dashgen.dashboard import serving

    video = serving(ALL["video-200"], GROUPS)
    text = serving(ALL["long-context-64"], GROUPS)
    assert all("video-generation" in module.WORKLOADS for module in video)
    assert all("text-generation" in module.WORKLOADS for module in text)
    assert jobs in video and jobs not in text and slo_health in text and slo_health not in video


def test_s25_a_video_pools_disks_are_scratch_disks_never_cache_disks():
    """A video pool has no KV cache, so its profile's disks (a scratch mount) are not called cache disks: not in a
    title, a description or the node x layer matrix; a text pool keeps its cache disks."""
    video = build_profile(ALL["video-200"])[0].document
    shown = [(p.get("title", ""), p.get("description", "")) for p in panels(video)]
    assert not [t for t, d in shown if re.search(r"[Cc]ache (disk|filesystem)|KV objects|cache process", t + d)]
    assert {
        "Scratch disk read / write bandwidth (bytes/s)",
        "Scratch filesystem size per node (measured, binary TiB)",
    } <= {t for t, _ in shown}
    assert [layer.title for layer in nodata.layers(ALL["video-200"]) if layer.key == "disk"] == [
        "Scratch disk (node_exporter)"
    ]
    text = {p.get("title") for p in panels(build_profile(ALL["long-context-64"])[0].document)}
    assert "Cache disk read / write bandwidth (bytes/s)" in text
