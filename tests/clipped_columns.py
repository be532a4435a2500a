"""A table panel's clipped columns as ``dashgen.render.clipping`` computes them, for the tests of that rule and of
the preview's copy of it (the product asks the preview for the rule, not for this shortcut)."""

from __future__ import annotations

from dashgen.render.clipping import SCREEN_WIDTH, clipped, sizing, table_pixels


def panel_clipped(panel, columns, screen_width: int = SCREEN_WIDTH) -> list[str]:
    """The shown ``columns`` of a table panel that lie past its edge on a screen ``screen_width`` pixels wide."""
    return clipped(
        columns, table_pixels(int(panel.get("gridPos", {}).get("w") or 12), screen_width), sizing(panel, columns)
    )
