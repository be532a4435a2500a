"""The release bundle: the checked build, carried from the job that builds to the job that publishes.

Building runs the team's code (their panel modules). The job that holds the Grafana token must not: CI builds and
checks in one job (``dashgen check --bundle FILE``, no token) and the publish job pushes the bundle
(``dashgen publish --bundle FILE``) with dashgen's own code only. The bundle holds per dashboard what a publish
needs and nothing a publish would have to compute with team code: the profile, the uid, Grafana's minimum
refresh interval for it, the stable key of each panel id (approval keys), and the document.

Pure: encoding and decoding; a malformed bundle is an input error naming the file and the entry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dashgen.errors import InputError
from dashgen.files.parsers import parse_json

FORMAT = "dashgen-release-bundle"
VERSION = 1


@dataclass(frozen=True)
class BundledDashboard:
    profile: str
    uid: str
    min_refresh_interval: str
    panel_keys: dict[int, str]
    document: dict[str, Any]


@dataclass(frozen=True)
class Bundle:
    commit: str
    dashboards: tuple[BundledDashboard, ...]


def encode(bundle: Bundle) -> bytes:
    data = {
        "format": FORMAT,
        "version": VERSION,
        "commit": bundle.commit,
        "dashboards": [
            {
                "profile": d.profile,
                "uid": d.uid,
                "min_refresh_interval": d.min_refresh_interval,
                "panel_keys": {str(k): v for k, v in sorted(d.panel_keys.items())},
                "document": d.document,
            }
            for d in bundle.dashboards
        ],
    }
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def decode(data: bytes, source: str) -> Bundle:
    try:
        raw = parse_json(data)
    except ValueError as exc:  # not UTF-8, not JSON, or nested too deeply
        raise InputError(f"{source}: not a release bundle (not JSON: {exc})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(f"{source}: not a release bundle (write one with dashgen check --bundle FILE)")
    if raw.get("version") != VERSION:
        raise InputError(f"{source}: bundle version {raw.get('version')!r}; this dashgen reads version {VERSION}")
    commit, entries = raw.get("commit"), raw.get("dashboards")
    if not isinstance(commit, str) or not isinstance(entries, list):
        raise InputError(f"{source}: commit must be a string and dashboards a list")
    dashboards = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        where = f"{source}: dashboards[{number}]"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: must be an object")
        profile, uid, refresh = entry.get("profile"), entry.get("uid"), entry.get("min_refresh_interval")
        keys, document = entry.get("panel_keys"), entry.get("document")
        if not all(isinstance(v, str) and v for v in (profile, uid, refresh)):
            raise InputError(f"{where}: profile, uid and min_refresh_interval must be non-empty strings")
        if not isinstance(document, dict) or not isinstance(keys, dict):
            raise InputError(f"{where} ({uid}): document and panel_keys must be objects")
        try:
            panel_keys = {int(k): str(v) for k, v in keys.items()}
        except ValueError:
            raise InputError(f"{where} ({uid}): panel_keys maps panel ids (integers) to keys") from None
        named = document.get("uid", (document.get("metadata") or {}).get("name"))
        if named != uid:
            raise InputError(f"{where}: the document's uid is {named!r}, not {uid!r}")
        if uid in seen:
            raise InputError(f"{where}: uid {uid!r} twice")
        seen.add(str(uid))
        dashboards.append(BundledDashboard(str(profile), str(uid), str(refresh), panel_keys, document))
    return Bundle(commit, tuple(dashboards))
