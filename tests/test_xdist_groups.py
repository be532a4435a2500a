"""The xdist groups tests/conftest.py gives tests that share a module-scoped server fixture (``make test`` runs
``--dist loadgroup``): one group per test module and fixture parameter, none for tests whose shared fixtures start
nothing or are session-scoped (each worker starts those once anyway)."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace
from typing import Any

from conftest import shared_group


def _store() -> Any:  # what the scan reads: a fixture body that starts a program
    return subprocess.Popen(["true"])


def _tables() -> dict[str, str]:  # a fixture body that starts nothing
    return {}


# Held in a mapping, not named by the tests, so that the tests themselves start nothing (conftest's slow scan).
BODIES = {"store": _store, "tables": _tables}


def _item(nodeid: str, fixtures: dict[str, tuple[str, str]], params: dict[str, Any] | None = None) -> Any:
    """A collected test's shape as shared_group reads it: fixture name -> (scope, body)."""
    defs = {name: [SimpleNamespace(scope=scope, func=BODIES[body])] for name, (scope, body) in fixtures.items()}
    item = SimpleNamespace(nodeid=nodeid, _fixtureinfo=SimpleNamespace(name2fixturedefs=defs))
    if params is not None:
        item.callspec = SimpleNamespace(params=params)
    return item


def test_a_module_scoped_server_groups_its_tests_by_module_and_parameter() -> None:
    store = {"store": ("module", "store")}
    groups = [
        shared_group(_item("tests/test_a.py::test_one[pd-128]", store, {"store": "pd-128"})),
        shared_group(_item("tests/test_a.py::test_two[pd-128-suite-x]", store, {"store": "pd-128", "other": 1})),
        shared_group(_item("tests/test_a.py::test_one[video-200]", store, {"store": "video-200"})),
        shared_group(_item("tests/test_b.py::TestB::test_one[pd-128]", store, {"store": "pd-128"})),
    ]
    assert groups == [
        "tests/test_a.py::store=pd-128",
        "tests/test_a.py::store=pd-128",
        "tests/test_a.py::store=video-200",
        "tests/test_b.py::store=pd-128",
    ]
    assert shared_group(_item("tests/test_c.py::TestC::test_one", {"store": ("class", "store")})) == "tests/test_c.py"


def test_tests_without_a_shared_server_stay_ungrouped() -> None:
    assert shared_group(_item("tests/test_a.py::test_one", {"store": ("session", "store")})) is None
    assert shared_group(_item("tests/test_a.py::test_one", {"store": ("function", "store")})) is None
    assert shared_group(_item("tests/test_a.py::test_one", {"tables": ("module", "tables")})) is None
    assert shared_group(SimpleNamespace(nodeid="tests/test_a.py::doc")) is None
    mixed = {"tables": ("module", "tables"), "store": ("module", "store")}
    assert shared_group(_item("tests/test_a.py::test_one", mixed, {"tables": "t"})) == "tests/test_a.py"
