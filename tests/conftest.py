"""Shared fixtures. ``victoriametrics``: one real VictoriaMetrics per test session (127.0.0.1, a free
port, a temporary data path); ``demo_windows``: the demo scenarios imported into it once (under xdist built
once for all workers, and each worker's store restarted on a copy of that store's data folder);
``promtool``: the binary the rule tests run.

The ``slow`` mark (``make test-fast`` leaves these tests out) is applied here, at collection, to every test
whose own code, a fixture it uses (directly or through other fixtures) or a function or class of tests/ they
name starts a real server or program: VictoriaMetrics, Prometheus, vmagent, vmalert, promtool, the Grafana
stand-in, a stand-in HTTP server, a subprocess (git, a child Python, a wheel or venv build, ruff); and to
every hypothesis property test. A new test that uses such a fixture or helper is classified without anyone
marking it. What this cannot see (a server started through dashgen's own code, a helper reached through an
attribute of another object) and in-process tests of more than about a second are marked by hand
(``@pytest.mark.slow`` with a comment saying why).

Under pytest-xdist (``make test``: ``-n auto``, ``--dist loadgroup`` from pyproject.toml) every test that uses a
module- or class-scoped fixture starting a real server or program (the fault suite's production-like store per
profile, the incident drills, a preview's Chromium) is put in one group per test module and fixture parameter, and
each group runs on one worker (``xdist_scheduling``), so that the fixture is built once instead of once per worker
and again each time a worker comes back to the module; the groups are queued before the single tests, largest
first."""

from __future__ import annotations

import functools
import gc
import inspect
import os
import shutil
import subprocess
import tempfile
import types
from pathlib import Path
from typing import Any

import demo_ahead
import pytest
from hypothesis.internal.entropy import deterministic_PRNG
from victoriametrics import import_all, import_all_once, program_or_skip, start_or_skip
from xdist_scheduling import GROUPS_ENV, SharedFixtureScheduling, write_groups

from dashgen.demo.vmlauncher import find_program


@pytest.fixture(scope="session")
def victoriametrics():
    server = start_or_skip()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def demo_windows(victoriametrics):
    """The demo windows in the session's store; under xdist built once for all workers and copied into each
    worker's store, which keeps what tests wrote into it before (``import_all_once``)."""
    folder = os.environ.get(GROUPS_ENV)
    if folder is not None and os.path.isdir(folder):
        return import_all_once(victoriametrics, Path(folder))
    return import_all(victoriametrics)


@pytest.fixture(scope="session")
def promtool() -> str:
    """The promtool binary (Debian package 'prometheus'); required in CI, skipped elsewhere when missing."""
    return program_or_skip(
        find_program("PROMTOOL_BIN", ("promtool",)),
        "promtool not installed (Debian package 'prometheus'; make debian-deps)",
    )


# What starts a real server or program, by the names a test, a fixture or a helper of tests/ uses.
STARTERS = frozenset(
    {
        "GrafanaStandin",
        "ThreadingHTTPServer",
        "HTTPServer",
        "Popen",
        "start_or_skip",
        "start_production_store",
        "start_demo",
        "start_vmagent",
        "start_drills",
        "launch",
        "program_or_skip",
        "binaries_or_skip",
        "find_vmagent",
    }
)
SUBPROCESS_CALLS = frozenset({"run", "Popen", "call", "check_call", "check_output"})  # subprocess.<name>
TESTS = Path(__file__).resolve().parent


