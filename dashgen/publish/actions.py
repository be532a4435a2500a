"""The vocabulary of a release: what the plan decides for a dashboard (:class:`Action`) and what became of it
(:class:`OutcomeKind`, the ``outcome`` of a ledger line).

Both are string enums: they print, compare and encode to JSON as the words the CLI, the report and the ledger
have always used (``create``, ``verify-failed`` ...), so typing them changes no output.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class Action(StrEnum):
    """What the plan does with one dashboard."""

    CREATE = "create"
    UPDATE = "update"
    MOVE = "move"  # same content, other folder
    UNCHANGED = "unchanged"  # no write, so Grafana's history is not flooded
    REFUSED = "refused"  # needs an approval (or can never be written: a provisioned dashboard)
    INVALID = "invalid"  # a new or changed query the data source rejects
    DIVERGED = "diverged"  # Grafana rewrites this very build: pushing it again cannot converge


class OutcomeKind(StrEnum):
    """What became of one dashboard of a release (the ledger's ``outcome``)."""

    PUBLISHED = "published"
    UNCHANGED = "unchanged"
    REFUSED = "refused"
    HELD = "held"  # not pushed: the release was refused, interrupted or past its deadline
    INVALID_QUERIES = "invalid-queries"
    DIVERGED = "diverged"
    CONFLICT = "conflict"  # someone saved it between the export and the push; nothing was overwritten
    FAILED = "failed"
    VERIFY_FAILED = "verify-failed"  # saved, but Grafana stores something else than the build
    OVERWRITTEN = "overwritten"  # saved and verified, then changed by another writer before the release ended
    DELETED = "deleted"  # a library panel or rule group removed from Grafana (its backup keeps the last content)


# What a release does with a resource besides the dashboards (a library panel, a rule group): it never moves
# (its folder is part of what it is) and it is deleted when the build no longer has it.
ResourceAction = Literal["create", "update", "unchanged", "delete", "refused"]
# A folder's permissions are always there: they are changed or left, never created or deleted.
PermissionAction = Literal["update", "unchanged", "refused"]
# Where a dashboard's folder goes: a new dashboard, another folder, the same.
FolderMove = Literal["new", "move", "unchanged"]

WRITING: tuple[Action, ...] = (Action.CREATE, Action.UPDATE, Action.MOVE)
# A library panel, rule group or folder's permissions never moves (its folder is part of what it is).
RESOURCE_WRITING: tuple[Action, ...] = tuple(a for a in WRITING if a is not Action.MOVE)
BLOCKING: tuple[Action, ...] = (Action.REFUSED, Action.INVALID, Action.DIVERGED)
ACTIONS: tuple[Action, ...] = tuple(Action)  # in the order a plan counts them
NO_WRITE_OUTCOME: dict[Action, OutcomeKind] = {
    Action.UNCHANGED: OutcomeKind.UNCHANGED,
    Action.REFUSED: OutcomeKind.REFUSED,
    Action.INVALID: OutcomeKind.INVALID_QUERIES,
    Action.DIVERGED: OutcomeKind.DIVERGED,
}

# What Grafana stores after a line with these outcomes is dashgen's build.
STORED_OUTCOMES: tuple[OutcomeKind, ...] = (OutcomeKind.PUBLISHED, OutcomeKind.UNCHANGED)
# A resource besides the dashboards also ends as planned when it is deleted (its backup keeps the last content).
RESOURCE_STORED_OUTCOMES: tuple[OutcomeKind, ...] = (*STORED_OUTCOMES, OutcomeKind.DELETED)
# Grafana received dashgen's push: stored as built, or stored rewritten.
SAVED_OUTCOMES: tuple[OutcomeKind, ...] = (OutcomeKind.PUBLISHED, OutcomeKind.VERIFY_FAILED)
# What Grafana stores after a line with these outcomes: dashgen's bytes, or dashgen's push stored rewritten.
WRITTEN_OUTCOMES: tuple[OutcomeKind, ...] = (*STORED_OUTCOMES, OutcomeKind.VERIFY_FAILED)
# Not attempted by choice (an approval is missing, or the release is refused): not a failure of the write.
NOT_ATTEMPTED_OUTCOMES: tuple[OutcomeKind, ...] = (OutcomeKind.REFUSED, OutcomeKind.HELD)
