"""The collector pauses of dashgen.render.collector: the state before a block is the state after it."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from dashgen.render.collector import collector_paused, heap_frozen


@pytest.mark.parametrize("enabled", [True, False])
def test_a_paused_collector_runs_again_only_if_it_ran_before(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("the block failed")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


FROZEN = """
import gc
from dashgen.render.collector import heap_frozen
assert gc.get_freeze_count() == 0
held = [[] for _ in range(100)]
with heap_frozen():
    frozen = gc.get_freeze_count()
    assert frozen >= len(held), frozen
    made = [[] for _ in range(100)]
    assert gc.get_freeze_count() == frozen  # what the block allocates is not frozen
assert gc.get_freeze_count() == 0
try:
    with heap_frozen():
        raise RuntimeError("the block failed")
except RuntimeError:
    pass
assert gc.get_freeze_count() == 0
gc.freeze()
frozen = gc.get_freeze_count()
with heap_frozen():
    pass
assert gc.get_freeze_count() == frozen  # a freeze made before the block is not undone
print("ok")
"""


def test_a_frozen_heap_is_collected_again_after_the_block_and_a_heap_frozen_before_stays_frozen():
    """In a process of its own: the test session has frozen its heap (conftest), which the block leaves alone."""
    done = subprocess.run([sys.executable, "-c", FROZEN], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
    before = gc.get_freeze_count()
    with heap_frozen():
        assert gc.get_freeze_count() == before or before == 0
    assert gc.get_freeze_count() == before


AT_EXIT = """
import atexit, gc, sys
from click.testing import CliRunner
from dashgen.cli import main
assert CliRunner().invoke(main, ["--version"]).exit_code == 0
assert gc.get_freeze_count() == 0  # a caller that passes the words goes on: nothing is frozen for it
atexit.register(lambda: print("frozen at exit" if gc.get_freeze_count() else "not frozen at exit"))
sys.argv = ["dashgen", "--version"]
main()
"""


def test_a_command_run_as_the_process_leaves_its_heap_out_of_the_exit_collections():
    """The ``dashgen`` script's command line: by the interpreter's exit the heap is frozen (its final collections
    walk nothing the command built); a test's runner is left as it was."""
    done = subprocess.run([sys.executable, "-c", AT_EXIT], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "frozen at exit", done.stdout
