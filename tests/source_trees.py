"""The repository's Python sources, each read and parsed (``ast``) once per test session: the architecture,
code-health, panel-index and test-habit checks walk the same few hundred files, and each of them parsing every file
again was most of their time. The checks only walk the trees; none changes one (they are shared)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from dashgen.render.collector import collector_paused
from dashgen.render.syntax_nodes import nodes_under


@cache
def source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def tree(path: Path) -> ast.Module:
    """The parsed module, made with the cyclic collector paused: a tree holds no cycle, and the collections its
    thousands of new nodes triggered each scanned the trees parsed before it (kept here), which made the session's
    parses four times as costly."""
    with collector_paused():
        return ast.parse(source(path), str(path))


def nodes(node: ast.AST) -> tuple[ast.AST, ...]:
    """``tuple(ast.walk(node))``: the same nodes in the same (breadth-first) order, read from each node's fields in
    one list that grows as it is read, without ``ast.walk``'s generator per node (a third of its time)."""
    return tuple(nodes_under(node, contexts=True))


@cache
def walked(node: ast.AST) -> tuple[ast.AST, ...]:
    """:func:`nodes` of a shared tree, once per session: the checks each walk the same few hundred trees."""
    return nodes(node)
