"""The long-context-64 profile of a publishing work folder, made a v2 build (:func:`as_v2`) or retitled
(:func:`retitle`): what the v2 publishing tests change in ``profiles/`` before a release."""

from __future__ import annotations

from pathlib import Path

PROFILE = "long-context-64"
UID = "dg-long-context-64-cluster"


def as_v2(work: Path, grafana_version: str = "13.0") -> None:
    """Opt the work folder's long-context-64 into v2 for a Grafana ``grafana_version``."""
    path = work / "profiles" / f"{PROFILE}.toml"
    text = path.read_text().replace('grafana_version = "12.3"', f'grafana_version = "{grafana_version}"\nschema = "v2"')
    path.write_text(text)


def retitle(work: Path, title: str) -> None:
    path = work / "profiles" / f"{PROFILE}.toml"
    lines = [f'title = "{title}"' if line.startswith("title = ") else line for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")
