"""A team's own panel modules, without a fork: ``<panels_dir>/<name>.py`` of the team repository (``dashgen.toml``
``panels_dir``, default ``panels/`` beside the profiles folder), listed in a profile's ``[dashboard]
extra_modules``, shown as rows after dashgen's groups.

A module is written in the panel kit's vocabulary and gives its rows in one of two ways:

* ``DASHBOARD = ImportedDashboard(...)``: exactly what ``dashgen import`` writes. Its rows come in its order; its
  own layout, uid, title and dashboard fields are the imported dashboard's and are not used; every panel reads
  the profile dashboard's ``${datasource}`` (one data source per dashgen dashboard); its variables are added
  to the dashboard's after dashgen's own, a name dashgen already defines differently being an error; its queries
  are scoped to the deployment and read by the profile's label names (``dashgen.render.team_fit``).
* ``build(profile, topology) -> GroupSpec | Iterable[GroupSpec] | None``: as dashgen's own group modules;
  anything else it returns (or yields) is an input error naming the module.

Every panel and row key is prefixed with the module name (``<name>.<key>``), so the ids derived from keys
stay stable and never collide with dashgen's. Loading runs the team's Python file: it is the team's own code,
as trusted as its profiles. Errors name the profile, the module file and what is wrong.
"""

from __future__ import annotations

import importlib.util
import io
import itertools
import math
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from dashgen_queries.promql import deployment

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.errors import InputError
from dashgen.escape import terminal_text
from dashgen.project import settings_for_profiles
from dashgen.render.imported import ImportedDashboard
from dashgen.render.spec import GroupSpec, PanelSpec
from dashgen.render.team_fit import fit_imported

PACKAGE = "dashgen_team_panels"
OUTPUT_LIMIT = 8000  # characters of a team module's own output shown (on stderr); the rest is counted, not shown
TIME_LIMIT = 60.0  # seconds a team module may take to load, and its build() to run (DASHGEN_MODULE_TIMEOUT)
MAX_ROWS = 10_000  # rows one module's build() may give: far more than a dashboard shows; bounds an endless iterator


@dataclass(frozen=True)
class TeamRows:
    """What the profile's extra modules add: rows, and the variables their queries use."""

    groups: tuple[GroupSpec, ...] = ()
    variables: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()  # what an imported module's rows were changed in to fit (dashgen.render.team_fit)
    unscoped: tuple[str, ...] = ()  # the imported queries that read beyond the deployment or by foreign label names


def module_path(profile: Profile, name: str) -> Path:
    return settings_for_profiles(Path(profile.path).parent).panels_dir / f"{name}.py"


def time_limit() -> float:
    """``$DASHGEN_MODULE_TIMEOUT`` seconds, else :data:`TIME_LIMIT` when it is unset or empty; anything but a number
    of seconds above 0 and below a day is an input error naming it (not a silent fall back to the default)."""
    given = os.environ.get("DASHGEN_MODULE_TIMEOUT", "").strip()
    if not given:
        return TIME_LIMIT
    try:
        value = float(given)
    except ValueError:
        value = math.nan
    if not 0 < value < 86_400:
        raise InputError(
            f"DASHGEN_MODULE_TIMEOUT={terminal_text(given, 40)}: not a number of seconds above 0 and below 86400"
        )
    return value


