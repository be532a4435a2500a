"""What a pull request changes in the folder permissions ``dashgen.toml`` gives (pure): per context and folder, each
principal's level old → new, once. A lowered or removed entry says that publishing it needs an approval unless
dashgen granted it (``dashgen.publish.permissions_plan`` decides at publish time, against what Grafana stores).
"""

from __future__ import annotations

from collections.abc import Mapping

# context -> folder uid -> principal -> level (View | Edit | Admin)
Grants = Mapping[str, Mapping[str, Mapping[str, str]]]
LEVELS = ("View", "Edit", "Admin")


def _rank(level: str | None) -> int:
    return LEVELS.index(level) if level in LEVELS else -1


def _entry(principal: str, was: str | None, now: str | None) -> str:
    line = f"{principal} {was or 'no access'} → {now or 'no access'}"
    if _rank(now) < _rank(was):
        line += " (lowered: publish asks for remove-access unless dashgen granted it)"
    return line


def permission_changes(old: Grants, new: Grants) -> list[str]:
    """One line per folder whose permissions change between two ``dashgen.toml`` (``old`` and ``new``)."""
    lines = []
    for context in sorted({*old, *new}):
        before, after = old.get(context, {}), new.get(context, {})
        for folder in sorted({*before, *after}):
            was, now = before.get(folder), after.get(folder)
            where = f"folder {folder} (context {context})"
            if now is None:
                lines.append(f"{where}: no longer managed by dashgen.toml (Grafana keeps what it stores)")
                continue
            if was == now:
                continue
            entries = [
                _entry(p, (was or {}).get(p), now.get(p))
                for p in sorted({*(was or {}), *now})
                if (was or {}).get(p) != now.get(p)
            ]
            lead = f"{where}: permissions now managed: " if was is None else f"{where}: "
            lines.append(lead + ("; ".join(entries) or "no entry"))
    return lines
