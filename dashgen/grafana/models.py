"""What Grafana stores, as values: dashboards, save results, history entries and folders.

Each ``*_from`` function turns one already shape-checked JSON object of Grafana's answer into
its dataclass, reading the field names of both Grafana 12 and 13.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LiveDashboard:
    """A dashboard as Grafana stores it now. ``dashboard`` is the JSON model (with id, uid, version)."""

    uid: str
    version: int
    id: int
    dashboard: dict[str, Any]
    folder_uid: str | None
    folder_title: str
    url: str
    slug: str
    created: str
    updated: str
    created_by: str
    updated_by: str
    provisioned: bool
    meta: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class SaveResult:
    """What a save answered: the dashboard's uid, its new version, and where it now lives."""

    uid: str
    version: int
    id: int
    url: str
    slug: str = ""
    folder_uid: str | None = None


@dataclass(frozen=True)
class DashboardVersion:
    """One history entry. ``data`` is None where Grafana leaves it out of the list (legacy storage)."""

    version: int
    parent_version: int
    restored_from: int
    created: str
    created_by: str
    message: str
    data: dict[str, Any] | None = field(repr=False)
    id: int = 0


@dataclass(frozen=True)
class Folder:
    """A folder; ``parent_uid`` is None at the root, ``version`` None where Grafana does not say."""

    uid: str
    title: str
    id: int
    url: str = ""
    parent_uid: str | None = None
    version: int | None = None


def live_dashboard_from(uid: str, dash: dict[str, Any], meta: dict[str, Any]) -> LiveDashboard:
    """The ``dashboard`` and ``meta`` objects of ``GET /api/dashboards/uid/:uid``."""
    version = meta.get("version", dash.get("version"))
    return LiveDashboard(
        uid=str(dash.get("uid", uid)),
        version=int(version or 0),
        id=int(dash.get("id") or 0),
        dashboard=dash,
        folder_uid=meta.get("folderUid") or None,
        folder_title=str(meta.get("folderTitle", "")),
        url=str(meta.get("url", "")),
        slug=str(meta.get("slug", "")),
        created=str(meta.get("created", "")),
        updated=str(meta.get("updated", "")),
        created_by=str(meta.get("createdBy", "")),
        updated_by=str(meta.get("updatedBy", "")),
        provisioned=bool(meta.get("provisioned", False)),
        meta=meta,
    )


def save_result_from(body: Any) -> SaveResult:
    """The answer of a save; raises KeyError, TypeError, ValueError or AttributeError when it is not one."""
    return SaveResult(
        uid=str(body["uid"]),
        version=int(body["version"]),
        id=int(body.get("id") or 0),
        url=str(body.get("url", "")),
        slug=str(body.get("slug", "")),
        folder_uid=body.get("folderUid") or None,
    )


def version_from(row: dict[str, Any]) -> DashboardVersion:
    """One entry of the versions list or the single-version answer."""
    data = row.get("data")
    return DashboardVersion(
        version=int(row.get("version") or 0),
        parent_version=int(row.get("parentVersion") or 0),
        restored_from=int(row.get("restoredFrom") or 0),
        created=str(row.get("created", "")),
        created_by=str(row.get("createdBy", "")),
        message=str(row.get("message") or ""),
        data=data if isinstance(data, dict) else None,
        id=int(row.get("id") or 0),
    )


def folder_from(row: dict[str, Any]) -> Folder:
    """A folder object (it has a ``uid``)."""
    version = row.get("version")
    return Folder(
        uid=str(row["uid"]),
        title=str(row.get("title", "")),
        id=int(row.get("id") or 0),
        url=str(row.get("url", "")),
        parent_uid=row.get("parentUid") or None,
        version=int(version) if isinstance(version, int) else None,
    )
