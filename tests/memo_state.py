"""The process's memos (``dashgen.render.memo.MEMOS``) emptied for one block: a test that counts work, or compares
two computations of the same thing, starts from nothing, as a fresh process does. What the memos held before is
given back after the block, so the tests that run later in the session still find what earlier ones computed
(emptied for good, every composition, build, render, parse and import of the session was computed again)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from dashgen.render.memo import MEMOS


@contextmanager
def emptied_memos() -> Iterator[None]:
    kept = [(memo, memo._answers.copy()) for memo in MEMOS]
    for memo, _ in kept:
        memo.clear()
    try:
        yield
    finally:
        for memo, answers in kept:  # the answers computed in the block are equal ones: the earlier are kept
            memo.clear()
            memo._answers.update(answers)
