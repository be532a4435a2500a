"""The fixture and generated dashboards as ``dashgen import`` reads them, each imported once per test session: the
import round-trip cases (``test_import``) and the scope cases (``test_import_scope``) read the same ten fixtures, and
an import (plan, module text, the module executed and rendered back, the diff) is ~0.3 s of CPU each. The results
are shared: no test changes one."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from dashgen.importer import ImportResult, import_dashboard

ROOT = Path(__file__).resolve().parent.parent


@cache
def imported(path: Path) -> ImportResult:
    """``path`` imported as ``dashgen import`` does, its header's source the path from the repository's root."""
    return import_dashboard(json.loads(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT)))
