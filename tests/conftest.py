"""Shared fixtures. ``victoriametrics``: one real VictoriaMetrics per test session (127.0.0.1, a free
port, a temporary data path); ``demo_windows``: the demo scenarios imported into it once;
``promtool``: the binary the rule tests run.

The ``slow`` mark (``make test-fast`` leaves these tests out) is applied here, at collection, to every test
whose own code or any fixture it uses (directly or through other fixtures) starts a real server or program:
VictoriaMetrics, Prometheus, vmagent, vmalert, promtool, the Grafana stand-in, a stand-in HTTP server, a
subprocess (a child Python, a wheel or venv build, ruff). A new test that uses such a fixture is classified
without anyone marking it; a test that starts one through a helper this scan cannot see is marked by hand
(``@pytest.mark.slow``)."""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from victoriametrics import import_all, program_or_skip, start_or_skip

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
    return import_all(victoriametrics)


@pytest.fixture(scope="session")
def promtool() -> str:
    """The promtool binary (Debian package 'prometheus'); required in CI, skipped elsewhere when missing."""
    return program_or_skip(
        find_program("PROMTOOL_BIN", ("promtool",)),
        "promtool not installed (Debian package 'prometheus'; make debian-deps)",
    )


# What starts a real server or program, as it is written in a test, a fixture or a helper of tests/.
STARTS_A_SERVER = re.compile(
    r"\b(?:GrafanaStandin|ThreadingHTTPServer|HTTPServer|Popen|start_or_skip|start_production_store|start_demo"
    r"|start_vmagent|start_drills|launch|program_or_skip|binaries_or_skip|find_vmagent)\s*\("
    r"|\bsubprocess\.(?:run|Popen|check_call|check_output|call)\b"
)
TESTS = Path(__file__).resolve().parent


@functools.cache
def _own_source(function: Any) -> tuple[str, ast.AST] | None:
    """The source and syntax tree of a function written in tests/ (not pytest's, not dashgen's)."""
    function = inspect.unwrap(function)
    try:
        if not Path(inspect.getfile(function)).resolve().is_relative_to(TESTS):
            return None
        source = textwrap.dedent(inspect.getsource(function))
        return source, ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None


@functools.cache
def starts_a_server(function: Any) -> bool:
    """Whether ``function``, or a function of tests/ it calls by name (helpers of the test module, of
    ``publishing``, ``gitrepo``, ...), starts a real server or program."""
    return _starts_a_server(function, set())


def _starts_a_server(function: Any, seen: set[Any]) -> bool:
    if function in seen:
        return False
    seen.add(function)
    found = _own_source(function)
    if found is None:
        return False
    source, tree = found
    if STARTS_A_SERVER.search(source):
        return True
    names = getattr(inspect.unwrap(function), "__globals__", {})
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return any(callable(names.get(name)) and _starts_a_server(names[name], seen) for name in called)


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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not item.get_closest_marker("slow") and is_slow(item):
            item.add_marker(pytest.mark.slow)
