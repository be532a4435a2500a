"""Issue 19: the release plan diffs only the top-level panels that differ; leaving out those equal at the
same position finds exactly the changes the full semantic diff finds (and in the same words)."""

from __future__ import annotations

import copy
from functools import cache

import pytest

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.diff import diff_dashboards
from dashgen.publish import plan
from dashgen.publish.guard import content_keys


@cache
def document() -> dict:
    (built,) = build_profile(load_profiles(["long-context-64"])[0])
    return built.document


def _with_targets(doc: dict) -> list[int]:
    return [i for i, p in enumerate(doc["panels"]) if p.get("targets")]


def change_query(doc: dict) -> None:
    doc["panels"][_with_targets(doc)[2]]["targets"][0]["expr"] += " * 2"


def change_unit(doc: dict) -> None:
    doc["panels"][_with_targets(doc)[3]].setdefault("fieldConfig", {}).setdefault("defaults", {})["unit"] = "bytes"


def remove_panel(doc: dict) -> None:
    del doc["panels"][_with_targets(doc)[4]]


def add_panel(doc: dict) -> None:
    extra = copy.deepcopy(doc["panels"][_with_targets(doc)[1]])
    extra["id"], extra["title"] = 99_999, "added by the test"
    extra["gridPos"] = {**extra["gridPos"], "y": 10_000}
    doc["panels"].append(extra)


def move_panel(doc: dict) -> None:
    grid = doc["panels"][_with_targets(doc)[5]]["gridPos"]
    grid["x"] = 0 if grid["x"] else 24 - grid["w"]  # a real move wherever the panel is


def retitle_dashboard(doc: dict) -> None:
    doc["title"] += " (renamed)"


CHANGES = [change_query, change_unit, remove_panel, add_panel, move_panel, retitle_dashboard]


@pytest.mark.parametrize("mutate", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_plan_diff_of_the_differing_panels_equals_the_full_diff(mutate):
    live, target = document(), copy.deepcopy(document())
    mutate(target)
    full, short = diff_dashboards(live, target), plan.dashboard_diff(live, target)
    assert full.has_semantic_changes
    assert plan._summarise(short) == plan._summarise(full)
    assert content_keys(short, _target(target).panel_keys) == content_keys(full, _target(target).panel_keys)


def _target(doc: dict) -> plan.PublishTarget:
    return plan.PublishTarget("long-context-64", doc["uid"], doc, "sha")


def test_plan_diff_does_not_change_either_document():
    live, target = document(), copy.deepcopy(document())
    change_query(target)
    before = (copy.deepcopy(live), copy.deepcopy(target))
    plan.dashboard_diff(live, target)
    assert (live, target) == before
