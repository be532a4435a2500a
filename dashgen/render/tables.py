"""Table vocabulary of the panel kit: columns of instant queries, Grafana's label-to-matrix pivot, sorting.

A merged table is ``labels`` (label name -> column title, the row keys, in order) and ``columns`` (one instant
query each, titled with its unit in the header); the kit turns them into the queries (refId A, B, ...) and the
transformations (merge into one row per key, organize: order, rename, hide ``Time``). dashgen sets no per-column
field overrides: a column states its unit in its header, and the table's unit, decimals and value mappings hold for
every value column (the kit gives the label columns, string fields, the ``string`` unit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashgen.render.spec import Target


def ref(index: int) -> str:
    """The refId of the index-th target, as Grafana names them: A … Z, AA … ZZ, AAA … (no end)."""
    name, rest = "", index + 1
    while rest:
        rest, letter = divmod(rest - 1, 26)
        name = chr(ord("A") + letter) + name
    return name


@dataclass(frozen=True)
class Column:
    """One instant query of a merged table, shown as one column.

    ``unit`` is the header's unit (``"GiB"`` -> ``"<name> (GiB)"``); ``hidden`` queries only bring their
    labels into the rows (e.g. a UUID), their value column is not shown; ``aliases`` are other names Grafana
    may give the value field (``"Value"`` for a lone query), renamed to the same header."""

    name: str
    expr: str
    unit: str = ""
    hidden: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def header(self) -> str:
        return f"{self.name} ({self.unit})" if self.unit else self.name


@dataclass(frozen=True)
class Sort:
    """The table's initial sort: a column by its shown title."""

    column: str
    descending: bool = False


@dataclass(frozen=True)
class Matrix:
    """Grafana's groupingToMatrix: one row per value of the label ``rows``, one column per value of ``columns``.

    ``corner`` titles the row-name column; ``headers`` maps column values to titles, in column order (a value
    shown as it is maps to itself)."""

    rows: str
    columns: str
    corner: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


def merged_targets(columns: Sequence[Column]) -> tuple[Target, ...]:
    """One instant table query per column, refIds A, B, ... in column order."""
    return tuple(Target(column.expr, instant=True, table=True, ref_id=ref(i)) for i, column in enumerate(columns))


def merge_transformations(
    labels: Mapping[str, str], columns: Sequence[Column], hide: Sequence[str] = ()
) -> tuple[dict[str, Any], ...]:
    """Merge the columns' queries into one row per ``labels`` key and name the columns (labels first);
    ``hide`` names more fields (labels of the queries) not to show."""
    rename = dict(labels)
    exclude = ["Time", *hide]
    for index, column in enumerate(columns):
        value = f"Value #{ref(index)}"
        if column.hidden:
            exclude.append(value)
        else:
            rename[value] = column.header
            rename.update(dict.fromkeys(column.aliases, column.header))
    return merge_table(rename, exclude)


def merge_table(rename: Mapping[str, str], exclude: Sequence[str]) -> tuple[dict[str, Any], ...]:
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


def matrix_transformations(matrix: Matrix) -> tuple[dict[str, Any], ...]:
    """groupingToMatrix (absent cells stay empty, never 0), then the corner and column titles in order."""
    pivot = {
        "id": "groupingToMatrix",
        "options": {
            "rowField": matrix.rows,
            "columnField": matrix.columns,
            "valueField": "Value",
            "emptyValue": "null",
        },
    }
    order = {f"{matrix.rows}\\{matrix.columns}": matrix.corner} if matrix.corner else {}
    order.update(matrix.headers)
    if not order:
        return (pivot,)
    # Grafana's organize step orders and renames by the fields' own names; a value shown as itself is only ordered
    rename = {name: title for name, title in order.items() if name != title}
    organize = {"indexByName": {name: i for i, name in enumerate(order)}, "renameByName": rename}
    return pivot, {"id": "organize", "options": organize}


def sort_options(sort: Sequence[Sort]) -> dict[str, Any]:
    """Table options for the initial sort (none: Grafana's query order)."""
    if not sort:
        return {}
    return {"sortBy": [{"displayName": s.column, "desc": s.descending} for s in sort]}
