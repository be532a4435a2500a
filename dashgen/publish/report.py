"""The plan and the outcomes of a release as text and as JSON (pure): what ``--dry-run`` prints, and
what a release prints after it ran. Every refusal is printed with the exact flag that approves it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dashgen.escape import inline_text
from dashgen.publish.actions import ACTIONS
from dashgen.publish.approvals import remedy
from dashgen.publish.library_plan import LibraryItem
from dashgen.publish.plan import DashboardPlan, Plan
from dashgen.publish.rules_plan import RuleGroupItem


def plan_dict(plan: Plan) -> dict[str, Any]:
    return {
        "instance": plan.instance.label if plan.instance else None,
        "folder_uid": plan.folder_uid,
        "partial": plan.partial,
        "blocked": plan.blocked,
        "folders": [{"uid": f.uid, "action": f.action, "title": f.title} for f in plan.folders],
        "dashboards": [_dashboard_dict(d) for d in plan.dashboards],
        "library_panels": [_library_dict(i) for i in plan.library],
        "rule_groups": [_rules_dict(i) for i in plan.rules],
        "folder_permissions": [
            {
                "uid": i.uid,
                "folder_uid": i.folder_uid,
                "action": i.action,
                "live": dict(i.live),
                "wanted": dict(i.access.grants),
                "changes": [{"principal": p, "permission": lv} for p, lv in i.changes],
                "summary": list(i.summary),
                "refusals": _refusal_dicts(i.refusals),
                "approvals_used": list(i.approvals_used),
            }
            for i in plan.permissions
        ],
    }


def _rules_dict(i: RuleGroupItem) -> dict[str, Any]:
    return {
        "uid": i.uid,
        "profile": i.profile,
        "title": i.title,
        "folder_uid": i.folder_uid,
        "action": i.action,
        "build_sha": i.target.sha if i.target else None,
        "live_sha": i.live_sha,
        "rules": len(i.target.group["rules"]) if i.target else None,
        "summary": list(i.summary),
        "refusals": _refusal_dicts(i.refusals),
        "approvals_used": list(i.approvals_used),
    }


def _refusal_dicts(refusals: Iterable[Any]) -> list[dict[str, Any]]:
    """Each refusal of a plan item as JSON: the approval key that lifts it, its command-line flag, the reason."""
    return [{"approve_with": r.key, "flag": remedy(r.key), "reason": r.reason} for r in refusals]


def _detail_lines(
    summary: Iterable[str], approvals: Iterable[str], refusals: Iterable[Any], before_refusals: Sequence[str] = ()
) -> list[str]:
    """The indented lines under a plan item's heading: its summary, the approvals it used, ``before_refusals`` (a
    dashboard's clean-up), then each refusal with the flag that approves it; foreign text shown as text."""
    lines = [f"    {inline_text(line)}" for line in summary]
    lines += [f"    approved: {inline_text(key)}" for key in approvals]
    lines += before_refusals
    return lines + [f"    REFUSED: {inline_text(r.reason)} -> {inline_text(remedy(r.key))}" for r in refusals]


def render_rules(items: Sequence[RuleGroupItem]) -> list[str]:
    """The Grafana-managed rule groups of a plan."""
    lines = []
    for i in items:
        lines.append(
            f"{i.action.upper():<9} rule group {i.title!r} "
            f"({inline_text(i.profile)}; folder {inline_text(i.folder_uid)}; {inline_text(i.uid)})"
        )
        lines += _detail_lines(i.summary, i.approvals_used, i.refusals)
    return lines


def _library_dict(i: LibraryItem) -> dict[str, Any]:
    return {
        "uid": i.uid,
        "profile": i.profile,
        "name": i.name,
        "action": i.action,
        "live_version": i.live.version if i.live else None,
        "build_sha": i.element.sha if i.element else None,
        "live_sha": i.live.sha if i.live else None,
        "dashboards": list(i.dashboards),
        "summary": list(i.summary),
        "refusals": _refusal_dicts(i.refusals),
        "approvals_used": list(i.approvals_used),
    }


