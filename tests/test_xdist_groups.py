"""The xdist groups tests/conftest.py gives tests that share a module-scoped server fixture (``make test`` runs
``--dist loadgroup``): one group per test module and fixture parameter, none for tests whose shared fixtures start
nothing or are session-scoped (each worker starts those once anyway); a module fixture filling the session store
counts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from conftest import shared_group


def _store() -> Any:  # what the scan reads: a fixture body that starts a program
    return subprocess.Popen(["true"])


def _tables() -> dict[str, str]:  # a fixture body that starts nothing
    return {}


# Held in a mapping, not named by the tests, so that the tests themselves start nothing (conftest's slow scan).
BODIES = {"store": _store, "tables": _tables}


def _item(
    nodeid: str,
    fixtures: dict[str, tuple[str, str]],
    params: dict[str, Any] | None = None,
    uses: dict[str, tuple[str, ...]] | None = None,
) -> Any:
    """A collected test's shape as shared_group reads it: fixture name -> (scope, body), and the fixtures each
    fixture uses (``uses``)."""
    defs = {
        name: [SimpleNamespace(scope=scope, func=BODIES[body], argnames=(uses or {}).get(name, ()))]
        for name, (scope, body) in fixtures.items()
    }
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
        "group:tests/test_a.py::store=pd-128",
        "group:tests/test_a.py::store=pd-128",
        "group:tests/test_a.py::store=video-200",
        "group:tests/test_b.py::store=pd-128",
    ]
    assert (
        shared_group(_item("tests/test_c.py::TestC::test_one", {"store": ("class", "store")}))
        == "group:tests/test_c.py"
    )


def test_tests_without_a_shared_server_stay_ungrouped() -> None:
    assert shared_group(_item("tests/test_a.py::test_one", {"store": ("session", "store")})) is None
    assert shared_group(_item("tests/test_a.py::test_one", {"store": ("function", "store")})) is None
    assert shared_group(_item("tests/test_a.py::test_one", {"tables": ("module", "tables")})) is None
    assert shared_group(SimpleNamespace(nodeid="tests/test_a.py::doc")) is None
    mixed = {"tables": ("module", "tables"), "store": ("module", "store")}
    assert shared_group(_item("tests/test_a.py::test_one", mixed, {"tables": "t"})) == "group:tests/test_a.py"


def test_tests_marked_with_one_shared_store_form_one_group_across_modules() -> None:
    """The incident drills and long-context-64's fault suite read one store (tests/drills.py): their tests, marked
    ``shared_store(name)``, are one group whatever their module and parameters; an unmarked parameter of the same
    fixture keeps its module's group, and the mark alone groups nothing that starts no server."""

    def marked(item: Any, name: str | None) -> Any:
        mark = SimpleNamespace(args=(name,)) if name else None
        item.get_closest_marker = lambda wanted: mark if wanted == "shared_store" else None
        return item

    store = {"store": ("module", "store")}
    drills = marked(_item("tests/test_d.py::test_one", store), "lc-drills")
    suite = marked(_item("tests/test_s.py::test_one[lc-x]", store, {"store": "lc"}), "lc-drills")
    other = marked(_item("tests/test_s.py::test_one[pd-x]", store, {"store": "pd"}), None)
    alone = marked(_item("tests/test_d.py::test_two", {"tables": ("module", "tables")}), "lc-drills")
    assert shared_group(drills) == shared_group(suite) == "group:shared_store=lc-drills"
    assert shared_group(other) == "group:tests/test_s.py::store=pd"
    assert shared_group(alone) is None


def test_a_module_fixture_filling_the_session_store_groups_its_tests() -> None:
    """A module-scoped fixture that starts nothing itself but imports into the session's server (a fixture it uses,
    directly or through another) is built once per worker it runs on, like a store of its own: grouped."""
    fixtures = {
        "victoriametrics": ("session", "store"),
        "windows": ("session", "tables"),
        "video": ("module", "tables"),
    }
    direct = _item("tests/test_v.py::test_one", fixtures, uses={"video": ("victoriametrics",)})
    assert shared_group(direct) == "group:tests/test_v.py"
    through = _item(
        "tests/test_v.py::test_two", fixtures, uses={"video": ("windows",), "windows": ("victoriametrics",)}
    )
    assert shared_group(through) == "group:tests/test_v.py"
    alone = _item("tests/test_v.py::test_three", fixtures, uses={"video": ("windows",)})  # nothing starts a server
    assert shared_group(alone) is None
    looping = _item("tests/test_v.py::test_four", fixtures, uses={"video": ("windows",), "windows": ("video",)})
    assert shared_group(looping) is None


ROOT = Path(__file__).resolve().parent.parent
PROBE = "tests/fixtures/xdist/probe_groups.py"


def test_under_two_workers_each_shared_server_is_built_once_and_its_tests_run_where_it_is(tmp_path: Path) -> None:
    """The real scheduling (xdist's own loadgroup stopped grouping on pytest 9.2): two parameters of a module-scoped
    fixture that starts a program, 6 tests each, beside 12 single tests, on two workers."""
    log = tmp_path / "log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DASHGEN_TEST_GROUPS"))}
    env["DASHGEN_PROBE_LOG"] = str(log)
    command = [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", PROBE]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    setups = sorted((param, worker) for worker, kind, param in lines if kind == "setup")
    assert [param for param, _ in setups] == ["a", "b"], setups  # once per parameter, not once per worker
    ran = {param: {worker for worker, kind, p in lines if kind == "test" and p == param} for param, _ in setups}
    assert ran == {param: {worker} for param, worker in setups}
    assert sum(kind == "test" for _, kind, _ in lines) == 12
    assert sum(kind == "alone" for _, kind, _ in lines) == 12
    assert {worker for worker, _, _ in lines} == {"gw0", "gw1"}


def test_the_tests_of_one_group_run_one_after_another_where_its_first_ran() -> None:
    """pytest orders a module-scoped fixture's tests by each parametrize list's index, so tests of one store taken
    from different lists took turns with another store's (each turn a new build in one process): conftest moves the
    tests of each group to where its first test ran and leaves every other test in its order."""
    from conftest import GROUP, pytest_collection_modifyitems_groups_together

    order = [("a1", "A"), ("b1", "B"), ("x", None), ("a2", "A"), ("b2", "B"), ("y", None), ("a3", "A")]
    items = [SimpleNamespace(name=name, stash={GROUP: group}) for name, group in order]
    pytest_collection_modifyitems_groups_together(items)  # type: ignore[arg-type]
    assert [item.name for item in items] == ["a1", "a2", "a3", "b1", "b2", "x", "y"]
