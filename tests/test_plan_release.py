"""The release planner as the unit under test (issue 31 item 2): ``plan_release`` over live state × build ×
approvals (and target folders), without HTTP.

Each case names what Grafana stores (and what the ledger recorded of it), what the build changes and what was
approved, and checks the action, the refusal keys in plan order and the approvals used; the expectation is written
as the rules say it, not computed by the planner's code. The CLI runs against the stand-in keep only a smoke set per
Grafana version (the export, the writes, the files); what they used to check about decisions is checked here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from diff_documents import generated, panel
from standin.ui_save import ui_normalise

from dashgen.publish.actions import Action, OutcomeKind
from dashgen.publish.approvals import Approvals, remedy
from dashgen.publish.execute import _no_write
from dashgen.publish.ledger import LedgerRecord
from dashgen.publish.plan import (
    LiveState,
    Plan,
    PublishTarget,
    plan_release,
    unmatched_approvals,
    with_query_problems,
)
from dashgen.publish.report import plan_dict, render_plan
from dashgen.render.canonical import content_sha

UID = "dg-h20-16-cluster"
PANEL_KEYS = {1: "slo.running"}  # panel 1 has a stable key; panels 2 and 3 do not (panel:<id>)


def base() -> dict[str, Any]:
    """The dashboard as dashgen last released it (three panels, $datasource and $node)."""
    return {**generated(), "uid": UID}


def target_of(document: dict[str, Any], profile: str = "h20-16") -> PublishTarget:
    return PublishTarget(profile, document["uid"], document, content_sha(document), PANEL_KEYS)


def record(live: LiveState, **fields: Any) -> LedgerRecord:
    """The ledger line of the release that left ``live`` in Grafana, read back as the ledger reads it."""
    line = {
        "uid": live.uid,
        "outcome": "published",
        "stored_sha": live.sha,
        "grafana_version": live.version,
        "time": "2026-12-06T00:00:00Z",
        **fields,
    }
    read = LedgerRecord.from_json(line)
    assert read is not None, line
    return read


# ---- the build: what it changes against the released dashboard, and the approval keys that change needs


def _first_target(doc: dict[str, Any], panel: int = 0) -> dict[str, Any]:
    return doc["panels"][panel]["targets"][0]


def _variable(doc: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in doc["templating"]["list"] if v["name"] == "node")


BUILDS: dict[str, tuple[Callable[[dict[str, Any]], Any], list[str]]] = {
    "same": (lambda d: None, []),
    "retitled": (lambda d: d.update(title="Cache evidence, renamed"), []),
    "legend-renamed": (lambda d: _first_target(d).update(legendFormat="{{node}} renamed"), []),
    "panel-added": (lambda d: d["panels"].append(panel(4, "Added", "sum(up)", y=24)), []),
    "query-changed": (lambda d: _first_target(d).update(expr="sum(sglang:num_running_reqs)"), ["slo.running"]),
    "unkeyed-query-changed": (lambda d: _first_target(d, 1).update(expr="sum(sglang:num_queue_reqs)"), ["panel:2"]),
    "variable-changed": (
        lambda d: _variable(d).update(query="label_values(sglang:num_running_reqs, node)"),
        ["var:node"],
    ),
    "panel-removed": (lambda d: d["panels"].pop(2), ["remove:panel:3"]),
    "variable-removed": (
        lambda d: d["templating"].update(list=[v for v in d["templating"]["list"] if v["name"] != "node"]),
        ["remove:var:node"],
    ),
}


def build(name: str) -> dict[str, Any]:
    document = base()
    BUILDS[name][0](document)
    return document


# ---- what Grafana stores, and the ledger's word on it


@dataclass(frozen=True)
class World:
    live: LiveState | None
    ledger: list[dict[str, Any]]
    recorded: dict[str, dict[str, Any]]


def absent(target: PublishTarget) -> World:
    return World(None, [], {})


def released(target: PublishTarget) -> World:
    live = LiveState(UID, 3, None, base())
    return World(live, [record(live)], {})


def edited(target: PublishTarget) -> World:
    """A person changed the description in Grafana after the release."""
    last = LiveState(UID, 3, None, base())
    live = LiveState(UID, 4, None, {**base(), "description": "a person's note"})
    return World(live, [record(last)], {UID: base()})


def never_released(target: PublishTarget) -> World:
    """Grafana holds the uid, the ledger has no release of it on this instance."""
    return World(LiveState(UID, 3, None, base()), [], {})


def ui_saved(target: PublishTarget) -> World:
    """Opened and saved in the UI without an edit: only what the UI adds on save differs (the stand-in's model)."""
    saved = ui_normalise(
        base(),
        grafana_version="12.0.0",
        latest_schema_version=41,
        datasources={"prometheus": {"type": "prometheus", "uid": "prom"}},
        default_datasource={"type": "prometheus", "uid": "prom"},
        drop_empty_tags=False,
    )
    last = LiveState(UID, 3, None, base())
    return World(LiveState(UID, 4, None, saved), [record(last)], {UID: base()})


def stored_v2(target: PublishTarget) -> World:
    """A person's save in a Grafana 13 UI converted it to v2 (tabs)."""
    live = LiveState(
        UID, 4, None, {}, stored_version="v2beta1", stored_v2=True, v2_losses=("tabs (they would become rows)",)
    )
    return World(live, [record(LiveState(UID, 3, None, base()))], {})


def provisioned(target: PublishTarget) -> World:
    """Released by dashgen once, now provisioned from a file without UI updates (Grafana refuses API saves)."""
    live = LiveState(UID, 3, None, base(), provisioned=True)
    return World(live, [record(live)], {})


def rewritten(target: PublishTarget) -> World:
    """The last release of this very build failed verification: Grafana stored it with another refresh."""
    live = LiveState(UID, 3, None, {**target.document, "refresh": "5m"})
    failed = record(live, outcome="verify-failed", build_sha=target.build_sha, message='$.refresh: sent "1m"')
    return World(live, [failed], {})


LIVE: dict[str, Callable[[PublishTarget], World]] = {
    f.__name__.replace("_", "-"): f
    for f in (absent, released, edited, never_released, ui_saved, stored_v2, provisioned, rewritten)
}


def refusals_without_approval(live: str, build_name: str) -> tuple[Action, list[str]]:
    """The rules, as the README and the guard's docstring say them: the unapproved action and refusal keys."""
    content = BUILDS[build_name][1]
    same = build_name == "same"
    if live == "absent":
        return Action.CREATE, []
    if live == "stored-v2":  # never diffed, not even against the same build
        return Action.UPDATE, [f"overwrite-v2:{UID}"]
    if live == "rewritten":
        return Action.DIVERGED, []
    if same and live in ("released", "never-released", "provisioned"):
        return Action.UNCHANGED, []
    overwrite = [f"overwrite-live:{UID}"] if live in ("edited", "never-released") else []
    first = [f"provisioned:{UID}"] if live == "provisioned" else []
    return Action.UPDATE, first + overwrite + content


APPROVALS: dict[str, tuple[Approvals, Callable[[str], bool]]] = {
    "none": (Approvals(), lambda key: False),
    "exact": (
        Approvals(
            tuple(k for _, keys in BUILDS.values() for k in keys) + (f"overwrite-live:{UID}",),
            overwrite_v2=(UID,),
        ),
        lambda key: not key.startswith("provisioned:"),
    ),
    "scoped-and-flag-globs": (
        Approvals(
            tuple(f"{UID}/{k}" for _, keys in BUILDS.values() for k in keys),
            overwrite_live=("dg-h20-*",),
            overwrite_v2=("*",),
        ),
        lambda key: not key.startswith("provisioned:"),
    ),
    # a glob of --approve approves every content change, never a person's work, never a provisioned dashboard
    "approve-star": (Approvals(("*", "*/*")), lambda key: not key.startswith(("overwrite-", "provisioned:"))),
    "another-dashboard-only": (Approvals(("dg-pd-*/*", f"dg-pd-128-cluster/overwrite-live:{UID}")), lambda key: False),
}


@pytest.mark.parametrize("approved", list(APPROVALS))
@pytest.mark.parametrize("build_name", list(BUILDS))
@pytest.mark.parametrize("live_name", list(LIVE))
def test_the_plan_refuses_exactly_what_is_not_approved(live_name, build_name, approved):
    target = target_of(build(build_name))
    world = LIVE[live_name](target)
    approvals, grants = APPROVALS[approved]
    (item,) = plan_release([target], {UID: world.live}, world.ledger, approvals, recorded=world.recorded).dashboards
    action, keys = refusals_without_approval(live_name, build_name)
    refused = [k for k in keys if not grants(k)]
    assert [r.key for r in item.refusals] == refused
    assert list(item.approvals_used) == [k for k in keys if grants(k)]
    assert item.action == (Action.REFUSED if refused else action)
    assert item.writes == (item.action in (Action.CREATE, Action.UPDATE, Action.MOVE))
    assert all(r.reason for r in item.refusals)


def test_the_grid_covers_every_guard():
    keys = {k.split(":")[0] for live in LIVE for b in BUILDS for k in refusals_without_approval(live, b)[1]}
    assert keys == {"overwrite-v2", "overwrite-live", "provisioned", "slo.running", "panel", "var", "remove"}
    assert {refusals_without_approval(live, "same")[0] for live in LIVE} == {
        Action.CREATE,
        Action.UPDATE,
        Action.DIVERGED,
        Action.UNCHANGED,
    }


def plan_one(
    live: LiveState | None,
    document: dict[str, Any] | None = None,
    ledger: list[dict[str, Any]] | None = None,
    approvals: Approvals | None = None,
    **options: Any,
) -> Plan:
    target = target_of(document or base())
    if ledger is None:
        ledger = [record(live)] if live is not None else []
    return plan_release([target], {UID: live}, ledger, approvals, **options)


# ---- what the plan says: reasons, summaries, queries to validate


def test_a_legend_rename_needs_no_approval_and_an_expression_change_does():
    live = LiveState(UID, 3, None, base())
    (renamed,) = plan_one(live, build("legend-renamed")).dashboards
    assert renamed.action == Action.UPDATE and renamed.approvals_used == () and renamed.new_queries == ()
    (changed,) = plan_one(live, build("query-changed")).dashboards
    (refusal,) = changed.refusals
    assert refusal.reason == 'queries of existing panel "Running requests" change'
    assert [(q.panel, q.expr) for q in changed.new_queries] == [("Running requests", "sum(sglang:num_running_reqs)")]


def test_a_person_s_edit_is_refused_with_what_it_overwrites_and_the_flag_that_allows_it():
    (item,) = plan_one(edited(target_of(base())).live, ledger=edited(target_of(base())).ledger).dashboards
    (refusal,) = item.refusals
    assert refusal.reason.startswith("edited in Grafana since the last release (live v4 SHA")
    assert "publishing overwrites the edit (a backup is kept)" in refusal.reason and item.live_edited
    assert f"REFUSED: {refusal.reason} -> --overwrite-live {UID}" in render_plan(Plan((item,), None))
    (never,) = plan_one(LiveState(UID, 3, None, base()), build("retitled"), ledger=[]).dashboards
    assert "the ledger has no release of it on this instance" in never.refusals[0].reason


def test_a_ui_save_without_an_edit_is_not_taken_for_a_person_s_edit():
    world = ui_saved(target_of(base()))
    assert world.live is not None and world.live.sha != content_sha(base())  # the UI did add something
    (item,) = plan_one(world.live, ledger=world.ledger, recorded=world.recorded).dashboards
    assert item.action == Action.UPDATE and item.refusals == () and not item.live_edited
    assert (
        item.summary[0]
        == "live v4 differs from the last release only by what a Grafana UI save adds (no semantic edit)"
    )
    (without_copy,) = plan_one(world.live, ledger=world.ledger).dashboards  # no read-back copy: cannot tell
    assert [r.key for r in without_copy.refusals] == [f"overwrite-live:{UID}"]


def test_a_v2_dashboard_is_refused_naming_what_overwriting_it_loses():
    (item,) = plan_one(stored_v2(target_of(base())).live).dashboards
    (refusal,) = item.refusals
    assert "v2 schema (v2beta1)" in refusal.reason and "tabs (they would become rows)" in refusal.reason
    assert remedy(refusal.key) == f"--overwrite-v2 {UID}" and item.live_edited
    assert item.summary[0].startswith("stored as v2beta1; not diffed")


def test_a_diverged_build_says_it_cannot_converge_and_never_asks_to_overwrite_a_person_s_edit():
    target = target_of(base())
    world = rewritten(target)
    plan = plan_release([target], {UID: world.live}, world.ledger, Approvals(overwrite_live=("*",)))
    text = render_plan(plan)
    assert plan.dashboards[0].action == Action.DIVERGED and plan.blocked and plan.writes == ()
    assert "DIVERGED" in text and "cannot converge" in text and '$.refresh: sent "1m"' in text
    assert "edited in Grafana" not in text and "--overwrite-live" not in text
    fixed = target_of({**base(), "refresh": "5m"})  # the build now says what the server stores: converged
    (item,) = plan_release([fixed], {UID: world.live}, world.ledger).dashboards
    assert item.action == Action.UNCHANGED


def test_a_provisioned_dashboard_is_refused_and_no_flag_approves_it():
    live = LiveState(UID, 3, None, base(), provisioned=True)
    everything = Approvals(("*", "*/*", f"provisioned:{UID}", f"{UID}/provisioned:{UID}"), ("*",), ("*",))
    plan = plan_one(live, build("retitled"), approvals=everything)
    (item,) = plan.dashboards
    assert item.action == Action.REFUSED and [r.key for r in item.refusals] == [f"provisioned:{UID}"]
    assert "400 Cannot save provisioned dashboard" in item.refusals[0].reason
    assert not everything.grants(f"provisioned:{UID}", UID)
    assert f"-> {remedy(f'provisioned:{UID}')}" in render_plan(plan) and "no flag approves it" in render_plan(plan)
    assert plan_dict(plan)["dashboards"][0]["refusals"][0]["approve_with"] == f"provisioned:{UID}"
    assert unmatched_approvals(plan, everything) == [  # not even its own key: say so
        f"--approve {pattern} matched nothing in this plan" for pattern in everything.patterns
    ]
    (moving,) = plan_one(live, approvals=Approvals(("move:llm",)), folder_uid="llm", folders={"llm": True}).dashboards
    assert [r.key for r in moving.refusals] == [f"provisioned:{UID}"]  # a move is a save too
    (same,) = plan_one(live).dashboards
    assert same.action == Action.UNCHANGED and same.refusals == ()  # nothing to write: nothing to refuse


# ---- the target folder


FOLDER_CASES = [
    # (live folder or None for a new dashboard, --folder-uid, folders that exist, approvals, action, refused, used)
    (None, "llm", {"llm": False}, (), Action.REFUSED, ["create-folder:llm"], []),
    (None, "llm", {"llm": False}, ("create-folder:llm",), Action.CREATE, [], ["create-folder:llm"]),
    ("", "llm", {"llm": True}, (), Action.REFUSED, ["move:llm"], []),
    ("", "llm", {"llm": True}, (f"{UID}/move:llm",), Action.MOVE, [], ["move:llm"]),
    ("", "llm", {"llm": True}, ("dg-pd-*/move:*",), Action.REFUSED, ["move:llm"], []),
    ("llm", "llm", {"llm": True}, (), Action.UNCHANGED, [], []),
    ("team", None, {}, (), Action.UNCHANGED, [], []),  # without --folder-uid a dashboard stays where it is
    ("team", "", {}, (), Action.REFUSED, ["move:root"], []),
    ("team", "", {}, ("move:root",), Action.MOVE, [], ["move:root"]),
    ("", "llm", {"llm": False}, ("move:llm", "create-folder:llm"), Action.MOVE, [], ["create-folder:llm", "move:llm"]),
]


@pytest.mark.parametrize(
    ("live_folder", "folder_uid", "folders", "patterns", "action", "refused", "used"), FOLDER_CASES
)
def test_the_target_folder_is_part_of_the_plan(live_folder, folder_uid, folders, patterns, action, refused, used):
    live = None if live_folder is None else LiveState(UID, 3, live_folder or None, base())
    plan = plan_one(live, approvals=Approvals(patterns), folder_uid=folder_uid, folders=folders, folder_title="LLM")
    (item,) = plan.dashboards
    assert (item.action, [r.key for r in item.refusals], list(item.approvals_used)) == (action, refused, used)
    expected_to = (folder_uid or None) if folder_uid is not None else (live_folder or None)
    assert (item.folder_from, item.folder_to) == ((live_folder or None), expected_to)
    moving = live is not None and (live_folder or None) != expected_to
    assert item.folder_action == ("new" if live is None else "move" if moving else "unchanged")
    creates = [f.uid for f in plan.folders_to_create]
    assert creates == (["llm"] if "create-folder:llm" in used and not plan.blocked else [])


MISSING = "missing"  # a module constant: the panel index links a test to a panel key its body spells


def test_folder_decisions_read_as_the_plan_prints_them():
    missing = plan_one(None, folder_uid="no-such-folder", folders={"no-such-folder": False})
    assert "folder 'no-such-folder': does not exist -> --approve create-folder:no-such-folder" in render_plan(missing)
    assert plan_dict(missing)["folders"] == [{"uid": "no-such-folder", "action": MISSING, "title": "no-such-folder"}]
    created = plan_one(
        None, approvals=Approvals(("create-folder:llm",)), folder_uid="llm", folders={"llm": False}, folder_title="LLM"
    )
    assert plan_dict(created)["folders"] == [{"uid": "llm", "action": "create", "title": "LLM"}]
    assert "folder 'llm' will be created (title 'LLM')" in created.dashboards[0].summary
    moved = plan_one(
        LiveState(UID, 3, None, base()), approvals=Approvals(("move:llm",)), folder_uid="llm", folders={"llm": True}
    )
    text = render_plan(moved)
    assert "MOVE" in text and "move from folder (root) to 'llm'" in text and "folder llm <- (root)" in text
    assert plan_dict(moved)["dashboards"][0]["folder"] == {"from": None, "to": "llm", "action": "move"}


# ---- the plan as a whole: one refusal holds every write unless --partial


def two_dashboards(partial: bool) -> Plan:
    edited_world = edited(target_of(base()))
    other = {**base(), "uid": "dg-pd-128-cluster"}
    other_live = LiveState("dg-pd-128-cluster", 2, None, other)
    retitled = target_of({**other, "title": "PD pool, retitled"}, "pd-128")
    assert edited_world.live is not None
    return plan_release(
        [target_of(base()), retitled],
        {UID: edited_world.live, "dg-pd-128-cluster": other_live},
        [*edited_world.ledger, record(other_live)],
        partial=partial,
    )


def test_a_refusal_of_one_dashboard_holds_every_write():
    plan = two_dashboards(partial=False)
    assert [d.action for d in plan.dashboards] == [Action.REFUSED, Action.UPDATE]
    assert plan.blocked and plan.writes == ()
    assert "nothing will be written: every refusal must be approved first" in render_plan(plan)
    outcomes = [_no_write(d) for d in plan.dashboards]  # what a blocked release records, nothing sent
    assert [o.outcome for o in outcomes] == [OutcomeKind.REFUSED, OutcomeKind.HELD]
    assert f"(approve: overwrite-live:{UID})" in outcomes[0].detail and not any(o.ok for o in outcomes)


def test_partial_writes_what_is_not_refused():
    plan = two_dashboards(partial=True)
    assert not plan.blocked and [d.target.uid for d in plan.writes] == ["dg-pd-128-cluster"]
    assert "--partial: the refused dashboards are skipped, the others are published" in render_plan(plan)
    assert plan_dict(plan)["blocked"] is False and plan_dict(plan)["partial"] is True


def test_an_unchanged_dashboard_is_recorded_unchanged_without_a_write():
    (item,) = plan_one(LiveState(UID, 3, None, base())).dashboards
    outcome = _no_write(item)
    assert (outcome.outcome, outcome.stored_sha, outcome.ok) == (OutcomeKind.UNCHANGED, content_sha(base()), True)


def test_a_query_the_data_source_rejects_makes_its_dashboard_invalid():
    live = LiveState(UID, 3, None, base())
    approved = plan_one(live, build("query-changed"), approvals=Approvals(("slo.running",)))
    problem = 'panel "Running requests" query A: the data source answered 422: bad_data'
    plan = with_query_problems(approved, {UID: [problem]})
    (item,) = plan.dashboards
    assert item.action == Action.INVALID and item.problems == (problem,) and plan.blocked
    assert f"INVALID: {problem}" in render_plan(plan) and _no_write(item).outcome == OutcomeKind.INVALID_QUERIES
    unchanged = with_query_problems(plan_one(live), {UID: [problem]})
    assert unchanged.dashboards[0].action == Action.UNCHANGED  # nothing written, nothing to refuse


def test_an_approval_that_matches_nothing_is_named():
    live = LiveState(UID, 3, None, base())
    approvals = Approvals(("slo.*", "dg-pd-*/var:*", "dg-h20-*/var:*"))
    plan = plan_one(live, build("variable-changed"), approvals=approvals)
    assert plan.dashboards[0].approvals_used == ("var:node",)
    assert unmatched_approvals(plan, approvals) == [
        "--approve slo.* matched nothing in this plan",
        "--approve dg-pd-*/var:* matched nothing in this plan",
    ]


def test_planning_changes_neither_the_build_nor_the_live_copy():
    live_document, document = base(), build("query-changed")
    before = copy.deepcopy((live_document, document))
    plan_one(LiveState(UID, 3, None, live_document), document)
    assert (live_document, document) == before
