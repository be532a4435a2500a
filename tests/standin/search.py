"""``GET /api/search`` of the stand-in (grafana-api.md §5.1): filters, paging, sort and hit shape."""

from __future__ import annotations

import time
from typing import Any

from .store import OrgStore, StoredDashboard, StoredFolder, plain_error, slugify


def search(store: OrgStore, params: dict[str, list[str]], permissions: set[str], lag: float) -> list[dict[str, Any]]:
    def values(name: str) -> list[str]:
        return [v for v in params.get(name, []) if v != ""]

    dash_uids = set(values("dashboardUIDs") + values("dashboardUID"))
    dash_ids = {int(v) for v in values("dashboardIds") if v.isdigit()}
    folder_uids = set(values("folderUIDs"))
    folder_ids = {int(v) for v in values("folderIds") if v.isdigit()}
    if (dash_uids and values("dashboardIds")) or (folder_uids and values("folderIds")):
        raise plain_error(400, "search supports UIDs or IDs, not both")
    limit = _int_param(params, "limit", 1000) or 1000
    if limit > 5000:
        raise plain_error(422, "Limit is above maximum allowed (5000), use page parameter to access hits beyond limit")
    page = max(_int_param(params, "page", 1), 1)
    if values("starred") == ["true"] or values("deleted") == ["true"]:
        return []  # the stand-in has no stars and no trash
    query = (values("query") or [""])[0].lower()
    tags = values("tag")
    kind = (values("type") or [""])[0]
    cutoff = time.monotonic() - lag

    with store.lock:
        hits: list[tuple[bool, str, dict[str, Any]]] = []
        if kind in ("", "dash-folder") and not tags and "folders:read" in permissions:
            for f in store.folders.values():
                if _matches(
                    store, f.uid, f.id, f.title, f.parent_uid, query, dash_uids, dash_ids, folder_uids, folder_ids
                ):
                    hits.append((True, f.title, _folder_hit(store, f)))
        if kind in ("", "dash-db") and "dashboards:read" in permissions:
            for d in store.dashboards.values():
                if d.saved_at > cutoff:
                    continue  # [13] no read-after-write guarantee for search
                d_tags = [t for t in d.data.get("tags") or [] if isinstance(t, str)]
                if all(t in d_tags for t in tags) and _matches(
                    store, d.uid, d.id, d.title, d.folder_uid, query, dash_uids, dash_ids, folder_uids, folder_ids
                ):
                    hits.append((False, d.title, _dashboard_hit(store, d, d_tags)))
    sort = (values("sort") or [""])[0]
    if sort == "alpha-desc":
        hits.sort(key=lambda h: h[1].lower(), reverse=True)
    elif sort == "alpha-asc":
        hits.sort(key=lambda h: h[1].lower())
    else:
        hits.sort(key=lambda h: (not h[0], h[1].lower()))
    return [h[2] for h in hits[(page - 1) * limit :][:limit]]


def _matches(
    store: OrgStore,
    uid: str,
    obj_id: int,
    title: str,
    parent: str,
    query: str,
    dash_uids: set[str],
    dash_ids: set[int],
    folder_uids: set[str],
    folder_ids: set[int],
) -> bool:
    if query and query not in title.lower():
        return False
    if dash_uids and uid not in dash_uids:
        return False
    if dash_ids and obj_id not in dash_ids:
        return False
    if folder_uids and (parent or "general") not in folder_uids:
        return False
    if folder_ids:
        parent_folder = store.folders.get(parent)
        if (parent_folder.id if parent_folder else 0) not in folder_ids:
            return False
    return True


def _folder_fields(store: OrgStore, parent_uid: str) -> dict[str, Any]:
    parent = store.folders.get(parent_uid)
    if parent is None:
        return {}
    return {
        "folderId": parent.id,
        "folderUid": parent.uid,
        "folderTitle": parent.title,
        "folderUrl": store.folder_url(parent),
    }


def _dashboard_hit(store: OrgStore, d: StoredDashboard, tags: list[str]) -> dict[str, Any]:
    slug = slugify(d.title)
    return {
        "id": d.id,
        "uid": d.uid,
        "title": d.title,
        "uri": f"db/{slug}",
        "url": store.dashboard_url(d),
        "slug": slug,
        "type": "dash-db",
        "tags": tags,
        "isStarred": False,
        "sortMeta": 0,
        **_folder_fields(store, d.folder_uid),
    }


def _folder_hit(store: OrgStore, f: StoredFolder) -> dict[str, Any]:
    slug = slugify(f.title)
    return {
        "id": f.id,
        "uid": f.uid,
        "title": f.title,
        "uri": f"db/{slug}",
        "url": store.folder_url(f),
        "slug": slug,
        "type": "dash-folder",
        "tags": [],
        "isStarred": False,
        "sortMeta": 0,
        **_folder_fields(store, f.parent_uid),
    }


def _int_param(params: dict[str, list[str]], name: str, default: int) -> int:
    raw = (params.get(name) or [""])[0]
    try:
        return int(raw)
    except ValueError:
        return default
