"""Render lint findings: one text line each plus a summary (for a terminal: a title's or a file name's control
sequences and line breaks shown as text), or a JSON list."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from dashgen.escape import report_line
from dashgen.lint.findings import Finding, Severity


def format_line(f: Finding) -> str:
    """``file: panel "title": RULE: message [severity]`` (``dashboard "title"`` when no panel)."""
    where = f'panel "{f.panel}"' if f.panel is not None else f'dashboard "{f.dashboard}"'
    return f"{f.file}: {where}: {f.rule}: {f.message} [{f.severity}]"


def text_line(f: Finding) -> str:
    """:func:`format_line` for a terminal: one line whatever the dashboard's titles and file name hold (their
    control sequences and line breaks shown as text, a leading ``::`` escaped); the one escape of lint's lines."""
    return report_line(format_line(f))


def summary(findings: Sequence[Finding], files: int) -> str:
    counts = Counter(f.severity for f in findings)
    return (
        f"{len(findings)} finding(s) in {files} file(s): {counts[Severity.ERROR]} error(s), "
        f"{counts[Severity.WARNING]} warning(s), {counts[Severity.INFO]} info"
    )


def render_text(findings: Sequence[Finding], files: int) -> str:
    return "".join(f"{text_line(f)}\n" for f in findings) + summary(findings, files) + "\n"


def render_json(findings: Sequence[Finding]) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2, ensure_ascii=False) + "\n"


def has_errors(findings: Sequence[Finding]) -> bool:
    return any(f.severity == Severity.ERROR for f in findings)
