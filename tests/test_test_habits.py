"""Habits of the tests themselves: no test function asserts only inside loops that may run zero times.

A test whose every assertion sits in ``for item in found:`` passes when ``found`` is empty, so a renamed
panel, group or layer turns it green instead of red. Such a test also asserts how many items it checked
(``assert len(found) == profile.total_gpus``, or a lower bound where the count is not knowable), outside the
loop. A loop over a non-empty literal (``for mode in ("text", "json"):``, ``for _ in range(80):``) runs at
least once and counts as straight code."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from source_trees import tree, walked

TESTS = Path(__file__).resolve().parent
ASSERTING_CALLS = ("assert", "check")  # assert_*/check_* helpers and pytest.fail count as assertions


def _runs_at_least_once(loop: ast.AST) -> bool:
    """A ``for`` over a non-empty literal tuple, list or set, or over ``range`` of constants that is not empty;
    a ``while True``."""
    if isinstance(loop, ast.While):
        return isinstance(loop.test, ast.Constant) and bool(loop.test.value)
    if not isinstance(loop, ast.For):
        return False
    items = loop.iter
    if isinstance(items, (ast.Tuple, ast.List, ast.Set)):
        return bool(items.elts) and not any(isinstance(e, ast.Starred) for e in items.elts)
    if isinstance(items, ast.Call) and isinstance(items.func, ast.Name) and items.func.id == "range":
        if items.keywords or not all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in items.args):
            return False
        return len(range(*(a.value for a in items.args))) > 0
    return False


def _is_assertion(node: ast.AST) -> bool:
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        function = node.value.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        return name.startswith(ASSERTING_CALLS) or name == "fail"
    return False


def _assertions(node: ast.AST, in_loop: bool, found: list[bool]) -> None:
    """Appends, for every assertion under ``node`` (nested functions and classes apart), whether it sits in a
    loop that may run zero times."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if _is_assertion(child):
            found.append(in_loop)
        if isinstance(child, (ast.For, ast.AsyncFor, ast.While)) and not _runs_at_least_once(child):
            # only the body may not run: the iterable (a while's test) and the else branch run whatever happens
            _assertions(ast.Module(body=child.body, type_ignores=[]), True, found)
            _assertions(ast.Module(body=child.orelse, type_ignores=[]), in_loop, found)
        else:
            _assertions(child, in_loop, found)


def loop_only_tests(source: str, filename: str = "<test>") -> list[str]:
    """``file:line:name`` of every test function that asserts, and asserts only in loops that may run zero
    times."""
    return loops_only(ast.parse(source, filename), filename)


def loops_only(module: ast.Module, filename: str) -> list[str]:
    """``loop_only_tests`` of a parsed module."""
    found = []
    for function in walked(module):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name.startswith("test_"):
            where: list[bool] = []
            _assertions(function, False, where)
            if where and all(where):
                found.append(f"{filename}:{function.lineno}:{function.name}")
    return found


def test_no_test_asserts_only_inside_loops_that_may_run_zero_times() -> None:
    files = sorted(TESTS.glob("test_*.py"))
    assert len(files) >= 80, "the scan finds the test files"
    found = [hit for path in files for hit in loops_only(tree(path), path.name)]
    assert found == [], (
        "these tests pass when their loop runs zero times; assert how many items they checked, outside the "
        "loop:\n" + "\n".join(found)
    )


SAMPLES = {
    "every assertion in a loop over something found": (
        """
        def test_x(panels):
            for panel in panels:
                assert panel["description"]
        """,
        True,
    ),
    "a helper assertion in a nested loop": (
        """
        def test_x(profiles):
            for profile in profiles:
                for layer in layers(profile):
                    check_layer(layer)
        """,
        True,
    ),
    "a while loop": (
        """
        def test_x(queue):
            while queue:
                assert queue.pop()
        """,
        True,
    ),
    "the count asserted before the loop": (
        """
        def test_x(panels, profile):
            assert len(panels) == profile.total_gpus
            for panel in panels:
                assert panel["description"]
        """,
        False,
    ),
    "the count asserted after the loop": (
        """
        def test_x(panels):
            checked = 0
            for panel in panels:
                assert panel["description"]
                checked += 1
            assert checked >= 3
        """,
        False,
    ),
    "a for loop's else branch runs when the loop does not": (
        """
        def test_x(panels):
            for panel in panels:
                assert panel
                break
            else:
                assert panels
        """,
        False,
    ),
    "a loop over a literal tuple runs": (
        """
        def test_x(result):
            for fmt in ("text", "json"):
                assert fmt in result
        """,
        False,
    ),
    "a loop over range of a positive constant runs": (
        """
        def test_x(rng):
            for _ in range(80):
                assert rng.random() < 1
        """,
        False,
    ),
    "an empty literal or range(0) may not run": (
        """
        def test_x(rng):
            for _ in range(0):
                assert rng
            for item in ():
                assert item
        """,
        True,
    ),
    "a literal loop around a loop over something found": (
        """
        def test_x(stage_panels):
            for key in ("running", "queue"):
                for spec in stage_panels(key):
                    assert spec.title
        """,
        True,
    ),
    "no assertion at all is another question": (
        """
        def test_x(panels):
            for panel in panels:
                render(panel)
        """,
        False,
    ),
    "a nested function's assertions are its own": (
        """
        def test_x(panels):
            def check(panel):
                assert panel
            assert panels
            for panel in panels:
                check(panel)
        """,
        False,
    ),
    "pytest.fail in a loop only": (
        """
        def test_x(panels):
            for panel in panels:
                if not panel:
                    pytest.fail("empty")
        """,
        True,
    ),
}


@pytest.mark.parametrize(("source", "flagged"), SAMPLES.values(), ids=SAMPLES.keys())
def test_the_scan_flags_loop_only_assertions_and_nothing_else(source: str, flagged: bool) -> None:
    assert bool(loop_only_tests(textwrap.dedent(source))) == flagged


def test_the_session_keeps_what_collection_built_out_of_the_garbage_collectors_scans():
    """tests/conftest.py freezes the collected heap and raises the collector's first threshold: without them the
    collector took about 10 s of make test-fast's CPU instead of 3 s."""
    import gc

    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold()[0] >= 10_000
