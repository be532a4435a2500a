"""Canonical JSON: the one byte encoding used for files, SHAs and read-back comparison.

Sorted keys, two-space indentation, UTF-8, a trailing newline. The SHA ignores only the fields
the Grafana server owns (``id``, ``version``), so a read-back can be compared with the build.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

SERVER_OWNED = ("id", "version")


def encode(doc: Any) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def content_view(doc: dict[str, Any]) -> dict[str, Any]:
    """The dashboard without the server-owned fields."""
    view = copy.deepcopy(doc)
    for key in SERVER_OWNED:
        view.pop(key, None)
    return view


def content_sha(doc: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical encoding of the dashboard's content."""
    return hashlib.sha256(encode(content_view(doc))).hexdigest()
