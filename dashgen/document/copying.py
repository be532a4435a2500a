"""A deep copy of a decoded JSON tree at a fraction of ``copy.deepcopy``'s time.

The renderers and the v2 classic view copy panel, query and option trees so that no two documents share a mutable
part; ``copy.deepcopy`` keeps a memo of every object it copies and dispatches on each value's type through a table,
most of a v2 render's time. A tree of dicts, lists, tuples and JSON scalars is copied here by its shape; anything
else in it (a subclass of dict, an object) by ``copy.deepcopy``. Unlike ``deepcopy``, a list or dict that appears
twice in the tree becomes two copies: the copy shares nothing mutable, with itself or with the original."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

T = TypeVar("T")

_SCALARS = frozenset({str, int, float, bool, type(None)})


def tree_copy(value: T) -> T:
    """A copy of ``value`` that shares no dict or list with it (nor with itself); equal to ``copy.deepcopy``'s."""
    return _copy(value)


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: _copy(item) if type(item) not in _SCALARS else item for key, item in value.items()}
    if kind is list:
        return [_copy(item) if type(item) not in _SCALARS else item for item in value]
    if kind in _SCALARS:
        return value
    if kind is tuple:
        return tuple(_copy(item) for item in value)
    return copy.deepcopy(value)