def render_library(items: Sequence[LibraryItem]) -> list[str]:
    """The library panels of a plan, each once, with the dashboards that use it."""
    lines = []
    for i in items:
        version = f"live v{i.live.version}" if i.live else "not in Grafana"
        lines.append(
            f"{i.action.upper():<9} library panel {inline_text(i.uid)} {i.name!r} ({inline_text(i.profile)}; {version})"
        )
        lines += _detail_lines(i.summary, i.approvals_used, i.refusals)
    return lines


def _dashboard_dict(d: DashboardPlan) -> dict[str, Any]:
    return {
        "profile": d.target.profile,
        "uid": d.target.uid,
        "action": d.action,
        "live_version": d.live.version if d.live else None,
        "stored_version": d.live.stored_version if d.live else None,
        "build_sha": d.target.build_sha,
        "live_sha": d.live.sha if d.live else None,
        "live_edited": d.live_edited,
        "folder": {"from": d.folder_from, "to": d.folder_to, "action": d.folder_action},
        "summary": list(d.summary),
        "refusals": _refusal_dicts(d.refusals),
        "approvals_used": list(d.approvals_used),
        "cleanup": list(d.cleanup),
        "new_queries": len(d.new_queries),
        "query_problems": list(d.problems),
        "server_preview": list(d.preview),
    }


def render_plan(plan: Plan, server: str = "") -> str:
    """The plan as text; ``server`` names the Grafana (its version and the API path taken)."""
    lines = []
    if plan.instance is not None:
        lines.append(f"Grafana {inline_text(plan.instance.label)}" + (f": {inline_text(server)}" if server else ""))
    for folder in plan.folders:
        if folder.action != "exists":
            note = (
                "will be created"
                if folder.action == "create"
                else f"does not exist -> {remedy('create-folder:' + folder.uid)}"
            )
            lines.append(f"folder {folder.uid!r}: {note}")
    for d in plan.dashboards:
        version = (
            f"live v{d.live.version}" + (f" stored {d.live.stored_version}" if d.live.stored_version else "")
            if d.live
            else "not in Grafana"
        )
        where = f"folder {inline_text(d.folder_to or '(root)')}" + (
            f" <- {inline_text(d.folder_from or '(root)')}" if d.folder_action == "move" else ""
        )
        lines.append(
            f"{d.action.upper():<9} {inline_text(d.target.uid)} ({inline_text(d.target.profile)}; {version}; {where}; "
            f"build {d.target.build_sha[:12]})"
        )
        cleanup = [f"    clean-up: {inline_text(item)}" for item in d.cleanup]
        lines += _detail_lines(d.summary, d.approvals_used, d.refusals, before_refusals=cleanup)
        lines += [f"    INVALID: {inline_text(problem)}" for problem in d.problems]
        lines += [f"    grafana would store: {inline_text(line)}" for line in d.preview]
    lines += render_library(plan.library) + render_rules(plan.rules)
    for i in plan.permissions:
        lines.append(f"{i.action.upper():<9} permissions of folder {i.folder_uid!r}")
        lines += _detail_lines(i.summary, i.approvals_used, i.refusals)
    counts = {action: sum(d.action == action for d in plan.dashboards) for action in ACTIONS}
    lines.append("plan: " + ", ".join(f"{n} {a}" for a, n in counts.items() if n or a in ACTIONS[:4]))
    if plan.blocked:
        lines.append(
            "nothing will be written: every refusal must be approved first (or --partial publishes the others)"
        )
    elif plan.refused:
        lines.append("--partial: the refused dashboards are skipped, the others are published")
    return "\n".join(lines)


def render_outcomes(outcomes: Sequence[Any]) -> str:
    return "\n".join(f"{o.outcome:<14} {inline_text(o.uid)}: {inline_text(o.detail)}" for o in outcomes)
