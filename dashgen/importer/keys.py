"""Stable keys from titles: ``group.panel`` as dashgen's own panels are keyed, unique within a dashboard.

A key is the title in lower case with every run of other characters made one ``_`` (``"CPU Busy %"`` ->
``cpu_busy``), at most 40 characters; a title repeated in one group gets ``_2``, ``_3`` in reading order, so
a re-import of the same dashboard gives the same keys.
"""

from __future__ import annotations

import keyword
import re

MAX_SLUG = 40


def slug(title: str, fallback: str) -> str:
    """``title`` as a Python-identifier-like key part; ``fallback`` when nothing is left of it."""
    text = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:MAX_SLUG].strip("_")
    if not text:
        text = fallback
    if text[0].isdigit() or keyword.iskeyword(text):
        text = f"{fallback}_{text}"
    return text


class KeyRing:
    """Hands out unique keys in reading order."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def take(self, wanted: str) -> str:
        key, n = wanted, 2
        while key in self._used:
            key, n = f"{wanted}_{n}", n + 1
        self._used.add(key)
        return key
