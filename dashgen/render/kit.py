"""The panel kit: one small helper per panel kind, so a panel definition reads like the dashboard.

``timeseries(key, title, evidence, targets, unit=...)`` returns the ``PanelSpec`` of that kind;
every panel module builds its panels with these and nothing else. Titles are written literally
at the call (a grep for a title shown in Grafana finds its definition); the kit adds nothing to
a title. Shared panel plumbing lives here too: the *not available* panel of a source a
deployment does not export (S15), the No Data text (S6/S7), the stat's last-value reduction,
the table merge of instant queries into one row per key, and Grafana's link shape.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from dashgen.deployment.profile import Profile
from dashgen.render.spec import RATIO_UNITS, Evidence, PanelSpec, Target

NO_DATA_TEXT = "No data: see Missing-data reasons"
_origins: dict[str, tuple[str, str]] | None = None


@contextmanager
def recording_origins() -> Iterator[dict[str, tuple[str, str]]]:
    """While active, each panel made through the kit notes which panel function defines it:
    key -> (module, function). The generated panel index reads it; rendering never does."""
    global _origins
    _origins = {}
    try:
        yield _origins
    finally:
        _origins = None


def _defining_function(title: str) -> tuple[str, str]:
    """The innermost ``panels`` function on the stack whose code holds the title's literal text; where
    that is a group's ``build`` (it passes titles to a panel function) or there is none (a title from
    a module-level table), the innermost public ``panels`` function."""
    stem = title.rsplit(" (", 1)[0]
    wanted = {title, stem, stem + " ("}
    public = None
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        module, code = frame.f_globals.get("__name__", ""), frame.f_code
        if module.startswith("dashgen_panels."):
            module = module.removeprefix("dashgen_")  # shown by the repository folder, panels/
            if code.co_name != "build" and wanted & {c for c in code.co_consts if isinstance(c, str)}:
                return module, code.co_name
            if public is None and not code.co_name.startswith(("_", "<")):
                public = (module, code.co_name)
        frame = frame.f_back
    return public or ("panels", "?")


def _panel(
    kind: str, key: str, title: str, evidence: Evidence | None, targets: Iterable[Target], fields: dict[str, Any]
) -> PanelSpec:
    if _origins is not None:
        _origins[key] = _defining_function(title)
    return PanelSpec(key=key, title=title, kind=kind, evidence=evidence, targets=tuple(targets), **fields)


def timeseries(key: str, title: str, evidence: Evidence, targets: Iterable[Target], **fields: Any) -> PanelSpec:
    """A graph over time: one series per target result."""
    return _panel("timeseries", key, title, evidence, targets, fields)


def table(key: str, title: str, evidence: Evidence, targets: Iterable[Target], **fields: Any) -> PanelSpec:
    """A table, usually of instant queries merged into one row per key (``merge_table``)."""
    return _panel("table", key, title, evidence, targets, fields)


def stat(key: str, title: str, evidence: Evidence, targets: Iterable[Target], **fields: Any) -> PanelSpec:
    """One number per series."""
    return _panel("stat", key, title, evidence, targets, fields)


def state_timeline(key: str, title: str, evidence: Evidence, targets: Iterable[Target], **fields: Any) -> PanelSpec:
    """States over time, one row per series, named and coloured by value mappings."""
    return _panel("state-timeline", key, title, evidence, targets, fields)


def bargauge(key: str, title: str, evidence: Evidence, targets: Iterable[Target], **fields: Any) -> PanelSpec:
    """Horizontal bars, one per series, at the window end."""
    return _panel("bargauge", key, title, evidence, targets, fields)


def text(key: str, title: str, content: str, evidence: Evidence | None = None, **fields: Any) -> PanelSpec:
    """Markdown; ``evidence`` where the text states numbers (e.g. configured quotas)."""
    return _panel("text", key, title, evidence, (), {"content": content, **fields})


def ratio_axis(unit: str) -> dict[str, Any]:
    """``{"unit": .., "min": .., "max": ..}`` for a ratio unit: its fixed axis (S5), to splat into a panel."""
    low, high = RATIO_UNITS[unit]
    return {"unit": unit, "min": low, "max": high}


def last_value(**options: Any) -> dict[str, Any]:
    """Stat options: show each series' last non-null value."""
    return {**options, "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}


def link(title: str, url: str) -> dict[str, Any]:
    """A panel or data link in the shape Grafana's schema types (DashboardLink)."""
    return {
        "title": title,
        "type": "link",
        "url": url,
        "icon": "dashboard",
        "tooltip": title,
        "tags": [],
        "asDropdown": False,
        "targetBlank": False,
        "includeVars": False,
        "keepTime": True,
    }


def ref(index: int) -> str:
    """The refId of the index-th target: A, B, ..."""
    return chr(ord("A") + index)


def merge_table(rename: dict[str, str], exclude: list[str]) -> tuple[dict[str, Any], ...]:
    """Transformations that merge instant table queries into one row per key and name the columns.

    ``rename`` maps the original field names (label names, ``Value #A``...) to column titles, in
    column order; Grafana's organize step indexes and renames by the original names.
    """
    order = list(rename)
    return (
        {"id": "merge", "options": {}},
        {
            "id": "organize",
            "options": {
                "excludeByName": {name: True for name in exclude},
                "indexByName": {name: index for index, name in enumerate(order)},
                "renameByName": dict(rename),
            },
        },
    )


NOT_AVAILABLE = ": not available"


def source_status_panel(key: str, profile: Profile, names: list[str], title: str, width: int = 24) -> PanelSpec:
    """One clear text panel saying which sources are not deployed or not exported (S15). ``title`` is
    ``"<what the panels show>: not available"``, written literally by the caller.

    Shown instead of charts that could only be empty; no empty scrape target is invented.
    """
    if not title.endswith(NOT_AVAILABLE):
        raise ValueError(f"panel {key!r}: a source-status title ends with {NOT_AVAILABLE!r}: {title!r}")
    what = title.removesuffix(NOT_AVAILABLE)
    lines = [f"**{what}** is not shown for this deployment ({profile.name}):", ""]
    for name in names:
        source = profile.source(name)
        if source.status == "not-exported":
            state = "not exported by the client in this deployment (the metric exists in its code)"
        elif source.status == "not-deployed":
            state = "not deployed"
        else:
            continue
        lines.append(f"- {source.what} (`{name}`): {state}.")
    lines += ["", "These panels would otherwise be empty; absent data here is a deployment fact, not a zero."]
    return text(key, title, "\n".join(lines), width=width, height=2 + len(names) + 3)
