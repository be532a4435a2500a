"""Canonical JSON: the byte encoding of files, and the content SHA used for read-back proof.

Files: sorted keys, two-space indentation, UTF-8, a trailing newline. The SHA is taken over the
compact form of the same canonical content (sorted keys, no whitespace; CPython's C encoder makes
it several times faster than the indented form) and ignores only the fields the Grafana server owns
(``id``, ``version``), so a read-back can be compared with the build.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SERVER_OWNED = ("id", "version")


def encode(doc: Any) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def content_view(doc: dict[str, Any]) -> dict[str, Any]:
    """The dashboard without the server-owned fields (a shallow copy; the input is not changed)."""
    return {key: value for key, value in doc.items() if key not in SERVER_OWNED}


def content_sha(doc: dict[str, Any]) -> str:
    """SHA-256 hex of the compact canonical encoding of the dashboard's content."""
    compact = json.dumps(content_view(doc), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(compact.encode("utf-8")).hexdigest()
