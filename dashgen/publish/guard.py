"""Every refusal a release plan can make, in one place (pure).

A guard looks at one fact of the plan — the target folder, what Grafana stores now, the ledger's last release,
the content diff, the query validation — and returns a :class:`Verdict`: the refusals it makes (each with the key
that approves it, ``dashgen.publish.approvals``), the approvals it used, and the lines it adds to the plan's
summary. ``dashgen.publish.plan`` only composes them into an action.

The refusals, with their keys:

* ``create-folder:<uid>`` — the target folder does not exist (:func:`folder_states`, :func:`folder_verdict`);
* ``move:<folder uid|root>`` — an existing dashboard would change folder (:func:`folder_verdict`);
* ``overwrite-v2:<uid>`` — Grafana stores it in the v2 schema: a person saved it in a Grafana 13 UI
  (:func:`v2_verdict`);
* ``overwrite-live:<uid>`` — edited in Grafana since the last release, or never released here
  (:func:`live_edit`, :func:`overwrite_live_verdict`);
* ``<panel key>`` / ``var:<name>`` / ``remove:panel:<id>`` / ``remove:var:<name>`` — content changes
  (:func:`content_keys`, :func:`content_verdict`);
* ``provisioned:<uid>`` — provisioned from a file or Git Sync without UI edits: Grafana refuses every API save
  of it (``400 Cannot save provisioned dashboard``), so no flag approves it (:func:`provisioned_verdict`).

And two that are not approvals but block the dashboard all the same: ``diverged`` (:func:`diverged_reason`:
Grafana rewrote this very build, pushing it again cannot converge) and ``invalid`` (:func:`action_with_problems`:
the data source rejects a new or changed query).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dashgen.diff import DashboardDiff, diff_dashboards, query_changes
from dashgen.diff.plan_view import panel_key
from dashgen.publish.actions import WRITING, Action, OutcomeKind
from dashgen.publish.approvals import PROVISIONED_PREFIX, Approvals
from dashgen.publish.ledger import LedgerRecord

FolderAction = Literal["exists", "create", "missing"]


@dataclass(frozen=True)
class Refusal:
    key: str
    reason: str


@dataclass(frozen=True)
class FolderState:
    """A target folder: ``exists``, or to be created (approved), or missing (refused)."""

    uid: str
    action: FolderAction
    title: str = ""


@dataclass(frozen=True)
class Verdict:
    """What one guard says about one dashboard: its refusals, the approvals it used, its summary lines."""

    refusals: tuple[Refusal, ...] = ()
    used: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __add__(self, other: Verdict) -> Verdict:
        return Verdict(self.refusals + other.refusals, self.used + other.used, self.notes + other.notes)


def require(key: str, reason: str, uid: str, approvals: Approvals, note: str = "") -> Verdict:
    """Approved: the key is used (and ``note`` joins the summary); otherwise a refusal with ``reason``."""
    if approvals.grants(key, uid):
        return Verdict(used=(key,), notes=(note,) if note else ())
    return Verdict(refusals=(Refusal(key, reason),))


def folder_name(uid: str | None) -> str:
    return repr(uid) if uid else "(root)"


def folder_states(folders: Mapping[str, bool], approvals: Approvals, title: str = "") -> dict[str, FolderState]:
    """Each non-root target folder (uid -> exists): exists, to be created (``create-folder:<uid>`` approved), or
    missing."""
    states = {}
    for uid, exists in sorted(folders.items()):
        action: FolderAction = (
            "exists" if exists else ("create" if approvals.grants(f"create-folder:{uid}", "") else "missing")
        )
        states[uid] = FolderState(uid, action, title or uid)
    return states


def folder_verdict(
    uid: str,
    live_folder: str | None,
    exists: bool,
    folder_to: str | None,
    states: Mapping[str, FolderState],
    approvals: Approvals,
) -> Verdict:
    """The target folder must exist (or be approved for creation); an existing dashboard (``exists``) moving from
    ``live_folder`` to another folder needs ``move:<folder>``."""
    verdict = Verdict()
    state = states.get(folder_to) if folder_to else None
    if state is not None and state.action == "missing":
        verdict += Verdict((Refusal(f"create-folder:{folder_to}", f"target folder {folder_to!r} does not exist"),))
    elif state is not None and state.action == "create":
        note = f"folder {folder_to!r} will be created (title {state.title!r})"
        verdict += Verdict(used=(f"create-folder:{folder_to}",), notes=(note,))
    if exists and (live_folder or None) != folder_to:
        what = f"move from folder {folder_name(live_folder)} to {folder_name(folder_to)}"
        verdict += require(f"move:{folder_to or 'root'}", what, uid, approvals, note=what)
    return verdict


def v2_verdict(uid: str, stored_version: str, losses: tuple[str, ...], approvals: Approvals) -> Verdict:
    """A dashboard stored as v2 by a person's save is overwritten only with ``--overwrite-v2``."""
    lost = "; ".join(losses) or "its v2 layout"
    reason = (
        f"Grafana stores this dashboard in the v2 schema ({stored_version}): a person saved it in a "
        f"Grafana 13 UI. Publishing replaces it by dashgen's v1 JSON and loses: {lost} (the v2 JSON is "
        "kept as the backup)"
    )
    return require(f"overwrite-v2:{uid}", reason, uid, approvals)


