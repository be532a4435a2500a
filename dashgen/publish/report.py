"""The plan and the outcomes of a release as text and as JSON (pure): what ``--dry-run`` prints, and
what a release prints after it ran. Every refusal is printed with the exact flag that approves it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dashgen.publish.approvals import remedy
from dashgen.publish.plan import DashboardPlan, Plan

ACTIONS = ("create", "update", "move", "unchanged", "refused", "invalid", "diverged")


def plan_dict(plan: Plan) -> dict[str, Any]:
    return {
        "instance": plan.instance.label if plan.instance else None,
        "folder_uid": plan.folder_uid,
        "partial": plan.partial,
        "blocked": plan.blocked,
        "folders": [{"uid": f.uid, "action": f.action, "title": f.title} for f in plan.folders],
        "dashboards": [_dashboard_dict(d) for d in plan.dashboards],
    }


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
        "refusals": [{"approve_with": r.key, "flag": remedy(r.key), "reason": r.reason} for r in d.refusals],
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
        lines.append(f"Grafana {plan.instance.label}" + (f": {server}" if server else ""))
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
        where = f"folder {d.folder_to or '(root)'}" + (
            f" <- {d.folder_from or '(root)'}" if d.folder_action == "move" else ""
        )
        lines.append(
            f"{d.action.upper():<9} {d.target.uid} ({d.target.profile}; {version}; {where}; "
            f"build {d.target.build_sha[:12]})"
        )
        lines += [f"    {line}" for line in d.summary]
        lines += [f"    approved: {key}" for key in d.approvals_used]
        lines += [f"    clean-up: {item}" for item in d.cleanup]
        lines += [f"    REFUSED: {r.reason} -> {remedy(r.key)}" for r in d.refusals]
        lines += [f"    INVALID: {problem}" for problem in d.problems]
        lines += [f"    grafana would store: {line}" for line in d.preview]
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
    return "\n".join(f"{o.outcome:<14} {o.uid}: {o.detail}" for o in outcomes)
