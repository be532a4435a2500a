"""A publishing work folder whose long-context-64 shares one panel as a library panel (:func:`share`), its
library-panel ledger lines (:func:`library_lines`), and a profile change that changes the shared panel
(:func:`rescrape`)."""

from __future__ import annotations

from pathlib import Path

from publishing import ledger

from dashgen.render.library import element_uid

PROFILE = "long-context-64"

UID = f"dg-{PROFILE}-cluster"

KEY = "gpu_health.pcie_replays"

LIB = element_uid(PROFILE, KEY)


def share(work: Path, keys: tuple[str, ...] = (KEY,)) -> None:
    path = work / "profiles" / f"{PROFILE}.toml"
    listed = ", ".join(f'"{k}"' for k in keys)
    text = path.read_text().replace("[dashboard]\n", f"[dashboard]\nlibrary_panels = [{listed}]\n", 1)
    path.write_text(text)


def library_lines(work: Path) -> list[dict]:
    return [r for r in ledger(work) if r.get("kind") == "library-panel"]


def rescrape(work: Path, interval: str) -> None:
    """A profile change that changes the shared panel: DCGM's interval is in its title and its query's step."""
    path = work / "profiles" / f"{PROFILE}.toml"
    text = path.read_text().replace(
        '[sources.dcgm]\nstatus = "exported"\nscrape_interval = "30s"',
        f'[sources.dcgm]\nstatus = "exported"\nscrape_interval = "{interval}"',
    )
    path.write_text(text)
