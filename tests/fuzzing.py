"""What the fuzz suites share: every path into a nested JSON-like value (iterative, no recursion limit)."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings


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


def examples(default: int) -> int:
    """Examples per property: ``DASHGEN_FUZZ_EXAMPLES``, else the suite's own default."""
    return int(os.environ.get("DASHGEN_FUZZ_EXAMPLES", str(default)))


def fuzz_settings(max_examples: int) -> settings:
    """The fuzz suites' settings: seeded (``derandomize``), no deadline, no example database."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
