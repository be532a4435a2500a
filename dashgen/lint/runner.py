"""Run lint rules over dashboards and files, producing :class:`Finding` values.

``lint_dashboard`` is pure (decoded JSON in, findings out). ``lint_paths`` is the thin file
edge: it expands folders to ``*.json`` files, reads them, and raises :class:`UnreadableInput`
naming the file when one cannot be read or is not a dashboard.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dashgen.document import NotADashboard, load_dashboard, unwrap
from dashgen.document.budget import MAX_FILE_BYTES, file_over_budget
from dashgen.document.shape import BadShape, check_shape
from dashgen.files import read_regular_bytes
from dashgen.files.parsers import NestedTooDeeply, parse_json
from dashgen.lint.catalogue import Catalogue, load_catalogue
from dashgen.lint.context import build_context
from dashgen.lint.findings import Finding, Rule
from dashgen.lint.registry import ALL_RULES

MAX_DEPTH = 64  # Grafana dashboards nest about 10 deep
MAX_NODES = 5_000_000  # JSON values in one document


class UnreadableInput(ValueError):
    """A path could not be read or parsed as a dashboard; the message names the file."""


def shape_problem(doc: Any) -> str | None:
    """Why ``doc`` is over the depth or size budget, with the JSON path where it went over; one iterative pass.
    A value's path is spelled only when it is over (a dashboard of 10,000 GPUs holds ~100,000 values)."""
    # (value, (key, is a list index, the parent's entry) or None at the root, depth)
    stack: list[tuple[Any, Any, int]] = [(doc, None, 0)]
    seen = 0
    while stack:
        entry = stack.pop()
        value, _, depth = entry
        seen += 1
        if seen > MAX_NODES:
            return f"more than {MAX_NODES} JSON values, over the size budget"
        if depth > MAX_DEPTH:
            return f"{_path_of(entry)}: nested more than {MAX_DEPTH} deep, over the depth budget"
        if isinstance(value, dict):
            stack.extend((v, (k, False, entry), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (i, True, entry), depth + 1) for i, v in enumerate(value))
    return None


def _path_of(entry: tuple[Any, Any, int]) -> str:
    """``$.a[0].b`` from the root to ``entry``; once the path is 200 characters long, no deeper step is added."""
    steps = []
    while entry[1] is not None:
        key, index, entry = entry[1]
        steps.append(f"[{key}]" if index else f".{key}")
    path = "$"
    for step in reversed(steps):
        if len(path) < 200:
            path += step
    return path


def lint_dashboard(
    doc: Any,
    filename: str = "<dashboard>",
    rules: Sequence[Rule] = ALL_RULES,
    catalogue: Catalogue | None = None,
) -> list[Finding]:
    """Every finding of ``rules`` on one decoded dashboard document; raises NotADashboard when the document is
    over the depth / size budget or of a shape no rule can read (the message says where)."""
    problem = shape_problem(doc)
    if problem is not None:
        raise NotADashboard(problem)
    try:  # a field Grafana would refuse or misread (panels not a list, a panel not an object) is no finding: an error
        check_shape(unwrap(doc))
    except BadShape as exc:
        raise NotADashboard(str(exc)) from None
    try:
        return _lint(doc, filename, rules, catalogue)
    except NotADashboard:
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise NotADashboard(f"a field of an unexpected type or shape ({type(exc).__name__}: {exc})") from exc


def _lint(doc: Any, filename: str, rules: Sequence[Rule], catalogue: Catalogue | None) -> list[Finding]:
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
    """Files as given (a pipe too: ``lint <(git show HEAD:d.json)``), folders expanded to their ``*.json`` files
    (recursively, sorted)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file() or path.is_fifo():  # a pipe is read with a bounded wait (dashgen.files)
            files.append(path)
        elif os.path.lexists(path):  # a device, a dangling or looping symlink: named as what it is
            raise UnreadableInput(f"{path}: {_not_a_file(path)}")
        else:
            raise UnreadableInput(f"{path}: no such file or directory")
    return files


def _not_a_file(path: Path) -> str:
    try:
        path.stat()
    except OSError as exc:
        return f"cannot read ({exc.strerror or exc})"
    return "not a regular file or folder"


def read_dashboard_file(path: Path) -> Any:
    """The decoded JSON of ``path``, within the file-size budget; UnreadableInput names the file and why."""
    try:
        too_large = file_over_budget(path.stat().st_size)
        if too_large is not None:
            raise UnreadableInput(f"{path}: {too_large}")
        doc = parse_json(read_regular_bytes(path, MAX_FILE_BYTES).decode("utf-8"), parse_constant=_refuse_constant)
    except UnreadableInput:
        raise
    except OSError as exc:
        raise UnreadableInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UnreadableInput(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UnreadableInput(f"{path}: not valid JSON: {exc}") from None
    except NestedTooDeeply:
        raise UnreadableInput(f"{path}: JSON nested too deeply, over the depth budget of {MAX_DEPTH}") from None
    except ValueError as exc:  # NaN / Infinity, or an integer of more than 4,300 digits
        raise UnreadableInput(f"{path}: not valid JSON: {exc}") from None
    return doc


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


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
