"""The validate-queries reports: per panel and target, as JSON or as text, with the summary counts
and the exit code (1 when any target failed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from dashgen.live.results import REASON_NAMES, PanelCheck


def summary(checks: list[PanelCheck]) -> dict[str, int]:
    counts = {"panels": len(checks), "ok": 0, "partial": 0, "empty": 0, "error": 0,
              "targets": sum(len(c.targets) for c in checks)}
    for check in checks:
        counts[check.status] += 1
    return counts


def exit_code(checks: list[PanelCheck]) -> int:
    return 1 if any(c.status == "error" for c in checks) else 0


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


def render_text(checks: list[PanelCheck], meta: Mapping[str, Any]) -> str:
    lines = [f"data source {meta.get('datasource')}  window {meta.get('window')} ending {meta.get('at_text')}"]
    current = None
    for check in checks:
        if check.dashboard != current:
            current = check.dashboard
            lines.append(f"\n{current}")
        lines.append(f"  [{check.status:<7}] {check.title}  ({check.series} series)")
        for target in check.targets:
            if target.status == "ok":
                continue
            head = f"      {target.ref_id or '?'} {target.kind}: {target.status}"
            if target.status == "error":
                status = f"HTTP {target.error_status}" if target.error_status is not None else "no answer"
                lines.append(f"{head}: {status}: {target.error_message}")
                lines.append(f"        {target.query}")
                continue
            lines.append(head)
            for reason in target.reasons:
                where = f"{reason.node}: " if reason.node else ""
                lines.append(f"        {where}{reason.name} ({reason.code}) - {reason.text}")
    counts = summary(checks)
    lines.append(f"\n{counts['panels']} panels, {counts['targets']} targets: {counts['ok']} ok, "
                 f"{counts['partial']} partly empty, {counts['empty']} empty, {counts['error']} with errors")
    return "\n".join(lines) + "\n"
