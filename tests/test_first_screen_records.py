"""The first screen's records (group ``dashgen-<profile>-now``, ``queries.now_records``): the not-ok node x layer
cells, the targets up per job, the missing targets and the replica serving states, written by the real evaluator
(vmalert -replay, as ``recorder.replay_for_dashboards`` does for every demo window) on the session's demo store,
each equal point by point to the raw expression its panel ran; the panels read them within the Now row's one
staleness bound, and say so when no evaluator records; the rule file writes exactly what the panels read."""

from __future__ import annotations

import math
import re

import pytest
from dashgen_panels import first_screen
from dashgen_queries import nodata, now, now_records, serving
from dashgen_queries import vmagent as va
from dashgen_queries.promql import agg, in_deployment

from dashgen.build import build_profile
from dashgen.demo import recorder
from dashgen.deployment.profile import load_profiles
from dashgen.deployment.targets import expected_targets
from dashgen.document import iter_panels
from dashgen.live.datasource import Datasource
from dashgen.rules.render import rule_groups_data

PROFILES = {p.name: p for p in load_profiles()}
STEP = nodata.RULE_INTERVAL_SECONDS
PAST_END = 20 * 60  # how far past the five-reasons window's end its targets are followed: gone, then gone for good


def _points(ds: Datasource, expr: str, start: float, end: float) -> dict[tuple, dict[float, float]]:
    result = ds.query_range(expr.replace("$node", ".+"), start, end, STEP).result
    return {
        tuple(sorted((k, v) for k, v in item["metric"].items() if k != "__name__")): {
            float(t): float(v) for t, v in item["values"]
        }
        for item in result
    }


def _recorded(profile, record: now_records.NowRecord) -> str:
    """The record as written at each evaluation (a sample of the step's own instant: no look-back to an earlier
    one once the record stops), with the rule's labels."""
    written = f"last_over_time({in_deployment(profile, record.record)}[{STEP // 2}s])"
    return agg("max", list(record.labels), written)


@pytest.fixture(scope="module")
def five_reasons_past_its_end(victoriametrics, demo_windows):
    """The five-reasons window with the now group replayed on past its end (the session replayed it up to the end):
    every target stops at the end, so each is first gone within the recorded window, then out of it."""
    window = demo_windows[("long-context-64", "five-reasons")]
    if recorder.find_vmalert() is None:
        pytest.skip("vmalert not found (Debian package 'victoria-metrics')")
    recorder.replay(victoriametrics.url, [window.profile], window.end, window.end + PAST_END, groups=(recorder.NOW,))
    Datasource(victoriametrics.url).flush()
    return window


@pytest.mark.parametrize("scenario", ["five-reasons", "healthy"])
def test_each_first_screen_record_equals_its_raw_expression_point_by_point(
    victoriametrics, demo_windows, five_reasons_past_its_end, scenario
):
    """Issue 42: every point of every record equals its raw expression's (same series, same value) at every rule
    evaluation over the last replayed minutes of the window, and for five-reasons over 20 minutes past its end:
    failing targets, a collection-failed node's cells, then every target gone (within the recorded window, then
    out of it) and every node's collector silent. A record over another window (the dashboard's hour, say), of
    another deployment (the healthy window holds a second deployment on the same nodes), or of another
    expression would differ."""
    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    ds = Datasource(victoriametrics.url)
    start = window.end - recorder.REPLAY_SECONDS + STEP
    end = window.end + (PAST_END if scenario == "five-reasons" else 0)
    compared: dict[str, int] = {}
    for record in now_records.records(profile):
        raw = agg("max", list(record.labels), record.rule)  # the labels the panel shows
        got, want = _points(ds, _recorded(profile, record), start, end), _points(ds, raw, start, end)
        assert set(got) == set(want), (record.record, sorted(set(got) ^ set(want))[:5])
        for labels, points in want.items():
            assert set(got[labels]) == set(points), (record.record, labels, sorted(set(got[labels]) ^ set(points)))
            for at, value in points.items():
                assert math.isclose(got[labels][at], value, rel_tol=1e-9), (record.record, labels, at)
                compared[record.record] = compared.get(record.record, 0) + 1
    assert set(compared) >= {now_records.TARGETS_UP, now_records.SERVING}, compared
    if scenario == "five-reasons":  # the lists were not empty: a drifted record had something to differ on
        assert set(compared) == {r.record for r in now_records.records(profile)}, compared
        missing = _points(ds, _recorded(profile, now_records.record(profile, now_records.MISSING)), start, end)
        states = {value for points in missing.values() for value in points.values()}
        assert states == {va.FAILING, va.GONE}, states
        # listed while the last sample is within the recorded window, then no longer: a record over the dashboard's
        # hour would list them to the end, one over 5 minutes stop 10 minutes early
        last = max(at for points in missing.values() for at in points) - window.end
        assert now_records.MISSING_WINDOW_SECONDS - 2 * STEP <= last <= now_records.MISSING_WINDOW_SECONDS, last