def schema_change_verdict(uid: str, stored_version: str, api_version: str, approvals: Approvals) -> Verdict:
    """A v1-stored dashboard a v2 build would turn into v2: a change the plan names, approved by
    ``schema-v2:<uid>``."""
    return require(
        f"schema-v2:{uid}",
        f"Grafana stores this dashboard as v1 ({stored_version}); this build writes it as {api_version} "
        "(tabs, rows and grids instead of v1 rows): the stored copy is backed up, and a v1 build over it later "
        "needs --overwrite-v2",
        uid,
        approvals,
    )


def provisioned_verdict(uid: str, provisioned: bool) -> Verdict:
    """A provisioned dashboard cannot be saved through the API at all: refused, and no flag approves it."""
    if not provisioned:
        return Verdict()
    reason = (
        "Grafana provisions this dashboard (from a file or Git Sync, without UI updates) and refuses every API "
        "save of it (400 Cannot save provisioned dashboard); publishing would fail"
    )
    return Verdict((Refusal(f"{PROVISIONED_PREFIX}{uid}", reason),))


def diverged_reason(last: LedgerRecord | None, live_sha: str, build_sha: str) -> str | None:
    """Why pushing the build again cannot converge: the last release of this very build failed verification and
    Grafana still stores what it rewrote it to. None when that is not the case."""
    if (
        last is None
        or last.outcome != OutcomeKind.VERIFY_FAILED
        or last.stored_sha != live_sha
        or last.build_sha != build_sha
    ):
        return None
    return (
        f"Grafana stores this very build rewritten (verify failed in the release of {last.time}: "
        f"{str(last.message or '')[:300]}); pushing it again cannot converge: change the "
        "build so that Grafana keeps it as sent"
    )


def live_edit(
    live_document: dict[str, Any],
    live_sha: str,
    live_version: int,
    last: LedgerRecord | None,
    recorded: dict[str, Any] | None,
) -> tuple[bool, str]:
    """Whether the live copy holds work the last release did not write, and a summary line when it only looks so.

    Edited: the ledger has no release of it here, or Grafana stores another SHA than it recorded — unless the
    ``recorded`` read-back copy of that release differs from the live one only by what a UI save adds."""
    if last is not None and last.stored_sha == live_sha:
        return False, ""
    if last is not None and recorded is not None and not diff_dashboards(recorded, live_document).has_semantic_changes:
        return False, (
            f"live v{live_version} differs from the last release only by what a Grafana UI save adds (no semantic edit)"
        )
    return True, ""


def overwrite_live_verdict(
    uid: str, live_sha: str, live_version: int, last: LedgerRecord | None, approvals: Approvals
) -> Verdict:
    """Overwriting a person's edit (or a dashboard dashgen never released here) needs ``--overwrite-live``."""
    why = (
        "Grafana holds this dashboard but the ledger has no release of it on this instance: it was not "
        "published by dashgen here; publishing overwrites it (a backup is kept)"
        if last is None
        else f"edited in Grafana since the last release (live v{live_version} SHA {live_sha[:12]} != recorded "
        f"{str(last.stored_sha)[:12]} of v{last.grafana_version}); publishing overwrites "
        "the edit (a backup is kept)"
    )
    return require(f"overwrite-live:{uid}", why, uid, approvals)


def content_keys(diff: DashboardDiff, panel_keys: Mapping[int, str]) -> list[tuple[str, str]]:
    """``(key, reason)`` for every change of ``diff`` (live → build) that needs an approval, in plan order: an
    existing panel whose queries change (a legend rename does not), an existing variable whose definition changes,
    and what is live but not in the build (the clean-up list)."""
    keys = [
        (panel_key(c.id, panel_keys), f'queries of existing panel "{c.title}" change')
        for c in diff.changed_panels
        if query_changes(c)
    ]
    keys += [
        (f"var:{v.name}", f"definition of existing variable ${v.name} changes")
        for v in diff.changed_variables
        if v.definition
    ]
    keys += [
        (f"remove:panel:{p.id}", f'panel "{p.title}" is live but not in the build (clean-up)')
        for p in diff.removed_panels
    ]
    keys += [
        (f"remove:var:{name}", f"variable ${name} is live but not in the build (clean-up)")
        for name in diff.removed_variables
    ]
    return keys


def content_verdict(uid: str, diff: DashboardDiff, panel_keys: Mapping[int, str], approvals: Approvals) -> Verdict:
    """Each content change that needs an approval: used when approved, refused otherwise."""
    verdict = Verdict()
    for key, reason in content_keys(diff, panel_keys):
        verdict += require(key, reason, uid, approvals)
    return verdict


def action_of(verdict: Verdict, otherwise: Action) -> Action:
    """Refused when any guard refused, else what the plan would do."""
    return Action.REFUSED if verdict.refusals else otherwise


def action_with_problems(action: Action, problems: list[str] | tuple[str, ...]) -> Action:
    """A dashboard that would be written while the data source rejects one of its new or changed queries is
    ``invalid``; one that is not written keeps its action."""
    return Action.INVALID if problems and action in WRITING else action
