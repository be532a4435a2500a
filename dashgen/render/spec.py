"""The panel vocabulary: plain, immutable data that panel modules return and the renderer consumes.

A ``PanelSpec`` reads like the dashboard (title, what it proves, queries, unit, axis) and carries
a stable ``key`` (``group.panel``) from which its Grafana id is derived, so ids, diffs, approvals
and ledger entries survive reordering and retitling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

PanelKind = Literal["timeseries", "table", "stat", "text", "bargauge", "state-timeline"]
PANEL_KINDS: tuple[PanelKind, ...] = get_args(PanelKind)
RATIO_UNITS = {"percent": (0, 100), "percentunit": (0, 1)}


RankedPer = Literal["stage", "dp_group", "gpu", "node", "instance"]
RankedEnd = Literal["top", "bottom"]


def scale_min(kind: str, low: float | None) -> float | None:
    """The min a panel of ``kind`` is drawn with: its own; for a bar gauge without one, 0. A bar's length is read as
    its value, so its scale starts at 0 unless the panel gives a min (a signed quantity): without one Grafana starts
    it at the smallest value shown, whose bar is then empty."""
    return 0 if low is None and kind == "bargauge" else low


def ratio_axis_problem(unit: object, low: object, high: object) -> str | None:
    """S5, the one definition: a ``percent`` axis is fixed 0-100 and a ``percentunit`` axis 0-1, so
    idle noise is never auto-scaled into violent swings. None when the axis is right or not a ratio.
    The build's validation and lint both ask this."""
    if unit not in RATIO_UNITS:
        return None
    want_low, want_high = RATIO_UNITS[str(unit)]
    if _number(low) == want_low and _number(high) == want_high:
        return None
    return f"unit {unit} needs min {want_low} and max {want_high} (has min={low}, max={high})"


