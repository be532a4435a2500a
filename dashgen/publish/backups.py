"""Backups of live dashboards, written by a real release after planning and before its first write, so
nothing a person saved in Grafana can be lost. A dry run writes none. A backup whose content equals the
newest backup of the same dashboard and version is not written again: the existing file is reused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dashgen.document.v2view import is_v2_version
from dashgen.errors import InputError
from dashgen.files import create_exclusive, read_regular_text
from dashgen.files.parsers import parse_json

DEFAULT_BACKUP_DIR = Path("releases/backups")


def backup_path(directory: Path, uid: str, version: int, stamp: str, kind: str = "") -> Path:
    """``<dir>/<uid>/<stamp>-v<version>.json`` for exports, ``...-v<version>-published.json`` for read-backs."""
    safe_stamp = re.sub(r"[^0-9A-Za-z]", "", stamp)
    suffix = f"-{kind}" if kind else ""
    return directory / uid / f"{safe_stamp}-v{version}{suffix}.json"


def encode_backup(export: dict[str, Any]) -> bytes:
    """Compact, in the key order Grafana answered (CPython's C encoder: several times faster than a sorted,
    indented dump; one answer always encodes to the same bytes, so identical backups are still found)."""
    return (json.dumps(export, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def save_backup(
    directory: Path,
    uid: str,
    version: int,
    stamp: str,
    export: dict[str, Any] | bytes,
    kind: str = "",
    *,
    reuse_identical: bool = False,
) -> Path:
    """Write an export, fsynced; never overwrites an existing backup. ``export`` is ``{"dashboard", "meta"}``
    (the legacy API's answer) or the bytes of ``{"resource": <object>}`` (an ``/apis`` answer, kept as sent).

    With ``reuse_identical``, an existing backup of the same uid, version and kind holding exactly these
    bytes is returned instead of writing a second copy.
    """
    data = export.rstrip(b"\n") + b"\n" if isinstance(export, bytes) else encode_backup(export)
    if reuse_identical:
        same = find_identical(directory, uid, version, data, kind)
        if same is not None:
            return same
    path = backup_path(directory, uid, version, stamp, kind)
    candidate, counter = path, 1
    while not create_exclusive(candidate, data):  # atomic: two writers never pick the same name
        candidate = path.with_name(f"{path.stem}-{counter}.json")
        counter += 1
    return candidate


def find_identical(directory: Path, uid: str, version: int, data: bytes, kind: str = "") -> Path | None:
    """The newest existing backup of ``uid`` v``version`` (of ``kind``) with exactly these bytes, if any."""
    folder = directory / uid
    if not folder.is_dir():
        return None
    suffix = f"-v{version}-{kind}" if kind else f"-v{version}"
    pattern = re.compile(rf"^[0-9A-Za-z]+{re.escape(suffix)}(-\d+)?\.json$")
    for candidate in sorted(folder.iterdir(), reverse=True):
        if pattern.match(candidate.name) and candidate.stat().st_size == len(data) and candidate.read_bytes() == data:
            return candidate
    return None


def load_backup(path: Path) -> dict[str, Any]:
    """A backup as written by ``save_backup``: ``{"dashboard": ..., "meta": ...}``. For an ``/apis`` object of a
    v1 dashboard both are derived from ``{"resource": ...}`` (the spec with uid, id and version put back, as
    the legacy API shows it); a v2 object has only ``resource`` (:func:`backup_dashboard` reads either)."""
    try:
        data = parse_json(read_regular_text(path))
    except ValueError as exc:  # not UTF-8, not JSON, or nested past the parser's limit
        raise InputError(f"{path}: not a backup dashgen wrote ({str(exc)[:200]})") from None
    resource = data.get("resource") if isinstance(data, dict) else None
    if isinstance(resource, dict) and "dashboard" not in data and not _is_v2(resource):
        metadata = resource.get("metadata") or {}
        labels = metadata.get("labels") or {}
        internal = str(labels.get("grafana.app/deprecatedInternalID") or "0")
        folder = (metadata.get("annotations") or {}).get("grafana.app/folder") or ""
        data["dashboard"] = {
            **(resource.get("spec") or {}),
            "uid": metadata.get("name"),
            "id": int(internal) if internal.isdigit() else 0,
            "version": metadata.get("generation"),
        }
        data["meta"] = {
            "apiVersion": resource.get("apiVersion"),
            "metadata": metadata,
            "status": resource.get("status"),
            "folderUid": folder,
            "version": metadata.get("generation"),
        }
    return data


def backup_dashboard(data: dict[str, Any]) -> dict[str, Any] | None:
    """The dashboard a loaded backup holds: its v1 JSON, or a v2 resource as dashgen builds it (apiVersion, kind,
    name, spec: what a v2 release published, republished through ``/apis`` by a rollback); None for neither."""
    if isinstance(data.get("dashboard"), dict):
        return data["dashboard"]
    resource = data.get("resource")
    if isinstance(resource, dict) and _is_v2(resource) and isinstance(resource.get("spec"), dict):
        return {
            "apiVersion": resource["apiVersion"],
            "kind": "Dashboard",
            "metadata": {"name": (resource.get("metadata") or {}).get("name")},
            "spec": resource["spec"],
        }
    return None


def _is_v2(resource: dict[str, Any]) -> bool:
    return is_v2_version(str(resource.get("apiVersion", "")))
