"""S35 on a real VictoriaMetrics: demo data written in the shapes a profile states (SGLang 0.5.10's names, the
router's ``sglang_`` prefix, a default gateway without ``--engine-metrics`` or an admission limit) leaves no
chart empty, and ``dashgen doctor`` reads the features, prefix and version range the demo wrote, and a flag the
profile states but the store lacks as a difference (``--write`` then states what the store shows)."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner
from dashgen_panels.first_screen import HEALTHY_EMPTY
from stated_profiles import restate, restated
from victoriametrics import program_or_skip, start_or_skip

from dashgen.cli.app import main
from dashgen.demo import recorder
from dashgen.demo.run import import_demo
from dashgen.deployment.profile import load_profile
from dashgen.exporters.table import ENGINE_METRICS, MAX_CONCURRENT
from dashgen.live.datasource import Datasource

STEP = 30.0  # one sample per 30 s (the shipped stores' resolution) keeps the import short
SHIPPED = ("long-context-64", "pd-128", "h20-16", "video-200")
# 1 h windows, 2 h apart: the restated profiles, then every shipped one
HOURS_BEFORE = {"lc-router": 0, "pd-old": 3, **{name: 6 + 3 * index for index, name in enumerate(SHIPPED)}}
# The profiles whose charts validate-queries reads (recorded series included): their rule groups are replayed. The
# shipped profiles are read by doctor alone, which infers from the names of the exporters' own series and reads no
# recorded series (four replays of their groups, ~10 s of the store's and vmalert's CPU, were for nothing).
CHARTED = ("lc-router", "pd-old")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stated")
    profiles = {**restated(folder), **{name: restate(folder, name, name, {}) for name in SHIPPED}}
    server = start_or_skip()
    try:
        anchor = (time.time() // 3600) * 3600 - 3600
        datasource = Datasource(server.url, timeout=120)
        ends = {}
        for name, hours_before in HOURS_BEFORE.items():
            ends[name] = anchor - hours_before * 3600
            import_demo(datasource, profiles[name], "healthy", ends[name], 1.0, STEP)
        datasource.flush()
        program_or_skip(recorder.find_vmalert(), "vmalert not found (Debian package 'victoria-metrics')")
        for name in CHARTED:
            recorder.replay_for_dashboards(server.url, [profiles[name]], ends[name] - 3600, ends[name])
        datasource.flush()
        yield server.url, folder, ends
    finally:
        server.stop()


def run(folder, *args):
    result = CliRunner().invoke(main, ["--profiles-dir", str(folder), *args, "--format", "json"])
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("name", CHARTED)
def test_s35_demo_data_in_the_stated_shape_leaves_no_chart_empty(store, name):
    url, folder, ends = store
    code, answer = run(
        folder, "validate-queries", "--datasource-url", url, "--profile", name, "--at", str(int(ends[name]))
    )
    assert code == 0, answer["errors"]
    report = answer["results"]
    assert report["summary"]["error"] == 0 and report["summary"]["panels"] > 100
    empty = [
        (panel["title"], target["ref_id"], [reason["text"] for reason in target["reasons"]])
        for panel in report["panels"]
        for target in panel["targets"]
        if target["status"] == "empty" and (panel["title"], target["ref_id"]) not in HEALTHY_EMPTY
    ]
    assert not empty, empty


BOTH = [ENGINE_METRICS, MAX_CONCURRENT]


@pytest.mark.parametrize(
    ("name", "prefix", "versions", "gateway"),
    [
        ("lc-router", "sglang_", ">= 0.5.22", ([], BOTH)),
        ("pd-old", "", "< 0.5.16", ([], BOTH)),
        ("long-context-64", "", ">= 0.5.22", (BOTH, [])),
        ("pd-128", "", ">= 0.5.22", (BOTH, [])),
        ("h20-16", "", ">= 0.5.22", None),
        ("video-200", "", ">= 0.5.21", None),  # SGLang Diffusion only: its series are written from 0.5.21
    ],
)
def test_s35_doctor_reports_what_the_demo_wrote(store, name, prefix, versions, gateway):
    url, folder, _ = store
    code, answer = run(folder, "doctor", "--datasource-url", url, "--profile", name, "--window", "24h")
    assert code == 0, answer
    sources = {report["source"]: report for report in answer["results"]["sources"]}
    assert sources["sglang"]["metric_prefix"] == prefix
    assert sources["sglang"]["version_range"] == versions
    if gateway is None:
        assert not sources["gateway"]["present"]
    else:
        assert (sources["gateway"]["features_on"], sources["gateway"]["features_off"]) == gateway
    assert not any(report["differences"] for report in sources.values())


def test_s35_doctor_reports_a_removed_flag_and_write_states_it(store, tmp_path):
    url, _, _ = store
    restate(
        tmp_path,
        "lc-router",
        "long-context-64",
        {"sglang": {"metric_prefix": "sglang_"}, "gateway": {"features": [ENGINE_METRICS]}},
    )
    code, answer = run(tmp_path, "doctor", "--datasource-url", url, "--profile", "lc-router", "--window", "24h")
    assert code == 1
    assert [e["message"] for e in answer["errors"]] == [f"features: {ENGINE_METRICS} is stated but off in the store"]
    code, answer = run(
        tmp_path, "doctor", "--datasource-url", url, "--profile", "lc-router", "--window", "24h", "--write"
    )
    assert code == 0, answer
    assert load_profile(tmp_path / "lc-router.toml").source("gateway").features == ()
