"""What a panel's queries returned, shaped the way Grafana's Prometheus data source hands it to a panel.

Pure: the answers of one panel's queries in, :class:`PanelData` out.

- Range answers become series on one shared time axis, the query's step grid: a step without a sample is
  ``None`` (Grafana inserts nulls where a gap is longer than the step), so a gap stays a gap.
- Instant answers become one value per series (stat, bar gauge) or table rows: the series' labels and
  ``Value`` (``Value #<refId>`` when the panel has several queries), as Grafana's table format does.
- Series names follow the target's ``legendFormat`` (``{{label}}``); without one, ``metric{labels}``.
- Table transformations dashgen's panels use: ``merge``, ``organize`` and ``groupingToMatrix``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashgen.live.expand import ExpandedQuery

_LEGEND_RE = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Answer:
    """One query of a panel and what came back: ``series`` (a Prometheus ``result`` list) or ``error``."""

    query: ExpandedQuery
    target: Mapping[str, Any]
    result_type: str = "matrix"
    result: Sequence[Any] = ()
    error: str = ""


@dataclass(frozen=True)
class Series:
    """One drawn series: its name, labels, and values on :attr:`PanelData.times` (None: no sample)."""

    name: str
    labels: Mapping[str, str]
    values: Sequence[float | None]
    ref_id: str = ""

    @property
    def points(self) -> int:
        return sum(1 for v in self.values if v is not None)

    def last(self) -> float | None:
        return next((v for v in reversed(self.values) if v is not None), None)


@dataclass
class PanelData:
    """Everything one panel draws: ``times`` (unix seconds) shared by ``series``; table ``columns`` / ``rows``."""

    times: list[float] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    returned: int = 0  # series the queries returned, all answers together

    @property
    def empty(self) -> bool:
        return not any(s.points for s in self.series) and not self.rows


def _number(raw: Any) -> float | None:
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _pair(raw: Any) -> tuple[float, Any] | None:
    """A ``[timestamp, value]`` sample, or None when it is not one (a string or missing timestamp, a wrong
    shape): a data source's malformed answer draws as a gap, never as an error of dashgen's."""
    if isinstance(raw, list | tuple) and len(raw) == 2:
        stamp = _number(raw[0])
        if stamp is not None:
            return stamp, raw[1]
    return None


def _labels(item: Mapping[str, Any]) -> dict[str, str]:
    metric = item.get("metric")
    return {str(k): str(v) for k, v in metric.items()} if isinstance(metric, Mapping) else {}


def _samples(item: Mapping[str, Any]) -> list[tuple[float, Any]]:
    values = item.get("values")
    return [pair for raw in values if (pair := _pair(raw)) is not None] if isinstance(values, list) else []


def series_name(labels: Mapping[str, str], legend: str | None, expr: str) -> str:
    """Grafana's display name: the legend format with ``{{label}}`` filled in, else ``metric{a="b"}``."""
    if legend and legend != "__auto":
        return _LEGEND_RE.sub(lambda m: labels.get(m.group(1), ""), legend)
    metric = labels.get("__name__", "")
    rest = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    if not metric and not rest:
        return expr
    return f"{metric}{{{rest}}}" if rest else metric


def _grid(answers: Sequence[Answer]) -> tuple[list[float], float]:
    ranged = [a.query for a in answers if a.query.kind == "range" and not a.error]
    if not ranged:
        return [], 0.0
    step = min(q.step for q in ranged)
    start = min(q.start for q in ranged)
    end = max(q.end for q in ranged)
    count = int(math.floor((end - start) / step + 1e-9)) + 1
    return [round(start + i * step, 3) for i in range(count)], step


def time_series(answers: Sequence[Answer]) -> PanelData:
    """Range answers on one step grid (gaps as None); instant answers as one-point series at the window end."""
    data = PanelData(errors=[a.error for a in answers if a.error])
    times, step = _grid(answers)
    data.times = times
    index = {t: i for i, t in enumerate(times)}
    for answer in answers:
        if answer.error:
            continue
        legend = answer.target.get("legendFormat")
        data.returned += len(answer.result) if answer.result_type in ("matrix", "vector") else 1
        for item in _items(answer):
            labels = _labels(item)
            name = series_name(labels, legend, answer.query.expr)
            if answer.result_type == "matrix" and times:
                values: list[float | None] = [None] * len(times)
                for stamp, raw in _samples(item):
                    slot = index.get(round(stamp, 3))
                    if slot is None and step:
                        slot = int(round((stamp - times[0]) / step))
                    if slot is not None and 0 <= slot < len(times):
                        values[slot] = _number(raw)
                data.series.append(Series(name, labels, values, answer.query.ref_id))
            else:
                sample = _pair(item.get("value"))
                data.series.append(Series(name, labels, [_number(sample[1]) if sample else None], answer.query.ref_id))
    return data


