"""The scheduler ``make test`` runs the tests with (``pytest -n auto``, ``--dist loadgroup`` in pyproject.toml):
xdist's scope scheduling, its scopes being the groups tests/conftest.py computes on the workers at collection (one per
module-scoped server fixture and parameter; every other test is a scope of its own).

pytest-xdist 3.8's own ``loadgroup`` reads a group from a suffix it appends to each node id, and that suffix no longer
takes on pytest 9.2 (structured node ids; pytest-xdist issue 1386): every test then runs as if ungrouped. So the
workers write their groups, by node id, to a folder the controller made (``GROUPS_ENV``), and this scheduler reads them
once every worker has collected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling
from xdist.workermanage import WorkerController

GROUPS_ENV = "DASHGEN_TEST_GROUPS"


def write_groups(folder: str, worker: str, groups: dict[str, str]) -> None:
    """A worker's groups (node id -> group), written whole (rename) so the controller never reads half a file."""
    path = Path(folder) / f"{worker}.json"
    part = path.with_suffix(".part")
    part.write_text(json.dumps(groups), encoding="utf-8")
    part.replace(path)


def read_groups(folder: str) -> dict[str, str]:
    groups: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.json")):
        groups.update(json.loads(path.read_text(encoding="utf-8")))
    return groups


class SharedFixtureScheduling(LoadScopeScheduling):
    """Scope scheduling whose scopes are the groups the workers wrote; xdist queues the largest scopes first
    (``--loadscope-reorder``, its default), so the shared servers start early and the single tests fill in."""

    def __init__(self, config: pytest.Config, log: Producer | None, folder: str) -> None:
        super().__init__(config, log)
        self.folder = folder
        self.groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:  # first called once every worker has collected (and written its groups)
            self.groups = read_groups(self.folder)
        return self.groups.get(nodeid, nodeid)

    def mark_test_complete(self, node: WorkerController, item_index: int, duration: float = 0) -> None:
        """As xdist's, and a finished scope leaves the node's work: xdist sums every scope a node was ever given on
        each test's completion (quadratic in the ~2,800 single-test scopes of this suite)."""
        nodeid = self.registered_collections[node][item_index]
        scope = self._split_scope(nodeid)
        unit = self.assigned_work[node][scope]
        unit[nodeid] = True
        if all(unit.values()):
            del self.assigned_work[node][scope]
        self._reschedule(node)
