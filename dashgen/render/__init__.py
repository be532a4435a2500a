"""Rendering: the panel vocabulary (spec), the panel kit, the grafanalib bridge, normalisation,
canonical JSON, validation, layout, variables and ids. Knows no panel."""