def _names(code: types.CodeType) -> set[str]:
    """The global and attribute names a function's code uses, its nested functions and comprehensions included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


@functools.cache
def _in_tests(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(TESTS)


@functools.cache
def starts_a_server(function: Any) -> bool:
    """Whether ``function``, or a function of tests/ it names (helpers of the test module, of ``publishing``,
    ``gitrepo``, ...), starts a real server or program."""
    return _starts_a_server(function, set())


def _starts_a_server(function: Any, seen: set[Any]) -> bool:
    if inspect.isclass(function):  # a helper class of tests/ (a stand-in server): what its methods start
        if function in seen:
            return False
        seen.add(function)
        return any(_starts_a_server(member, seen) for member in vars(function).values() if inspect.isfunction(member))
    function = inspect.unwrap(getattr(function, "__func__", function))
    code = getattr(function, "__code__", None)
    if code is None or function in seen or not _in_tests(code.co_filename):
        return False
    seen.add(function)
    names = _names(code)
    if names & STARTERS or ("subprocess" in names and names & SUBPROCESS_CALLS):
        return True
    scope = getattr(function, "__globals__", {})
    return any(callable(scope.get(name)) and _starts_a_server(scope[name], seen) for name in names)


def is_slow(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    if function is None:
        return False
    if getattr(function, "is_hypothesis_test", False):  # a property test runs hundreds of examples
        return True
    functions = [function]
    info = getattr(item, "_fixtureinfo", None)  # every fixture the test uses, through other fixtures too
    if info is not None:
        functions.extend(d.func for defs in info.name2fixturedefs.values() for d in defs)
    return any(starts_a_server(f) for f in functions)


SHARED_SCOPES = frozenset({"module", "class", "package"})


def shared_group(item: pytest.Item) -> str | None:
    """The xdist group of a test using a module- or class-scoped fixture that starts a server, or that fills one
    started by a fixture it uses (the session's VictoriaMetrics): its module and the parameters of those fixtures
    (one store per parameter), or the store's name where the test is marked ``shared_store(name)``; or None."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    fixtures = info.name2fixturedefs

    def serves(name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether fixture ``name`` starts a server or program, or fills one a fixture it uses starts (a module's
        data imported into the session's VictoriaMetrics costs as much as a store of its own, on every worker)."""
        defs = fixtures.get(name)
        if not defs or name in seen:
            return False
        fixture = defs[-1]
        return starts_a_server(fixture.func) or any(
            serves(arg, seen | {name}) for arg in getattr(fixture, "argnames", ())
        )

    shared = sorted(
        name for name, defs in fixtures.items() if defs and defs[-1].scope in SHARED_SCOPES and serves(name)
    )
    if not shared:
        return None
    marker = getattr(item, "get_closest_marker", lambda name: None)("shared_store")
    if marker is not None:  # one store read by several modules (tests/drills.py): one group across them
        return f"group:shared_store={marker.args[0]}"
    keys = [f"{name}={params[name]}" for name in shared if name in params]
    return "::".join([f"group:{item.nodeid.split('::', 1)[0]}", *keys])


GROUPS_FOLDER = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """On the xdist controller of a ``--dist loadgroup`` run: the folder the workers write their groups to (the
    workers, started later, inherit the environment)."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") != "loadgroup":
        return
    if not config.getoption("tx", None):
        return
    folder = tempfile.mkdtemp(prefix="dashgen-test-groups-")
    os.environ[GROUPS_ENV] = folder
    config.stash[GROUPS_FOLDER] = folder


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """The groups' folder removed (on the controller; on a worker, the demo store's builder reaped). Then, after
    pytest's unraisable-exception plugin has run its full collection at exit (every garbage cycle of the session
    collected, its finalisers' errors reported), what survived it is frozen: the plugin's second full collection (its
    cleanup, a moment later) scans only what is created after, not the session's memos, parse trees and documents
    again (~1.5 s of CPU)."""
    folder = config.stash.get(GROUPS_FOLDER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(GROUPS_ENV, None)
    builder = config.stash.get(DEMO_BUILDER, None)
    if builder is not None:
        demo_ahead.stop(builder)
    gc.freeze()


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    folder = config.stash.get(GROUPS_FOLDER, None)
    return None if folder is None else SharedFixtureScheduling(config, log, folder)


GROUP = pytest.StashKey[str | None]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = {}
    for item in items:
        if not item.get_closest_marker("slow") and is_slow(item):
            item.add_marker(pytest.mark.slow)
        group = item.stash[GROUP] = shared_group(item)
        if group is not None:
            groups[item.nodeid] = group
    worker = getattr(config, "workerinput", {}).get("workerid")
    folder = os.environ.get(GROUPS_ENV)
    if worker is not None and folder is not None and os.path.isdir(folder):
        write_groups(folder, worker, groups)


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_groups_together(items: list[pytest.Item]) -> None:
    """The tests of one shared server's group run one after another, where the first of them ran (the others keep
    their order). pytest orders a module-scoped fixture's tests by the index of its parameter in each parametrize
    list, so tests parametrized by other lists (the fault suite's per-deployment tests) took turns between the
    profiles: in one process (``pytest tests/test_fault_suite.py``) each profile's store was built four times, not
    once. xdist sends each group whole to one worker already."""
    first: dict[str, int] = {}
    keyed = []
    for index, item in enumerate(items):
        group = item.stash.get(GROUP, None)
        keyed.append((index if group is None else first.setdefault(group, index), index, item))
    items[:] = [item for _, _, item in sorted(keyed, key=lambda entry: entry[:2])]


# The cyclic collector's thresholds, set when this file is imported (before the test modules are): a collection every
# 10,000 net allocations instead of every 700, and each older generation collected after 100 of the younger one's
# instead of 10. A test session allocates millions of objects that stay (test modules, rendered documents, series,
# parsed trees), and each older generation's collection scans them all: in one make test-fast run the collector took
# 10.0 s of CPU (40 full collections) at the default thresholds with the frozen heap, 3.1 s at (10,000, 10, 10);
# then, measured side by side on one machine, 3.85 s in the run and 1.1 s of the 3.7 s of collection (1,281
# collections) at (10,000, 10, 10) after collection, 1.80 s and 0.15 s at these. The peak memory of the run is the
# same (1.76 GB), and as few cycles are left unfreed when collection ends (~300 objects).
GC_THRESHOLDS = (10_000, 100, 100)
gc.set_threshold(*GC_THRESHOLDS)

# Hypothesis makes and registers its own random generator when its first property test runs, and registering runs a
# full collection (to warn about a generator nothing else holds): ~0.45 s when that test comes after thousands of
# others have filled the heap, a few milliseconds here, before any test module is imported. The same generator is
# registered, once, and seeded per test as before.
with deterministic_PRNG():
    pass
DEMO_BUILDER = pytest.StashKey[subprocess.Popen[bytes]]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (every test module, its tables and profiles, the compiled schemas) lives until the
    session ends: moved out of the cyclic garbage collector's reach (``gc.freeze``), so the full collections of the
    run do not scan it again each time (``GC_THRESHOLDS`` makes them rare). On an xdist worker,
    first: the session demo store's build started ahead when its tests read it (``demo_ahead``)."""
    folder = os.environ.get(GROUPS_ENV)
    reads_demo = any("demo_windows" in getattr(item, "fixturenames", ()) for item in session.items)
    if hasattr(session.config, "workerinput") and folder is not None and os.path.isdir(folder) and reads_demo:
        builder = demo_ahead.start(Path(folder))  # None: another worker started it
        if builder is not None:
            session.config.stash[DEMO_BUILDER] = builder
    gc.freeze()
