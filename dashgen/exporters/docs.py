"""The exporter table's conditions as docs/profiles.md shows them: one Markdown row per series that is not written by
every supported version with default flags (a first version, an old name, a flag, a role), and one per source
whose prefix depends on the scrape path. A test keeps the copy in docs/profiles.md equal to this."""

from __future__ import annotations

from dashgen.exporters.availability import flag_text, versioned_by
from dashgen.exporters.model import Series, SourceTable
from dashgen.exporters.table import TABLES


def _condition(table: SourceTable, series: Series) -> str:
    parts = [flag_text(table, flag) for flag in series.needs]
    if series.since:
        parts.append(f"{versioned_by(table)} >= {series.since}")
    if series.old_name:
        parts.append(f"before {series.renamed_in}: `{series.old_name}`")
    if series.role:
        parts.append(series.role)
    return "; ".join(parts)


def conditions_markdown() -> str:
    """The docs/profiles.md table: series, source, condition."""
    rows = ["| series | source | written only when |", "|---|---|---|"]
    for table in TABLES.values():
        for series in table.series:
            condition = _condition(table, series)
            if condition:
                rows.append(f"| `{series.name}` | {table.source} | {condition} |")
        if len(table.prefixes) > 1 and not table.version_of:
            shown = " or ".join(f"`{prefix}`" for prefix in table.prefixes)
            rows.append(f"| every `{table.prefixes[0]}` name | {table.source} | prefix {shown}: {table.prefix_note} |")
    return "\n".join(rows) + "\n"
