"""From Grafana back to code: ``dashgen import`` and ``dashgen render-module``.

:func:`import_dashboard` takes any dashboard JSON (plain, a Grafana export with ``meta``, the k8s
resource), applies Grafana's legacy migrations (``migrate``, ``legacy``), plans groups, keys and layout
(``plan``), extracts each panel into the panel kit's vocabulary with the raw escape hatches it needs
(``extract``, ``residual``), writes the module (``codegen``, ``pyfmt``) and proves the round trip: the
written module, executed and rendered (``render``), has no semantic difference from the migrated source.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashgen.diff import DashboardDiff, diff_dashboards
from dashgen.document import unwrap
from dashgen.document.budget import panels_over_budget
from dashgen.document.shape import BadShape, check_shape
from dashgen.errors import InputError
from dashgen.files import read_regular_text
from dashgen.importer.codegen import module_code, with_header
from dashgen.importer.extract import Hatch
from dashgen.importer.migrate import migrate
from dashgen.importer.plan import ImportPlan, NoSuchPanel, plan_import
from dashgen.importer.render import render_imported
from dashgen.importer.vocab import ImportedDashboard
from dashgen.render.ids import panel_id
from dashgen.render.memo import JsonCopies, Memo, faithful_json
from dashgen.team_panels import contained

__all__ = [
    "BadShape",
    "Hatch",
    "ImportResult",
    "ModuleError",
    "NoSuchPanel",
    "import_dashboard",
    "load_module",
    "render_module_file",
]


class ModuleError(ValueError):
    """A module given to render-module cannot be loaded or holds no ``DASHBOARD``."""


@dataclass(frozen=True)
class ImportResult:
    plan: ImportPlan
    source: dict[str, Any]  # the migrated dashboard the round trip compares against (one panel with --panel)
    text: str  # the module
    round_trip: DashboardDiff

    @property
    def hatches(self) -> tuple[Hatch, ...]:
        return self.plan.hatches

    @property
    def migrations(self) -> tuple[str, ...]:
        return self.plan.notes


def _only(body: dict[str, Any], plan: ImportPlan) -> dict[str, Any]:
    """The migrated source reduced to what a one-panel plan holds (the panel and its row)."""
    wanted = {
        (p.place.id if p.place.id is not None else panel_id(p.spec.key), p.spec.title)
        for g in plan.groups
        for p in g.panels
    }
    titles = {title for _, title in wanted}
    rows = {g.title for g in plan.groups if g.row is not None}

    def keep(panel: dict[str, Any]) -> bool:
        return (panel.get("id"), panel.get("title")) in wanted or (
            panel.get("id") is None and panel.get("title") in titles
        )

    panels: list[Any] = []
    for panel in body.get("panels") or []:
        if not isinstance(panel, dict):
            continue
        if panel.get("type") == "row":
            if panel.get("title") in rows:
                nested = [p for p in panel.get("panels") or [] if isinstance(p, dict) and keep(p)]
                panels.append({**panel, "panels": nested})
        elif keep(panel):
            panels.append(panel)
    return {**body, "panels": panels}


def exec_module(text: str, name: str = "dashgen_imported") -> types.ModuleType:
    """Execute module text (a written import) in a fresh module object."""
    module = types.ModuleType(name)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)  # the module dashgen just wrote
    return module


@dataclass(frozen=True)
class _Kept:
    """An import as the memo keeps it: all but the module's docstring, which names the origin."""

    plan: ImportPlan
    source: JsonCopies
    code: str
    round_trip: DashboardDiff


# (the dashboard's exact JSON bytes, the panel asked) -> its import. A process imports the same document again when
# a test session reads its fixtures through the function and through ``dashgen import``; an import is pure (the
# document in, the module and its round trip out), 0.05-0.3 s of CPU each.
_IMPORTS: Memo[tuple[bytes, str | None], _Kept] = Memo("imports", 32)


def import_dashboard(doc: Any, origin: str, panel: str | None = None) -> ImportResult:
    """Import a dashboard document; ``origin`` is the header's "Source:" text; ``panel`` keeps one panel. A
    document is imported once per process by its value (``render.memo``); each call gets its own migrated source,
    and the plan and round trip (read-only) are shared."""
    body = unwrap(doc)
    too_many = panels_over_budget(body)  # before any per-panel work: a million panels never ended
    if too_many is not None:
        raise BadShape(too_many)
    data = faithful_json(body)  # what the import reads: an export with ``meta`` is its dashboard's import
    kept = None if data is None else _IMPORTS.get((data, panel))
    if kept is not None:
        return ImportResult(kept.plan, kept.source.copy(), with_header(kept.plan, origin, kept.code), kept.round_trip)
    check_shape(body)
    migrated = migrate(body)
    plan = plan_import(migrated.body, tuple(migrated.notes), only=panel)
    code = module_code(plan)
    text = with_header(plan, origin, code)
    rendered = render_imported(exec_module(text).DASHBOARD)
    source = migrated.body if panel is None else _only(migrated.body, plan)
    result = ImportResult(plan, source, text, diff_dashboards(source, rendered))
    if data is not None and (copies := JsonCopies.of(source)) is not None:
        _IMPORTS.put((data, panel), _Kept(plan, copies, code, result.round_trip))
    return result


def load_module(path: Path) -> ImportedDashboard:
    """The ``DASHBOARD`` of a module file."""
    try:
        text = read_regular_text(path)
    except OSError as exc:
        raise ModuleError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        code = compile(text, str(path), "exec")
    except SyntaxError as exc:
        raise ModuleError(f"{path}:{exc.lineno}: not valid Python ({exc.msg})") from None
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    sys.modules.setdefault(path.stem, module)
    try:  # render-module runs the module it is given: contained like a team's (exit, hang, any exception)
        contained(lambda: exec(code, module.__dict__), str(path), "the module fails on load")
    except InputError as exc:
        raise ModuleError(str(exc)) from None
    finally:
        if sys.modules.get(path.stem) is module:
            del sys.modules[path.stem]
    dashboard = getattr(module, "DASHBOARD", None)
    if not isinstance(dashboard, ImportedDashboard):
        raise ModuleError(
            f"{path}: DASHBOARD: expected an ImportedDashboard (dashgen.importer.vocab), "
            f"found {type(dashboard).__name__}"
        )
    return dashboard


def render_module_file(path: Path) -> dict[str, Any]:
    """The dashboard JSON of a module file."""
    dashboard = load_module(path)
    try:
        return render_imported(dashboard)
    except Exception as exc:  # a module edited by hand may hold anything
        raise ModuleError(f"{path}: DASHBOARD cannot be rendered: {type(exc).__name__}: {exc}") from None
