"""The library panels of a release plan (pure): for each element of the build, and each element dashgen
published before that the build no longer has, one decision with its refusals and the keys that approve them.

The guards are the dashboards' (``dashgen.publish.approvals``):

* ``overwrite-live:<element uid>`` — the element was edited in Grafana since the last release (the stored SHA
  is not the ledger's), or Grafana holds it but dashgen never released it here (``--overwrite-live``);
* ``<panel key>`` — the queries of an existing shared panel change, as for a panel of a dashboard;
* ``remove:library-panel:<uid>`` — an element dashgen published for a profile of this release that the build no
  longer has is deleted (the clean-up);
* ``connected:<uid>`` — never granted: that element is still used by a dashboard dashgen does not manage, and
  Grafana refuses to delete a connected element (403 "the library element has connections").

An element is written before the dashboards (a dashboard's reference must find it) and deleted after them (the
dashboards that dropped it no longer connect it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dashgen.grafana.library import LiveElement
from dashgen.publish.actions import RESOURCE_WRITING, STORED_OUTCOMES, OutcomeKind, ResourceAction
from dashgen.publish.approvals import CONNECTED_PREFIX, Approvals
from dashgen.publish.guard import Refusal, Verdict, require
from dashgen.publish.ledger import LedgerRecord, last_written
from dashgen.render.library import LibraryElement

KIND = "library-panel"  # the ledger's ``kind`` of an element's line


@dataclass(frozen=True)
class LibraryItem:
    """What the release does with one library panel: ``create``, ``update``, ``unchanged``, ``delete`` or
    ``refused``. ``element`` is None for a delete (the build no longer has it)."""

    uid: str
    profile: str
    action: ResourceAction
    element: LibraryElement | None
    live: LiveElement | None
    summary: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    approvals_used: tuple[str, ...] = ()
    connected: tuple[str, ...] = ()  # dashboards Grafana says use it now

    @property
    def writes(self) -> bool:
        return self.action in RESOURCE_WRITING

    @property
    def name(self) -> str:
        if self.element is not None:
            return self.element.name
        return self.live.name if self.live is not None else self.uid

    @property
    def dashboards(self) -> tuple[str, ...]:
        """The dashboards of the build that use it (a delete: those Grafana says use it)."""
        return self.element.dashboards if self.element is not None else self.connected

    # what its ledger line and its not-written outcome say (``dashgen.publish.resource_outcome.ResourceItem``)
    @property
    def build_sha(self) -> str:
        return self.element.sha if self.element is not None else ""

    @property
    def live_sha(self) -> str | None:
        return self.live.sha if self.live is not None else None

    @property
    def live_version(self) -> int | None:
        return self.live.version if self.live is not None else None

    live_grants = None
    ledger_folder = None
    ledger_name = None


def is_library_record(record: LedgerRecord) -> bool:
    return record.kind == KIND


def _queries(model: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(t.get("refId", "")), str(t.get("expr", ""))) for t in model.get("targets") or [] if isinstance(t, dict)
    ]


def _plan_element(
    element: LibraryElement, live: LiveElement | None, ledger: list[LedgerRecord], approvals: Approvals
) -> LibraryItem:
    used = f"used by {', '.join(element.dashboards)}"
    if live is None:
        gone = last_written(ledger, element.uid) is not None
        note = "deleted in Grafana since the last release; created again" if gone else "new library panel"
        return LibraryItem(element.uid, element.profile, "create", element, None, (note, used))
    if live.sha == element.sha:
        return LibraryItem(element.uid, element.profile, "unchanged", element, live, ("Grafana stores this build",))
    last = last_written(ledger, element.uid)
    verdict = Verdict()
    if last is None or last.stored_sha not in live.shas:
        why = (
            "Grafana holds this library panel but the ledger has no release of it on this instance; publishing "
            "overwrites it (a backup is kept)"
            if last is None
            else f"edited in Grafana since the last release (live v{live.version}"
            + (f" by {live.updated_by}" if live.updated_by else "")
            + f", SHA {live.sha[:12]} != recorded {str(last.stored_sha)[:12]}); publishing overwrites the "
            "edit in every dashboard that uses it (a backup is kept)"
        )
        verdict += require(f"overwrite-live:{element.uid}", why, element.uid, approvals)
    if _queries(live.model) != _queries(element.model):
        verdict += require(
            element.key, f'queries of existing shared panel "{element.title}" change ({used})', element.uid, approvals
        )
    summary = [f'library panel "{element.title}" changes (v{live.version}); {used}']
    if live.name != element.name:
        summary.append(f"renamed {live.name!r} -> {element.name!r}")
    action: ResourceAction = "refused" if verdict.refusals else "update"
    return LibraryItem(
        element.uid, element.profile, action, element, live, tuple(summary), verdict.refusals, verdict.used
    )


def _plan_delete(
    uid: str,
    profile: str,
    live: LiveElement,
    connected: tuple[str, ...],
    managed: set[str],
    approvals: Approvals,
) -> LibraryItem:
    others = tuple(d for d in connected if d not in managed)
    if others:
        refusal = Refusal(
            f"{CONNECTED_PREFIX}{uid}",
            f"library panel {live.name!r} is no longer built but dashboards dashgen does not manage use it "
            f"({', '.join(others)}); Grafana refuses to delete a connected library panel: remove it from those "
            "dashboards first",
        )
        return LibraryItem(uid, profile, "refused", None, live, (), (refusal,), connected=connected)
    verdict = require(
        f"remove:library-panel:{uid}",
        f"library panel {live.name!r} is in Grafana but no longer in the build (clean-up)",
        uid,
        approvals,
    )
    action: ResourceAction = "refused" if verdict.refusals else "delete"
    note = (f"deleted after the dashboards that used it ({', '.join(connected)}) are published",) if connected else ()
    return LibraryItem(uid, profile, action, None, live, note, verdict.refusals, verdict.used, connected)


def stale_uids(ledger: list[LedgerRecord], profiles: Iterable[str], built: Iterable[str]) -> dict[str, str]:
    """uid -> profile of each element dashgen stored on the instance (a published or unchanged line, and no
    ``deleted`` line after it) for one of ``profiles``, that the build no longer has."""
    wanted, have = set(profiles), set(built)
    stored: dict[str, str] = {}
    for record in ledger:
        if not is_library_record(record):
            continue
        uid = str(record.uid)
        if record.outcome in STORED_OUTCOMES:
            stored[uid] = str(record.profile)
        elif record.outcome == OutcomeKind.DELETED:
            stored.pop(uid, None)
    return {uid: profile for uid, profile in stored.items() if uid not in have and profile in wanted}


def plan_library(
    elements: list[LibraryElement],
    live: Mapping[str, LiveElement | None],
    ledger: list[LedgerRecord],
    approvals: Approvals,
    stale: Mapping[str, str] | None = None,
    connections: Mapping[str, tuple[str, ...]] | None = None,
    managed: Iterable[str] = (),
) -> tuple[LibraryItem, ...]:
    """One item per element of the build, then one per ``stale`` element Grafana still holds (uid -> profile).
    ``ledger`` holds this instance's records; ``connections`` the dashboards using each stale element; ``managed``
    the dashboards of this release."""
    items = [_plan_element(e, live.get(e.uid), ledger, approvals) for e in elements]
    for uid, profile in sorted((stale or {}).items()):
        state = live.get(uid)
        if state is not None:
            items.append(_plan_delete(uid, profile, state, (connections or {}).get(uid, ()), set(managed), approvals))
    return tuple(items)
