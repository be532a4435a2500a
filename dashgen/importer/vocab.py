"""The names a module written by ``dashgen import`` imports (``from dashgen.importer.vocab import ...``): a stable
path for the team's modules, re-exporting :mod:`dashgen.render.imported`, where the vocabulary lives (below the
composition, which includes a team's imported modules in a profile's dashboard)."""

from dashgen.render.imported import IMPORTED_SOURCE, ImportedDashboard, ImportedEvidence, Place, imported

__all__ = ["IMPORTED_SOURCE", "ImportedDashboard", "ImportedEvidence", "Place", "imported"]