def _number(value: object) -> float | None:
    """A JSON number, or a numeric string as legacy graph y-axes store it; anything else is no number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


# A Grafana description is a tooltip: past this many characters the on-call stops reading, so the rest is notes.
MAX_DESCRIPTION = 2000
NOTES_POINTER = "More: the panel index, docs/panels.md, under this panel's key"


@dataclass(frozen=True)
class Evidence:
    """What a panel can prove (S8-S20): its source, the quantity it shows, and its limit."""

    source: str
    quantity: str
    limit: str
    layer: str = ""
    # The longer explanation a reader wants once, not in every tooltip: docs/panels.md holds it under the
    # panel's key and the description says so (descriptions stay under MAX_DESCRIPTION characters).
    notes: str = ""

    def describe(self) -> str:
        parts = []
        if self.layer:
            parts.append(f"Evidence layer: {self.layer}.")
        parts.append(f"Source: {self.source}.")
        parts.append(f"Quantity: {self.quantity}.")
        parts.append(f"Limit: {self.limit}.")
        if self.notes:
            parts.append(f"{NOTES_POINTER}.")
        return " ".join(part.replace("..", ".") for part in parts)


@dataclass(frozen=True)
class Target:
    """One PromQL query of a panel. ``instant`` queries are evaluated at the window end."""

    expr: str
    legend: str = ""
    instant: bool = False
    table: bool = False
    ref_id: str = ""
    interval: str = ""  # Min step: the source's stored sample interval, so $__rate_interval spans 4 samples
    # Fields of a Grafana query this vocabulary does not model (an imported ``intervalFactor``, ``hide``, a
    # target data source...): a JSON merge patch over the rendered target, null deleting a key.
    extra: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class FanOut:
    """A panel that draws one series per entity of the deployment (a PP stage, a DP group, a GPU, a node, an
    instance): which entity, the labels that name one, what makes one worse (``top``: a high value, ``bottom``: a
    low one), the engine pool it is drawn for ("" for all), the labels each entity's series are further split
    by (``split``, e.g. an outcome's status) and a query reading the band recorded for it (``band``, labelled
    ``band="min|median|max"``; "" to aggregate the panel's query). ``dashgen_panels.screenful`` reads it to keep
    such a graph legible at any cluster size."""

    per: RankedPer
    labels: tuple[str, ...]
    worst: RankedEnd
    role: str = ""
    split: tuple[str, ...] = ()
    band: str = ""  # a recorded min / median / max band to draw instead of three aggregations of the query

    def __post_init__(self) -> None:
        if self.per not in FAN_OUTS or self.worst not in ("top", "bottom") or not self.labels:
            raise ValueError(f"fan-out {self!r}: per one of {FAN_OUTS}, worst top|bottom, labels required")


FAN_OUTS = ("stage", "dp_group", "gpu", "node", "instance")


@dataclass(frozen=True)
class PanelSpec:
    """One Grafana panel, independent of grafanalib and of layout."""

    key: str
    title: str
    kind: PanelKind
    evidence: Evidence | None
    targets: tuple[Target, ...] = ()
    unit: str | None = "none"  # None: no unit at all (an imported panel that sets none)
    min: float | None = None
    max: float | None = None
    decimals: int | None = None
    width: int = 12
    height: int = 8
    no_value: str | None = None
    mappings: tuple[dict[str, Any], ...] = ()
    # A quantity that may legitimately go below its axis's bottom (an error budget left, negative once overspent):
    # S38 then calls only the values above a ratio's top impossible (``dashgen.render.impossible``).
    signed: bool = False
    thresholds: tuple[tuple[str, float | None], ...] = (("green", None),)
    transformations: tuple[dict[str, Any], ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, Any] = field(default_factory=dict)
    content: str = ""
    links: tuple[dict[str, Any], ...] = ()
    data_links: tuple[dict[str, Any], ...] = ()  # fieldConfig.defaults.links (per-series drill-down)
    # What an imported panel states beyond the kit's fields (empty for dashgen's own panels):
    field_defaults: dict[str, Any] = field(default_factory=dict)  # more fieldConfig.defaults (color, displayName)
    overrides: tuple[dict[str, Any], ...] = ()  # fieldConfig.overrides, as Grafana stores them
    datasource: dict[str, Any] | None = None  # None: the ${datasource} variable; {}: none at all
    # The raw-JSON escape hatch: a JSON merge patch (RFC 7386) over the rendered panel, null deleting a key,
    # for what the vocabulary cannot say (an unknown plugin, a library panel); ``dashgen import`` marks each TODO.
    extra: dict[str, Any] = field(default_factory=dict)
    # One series per stage / DP group / GPU: the dashboard narrows it to the worst few and a band when the
    # deployment has more than a screenful of them (``dashgen.screenful``). Not rendered itself.
    fan_out: FanOut | None = None
    # Published as a Grafana library panel: dashboards hold a reference, the element holds the panel
    # (``dashgen.render.library``); set with ``kit.shared(panel)`` or a profile's ``[dashboard] library_panels``.
    shared: bool = False

    def __post_init__(self) -> None:
        if self.kind not in PANEL_KINDS:
            raise ValueError(f"panel {self.key!r}: unknown kind {self.kind!r}")
        if self.kind != "text" and self.evidence is None:
            raise ValueError(f"panel {self.key!r}: every data panel states its evidence (source, quantity, limit)")
        if not 1 <= self.width <= 24:
            raise ValueError(f"panel {self.key!r}: width {self.width} outside 1..24")

    @property
    def description(self) -> str:
        return self.evidence.describe() if self.evidence else ""


@dataclass(frozen=True)
class GroupSpec:
    """A dashboard group, rendered as a row holding its panels in reading order; or, when ``rows`` is set,
    as several smaller rows (one module's panels split by the question each row answers, ``split_rows``).
    ``panels`` is always every panel of the group, so panel keys (``group.panel``) never depend on rows."""

    key: str
    title: str
    panels: tuple[PanelSpec, ...]
    collapsed: bool = False
    rows: tuple[GroupSpec, ...] = ()
    # v2 only (the v1 rendering does not read them): ``auto_grid`` lays the row's panels out in Grafana's auto grid
    # (equal tiles that reflow with the screen) instead of fixed positions; ``when_data`` shows the row only while
    # its panels return data (a row about one pool kind of a profile that mixes kinds: hidden where no such pool
    # reports).
    auto_grid: bool = False
    when_data: bool = False

    def shown_rows(self) -> tuple[GroupSpec, ...]:
        """The rows the dashboard shows for this group: its ``rows``, or the group itself as one row (none when
        the group has no panel for this profile)."""
        return self.rows or ((self,) if self.panels else ())


def split_rows(
    key: str,
    title: str,
    rows: Sequence[tuple[str, str, Sequence[PanelSpec], bool]],
) -> GroupSpec:
    """One group module's panels as several rows ``(row key suffix, row title, panels, collapsed)``. The
    first row keeps the group's key (so its row id is unchanged); the others are keyed ``<key>:<suffix>``.
    Empty rows are left out."""
    shown = [(suffix, row_title, tuple(panels), collapsed) for suffix, row_title, panels, collapsed in rows if panels]
    specs = tuple(
        GroupSpec(key=key if index == 0 else f"{key}:{suffix}", title=row_title, panels=panels, collapsed=collapsed)
        for index, (suffix, row_title, panels, collapsed) in enumerate(shown)
    )
    return GroupSpec(key=key, title=title, panels=tuple(p for row in specs for p in row.panels), rows=specs)


@dataclass(frozen=True)
class DashboardSpec:
    """A whole dashboard before rendering: identity, variables and groups in reading order."""

    profile: str
    name: str
    uid: str
    title: str
    description: str
    tags: tuple[str, ...]
    groups: tuple[GroupSpec, ...]
    variables: tuple[dict[str, Any], ...]
    schema_version: int
    time_from: str = "now-1h"
    refresh: str = "1m"
    links: tuple[dict[str, Any], ...] = ()
    # The v2 layout: ``(tab title, row keys)`` in tab order; the v1 rendering does not read it.
    tabs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Imported (team) queries that read beyond the deployment or by label names the profile does not use, each
    # with its reason (``dashgen.render.team_fit``): what ``check`` and ``doctor`` report.
    unscoped: tuple[str, ...] = ()

    def panels(self) -> list[PanelSpec]:
        return [panel for group in self.groups for panel in group.panels]
