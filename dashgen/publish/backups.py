"""Backups of live dashboards, written before anything else happens in a release (and before
any push), so nothing a person saved in Grafana can be lost."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dashgen.files import atomic_write

DEFAULT_BACKUP_DIR = Path("releases/backups")


def backup_path(directory: Path, uid: str, version: int, stamp: str, kind: str = "") -> Path:
    """``<dir>/<uid>/<stamp>-v<version>.json`` for exports, ``...-v<version>-published.json`` for read-backs."""
    safe_stamp = re.sub(r"[^0-9A-Za-z]", "", stamp)
    suffix = f"-{kind}" if kind else ""
    return directory / uid / f"{safe_stamp}-v{version}{suffix}.json"


def save_backup(directory: Path, uid: str, version: int, stamp: str, export: dict[str, Any], kind: str = "") -> Path:
    """Write the exported dashboard and its meta, fsynced; never overwrites an existing backup."""
    path = backup_path(directory, uid, version, stamp, kind)
    candidate, counter = path, 1
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}-{counter}.json")
        counter += 1
    text = json.dumps(export, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    atomic_write(candidate, text.encode("utf-8"), fsync=True)
    return candidate


def load_backup(path: Path) -> dict[str, Any]:
    """A backup as written by ``save_backup``: ``{"dashboard": ..., "meta": ...}``."""
    return json.loads(path.read_text(encoding="utf-8"))
