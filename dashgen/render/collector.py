"""Pausing Python's cyclic garbage collector around work that allocates many objects it keeps and frees by
reference count: parsing source into syntax trees, reading large JSON answers. Each pause is a block, and the
collector runs again after it only if it ran before it; a process about to exit leaves its heap out of the
collections of the interpreter's own exit."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (as it was before it: enabled again only if it was).

    A collection is triggered by the count of objects allocated, and a full one walks every object the process
    holds: a block that allocates hundreds of thousands of syntax-tree nodes triggers many, each over the whole
    heap (``dashgen check`` holds both profiles' builds then), while the nodes themselves hold no cycle."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
    """What the process holds at the start of the block left out of every cyclic collection inside it (Python's
    permanent generation), and put back into the oldest generation at its end.

    For a command that builds something large once and then works beside it until it exits: each full
    collection would otherwise walk the whole build again. What the block allocates is collected as usual. A
    process that froze its heap itself (a test session does) is left as it is: unfreezing at the end would undo
    its freeze too."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def heap_left_at_exit() -> None:
    """Everything the process holds left out of the cyclic collections the interpreter runs as it exits (Python's
    permanent generation): for a process that is about to end, never for one that goes on.

    Exiting, the interpreter clears each module and runs full collections over whatever is still alive, and a
    command that built something large walks all of it again only to hand the memory back to the system, which
    the process's end does anyway: a third of a second of a ``check`` of the scale profiles (both builds, the
    syntax trees and lint contexts it kept), a tenth of its CPU. Nothing is lost: what holds a file, a connection
    or a child process is closed by its owner before the command returns, standard output and error are flushed
    by the interpreter, and ``atexit`` handlers still run."""
    gc.freeze()