def _items(answer: Answer) -> list[Mapping[str, Any]]:
    if answer.result_type in ("matrix", "vector"):
        return [item for item in answer.result if isinstance(item, Mapping)]
    if answer.result_type == "scalar" and len(answer.result) == 2:
        return [{"metric": {}, "value": list(answer.result)}]
    return []


# -- tables ---------------------------------------------------------------------------------------


def table(answers: Sequence[Answer], transformations: Sequence[Mapping[str, Any]] = ()) -> PanelData:
    """Table-format answers as Grafana's table panel receives them, then the panel's transformations."""
    data = PanelData(errors=[a.error for a in answers if a.error])
    # "Value #<refId>" with several queries, as Grafana names them; also when the panel's own transformations
    # name a single query's value that way (dashgen's tables always do, so one query renames like several)
    several = len([a for a in answers if a.target.get("expr")]) > 1 or any(
        "Value #" in str(step.get("options")) for step in transformations
    )
    frames: list[tuple[list[str], list[dict[str, Any]]]] = []
    for answer in answers:
        if answer.error:
            continue
        value_name = f"Value #{answer.query.ref_id}" if several else "Value"
        rows = []
        labels_seen: list[str] = []
        items = _items(answer)
        data.returned += len(items)
        for item in items:
            labels = {k: v for k, v in _labels(item).items() if k != "__name__"}
            sample = _pair(item.get("value")) or next(reversed(_samples(item)), None)
            row: dict[str, Any] = {"Time": sample[0] if sample else None}
            row.update(labels)
            row[value_name] = _number(sample[1]) if sample else None
            labels_seen += [k for k in labels if k not in labels_seen]
            rows.append(row)
        if rows:
            frames.append((["Time", *sorted(labels_seen), value_name], rows))
    columns, rows = frames[0] if frames else ([], [])
    steps = list(transformations)
    if steps and steps[0].get("id") == "merge":
        columns, rows = merge(frames)
        steps = steps[1:]
    elif len(frames) > 1:  # Grafana shows the first frame (frameIndex 0) without a merge
        columns, rows = frames[0]
    for step in steps:
        options = step.get("options") or {}
        if step.get("id") == "organize":
            columns, rows = organize(columns, rows, options)
        elif step.get("id") == "groupingToMatrix":
            columns, rows = grouping_to_matrix(rows, options)
        elif step.get("id") == "merge":
            pass  # only meaningful first
    data.columns, data.rows = columns, rows
    return data


def merge(frames: Sequence[tuple[list[str], list[dict[str, Any]]]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Grafana's ``merge``: one table; rows whose label values agree are one row with each query's value."""
    columns: list[str] = []
    for frame_columns, _rows in frames:
        columns += [c for c in frame_columns if c not in columns]
    value_columns = {c for c in columns if c == "Value" or c.startswith("Value #")}
    merged: dict[tuple, dict[str, Any]] = {}
    for _frame_columns, rows in frames:
        for row in rows:
            key = tuple(sorted((k, v) for k, v in row.items() if k != "Time" and k not in value_columns))
            target = merged.setdefault(key, {})
            target.update({k: v for k, v in row.items() if v is not None or k not in target})
    return columns, list(merged.values())


def organize(
    columns: list[str], rows: list[dict[str, Any]], options: Mapping[str, Any]
) -> tuple[list[str], list[dict[str, Any]]]:
    """Grafana's ``organize``: hide (``excludeByName``), order (``indexByName``) and rename (``renameByName``)."""
    exclude = {k for k, v in (options.get("excludeByName") or {}).items() if v}
    order = options.get("indexByName") or {}
    rename = options.get("renameByName") or {}
    kept = [c for c in columns if c not in exclude]
    # the order is by original name; a panel may also give it by the new name
    position = {c: order.get(c, order.get(rename.get(c) or c, len(order) + i)) for i, c in enumerate(kept)}
    kept.sort(key=lambda c: position[c])
    renamed = [rename.get(c) or c for c in kept]
    return renamed, [{rename.get(c) or c: row.get(c) for c in kept} for row in rows]


def grouping_to_matrix(
    rows: list[dict[str, Any]], options: Mapping[str, Any]
) -> tuple[list[str], list[dict[str, Any]]]:
    """Grafana's ``groupingToMatrix``: one row per ``rowField`` value, one column per ``columnField`` value."""
    column_field = options.get("columnField") or ""
    row_field = options.get("rowField") or ""
    value_field = options.get("valueField") or "Value"
    header = f"{row_field}\\{column_field}"
    columns: list[str] = [header]
    matrix: dict[Any, dict[str, Any]] = {}
    for row in rows:
        column = row.get(column_field)
        if column is None:
            continue
        column = str(column)
        if column not in columns:
            columns.append(column)
        value = row.get(value_field)
        if value is None:
            value = next((v for k, v in row.items() if k.startswith("Value")), None)
        matrix.setdefault(row.get(row_field), {header: row.get(row_field)})[column] = value
    return columns, list(matrix.values())
