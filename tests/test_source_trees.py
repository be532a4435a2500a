"""The session's shared parse of the sources (tests/source_trees.py): its walk yields ``ast.walk``'s nodes in
``ast.walk``'s order, and a module is parsed once, with the collector as it was around the parse."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

from source_trees import nodes, tree, walked

ROOT = Path(__file__).resolve().parent.parent

# Syntax the project's modules use little or not at all: where a node's fields hold a list, a node, None or a
# mixture (a dict's ``None`` key, a slice's missing bounds, a match's patterns).
ODD = """
async def f(a, /, b=1, *c, d, **e) -> int:
    async with x as (y, z):
        async for i in y:
            yield {**a, 'k': [j async for j in i if j]}
    match a:
        case {"k": [1, *rest]} | Point(x=0) if rest:
            pass
        case _:
            del a[1:], b[::2]
    return (lambda q=..., *, r: q)(r=f"{a!r:>{b}}")


@decorator(1)
class C(Base, metaclass=M):
    x: int = 1
    global g
    try:
        raise E from None
    except* (E, F) as err:
        assert not err, "message"
    finally:
        nonlocal_ = not (a is b < c in d)
"""


def test_a_walk_is_ast_walks_nodes_in_its_order():
    modules = [ast.parse(ODD), *(tree(ROOT / p) for p in ("tests/conftest.py", "dashgen/panel_index.py"))]
    functions = [node for module in modules for node in module.body if isinstance(node, ast.FunctionDef)]
    assert len(functions) > 20
    for node in [*modules, *functions]:
        assert nodes(node) == tuple(ast.walk(node))
    assert walked(modules[1]) is walked(modules[1])


def test_a_module_is_parsed_once_and_the_collector_runs_as_it_did(tmp_path):
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            path = tmp_path / f"module_{enabled}.py"
            path.write_text(ODD, encoding="utf-8")
            parsed = tree(path)
            assert gc.isenabled() is enabled
            assert tree(path) is parsed
            assert ast.dump(parsed) == ast.dump(ast.parse(ODD))
    finally:
        (gc.enable if was else gc.disable)()
