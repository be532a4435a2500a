"""How large a dashboard dashgen reads may be: the file's bytes and the panels it holds.

The largest dashboard dashgen builds holds under 200 panels and a few MB, a real one at 10,000 GPUs a few MB more;
a file past these budgets is refused in one line before the slow work (``dashgen import`` spends about a
millisecond and 40 KB per panel, so a million panels never ended), never read for minutes.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from dashgen.document.walk import NotADashboard, iter_panel_objects, unwrap

MAX_FILE_BYTES = 64 << 20  # bytes of one dashboard file
MAX_PANELS = 5_000  # panels of one dashboard, rows and nested panels included (Grafana itself slows past ~500)


def file_over_budget(size: int) -> str | None:
    """Why a dashboard file of ``size`` bytes is refused, or None."""
    if size > MAX_FILE_BYTES:
        return f"{size} bytes, over the budget of {MAX_FILE_BYTES} bytes for a dashboard"
    return None


def panels_over_budget(doc: Any) -> str | None:
    """Why the decoded dashboard ``doc`` holds too many panels, or None (also for what is no dashboard: its
    reader says what is wrong with it). Counts no further than the budget."""
    try:
        body = unwrap(doc)
    except NotADashboard:
        return None
    if sum(1 for _ in islice(iter_panel_objects(body), MAX_PANELS + 1)) > MAX_PANELS:
        return f"more than {MAX_PANELS} panels, over the budget for one dashboard"
    return None
