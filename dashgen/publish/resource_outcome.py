"""What became of one resource a release keeps in Grafana besides its dashboards — a library panel, a rule group,
a folder's permissions — and its ledger line (``kind`` says which; the fields are the dashboards' own)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dashgen.publish.export import Connection
from dashgen.publish.guard import Refusal
from dashgen.publish.ledger import LedgerRecord

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
        outcome=outcome.outcome,
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
