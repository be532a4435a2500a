"""Leaf-level comparison of two canonical values: a matched panel, a variable, or the dashboard fields.

``deepdiff.DeepDiff`` finds what differs, with its own rules for what ``noise.py`` leaves alone:

* numbers and booleans compare by value, as Python's ``==`` does (``1`` ≡ ``1.0``);
* a list under a ``tags`` key is a set (dashboard tags, link and annotation tag filters);
* it always descends, so a changed object is reported by its changed leaves, never as one blob.

Its result paths are mapped back to the engine's field paths (``fieldConfig.defaults.unit``,
``targets[0].expr``, ``options.0.text``), one per changed leaf; an added or removed subtree is
reported leaf by leaf. A removed or inserted element of a list of scalars is reported as such,
not as every later element shifting by one.

DeepDiff runs only on values that differ (``==`` first): it costs about 1 ms per panel pair, so
plain noise (fields to drop, defaults) is dropped by ``noise.py``, which keeps a UI-saved pair equal
and off this path. Measured on bench/diff.py's dashboards with the query editor's state on every
target: as a DeepDiff exclude rule it sent all 140 panel pairs through DeepDiff, 0.36x a
whole-document DeepDiff; dropped in ``noise.py``, 0.13x. :func:`count_leaf_differences` counts the
differing leaves of raw JSON for the noise figure with a plain flatten-and-compare for the same
reason: it runs on every raw pair (12 ms there; DeepDiff on the same pairs, 240 ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Path = tuple[str | int, ...]


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()

_DEEPDIFF_OPTIONS: Mapping[str, Any] = {
    "view": "tree",
    "ignore_type_in_groups": [(bool, int, float)],
    "ignore_order_func": lambda level: level.path(output_format="list")[-1:] == ["tags"],
    "threshold_to_diff_deeper": 0,  # always descend: report leaves, never a whole object as "changed"
}


def leaves(value: Any, path: Path = ()) -> dict[Path, Any]:
    """Every leaf of a JSON value by its key path; empty containers are leaves."""
    if isinstance(value, Mapping) and value:
        out: dict[Path, Any] = {}
        for key, v in value.items():
            out.update(leaves(v, (*path, str(key))))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(leaves(v, (*path, i)))
        return out
    return {path: value}


def field_path(path: Path) -> str:
    """``("fieldConfig", "defaults", "unit")`` → ``fieldConfig.defaults.unit``; ``("targets", 0)`` → ``targets[0]``."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text


def leaf_changes(old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """``(field path, old, new)`` for every leaf that differs, in path order; ABSENT marks a missing side."""
    if old == new:
        return []
    found: dict[Path, list[Any]] = {}
    _differing(old, new, (), found)
    return sorted(((field_path(p), a, b) for p, (a, b) in found.items()), key=lambda change: change[0])


def _differing(old: Any, new: Any, base: Path, found: dict[Path, list[Any]]) -> None:
    """Record the differing leaves of ``old`` and ``new`` (unequal) under ``base``. Objects are descended key by key
    here, so DeepDiff walks only the smallest differing list or value (a changed query: that target list, not the
    whole panel; it cost half a plan of 50 changed dashboards walking every panel's unchanged fields)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in old.keys() | new.keys():
            path = (*base, str(key))
            if key not in new:
                _record(leaves(old[key], path), 0, found)
            elif key not in old:
                _record(leaves(new[key], path), 1, found)
            elif old[key] != new[key]:
                _differing(old[key], new[key], path, found)
        return
    if _paired_objects(old, new, base):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                _differing(a, b, (*base, index), found)
        return
    deepdiff_leaves(old, new, base, found)


def _paired_objects(old: Any, new: Any, base: Path) -> bool:
    """Whether ``old`` and ``new`` are lists of one length (not a set-like ``tags`` list) whose differing elements
    are objects on both sides: DeepDiff pairs such elements by index and descends into each, as ``_differing``
    does without it (a changed query: its target, not the whole target list, goes to DeepDiff)."""
    if not (isinstance(old, list) and isinstance(new, list)) or len(old) != len(new) or base[-1:] == ("tags",):
        return False
    return all(isinstance(a, Mapping) and isinstance(b, Mapping) for a, b in zip(old, new, strict=True) if a != b)


def deepdiff_leaves(old: Any, new: Any, base: Path, found: dict[Path, list[Any]]) -> None:
    """Record the differing leaves of ``old`` and ``new`` (unequal) under ``base`` as DeepDiff finds them."""
    from deepdiff import DeepDiff  # imported on first use: ~50 ms that an unchanged diff or publish never pays
    from deepdiff.helper import notpresent

    options = dict(_DEEPDIFF_OPTIONS)
    options["ignore_order_func"] = lambda level: [*base, *level.path(output_format="list")][-1:] == ["tags"]
    for levels in DeepDiff(old, new, **options).values():
        for level in levels:
            below = (*base, *level.path(output_format="list"))
            for side, value in enumerate((level.t1, level.t2)):
                if value is not notpresent:
                    _record(leaves(value, below), side, found)


def _record(changed: dict[Path, Any], side: int, found: dict[Path, list[Any]]) -> None:
    # a set-like list can report one swapped element as removed + added at the same index
    for path, leaf in changed.items():
        found.setdefault(path, [ABSENT, ABSENT])[side] = leaf


def count_leaf_differences(old: Any, new: Any) -> int:
    """How many leaves differ between two raw JSON values (no ignore rules): the paths of :func:`leaves` whose
    values differ by ``==``, so ``1`` and ``1.0`` are one value. Equal subtrees are skipped by ``==`` (in C)
    instead of flattened: a plan of 50 dashboards with one changed panel each flattened every field of both
    sides of each pair."""
    if old == new:
        return 0
    if isinstance(old, dict | Mapping) and isinstance(new, dict | Mapping) and old and new:
        return sum(
            count_leaf_differences(old[key], new[key])
            if key in old and key in new
            else len(leaves(old[key] if key in old else new[key]))
            for key in old.keys() | new.keys()
        )
    if isinstance(old, list) and isinstance(new, list) and old and new:
        shared = min(len(old), len(new))
        longer = old if len(old) > shared else new
        return sum(count_leaf_differences(a, b) for a, b in zip(old, new, strict=False)) + sum(
            len(leaves(v)) for v in longer[shared:]
        )
    a, b = leaves(old), leaves(new)
    return sum(1 for path in a.keys() | b.keys() if a.get(path, ABSENT) != b.get(path, ABSENT))
