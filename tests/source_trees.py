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
