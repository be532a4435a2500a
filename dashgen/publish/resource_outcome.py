"""What became of one resource a release keeps in Grafana besides its dashboards — a library panel, a rule group,
a folder's permissions — and its ledger line (``kind`` says which; the fields are the dashboards' own)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from dashgen.publish.actions import OutcomeKind
from dashgen.publish.export import Connection
from dashgen.publish.guard import Refusal
from dashgen.publish.ledger import LedgerRecord, append

STORED = ("published", "unchanged", "deleted")


@dataclass(frozen=True)
class ResourceOutcome:
    """``outcome``: published | unchanged | deleted | refused | held | conflict | failed | verify-failed."""

    uid: str
    profile: str
    outcome: str
    stored_sha: str | None = None
    detail: str = ""
    version: int | None = None  # a library panel's version (Grafana keeps none for the others)
    published_file: str | None = None  # the read-back copy a rollback republishes
    backup_file: str | None = None  # what Grafana stored before the write
    grants: tuple[tuple[str, str], ...] | None = None  # folder permissions: what Grafana stores after it

    @property
    def ok(self) -> bool:
        return self.outcome in STORED


def ledger_line(
    kind: str,
    outcome: ResourceOutcome,
    connection: Connection,
    git_commit: str,
    stamp: str,
    *,
    build_sha: str,
    approvals_used: tuple[str, ...],
    refusals: Sequence[Refusal],
    folder_uid: str | None = None,
    name: str | None = None,
) -> LedgerRecord:
    return LedgerRecord(
        time=stamp,
        git_commit=git_commit,
        profile=outcome.profile,
        uid=outcome.uid,
        outcome=OutcomeKind(outcome.outcome),  # a closed set: a misspelt outcome fails here, not in a later read
        grafana_version=outcome.version,
        build_sha=build_sha,
        stored_sha=outcome.stored_sha,
        approvals_used=approvals_used,
        backup_file=outcome.backup_file,
        published_file=outcome.published_file,
        grafana_url=connection.instance.url,
        message=outcome.detail,
        refusals=tuple(f"{r.key}: {r.reason}" for r in refusals),
        org_id=connection.org_id,
        folder_uid=folder_uid,
        kind=kind,
        name=name,
        grants=outcome.grants,
    )


class PhaseItem(Protocol):
    """A planned item of one kind: its action, and whether it writes."""

    @property
    def action(self) -> str: ...

    @property
    def writes(self) -> bool: ...


Item = TypeVar("Item", bound=PhaseItem)


def run_phase(
    items: Sequence[Item],
    phase: str,
    held: bool,
    *,
    write: Callable[[Item], ResourceOutcome],
    delete: Callable[[Item], ResourceOutcome],
    no_write: Callable[[Item, bool], ResourceOutcome],
    record: Callable[[Item, ResourceOutcome], LedgerRecord],
    ledger_path: Path,
) -> list[ResourceOutcome]:
    """One phase of a kind: ``write`` (every item but deletions: the writes, and the lines of what is not written)
    or ``delete``; ``held``: the release is blocked, nothing is written. The ledger lines go in one append."""
    chosen = [i for i in items if (i.action == "delete") == (phase == "delete")]
    outcomes = []
    for item in chosen:
        if held or not (item.writes or item.action == "delete"):
            outcomes.append(no_write(item, held))
        elif item.action == "delete":
            outcomes.append(delete(item))
        else:
            outcomes.append(write(item))
    append(ledger_path, [record(i, o) for i, o in zip(chosen, outcomes, strict=True)])
    return outcomes
