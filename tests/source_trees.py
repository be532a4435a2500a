"""The repository's Python sources, each read and parsed (``ast``) once per test session: the architecture,
code-health and test-habit checks walk the same few hundred files, and each of them parsing every file again was
most of their time. The checks only walk the trees; none changes one (they are shared)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


@cache
def source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(source(path), str(path))


@cache
def walked(node: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(node)`` of a shared tree, once per session: the checks each walk the same few hundred trees (a
    generator of ``iter_child_nodes`` per node; walking them again per check was most of what is left of their
    time). Same nodes, same order."""
    return tuple(ast.walk(node))
