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

import os
import threading
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dashgen.errors import InputError
from dashgen.escape import report_json
from dashgen.files import append_durably, atomic_write, read_regular_bytes
from dashgen.files.parsers import parse_json
from dashgen.publish.actions import STORED_OUTCOMES, WRITTEN_OUTCOMES, OutcomeKind

DEFAULT_LEDGER = Path("releases/ledger.jsonl")
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

    def holds(self, record: LedgerRecord) -> bool:
        """Whether ``record`` was written for this instance (records before org ids existed read as org 1)."""
        return normalise_url(record.grafana_url) == self.url and record.org_id == self.org_id


@dataclass(frozen=True)
class LedgerRecord:
    time: str
    git_commit: str
    profile: str
    uid: str
    outcome: OutcomeKind
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
    # A v2 release: the /apis version written and the stored object's resourceVersion (its generation
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
        """One line; a live title's C1 or bidi control (in a refusal) as its escape: the ledger is committed and read
        in diffs and terminals."""
        return report_json(self.to_dict(), sort_keys=True)

    def to_dict(self) -> dict[str, Any]:
        """The line as JSON types: lists for the tuples, the outcome's string, unset optional fields left out."""
        data = asdict(self)
        for key in ("api_version", "resource_version", "release_id", "kind", "name", "grants"):
            if data[key] is None:
                del data[key]
        data["approvals_used"] = list(self.approvals_used)
        data["cleanup"] = list(self.cleanup)
        data["refusals"] = list(self.refusals)
        data["outcome"] = str(self.outcome)
        if self.grants is not None:
            data["grants"] = [list(grant) for grant in self.grants]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LedgerRecord | None:
        """The record a ledger line holds, or None when the line is not one (a field of the wrong type, an outcome
        no release writes). Lines older than a field read it at its default, as the release that wrote them meant."""
        try:
            outcome = OutcomeKind(str(data.get("outcome")))
        except ValueError:
            return None
        values: dict[str, Any] = {"outcome": outcome}
        for spec in fields(cls):
            if spec.name == "outcome" or spec.name not in data:
                continue
            value = data[spec.name]
            if spec.name in _TUPLES:
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    return None
                value = tuple(value)
            elif spec.name == "grants" and value is not None:
                if not isinstance(value, list) or not all(
                    isinstance(g, list) and len(g) == 2 and all(isinstance(x, str) for x in g) for g in value
                ):
                    return None
                value = tuple((g[0], g[1]) for g in value)
            elif not _fits(spec.name, value):
                return None
            values[spec.name] = value
        for name in _REQUIRED_TEXT:
            values.setdefault(name, "")
        values.setdefault("grafana_version", None)
        values.setdefault("stored_sha", None)
        return cls(**values)


_TUPLES = ("approvals_used", "cleanup", "refusals")
_REQUIRED_TEXT = ("time", "git_commit", "profile", "uid", "build_sha")
_INTEGERS = ("grafana_version", "org_id")
_OPTIONAL_TEXT = (
    "stored_sha",
    "backup_file",
    "published_file",
    "folder_uid",
    "api_version",
    "resource_version",
    "release_id",
    "kind",
    "name",
)


def _fits(name: str, value: Any) -> bool:
    """Whether a ledger line's ``value`` has the type of the field ``name``."""
    if name in _INTEGERS:
        return (isinstance(value, int) and not isinstance(value, bool)) or (value is None and name != "org_id")
    if name in _OPTIONAL_TEXT:
        return value is None or isinstance(value, str)
    return isinstance(value, str)


@dataclass(frozen=True)
class LedgerState:
    """What ``load`` found: the good records, and a torn last line if there is one."""

    path: Path
    records: list[LedgerRecord]
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
        data = read_regular_bytes(path)
    except FileNotFoundError:
        return LedgerState(path, [])
    except OSError as exc:
        raise InputError(f"{path}: cannot read the ledger ({exc.strerror})") from None
    parts = data.split(b"\n")
    complete, tail = parts[:-1], parts[-1]  # every complete line ended with a newline; tail did not
    records: list[LedgerRecord] = []
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


def read(path: Path) -> list[LedgerRecord]:
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
        if path.exists() and path.stat().st_size and not read_regular_bytes(path).endswith(b"\n"):
            append_durably(path, "\n")
        return None
    side = path.with_name(f"{path.name}.torn-{''.join(c for c in stamp if c.isalnum())}")
    atomic_write(side, state.torn, fsync=True)
    with path.open("r+b") as handle:
        handle.truncate(state.good_size)
        handle.flush()
        os.fsync(handle.fileno())
    return side


def _parse(raw: bytes) -> LedgerRecord | None:
    try:
        record = parse_json(raw)
    except ValueError:  # not UTF-8, not JSON, nested too deeply: not a record; the caller names the line
        return None
    return LedgerRecord.from_json(record) if isinstance(record, dict) and "uid" in record else None


def of_instance(records: list[LedgerRecord], instance: Instance | None) -> list[LedgerRecord]:
    """The records written for ``instance`` (all when None)."""
    return records if instance is None else [r for r in records if instance.holds(r)]


def last_stored(records: list[LedgerRecord], uid: str, instance: Instance | None = None) -> LedgerRecord | None:
    """The newest record of ``uid`` on ``instance`` whose content Grafana verifiably stores (published or unchanged)."""
    for record in reversed(of_instance(records, instance)):
        if record.uid == uid and record.outcome in STORED_OUTCOMES and record.stored_sha:
            return record
    return None


def read_back_record(
    records: list[LedgerRecord], record: LedgerRecord, instance: Instance | None = None
) -> LedgerRecord | None:
    """The newest record of ``record``'s dashboard on ``instance`` with the same stored SHA whose read-back
    copy (``published_file``) is still on disk: ``record`` itself, or for a no-op release (``unchanged``
    keeps no copy) the release that stored those bytes."""
    for candidate in reversed(of_instance(records, instance)):
        if (
            candidate.uid == record.uid
            and candidate.stored_sha == record.stored_sha
            and candidate.published_file
            and Path(candidate.published_file).exists()
        ):
            return candidate
    return None


def last_written(records: list[LedgerRecord], uid: str, instance: Instance | None = None) -> LedgerRecord | None:
    """The newest record of ``uid`` on ``instance`` that says what Grafana stored: published, unchanged, or
    verify-failed (dashgen's own push, stored rewritten)."""
    for record in reversed(of_instance(records, instance)):
        if record.uid == uid and record.stored_sha and record.outcome in WRITTEN_OUTCOMES:
            return record
    return None