class _TeamOutput(io.TextIOBase):
    """Where a team module's ``print`` (and its writes to ``sys.stderr``) go while it runs: the first
    :data:`OUTPUT_LIMIT` characters kept, shown on stderr afterwards as text (:func:`contained`)."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.size = 0
        self.dropped = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = OUTPUT_LIMIT - self.size
        self.kept.append(text[: max(room, 0)])
        self.size += min(len(text), max(room, 0))
        self.dropped = self.dropped or len(text) > room
        return len(text)

    def lines(self, where: str) -> str:
        shown = [f"{where}: printed: {terminal_text(line)}\n" for line in "".join(self.kept).splitlines()]
        if self.dropped:
            shown.append(f"{where}: printed more (past {OUTPUT_LIMIT} characters, not shown)\n")
        return "".join(shown)


class _Routed(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` after a team call ran out of time: the call's thread runs on, and what it
    prints later goes to its capture (never shown: the command has stopped); every other thread's writes go to the
    stream it replaced, so a late print cannot land inside a ``--format json`` envelope."""

    def __init__(self, stream: Any, runaway: threading.Thread, capture: _TeamOutput) -> None:
        self.stream, self.runaway, self.capture = stream, runaway, capture

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if threading.current_thread() is self.runaway:
            return self.capture.write(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer: the stream's own
        return getattr(self.stream, name)


_STREAMS = threading.Lock()  # one team call at a time swaps sys.stdout / sys.stderr


def contained(call: Callable[[], Any], where: str, doing: str) -> Any:
    """Run the team's ``call`` with a time bound: its result, or an :class:`InputError` naming ``where`` when it
    raises anything — ``SystemExit`` too, which would otherwise end the command with the module's exit code and
    nothing built — or does not return in time (the call runs on in a daemon thread; the command stops).
    Only the user's interrupt (Ctrl-C, delivered to the main thread) goes through.

    What the call prints never reaches the command's stdout (a ``--format json`` envelope, ``render-module --out
    -``'s dashboard): it is shown on stderr afterwards, each line named by ``where`` and shown as text."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - the team's code: every way out is reported
            outcome["error"] = exc

    limit = time_limit()
    worker = threading.Thread(target=run, name=f"dashgen team module: {where}", daemon=True)
    printed = _TeamOutput()
    with _STREAMS:
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = printed
        try:
            worker.start()
            worker.join(limit)
        finally:
            if worker.is_alive():
                sys.stdout, sys.stderr = _Routed(stdout, worker, printed), _Routed(stderr, worker, printed)
            else:
                sys.stdout, sys.stderr = stdout, stderr
    sys.stderr.write(printed.lines(where))
    if worker.is_alive():
        raise InputError(f"{where}: {doing}: it did not finish within {limit:g}s (DASHGEN_MODULE_TIMEOUT)")
    error = outcome.get("error")
    if isinstance(error, KeyboardInterrupt):
        raise error
    if isinstance(error, SystemExit):
        raise InputError(f"{where}: {doing}: it called exit({error.code!r}); a module must not end the command")
    if error is not None:
        raise InputError(f"{where}: {doing}: {type(error).__name__}: {error}")
    return outcome.get("value")


def load_module(path: Path, name: str, where: str) -> ModuleType:
    """Execute the team's module file (fresh each time, so an edit is never missed), contained and time-bound."""
    if not path.is_file():
        raise InputError(f"{where}: no module file {path} (the team's panels folder: dashgen.toml panels_dir)")
    spec = importlib.util.spec_from_file_location(f"{PACKAGE}.{name}", path)
    if spec is None or spec.loader is None:
        raise InputError(f"{where}: {path}: cannot load as a Python module")
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    try:
        contained(lambda: loader.exec_module(module), f"{where}: {path}", "the module fails to load")
    finally:
        sys.modules.pop(spec.name, None)
    return module


def _prefixed_panel(panel: PanelSpec, name: str) -> PanelSpec:
    return replace(panel, key=f"{name}.{panel.key}")


def _prefixed(group: GroupSpec, name: str, datasource_variable: bool) -> GroupSpec:
    panels = tuple(
        _prefixed_panel(replace(p, datasource=None) if datasource_variable else p, name) for p in group.panels
    )
    rows = tuple(_prefixed(row, name, datasource_variable) for row in group.rows)
    return replace(group, key=f"{name}.{group.key}", panels=panels, rows=rows)


def _groups_of(
    module: ModuleType, profile: Profile, topology: Topology, where: str
) -> tuple[tuple[GroupSpec, ...], tuple[dict[str, Any], ...], bool]:
    dashboard = getattr(module, "DASHBOARD", None)
    if isinstance(dashboard, ImportedDashboard):
        return tuple(dashboard.groups), tuple(dashboard.variables), True
    build = getattr(module, "build", None)
    if not callable(build):
        raise InputError(
            f"{where}: defines neither DASHBOARD = ImportedDashboard(...) (as dashgen import writes) "
            "nor build(profile, topology) returning GroupSpec rows"
        )
    made = contained(lambda: _rows_built(build(profile, topology)), where, "build(profile, topology) failed")
    if isinstance(made, str):
        raise InputError(
            f"{where}: build(profile, topology) must return GroupSpec rows (a GroupSpec, an iterable of them or "
            f"None): {made}"
        )
    return made, (), False


def _rows_built(made: Any) -> tuple[GroupSpec, ...] | str:
    """What ``build()`` returned as a tuple of rows, or what is wrong with it. Runs inside the time bound: a
    generator's body is the team's code too, and an endless one is cut at :data:`MAX_ROWS`."""
    if made is None:
        return ()
    if isinstance(made, GroupSpec):
        return (made,)
    if isinstance(made, str | bytes | Mapping) or not isinstance(made, Iterable):
        return f"it returned {type(made).__name__}"
    rows = tuple(itertools.islice(made, MAX_ROWS + 1))
    if len(rows) > MAX_ROWS:
        return f"it gave more than {MAX_ROWS} rows"
    wrong = [row for row in rows if not isinstance(row, GroupSpec)]
    return f"it gave a {type(wrong[0]).__name__} among its rows" if wrong else rows


def team_rows(profile: Profile, topology: Topology, taken_variables: Iterable[dict[str, Any]]) -> TeamRows:
    """The rows and variables of the profile's ``extra_modules``; ``taken_variables`` are dashgen's own."""
    groups: list[GroupSpec] = []
    variables: dict[str, dict[str, Any]] = {str(v.get("name")): v for v in taken_variables}
    added: list[dict[str, Any]] = []
    notes: list[str] = []
    unscoped: list[str] = []
    for name in profile.dashboard.extra_modules:
        path = module_path(profile, name)
        where = f"profile {profile.name}: extra_modules: {name}"
        module = load_module(path, name, where)
        found, module_variables, imported = _groups_of(module, profile, topology, f"{where} ({path})")
        if imported:
            heading = getattr(module.DASHBOARD, "title", None) or name
            fitted = fit_imported(
                found, module_variables, variables, name, heading, deployment(profile), dict(profile.labels)
            )
            found, module_variables = fitted.groups, fitted.variables
            notes.extend(f"{where}: {note}" for note in fitted.notes)
            unscoped.extend(f"{where}: {note}" for note in fitted.unscoped)
        groups.extend(_prefixed(group, name, imported) for group in found)
        for variable in module_variables:
            var_name = str(variable.get("name"))
            if var_name in variables:
                if variables[var_name] != variable and var_name != "datasource":
                    raise InputError(
                        f"{where} ({path}): variable ${var_name} is defined differently by dashgen's "
                        "dashboard or another module: rename it in the module and in its queries"
                    )
                continue
            if imported and isinstance(variable.get("datasource"), dict):  # the dashboard's one data source
                variable = {**variable, "datasource": {"type": "prometheus", "uid": "${datasource}"}}
            variables[var_name] = variable
            added.append(variable)
    return TeamRows(tuple(groups), tuple(added), tuple(notes), tuple(unscoped))
