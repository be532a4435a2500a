"""The release ledger: one JSON line per dashboard per release, appended, never rewritten.

A record holds what a later release needs to tell a human edit from dashgen's own last push
(the stored SHA) and what a rollback needs (the backup file). No secret is ever written: the
record is built from an allow-list of fields.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dashgen.errors import InputError
from dashgen.files import append_durably

DEFAULT_LEDGER = Path("releases/ledger.jsonl")


@dataclass(frozen=True)
class LedgerRecord:
    time: str
    git_commit: str
    profile: str
    uid: str
    outcome: str  # published | unchanged | refused | conflict | failed | verify-failed | dry-run
    grafana_version: int | None
    build_sha: str
    stored_sha: str | None
    approvals_used: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()
    backup_file: str | None = None
    published_file: str | None = None
    grafana_url: str = ""
    message: str = ""
    refusals: tuple[str, ...] = field(default=())

    def to_json(self) -> str:
        data = asdict(self)
        data["approvals_used"] = list(self.approvals_used)
        data["cleanup"] = list(self.cleanup)
        data["refusals"] = list(self.refusals)
        return json.dumps(data, sort_keys=True, ensure_ascii=False)


def append(path: Path, records: list[LedgerRecord]) -> None:
    """Append records, flushed and fsynced, so a crash loses at most the line being written."""
    if records:
        append_durably(path, "".join(record.to_json() + "\n" for record in records))


def read(path: Path) -> list[dict[str, Any]]:
    """All records, oldest first. A malformed line is an input error naming the file and line."""
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not a JSON ledger line ({exc.msg})") from None
    return records


def last_stored(records: list[dict[str, Any]], uid: str) -> dict[str, Any] | None:
    """The newest record of ``uid`` whose content Grafana verifiably stores (published or unchanged)."""
    for record in reversed(records):
        if record.get("uid") == uid and record.get("outcome") in ("published", "unchanged") and record.get(
            "stored_sha"
        ):
            return record
    return None
