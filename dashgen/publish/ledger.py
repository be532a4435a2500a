"""The release ledger: one JSON line per dashboard per release, appended, never rewritten.

A record holds what a later release needs to tell a human edit from dashgen's own last push
(the stored SHA) and what a rollback needs (the backup file). Records are keyed by the Grafana
instance (normalised URL + organisation) and the uid: a release to staging says nothing about
prod. No secret is ever written: the record is built from an allow-list of fields.

Faults. An append is one fsynced write that is cut back on failure (``dashgen.files.append_durably``),
so only a crash in the middle of the write leaves a torn last line. ``load`` detects one (a last line
that is not a JSON record) and reports it; ``quarantine`` moves it to a side file and cuts the ledger
back to its last good record, so the next release goes on from there. A malformed line anywhere else
is a hand edit: an input error naming the file and line.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dashgen.errors import InputError
from dashgen.files import append_durably, atomic_write

DEFAULT_LEDGER = Path("releases/ledger.jsonl")
STORED_OUTCOMES = ("published", "unchanged")
# One process may run the releases of several Grafanas at once (a staged release): their appends, loads and
# repairs of the one ledger file are taken in turn, so no load ever sees another thread's half-written line
# as a torn one.
_IN_PROCESS = threading.RLock()


def normalise_url(url: str) -> str:
    """The instance part of a Grafana URL: lower-case scheme and host, no default port, no trailing slash."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    port = parts.port
    if port and not ((parts.scheme == "http" and port == 80) or (parts.scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class Instance:
    """One Grafana organisation: what the ledger, the lock and the last release are keyed by."""

    url: str
    org_id: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", normalise_url(self.url))

    @property
    def label(self) -> str:
        return f"{self.url} org {self.org_id}"

    def holds(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` was written for this instance (records before org ids existed are org 1)."""
        recorded_org = record.get("org_id")
        org = recorded_org if isinstance(recorded_org, int) else 1
        return normalise_url(str(record.get("grafana_url") or "")) == self.url and org == self.org_id


@dataclass(frozen=True)
class LedgerRecord:
    time: str
    git_commit: str
    profile: str
    uid: str
    outcome: str  # published | unchanged | refused | held | conflict | failed | verify-failed | invalid-queries
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
    org_id: int = 1
    folder_uid: str | None = None
    # A v2 release (issue 30): the /apis version written and the stored object's resourceVersion (its generation
    # is ``grafana_version``); left out of the line for v1 releases.
    api_version: str | None = None
    resource_version: str | None = None
    # The staged release (``publish --stages``) this line belongs to: it ties one release's lines across contexts.
    release_id: str | None = None
    # What the line is about when it is not a dashboard (``library-panel``); left out of a dashboard's line.
    kind: str | None = None
    name: str | None = None  # its name in Grafana where the uid is dashgen's own (a rule group's title)
    grants: tuple[tuple[str, str], ...] | None = None  # folder permissions: (principal, level) Grafana stores

    def to_json(self) -> str:
        data = asdict(self)
        for key in ("api_version", "resource_version", "release_id", "kind", "name", "grants"):
            if data[key] is None:
                del data[key]
        data["approvals_used"] = list(self.approvals_used)
        data["cleanup"] = list(self.cleanup)
        data["refusals"] = list(self.refusals)
        return json.dumps(data, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class LedgerState:
    """What ``load`` found: the good records, and a torn last line if there is one."""

    path: Path
    records: list[dict[str, Any]]
    good_size: int = 0
    torn: bytes = b""

    @property
    def torn_note(self) -> str:
        if not self.torn:
            return ""
        return (
            f"{self.path}: the last line ({len(self.torn)} bytes) is torn, from a write cut short; "
            "it is not a record and the release goes on from the last good record"
        )


def append(path: Path, records: list[LedgerRecord]) -> None:
    """Append records in one fsynced write; raises ``OSError`` with the file unchanged when it cannot."""
    if records:
        with _IN_PROCESS:
            append_durably(path, "".join(record.to_json() + "\n" for record in records))


def load(path: Path) -> LedgerState:
    """Every good record, oldest first, and a torn last line if any (never written to: see ``quarantine``)."""
    with _IN_PROCESS:
        return _load(path)


def _load(path: Path) -> LedgerState:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LedgerState(path, [])
    except OSError as exc:
        raise InputError(f"{path}: cannot read the ledger ({exc.strerror})") from None
    parts = data.split(b"\n")
    complete, tail = parts[:-1], parts[-1]  # every complete line ended with a newline; tail did not
    records: list[dict[str, Any]] = []
    good_size = 0
    for number, raw in enumerate(complete, start=1):
        if raw.strip():
            record = _parse(raw)
            if record is None:
                if number == len(complete) and not tail.strip():
                    return LedgerState(path, records, good_size, data[good_size:])
                raise InputError(
                    f"{path}:{number}: not a JSON ledger record (edited by hand? move the line "
                    "out of the ledger, then run again)"
                )
            records.append(record)
        good_size += len(raw) + 1
    if tail.strip():
        record = _parse(tail)
        if record is None:
            return LedgerState(path, records, good_size, tail)
        records.append(record)  # a complete record whose newline was never written
        good_size = len(data)
    return LedgerState(path, records, good_size, b"")


def read(path: Path) -> list[dict[str, Any]]:
    """All good records, oldest first (a torn last line is left out; ``load`` reports it)."""
    return load(path).records


def quarantine(state: LedgerState, stamp: str) -> Path | None:
    """Move a torn last line to ``<ledger>.torn-<stamp>`` and cut the ledger back to its last good record.

    Returns the side file, or None when there was nothing to repair. A complete last record that only
    lacks its newline gets the newline, so the next append starts a line of its own.
    """
    with _IN_PROCESS:  # read again: another release of this process may have appended since ``state`` was read
        return _quarantine(_load(state.path) if state.torn else state, stamp)


def _quarantine(state: LedgerState, stamp: str) -> Path | None:
    path = state.path
    if not state.torn:
        if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            append_durably(path, "\n")
        return None
    side = path.with_name(f"{path.name}.torn-{''.join(c for c in stamp if c.isalnum())}")
    atomic_write(side, state.torn, fsync=True)
    with path.open("r+b") as handle:
        handle.truncate(state.good_size)
        handle.flush()
        os.fsync(handle.fileno())
    return side


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) and "uid" in record else None


def of_instance(records: list[dict[str, Any]], instance: Instance | None) -> list[dict[str, Any]]:
    """The records written for ``instance`` (all when None)."""
    return records if instance is None else [r for r in records if instance.holds(r)]


def last_stored(records: list[dict[str, Any]], uid: str, instance: Instance | None = None) -> dict[str, Any] | None:
    """The newest record of ``uid`` on ``instance`` whose content Grafana verifiably stores (published or unchanged)."""
    for record in reversed(of_instance(records, instance)):
        if record.get("uid") == uid and record.get("outcome") in STORED_OUTCOMES and record.get("stored_sha"):
            return record
    return None


def read_back_record(
    records: list[dict[str, Any]], record: dict[str, Any], instance: Instance | None = None
) -> dict[str, Any] | None:
    """The newest record of ``record``'s dashboard on ``instance`` with the same stored SHA whose read-back
    copy (``published_file``) is still on disk: ``record`` itself, or for a no-op release (``unchanged``
    keeps no copy) the release that stored those bytes."""
    sha = record.get("stored_sha")
    for candidate in reversed(of_instance(records, instance)):
        if (
            candidate.get("uid") == record.get("uid")
            and candidate.get("stored_sha") == sha
            and candidate.get("published_file")
            and Path(str(candidate["published_file"])).exists()
        ):
            return candidate
    return None


def last_written(records: list[dict[str, Any]], uid: str, instance: Instance | None = None) -> dict[str, Any] | None:
    """The newest record of ``uid`` on ``instance`` that says what Grafana stored: published, unchanged, or
    verify-failed (dashgen's own push, stored rewritten)."""
    for record in reversed(of_instance(records, instance)):
        if (
            record.get("uid") == uid
            and record.get("stored_sha")
            and record.get("outcome") in (*STORED_OUTCOMES, "verify-failed")
        ):
            return record
    return None
