"""What the fuzz suites share: every path into a nested JSON-like value (iterative, no recursion limit)."""

from __future__ import annotations

from typing import Any


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a nested dict / list, the value itself first."""
    found, stack = [], [(value, prefix)]
    while stack:
        node, at = stack.pop()
        found.append(at)
        if isinstance(node, dict):
            stack.extend((v, (*at, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*at, i)) for i, v in enumerate(node))
    return found
