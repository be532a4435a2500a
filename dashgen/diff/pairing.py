"""Pair the dashboards of two sides (folders, files or a git ref) for comparison.

Documents are paired by relative path first, then by dashboard ``uid``; what is left is
reported as added (only on the new side) or removed (only on the old side).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashgen.document import unwrap


def _uid(doc: Any) -> str | None:
    try:
        uid = unwrap(doc).get("uid")
    except ValueError:
        return None
    return uid if isinstance(uid, str) and uid else None


def pair_documents(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, Any | None, Any | None]]:
    """``[(name, old_doc | None, new_doc | None)]`` in name order; name is the new side's when paired."""
    pairs: list[tuple[str, Any | None, Any | None]] = []
    old_left = dict(old)
    new_left: dict[str, Any] = {}
    for name, doc in new.items():
        if name in old_left:
            pairs.append((name, old_left.pop(name), doc))
        else:
            new_left[name] = doc
    by_uid = {u: name for name, doc in old_left.items() if (u := _uid(doc))}
    for name, doc in new_left.items():
        uid = _uid(doc)
        if uid is not None and uid in by_uid and by_uid[uid] in old_left:
            pairs.append((name, old_left.pop(by_uid[uid]), doc))
        else:
            pairs.append((name, None, doc))
    pairs += [(name, doc, None) for name, doc in old_left.items()]
    return sorted(pairs, key=lambda p: p[0])
