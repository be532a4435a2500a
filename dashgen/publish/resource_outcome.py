"""What became of one resource a release keeps in Grafana besides its dashboards — a library panel, a rule group,
a folder's permissions — and its ledger line (``kind`` says which; the fields are the dashboards' own)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from dashgen.publish.actions import RESOURCE_STORED_OUTCOMES, OutcomeKind, ResourceAction
from dashgen.publish.backups import save_backup
from dashgen.publish.export import Connection
from dashgen.publish.guard import Refusal
from dashgen.publish.ledger import LedgerRecord, append


@dataclass(frozen=True)
class ResourceOutcome:
    """What became of one resource (``outcome``: one of the ledger's outcomes)."""

    uid: str
    profile: str
    outcome: OutcomeKind
    stored_sha: str | None = None
    detail: str = ""
    version: int | None = None  # a library panel's version (Grafana keeps none for the others)
    published_file: str | None = None  # the read-back copy a rollback republishes
    backup_file: str | None = None  # what Grafana stored before the write
    grants: tuple[tuple[str, str], ...] | None = None  # folder permissions: what Grafana stores after it

    @property
    def ok(self) -> bool:
        return self.outcome in RESOURCE_STORED_OUTCOMES


class ResourceItem(Protocol):
    """A planned item of one kind (library panel, rule group, folder permissions): its decision, and what its
    ledger line and its not-written outcome say of it."""

    @property
    def uid(self) -> str: ...

    @property
    def profile(self) -> str: ...

    @property
    def action(self) -> ResourceAction: ...

    @property
    def writes(self) -> bool: ...

    @property
    def refusals(self) -> tuple[Refusal, ...]: ...

    @property
    def approvals_used(self) -> tuple[str, ...]: ...

    @property
    def build_sha(self) -> str: ...

    @property
    def live_sha(self) -> str | None: ...

    @property
    def live_version(self) -> int | None: ...

    @property
    def live_grants(self) -> tuple[tuple[str, str], ...] | None: ...

    @property
    def ledger_folder(self) -> str | None: ...

    @property
    def ledger_name(self) -> str | None: ...


Item = TypeVar("Item", bound=ResourceItem)


@dataclass(frozen=True)
class ResourceRelease:
    """Where one release puts what it does to these resources: the connection, the ledger, the backups, and the
    commit, time and release id every line carries."""

    connection: Connection
    ledger_path: Path
    backup_dir: Path
    git_commit: str
    stamp: str
    release_id: str | None = None  # a staged release's id, on every line as on its dashboards'

    def line(self, kind: str, item: ResourceItem, outcome: ResourceOutcome) -> LedgerRecord:
        """The ledger line of one item (the dashboards' fields; ``kind`` says which resource)."""
        return LedgerRecord(
            time=self.stamp,
            git_commit=self.git_commit,
            profile=outcome.profile,
            uid=outcome.uid,
            outcome=outcome.outcome,
            grafana_version=outcome.version,
            build_sha=item.build_sha,
            stored_sha=outcome.stored_sha,
            approvals_used=item.approvals_used,
            backup_file=outcome.backup_file,
            published_file=outcome.published_file,
            grafana_url=self.connection.instance.url,
            message=outcome.detail,
            refusals=tuple(f"{r.key}: {r.reason}" for r in item.refusals),
            org_id=self.connection.org_id,
            folder_uid=item.ledger_folder,
            kind=kind,
            name=item.ledger_name,
            grants=outcome.grants,
            release_id=self.release_id,
        )

    def backup(self, uid: str, body: dict[str, Any], kind: str = "", version: int = 0) -> str:
        """What Grafana stores (or stored after a write: ``kind="published"``) kept under ``<backups>/<uid>/``."""
        return str(save_backup(self.backup_dir, uid, version, self.stamp, body, kind, reuse_identical=True))


def not_written(item: ResourceItem, held: bool) -> ResourceOutcome:
    """The outcome of an item the release does not write: held (the release is refused), unchanged, or refused."""
    if held and item.action != "refused":
        return ResourceOutcome(
            item.uid, item.profile, OutcomeKind.HELD, None, "not written: the release is refused", item.live_version
        )
    if item.action == "unchanged":
        detail = "no write: Grafana stores this build"
        return ResourceOutcome(
            item.uid,
            item.profile,
            OutcomeKind.UNCHANGED,
            item.live_sha,
            detail,
            item.live_version,
            grants=item.live_grants,
        )
    reasons = "; ".join(f"{r.reason} (approve: {r.key})" for r in item.refusals)
    return ResourceOutcome(item.uid, item.profile, OutcomeKind.REFUSED, None, reasons, item.live_version)


# A release writes the resources first and deletes the ones the build no longer has last.
Phase = Literal["write", "delete"]


def run_phase(
    kind: str,
    items: Sequence[Item],
    phase: Phase,
    held: bool,
    release: ResourceRelease,
    *,
    write: Callable[[Item, ResourceRelease], ResourceOutcome],
    delete: Callable[[Item, ResourceRelease], ResourceOutcome] | None = None,
) -> list[ResourceOutcome]:
    """One phase of a kind: ``write`` (every item but deletions: the writes, and the lines of what is not written)
    or ``delete``; ``held``: the release is blocked, nothing is written. The ledger lines go in one append."""
    chosen = [i for i in items if (i.action == "delete") == (phase == "delete")]
    outcomes = []
    for item in chosen:
        if held or not (item.writes or item.action == "delete"):
            outcomes.append(not_written(item, held))
        elif item.action == "delete":
            assert delete is not None, f"{kind}: a delete item needs a delete step"
            outcomes.append(delete(item, release))
        else:
            outcomes.append(write(item, release))
    append(release.ledger_path, [release.line(kind, i, o) for i, o in zip(chosen, outcomes, strict=True)])
    return outcomes
