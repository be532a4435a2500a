"""The validate-queries reports: per panel and target, as JSON or as text, with the summary counts
and the exit code (1 when any target failed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from dashgen.escape import inline_text
from dashgen.live.results import REASON_NAMES, PanelCheck


def summary(checks: list[PanelCheck]) -> dict[str, int]:
    counts = {
        "panels": len(checks),
        "ok": 0,
        "partial": 0,
        "empty": 0,
        "error": 0,
        "targets": sum(len(c.targets) for c in checks),
    }
    for check in checks:
        counts[check.status] += 1
    return counts


# More panels than this share empty is not a quiet cluster: every query ran, and most found no series — the
# profile's deployment or label names do not match the store (a healthy demo store leaves a handful empty).
MOSTLY_EMPTY = 0.5
# Fewer panels than this say nothing about the profile: a hand-made dashboard of one empty query is "empty", reported
# as such, not a wrong profile (dashgen's own dashboards hold 77 panels and more)
JUDGED_FROM = 10


def mostly_empty(checks: list[PanelCheck]) -> str | None:
    """The named failure when most panels return no data, or None."""
    empty = sum(c.status == "empty" for c in checks)
    if len(checks) < JUDGED_FROM or empty <= MOSTLY_EMPTY * len(checks):
        return None
    return (
        f"{empty} of {len(checks)} panels return no data: the profile most likely does not describe this store "
        "(a wrong deployment, label name or source status); dashgen doctor --profile NAME names the difference"
    )


def exit_code(checks: list[PanelCheck]) -> int:
    return 1 if any(c.status == "error" for c in checks) or mostly_empty(checks) else 0


def render_json(checks: list[PanelCheck], meta: Mapping[str, Any]) -> str:
    panels = []
    for check in checks:
        item = asdict(check)
        item["status"] = check.status
        item["series"] = check.series
        for target in item["targets"]:
            for reason in target["reasons"]:
                reason["name"] = REASON_NAMES.get(reason["code"], "unknown")
        panels.append(item)
    return json.dumps({**meta, "summary": summary(checks), "panels": panels}, indent=2) + "\n"


def _no_answer(target: Any) -> bool:
    return target.status == "error" and target.error_status is None


def render_text(checks: list[PanelCheck], meta: Mapping[str, Any]) -> str:
    """Per panel, what is not ok; queries that got no answer at all (the data source unreachable, timed out,
    or not asked after the fail-fast stop) are not listed one by one but summarised once per distinct cause
    with a count, so an unreachable data source is a few lines, not one per query."""
    lines = [
        f"data source {inline_text(meta.get('datasource'))}  window {inline_text(meta.get('window'))} "
        f"ending {inline_text(meta.get('at_text'))}"
    ]
    current = None
    causes: dict[str, int] = {}
    for check in checks:
        for target in check.targets:
            if _no_answer(target):
                causes[target.error_message] = causes.get(target.error_message, 0) + 1
        if check.targets and all(_no_answer(t) for t in check.targets):
            continue
        if check.dashboard != current:
            current = check.dashboard
            lines.append(f"\n{inline_text(current)}")
        lines.append(f"  [{check.status:<7}] {inline_text(check.title)}  ({check.series} series)")
        for target in check.targets:
            if target.status == "ok" or _no_answer(target):
                continue
            head = f"      {inline_text(target.ref_id or '?')} {inline_text(target.kind)}: {target.status}"
            if target.status == "error":
                lines.append(f"{head}: HTTP {target.error_status}: {inline_text(target.error_message)}")
                lines.append(f"        {inline_text(target.query)}")
                continue
            lines.append(head)
            for reason in target.reasons:
                where = f"{inline_text(reason.node)}: " if reason.node else ""
                lines.append(f"        {where}{reason.name} ({reason.code}) - {inline_text(reason.text)}")
    if causes:
        lines.append(f"\n{sum(causes.values())} queries got no answer from the data source (--format json lists each):")
        ranked = sorted(causes.items(), key=lambda item: (-item[1], item[0]))
        lines += [f"  {n} x {inline_text(cause)}" for cause, n in ranked]
    counts = summary(checks)
    lines.append(
        f"\n{counts['panels']} panels, {counts['targets']} targets: {counts['ok']} ok, "
        f"{counts['partial']} partly empty, {counts['empty']} empty, {counts['error']} with errors"
    )
    return "\n".join(lines) + "\n"
