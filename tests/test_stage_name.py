"""The per-stage legend label ``stage_name`` (queries.sglang.named_stage), run on a real
VictoriaMetrics: "<pp_rank>" without DP attention, "<pp_rank> dp<dp_rank>" with it, so a legend
``PP{{stage_name}}`` names the DP rank exactly where series carry one (review #25)."""

from __future__ import annotations

import time

from dashgen_queries import sglang as sg
from group_checks import PROFILES

from dashgen.live.datasource import Datasource


def test_stage_name_adds_dp_only_where_a_dp_rank_exists(victoriametrics):
    profile = PROFILES["long-context-64"]
    # mid-hour, never a day boundary: with the sample and the instant query both at exactly 00:00:00 UTC this
    # VictoriaMetrics (1.79) answered nothing, so the test failed only between 14:00 and 15:00 UTC
    at = int(time.time() // 3600) * 3600 - 14 * 3600 + 1800
    base = {
        "__name__": "sglang:num_running_reqs",
        "cluster": "long-context-64",
        "job": "sglang",
        "node": "stage-name-node",
        "engine_type": "unified",
        "tp_rank": "0",
    }
    ds = Datasource(victoriametrics.url)
    ds.import_series(
        [
            {"metric": {**base, "pp_rank": "0"}, "values": [1.0], "timestamps": [at * 1000]},
            {"metric": {**base, "pp_rank": "1", "dp_rank": "2"}, "values": [2.0], "timestamps": [at * 1000]},
        ]
    )
    ds.flush()
    expr = sg.named_stage(profile, sg.per_stage_gauge(profile, "sglang:num_running_reqs"))
    expr = expr.replace("$node", "stage-name-node").replace("$stage", ".+")
    names = {item["metric"]["pp_rank"]: item["metric"][sg.STAGE_NAME] for item in ds.query(expr, at).result}
    assert names == {"0": "0", "1": "1 dp2"}


def test_s27_without_pp_the_legend_names_the_instance_not_stage_0(victoriametrics):
    """pd-128 has no PP: stage_name is "dp<dp_rank>" where a DP rank exists and empty otherwise, and the legend
    has no "PP"."""
    profile = PROFILES["pd-128"]
    # mid-hour, never a day boundary: with the sample and the instant query both at exactly 00:00:00 UTC this
    # VictoriaMetrics (1.79) answered nothing, so the test failed only between 14:00 and 15:00 UTC
    at = int(time.time() // 3600) * 3600 - 14 * 3600 + 1800
    base = {
        "__name__": "sglang:num_running_reqs",
        "cluster": "pd-128",
        "job": "sglang",
        "engine_type": "decode",
        "tp_rank": "0",
        "pp_rank": "0",
    }
    ds = Datasource(victoriametrics.url)
    ds.import_series(
        [
            {"metric": {**base, "node": "no-pp-a"}, "values": [1.0], "timestamps": [at * 1000]},
            {"metric": {**base, "node": "no-pp-b", "dp_rank": "3"}, "values": [2.0], "timestamps": [at * 1000]},
        ]
    )
    ds.flush()
    expr = sg.named_stage(profile, sg.per_stage_gauge(profile, "sglang:num_running_reqs"))
    expr = expr.replace("$node", "no-pp-.")
    names = {item["metric"]["node"]: item["metric"].get(sg.STAGE_NAME, "") for item in ds.query(expr, at).result}
    assert names == {"no-pp-a": "", "no-pp-b": "dp3"}
    assert "PP" not in sg.stage_legend(profile) and "PP" in sg.stage_legend(PROFILES["long-context-64"])
