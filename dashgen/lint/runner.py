"""Run lint rules over dashboards and files, producing :class:`Finding` values.

``lint_dashboard`` is pure (decoded JSON in, findings out). ``lint_paths`` is the thin file
edge: it expands folders to ``*.json`` files, reads them, and raises :class:`UnreadableInput`
naming the file when one cannot be read or is not a dashboard.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dashgen.document import NotADashboard, load_dashboard
from dashgen.lint.catalogue import Catalogue, load_catalogue
from dashgen.lint.context import build_context
from dashgen.lint.findings import Finding, Rule
from dashgen.lint.registry import ALL_RULES


class UnreadableInput(ValueError):
    """A path could not be read or parsed as a dashboard; the message names the file."""


def lint_dashboard(
    doc: Any,
    filename: str = "<dashboard>",
    rules: Sequence[Rule] = ALL_RULES,
    catalogue: Catalogue | None = None,
) -> list[Finding]:
    """Every finding of ``rules`` on one decoded dashboard document."""
    dashboard = load_dashboard(doc)
    ctx = build_context(dashboard, catalogue if catalogue is not None else load_catalogue())
    position = {id(panel): i for i, panel in enumerate(dashboard.panels)}
    hits = [(rule, hit) for rule in rules for hit in rule.check(ctx)]
    hits.sort(key=lambda rh: -1 if rh[1].panel is None else position[id(rh[1].panel)])
    findings: list[Finding] = []
    for rule, hit in hits:
        findings.append(
            Finding(
                file=filename,
                dashboard=dashboard.title,
                panel=hit.panel.title if hit.panel is not None else None,
                panel_id=hit.panel.id if hit.panel is not None else None,
                rule=rule.id,
                severity=hit.severity or rule.severity,
                message=hit.message,
            )
        )
    return findings


def discover_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, folders expanded to their ``*.json`` files (recursively, sorted)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise UnreadableInput(f"{path}: no such file or directory")
    return files


def read_dashboard_file(path: Path) -> Any:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableInput(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise UnreadableInput(f"{path}: not valid JSON: {exc}") from exc
    return doc


def lint_paths(
    paths: Iterable[str | Path], rules: Sequence[Rule] = ALL_RULES, catalogue: Catalogue | None = None
) -> list[Finding]:
    """Lint every dashboard file under ``paths``; raises UnreadableInput on the first bad file."""
    cat = catalogue if catalogue is not None else load_catalogue()
    findings: list[Finding] = []
    for path in discover_files(paths):
        doc = read_dashboard_file(path)
        try:
            findings.extend(lint_dashboard(doc, str(path), rules, cat))
        except NotADashboard as exc:
            raise UnreadableInput(f"{path}: {exc}") from exc
    return findings
