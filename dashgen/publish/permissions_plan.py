"""Folder permissions of a release (pure): what ``dashgen.toml`` says each context's managed folders grant, as
a difference to what Grafana stores, with the refusals that protect access dashgen did not grant.

In ``dashgen.toml``, per context and folder uid, who may ``view``, ``edit`` or ``admin`` it::

    [contexts.prod.permissions.llm-clusters]
    view = ["role:Viewer", "team:support"]
    edit = ["team:sre"]
    admin = ["serviceaccount:dashgen-ci"]

A principal is ``team:<name>``, ``serviceaccount:<name>``, ``user:<login>`` or ``role:Viewer`` / ``role:Editor``
(Grafana's Admin role always has access; it cannot be given). Only Grafana's *managed*, not inherited, entries are
compared (grafana-api.md §16.2).

The plan adds what is missing and changes what differs. It removes (or lowers) an entry only when dashgen granted
it: the folder's last release recorded it. Any other removal or lowering needs ``remove-access:<folder>/<principal>``
(a person's or another tool's grant is never dropped silently).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dashgen.errors import InputError
from dashgen.publish.actions import RESOURCE_WRITING, PermissionAction
from dashgen.publish.approvals import Approvals
from dashgen.publish.guard import Refusal, Verdict, require
from dashgen.publish.ledger import LedgerRecord, last_written

KIND = "folder-permissions"  # the ledger's ``kind``
LEVELS = ("View", "Edit", "Admin")
PRINCIPAL_KINDS = ("team", "serviceaccount", "user", "role")
ROLES = ("Viewer", "Editor")


@dataclass(frozen=True)
class FolderAccess:
    """Who may view / edit / admin one folder: principal -> level."""

    folder_uid: str
    grants: tuple[tuple[str, str], ...]  # (principal, level), sorted

    @property
    def uid(self) -> str:
        """The ledger's uid of the folder's permissions."""
        return permissions_uid(self.folder_uid)

    @property
    def sha(self) -> str:
        return grants_sha(dict(self.grants))


def permissions_uid(folder_uid: str) -> str:
    return f"dgp-{folder_uid}"


def grants_sha(grants: Mapping[str, str]) -> str:
    encoded = json.dumps(sorted(grants.items()), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def parse_access(where: str, folder_uid: str, table: object) -> FolderAccess:
    """One ``permissions.<folder uid>`` table; an input error names the file, context, folder and field."""
    if not isinstance(table, dict):
        raise InputError(f"{where}.permissions.{folder_uid}: expected a table with view / edit / admin lists")
    grants: dict[str, str] = {}
    for key, value in table.items():
        field = f"{where}.permissions.{folder_uid}.{key}"
        if key not in ("view", "edit", "admin"):
            raise InputError(f"{field}: unknown field; expected view, edit or admin")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(f'{field}: expected a list of principals like "team:sre"')
        for principal in value:
            kind, _, name = principal.partition(":")
            if kind not in PRINCIPAL_KINDS or not name.strip():
                raise InputError(
                    f"{field}: {principal!r} is not team:<name>, serviceaccount:<name>, user:<login> or role:<role>"
                )
            if kind == "role" and name not in ROLES:
                raise InputError(f"{field}: {principal!r}: a role is Viewer or Editor (Admin always has access)")
            if principal in grants:
                raise InputError(f"{field}: {principal!r} is also given {grants[principal]}; give each principal once")
            grants[principal] = key.capitalize()
    return FolderAccess(folder_uid, tuple(sorted(grants.items())))


@dataclass(frozen=True)
class PermissionItem:
    """What the release does with one folder's permissions: ``update``, ``unchanged`` or ``refused``; the
    assignments to send as ``principal -> level`` (``""`` removes)."""

    uid: str
    folder_uid: str
    action: PermissionAction
    access: FolderAccess
    live: tuple[tuple[str, str], ...]
    changes: tuple[tuple[str, str], ...] = ()
    summary: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    approvals_used: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()  # principals Grafana does not know (a refusal each)

    @property
    def writes(self) -> bool:
        return self.action in RESOURCE_WRITING

    # what its ledger line and its not-written outcome say (``dashgen.publish.resource_outcome.ResourceItem``)
    profile = ""  # a context's folder, no profile's
    live_version = None
    ledger_name = None

    @property
    def build_sha(self) -> str:
        return self.access.sha

    @property
    def live_sha(self) -> str:
        return grants_sha(dict(self.live))

    @property
    def live_grants(self) -> tuple[tuple[str, str], ...]:
        return self.live

    @property
    def ledger_folder(self) -> str:
        return self.folder_uid


def plan_folder(
    access: FolderAccess,
    live: Mapping[str, str] | None,
    ledger: list[LedgerRecord],
    approvals: Approvals,
    unknown: Iterable[str] = (),
) -> PermissionItem:
    """The item of one folder: ``live`` is None when the folder does not exist (yet): its permissions are then
    the wanted ones once the release created it."""
    wanted = dict(access.grants)
    stored = dict(live or {})
    last = last_written(ledger, access.uid)
    granted = {str(p): str(level) for p, level in (last.grants or []) if last} if last else {}
    verdict = Verdict()
    missing = tuple(sorted(unknown))
    for principal in missing:
        verdict += Verdict((Refusal(f"principal:{principal}", f"Grafana has no {principal.replace(':', ' ', 1)}"),))
    changes: list[tuple[str, str]] = []
    summary: list[str] = []
    for principal, level in sorted(wanted.items()):
        if stored.get(principal) != level:
            changes.append((principal, level))
            was = stored.get(principal)
            summary.append(f"{principal}: {was or 'no access'} -> {level}")
    for principal, level in sorted(stored.items()):
        wanted_level = wanted.get(principal)
        lowered = wanted_level is None or LEVELS.index(wanted_level) < LEVELS.index(level)
        if not lowered:
            continue
        if wanted_level is None:
            changes.append((principal, ""))
            summary.append(f"{principal}: {level} -> no access")
        if granted.get(principal) != level:
            verdict += require(
                f"remove-access:{access.folder_uid}/{principal}",
                f"{principal} has {level} on folder {access.folder_uid!r}, which dashgen did not grant; "
                f"dashgen.toml gives it {wanted_level or 'no access'}",
                access.uid,
                approvals,
            )
    live_pairs = tuple(sorted(stored.items()))
    action: PermissionAction = "refused" if verdict.refusals else ("update" if changes else "unchanged")
    return PermissionItem(
        access.uid,
        access.folder_uid,
        action,
        access,
        live_pairs,
        tuple(changes),
        tuple(summary) or ("Grafana stores these permissions",),
        verdict.refusals,
        verdict.used,
        missing,
    )