def _instant(ds: Datasource, expr: str, at: float) -> list[dict]:
    return ds.query(expr.replace("$node", ".+"), at).result


def test_the_panels_read_the_records_and_say_so_when_no_evaluator_records(victoriametrics, demo_windows):
    """At the healthy window's end the records are fresh: every expected target up, 0 missing per source, every
    replica in a state, no cell listed. Ten minutes later nothing was recorded for longer than the one staleness bound
    (the evaluator stopped with the window): each recorded list shows its one evaluator-silent line and the counts
    no value (the panels' no-value text says why), never 'none missing' or a count of 0."""
    window = demo_windows[("long-context-64", "healthy")]
    profile = window.profile
    ds = Datasource(victoriametrics.url)
    panels = {p.title: p for p in first_screen.build(profile, window.topology).panels}
    exprs = {title: [t.expr for t in panel.targets] for title, panel in panels.items()}
    matrix, (missing,), (serving_state,) = (
        exprs[first_screen.MATRIX_TITLE],
        exprs["Missing targets"],
        exprs["Replica serving state"],
    )
    up, expected = exprs["Targets up / expected"]
    by_job = exprs["Targets per source: up, expected, missing"]
    fresh = window.end
    assert [s["value"][1] for s in _instant(ds, up, fresh)] == [s["value"][1] for s in _instant(ds, expected, fresh)]
    assert _instant(ds, missing, fresh) == [] and _instant(ds, matrix[0], fresh) == []
    # nothing missing reads 0 for each expected job (no cell left to the panel's evaluator-silent text)
    missing_by_job = {s["metric"]["job"]: float(s["value"][1]) for s in _instant(ds, by_job[2], fresh)}
    assert missing_by_job == {entry.job: 0.0 for entry in expected_targets(profile)}, missing_by_job
    assert len(_instant(ds, by_job[0], fresh)) >= 3
    states = {int(s["value"][1]) for s in _instant(ds, serving_state, fresh)}
    assert states and states <= set(serving.STATES), states
    silent_at = window.end + 600
    assert first_screen.staleness_seconds(profile) < 600
    for expr in (up, expected, *by_job):
        assert _instant(ds, expr, silent_at) == [], expr[:80]
    for expr, labels in (
        (matrix[0], {"node": now.EVALUATOR_NODE, nodata.LAYER_LABEL: now.EVALUATOR_LAYER}),
        (missing, {"node": now.EVALUATOR_NODE, "job": now.EVALUATOR_LAYER}),
        (serving_state, {"replica": now.EVALUATOR_LAYER}),
    ):
        (line,) = _instant(ds, expr, silent_at)
        assert line["metric"] == labels and int(line["value"][1]) == now.EVALUATOR_SILENT, line
    for title in (first_screen.MATRIX_TITLE, "Missing targets", "Replica serving state"):
        texts = {o["text"] for m in panels[title].mappings if m["type"] == "value" for o in m["options"].values()}
        assert now.EVALUATOR_SILENT_TEXT in texts, title
    for title in ("Targets up / expected", "Targets per source: up, expected, missing"):
        assert panels[title].no_value == serving.EVALUATOR_SILENT_TEXT, title


RECORD = re.compile(r"[a-z]+:dashgen_(?:layer_not_ok|targets_up|target_missing|serving_state):[a-z]+")


@pytest.mark.parametrize("profile", list(PROFILES.values()), ids=lambda p: p.name)
def test_the_now_group_records_exactly_what_the_first_screen_reads(profile):
    """The group writes every record a built dashboard reads and no other, each rule without a Grafana variable
    (every node: the panel narrows by its Node variable), Missing targets over the fixed window its panel names,
    and the panels read each within the Now row's one staleness bound."""
    groups = {g["name"]: g for g in rule_groups_data(profile)}
    group = groups[f"dashgen-{profile.name}-{now_records.GROUP}"]
    written = set()
    for rule in group["rules"]:
        assert "$" not in rule["expr"].replace("$1", ""), rule
        written.add(rule["record"])
    missing = now_records.record(profile, now_records.MISSING).rule
    assert f"[{now_records.MISSING_WINDOW_SECONDS}s]" in missing and "$__range" not in missing
    read = set()
    bound = f"[{first_screen.staleness_seconds(profile):g}s]"
    for built in build_profile(profile):
        for site in iter_panels(built.document):
            for target in site.raw.get("targets") or []:
                names = RECORD.findall(target.get("expr", ""))
                assert all(f"{name}{{" in target["expr"] for name in names)
                if names:
                    assert bound in target["expr"], (site.raw.get("title"), target["expr"][:120])
                read.update(names)
            if site.raw.get("title") == "Missing targets":
                text = site.raw.get("description", "")
                assert f"{now_records.MISSING_WINDOW_SECONDS // 60} minutes" in text, text
    assert read == written, (sorted(read ^ written), profile.name)
