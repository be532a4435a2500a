"""The vocabulary an imported module adds to the panel kit (imported as ``dashgen.importer.vocab``): where each
panel sits, the dashboard around the groups, and the evidence of a panel whose description is not dashgen's
source / quantity / limit.

A module written by ``dashgen import`` builds its panels with ``dashgen.render.kit`` and its rows with
``GroupSpec``, and ends with one ``DASHBOARD = ImportedDashboard(...)``; ``dashgen render-module`` renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashgen.render.spec import Evidence, GroupSpec

IMPORTED_SOURCE = "imported from Grafana"


@dataclass(frozen=True)
class ImportedEvidence(Evidence):
    """The description of an imported panel, verbatim: it states no source, quantity or limit, and says so.

    ``text`` None means the panel had no description at all. dashgen's own panels never use it (a test
    checks): theirs state what they prove."""

    text: str | None = None

    def describe(self) -> str:
        return self.text or ""


def imported(description: str | None) -> ImportedEvidence:
    """The evidence of an imported panel: its description as Grafana stored it (None: it had none)."""
    return ImportedEvidence(source=IMPORTED_SOURCE, quantity="not stated", limit="not stated", text=description)


@dataclass(frozen=True)
class Place:
    """Where Grafana had a panel (its width and height are the panel's own) and its id there, when the id
    is not the one its key derives."""

    x: int
    y: int
    id: int | None = None


@dataclass(frozen=True)
class ImportedDashboard:
    """An imported dashboard: its groups in reading order, variables as Grafana stores them, the layout
    (panel key -> Place; ``row:<group key>`` for a row header: a group without one has no row, as the
    panels Grafana shows above the first row), raw patches of row headers, and the dashboard's other fields."""

    title: str | None
    uid: str | None
    schema_version: int
    groups: tuple[GroupSpec, ...]
    variables: tuple[dict[str, Any], ...] = ()
    layout: dict[str, Place] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
