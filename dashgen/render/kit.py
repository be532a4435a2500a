"""The panel kit: one small helper per panel kind, so a panel definition reads like the dashboard.

``timeseries(key, title, evidence, targets, unit=..., min=..., max=...)`` returns the ``PanelSpec`` of that
kind; every panel module builds its panels with these and nothing else. Each helper takes named, typed
parameters for what that kind can show (a stat's colour mode, a graph's threshold line, a table's columns and
sort); raw Grafana JSON only through ``raw_options=RawOptions(reason, ...)`` (``dashgen.render.raw``). Titles
are written literally at the call (a grep for a title shown in Grafana finds its definition); the kit adds
nothing to a title. Shared panel plumbing lives here too: the *not available* panel of a source a deployment
does not export (S15), the No Data text (S6/S7), the stat's last-value reduction, the table merge of instant
queries into one row per key (``dashgen.render.tables``), and Grafana's link shape.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from types import FrameType
from typing import Any, Literal, TypedDict, Unpack

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import TABLES
from dashgen.project import shown_name
from dashgen.render.impossible import renderer_adds
from dashgen.render.label_columns import holds, label_override, rendered_from
from dashgen.render.raw import RawOptions, deep_merge
from dashgen.render.spec import RATIO_UNITS, Evidence, PanelKind, PanelSpec, Target
from dashgen.render.states import Beyond, State, States
from dashgen.render.tables import (
    Column,
    Matrix,
    Sort,
    matrix_transformations,
    merge_transformations,
    merged_targets,
    ref,
    sort_options,
)

__all__ = [
    "NO_DATA_TEXT",
    "Beyond",
    "CellColour",
    "Column",
    "Matrix",
    "RawOptions",
    "Sort",
    "State",
    "States",
    "StatText",
    "bargauge",
    "link",
    "parameter_names",
    "ratio_axis",
    "recording_origins",
    "ref",
    "source_status_panel",
    "stat",
    "state_timeline",
    "table",
    "text",
    "timeseries",
]

NO_DATA_TEXT = "No data: see Missing-data reasons"
_origins: dict[str, tuple[str, str]] | None = None


@contextmanager
def recording_origins() -> Iterator[dict[str, tuple[str, str]]]:
    """While active, each panel made through the kit notes which panel function defines it:
    key -> (module, function). The generated panel index reads it; rendering never does."""
    global _origins
    _origins = {}
    try:
        yield _origins
    finally:
        _origins = None


def recorded_while(compose: Callable[[], Any]) -> tuple[Any, dict[str, tuple[str, str]]]:
    """``compose()``'s value and the origins of the panels it made, recorded whether or not a recording is
    active; an active recording gets them too (``note_origins``). What lets composed dashboards be reused by a
    caller that records origins (the panel index) as if they had been composed again."""
    global _origins
    outer = _origins
    _origins = {}
    try:
        value = compose()
        recorded = _origins
    finally:
        _origins = outer
    note_origins(recorded)
    return value, recorded


def note_origins(recorded: Mapping[str, tuple[str, str]]) -> None:
    """Add ``recorded`` origins to the active recording, in their order (nothing when none is active)."""
    if _origins is not None:
        _origins.update(recorded)


def _defining_function(title: str) -> tuple[str, str]:
    """The innermost ``panels`` function on the stack whose code holds the title's literal text; where
    that is a group's ``build`` (it passes titles to a panel function) or there is none (a title from
    a module-level table), the innermost public ``panels`` function."""
    stem = title.rsplit(" (", 1)[0]
    wanted = {title, stem, stem + " ("}
    public = None
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        module, code = frame.f_globals.get("__name__", ""), frame.f_code
        if module.startswith("dashgen_panels."):
            module = shown_name(module)
            if code.co_name != "build" and wanted & {c for c in code.co_consts if isinstance(c, str)}:
                return module, code.co_name
            if public is None and not code.co_name.startswith(("_", "<")):
                public = (module, code.co_name)
        frame = frame.f_back
    return public or ("panels", "?")


Thresholds = tuple[tuple[str, float | None], ...]
Mappings = Sequence[Mapping[str, Any]]
Links = Sequence[Mapping[str, Any]]
ThresholdStyle = Literal["line", "line+area"]
StatColour = Literal["value", "background"]
StatText = Literal["value", "value_and_name", "name", "none"]
StatGraph = Literal["none", "area"]
StatOrientation = Literal["auto", "horizontal", "vertical"]
CellColour = Literal["color-text", "color-background"]
DEFAULT_THRESHOLDS: Thresholds = (("green", None),)


class Common(TypedDict, total=False):
    """The fields every data panel kind takes, named once: each kind's helper takes them as ``**common`` beside the
    few options of its own (the way grafanalib's and Perses' panels share one base). Unset ones take
    ``COMMON_DEFAULTS``."""

    unit: str | None
    min: float | None
    max: float | None
    signed: bool
    decimals: int | None
    width: int
    height: int
    no_value: str | None
    thresholds: Thresholds
    mappings: Mappings
    links: Links
    data_links: Links
    datasource: dict[str, Any] | None


COMMON_DEFAULTS: Common = {
    "unit": "none",
    "min": None,
    "max": None,
    "signed": False,
    "decimals": None,
    "width": 12,
    "height": 8,
    "no_value": None,
    "thresholds": DEFAULT_THRESHOLDS,
    "mappings": (),
    "links": (),
    "data_links": (),
    "datasource": None,
}


def _panel(
    kind: PanelKind,
    key: str,
    title: str,
    evidence: Evidence | None,
    targets: Iterable[Target],
    raw_options: RawOptions | None,
    **fields: Any,
) -> PanelSpec:
    """The spec from the helper's typed fields, the raw hatch laid over them (options merged key by key)."""
    if _origins is not None:
        _origins[key] = _defining_function(title)
    for name in ("mappings", "links", "data_links"):
        if name in fields:
            fields[name] = tuple(dict(item) for item in fields[name])
    if raw_options is not None:
        raw = raw_options.fields()
        if "options" in raw:
            raw["options"] = deep_merge(fields.get("options", {}), raw["options"])
        if "overrides" in raw:  # the kit's own first; an imported copy of one of them is not added twice
            own = tuple(fields.get("overrides", ()))
            adds = renderer_adds(evidence)  # the label columns' mappings are the renderer's only on its own panels
            stored = tuple(raw["overrides"])
            if not adds:  # an imported override that holds all of one of the kit's is that one, as stored
                own = tuple(k for k in own if not any(holds(o, k) for o in stored))
            raw["overrides"] = (*own, *(o for o in stored if not any(rendered_from(o, k, adds) for k in own)))
        fields.update(raw)
    return PanelSpec(key=key, title=title, kind=kind, evidence=evidence, targets=tuple(targets), **fields)


def _data_panel(
    kind: PanelKind,
    key: str,
    title: str,
    evidence: Evidence,
    targets: Iterable[Target],
    raw_options: RawOptions | None,
    common: Common,
    **own: Any,
) -> PanelSpec:
    """A data panel: the common fields (defaults filled in) beside the kind's own."""
    return _panel(kind, key, title, evidence, targets, raw_options, **{**COMMON_DEFAULTS, **common}, **own)


def shared(panel: PanelSpec) -> PanelSpec:
    """The panel published as a Grafana library panel: every dashboard that shows it holds a reference to one
    element (``dashgen.render.library``), so a team's hand-made dashboards can use it too."""
    return replace(panel, shared=True)


def timeseries(
    key: str,
    title: str,
    evidence: Evidence,
    targets: Iterable[Target],
    *,
    threshold_style: ThresholdStyle | None = None,
    log_scale: int | None = None,
    raw_options: RawOptions | None = None,
    **common: Unpack[Common],
) -> PanelSpec:
    """A graph over time: one series per target result. ``threshold_style`` draws the thresholds as a line
    (or line and area); ``log_scale`` makes the y axis logarithmic to that base."""
    custom: dict[str, Any] = {}
    if threshold_style is not None:
        custom["thresholdsStyle"] = {"mode": threshold_style}
    if log_scale is not None:
        custom["scaleDistribution"] = {"type": "log", "log": log_scale}
    return _data_panel(
        "timeseries",
        key,
        title,
        evidence,
        targets,
        raw_options,
        common,
        custom=custom,
    )


def stat(
    key: str,
    title: str,
    evidence: Evidence,
    targets: Iterable[Target],
    *,
    color_mode: StatColour | None = None,
    text_mode: StatText | None = None,
    graph_mode: StatGraph | None = None,
    orientation: StatOrientation | None = None,
    raw_options: RawOptions | None = None,
    **common: Unpack[Common],
) -> PanelSpec:
    """One number per series: its last non-null value in the window. ``color_mode`` colours the value or the
    background by the thresholds, ``text_mode`` shows the series name too, ``graph_mode`` adds a sparkline;
    ``orientation`` ``horizontal`` stacks several numbers one under the other (Grafana's auto puts them side by
    side in a panel wider than high)."""
    options: dict[str, Any] = {}
    for name, value in (
        ("colorMode", color_mode),
        ("textMode", text_mode),
        ("graphMode", graph_mode),
        ("orientation", orientation),
    ):
        if value is not None:
            options[name] = value
    return _data_panel(
        "stat",
        key,
        title,
        evidence,
        targets,
        raw_options,
        common,
        options={**options, "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}},
    )


def is_date_unit(unit: str | None) -> bool:
    """Grafana's date units (``timeFormats`` and ``time:<format>``): its display processor parses any value of a
    field with one as a date, a label's text too, which then reads "NaN"."""
    return bool(unit) and (str(unit).startswith(("dateTime", "time:")))


def text_columns_as_text(unit: str | None, evidence: Evidence | None) -> tuple[dict[str, Any], ...]:
    """A table shows its label columns (string fields; a Prometheus frame's values are numbers) as text: an
    override giving them the ``string`` unit. Grafana's display processor formats a string that reads as a number
    with the field's unit and decimals unless its unit is ``string`` (GPU "6" read "6.0", "0x1f" "31") and parses
    every value of a field with a date unit as a date (a label then reads "NaN"). Every dashgen table has it, by
    type so that it holds whatever its transformations name the columns; an imported table (it renders as Grafana
    stored it) only when its values carry a date unit."""
    if not renderer_adds(evidence) and not is_date_unit(unit):
        return ()
    return (label_override(),)


def table(
    key: str,
    title: str,
    evidence: Evidence,
    labels: Mapping[str, str] | None = None,
    columns: Sequence[Column] = (),
    *,
    hide: Sequence[str] = (),
    targets: Iterable[Target] = (),
    matrix: Matrix | None = None,
    cells: CellColour | None = None,
    min_width: int | None = None,
    sort: Sequence[Sort] = (),
    raw_options: RawOptions | None = None,
    **common: Unpack[Common],
) -> PanelSpec:
    """A table. Either ``labels`` (label -> column title, the row keys) and ``columns`` (one instant query each):
    merged into one row per key, ``hide`` naming query labels not to show; or ``targets`` as queried, pivoted
    by ``matrix`` (rows x columns) or shown as they come. ``cells`` colours the cells by mappings / thresholds;
    ``sort`` is the initial sort."""
    transformations: tuple[dict[str, Any], ...] = ()
    shown = tuple(targets)
    if columns:
        if shown or matrix is not None:
            raise ValueError(f"panel {key!r}: a table has columns or targets, not both")
        shown = merged_targets(columns)
        transformations = merge_transformations(labels or {}, columns, hide)
    elif labels or hide:
        raise ValueError(f"panel {key!r}: labels and hide apply to merged columns; give the columns")
    elif matrix is not None:
        transformations = matrix_transformations(matrix)
    return _data_panel(
        "table",
        key,
        title,
        evidence,
        shown,
        raw_options,
        common,
        custom={
            **({"cellOptions": {"type": cells}} if cells else {}),
            **({"minWidth": min_width} if min_width else {}),
        },
        transformations=transformations,
        options=sort_options(sort),
        overrides=text_columns_as_text(common.get("unit"), evidence),
    )


def state_timeline(
    key: str,
    title: str,
    evidence: Evidence,
    targets: Iterable[Target],
    *,
    raw_options: RawOptions | None = None,
    **common: Unpack[Common],
) -> PanelSpec:
    """States over time, one row per series, named and coloured by value mappings."""
    return _data_panel("state-timeline", key, title, evidence, targets, raw_options, common)


def bargauge(
    key: str,
    title: str,
    evidence: Evidence,
    targets: Iterable[Target],
    *,
    raw_options: RawOptions | None = None,
    **common: Unpack[Common],
) -> PanelSpec:
    """Horizontal bars, one per series, at the window end."""
    return _data_panel("bargauge", key, title, evidence, targets, raw_options, common)


def text(
    key: str,
    title: str,
    content: str,
    evidence: Evidence | None = None,
    *,
    width: int = 12,
    height: int = 8,
    links: Links = (),
    datasource: dict[str, Any] | None = None,
    raw_options: RawOptions | None = None,
) -> PanelSpec:
    """Markdown; ``evidence`` where the text states numbers (e.g. configured quotas)."""
    return _panel(
        "text",
        key,
        title,
        evidence,
        (),
        raw_options,
        content=content,
        width=width,
        height=height,
        links=links,
        datasource=datasource,
    )


@cache
def parameter_names(helper: str) -> frozenset[str]:
    """The keyword names the kit helper ``helper`` takes: its own parameters, and the ``Common`` fields where it
    takes ``**common`` (the importer writes a call with these, asking once per panel)."""
    parameters = inspect.signature(globals()[helper]).parameters.values()
    own = {p.name for p in parameters if p.kind is not p.VAR_KEYWORD}
    shares = any(p.kind is p.VAR_KEYWORD for p in parameters)
    return frozenset(own | (set(Common.__annotations__) if shares else set()))


def ratio_axis(unit: str, signed: bool = False) -> dict[str, Any]:
    """``{"unit": .., "min": .., "max": ..}`` for a ratio unit: its fixed axis (S5), to splat into a panel.
    ``signed``: the quantity may go below the axis (a budget left once overspent), so only its top is impossible
    (S38)."""
    low, high = RATIO_UNITS[unit]
    return {"unit": unit, "min": low, "max": high, **({"signed": True} if signed else {})}


def link(title: str, url: str) -> dict[str, Any]:
    """A panel or data link in the shape Grafana's schema types (DashboardLink)."""
    return {
        "title": title,
        "type": "link",
        "url": url,
        "icon": "dashboard",
        "tooltip": title,
        "tags": [],
        "asDropdown": False,
        "targetBlank": False,
        "includeVars": False,
        "keepTime": True,
    }


NOT_AVAILABLE = ": not available"


def source_status_panel(key: str, profile: Profile, names: list[str], title: str, width: int = 24) -> PanelSpec:
    """One clear text panel saying which sources are not deployed or not exported (S15). ``title`` is
    ``"<what the panels show>: not available"``, written literally by the caller.

    Shown instead of charts that could only be empty; no empty scrape target is invented.
    """
    if not title.endswith(NOT_AVAILABLE):
        raise ValueError(f"panel {key!r}: a source-status title ends with {NOT_AVAILABLE!r}: {title!r}")
    what = title.removesuffix(NOT_AVAILABLE)
    lines = [f"**{what}** is not shown for this deployment ({profile.name}):", ""]
    for name in names:
        source = profile.source(name)
        if source.status == "not-exported" and TABLES[name].not_exported:
            state = "not exported in this deployment"  # the exporter table's note below says how it is built in
        elif source.status == "not-exported":
            state = "not exported by the client in this deployment (the metric exists in its code)"
        elif source.status == "not-deployed":
            state = "not deployed"
        else:
            continue
        lines.append(f"- {source.what} (`{name}`): {state}.")
    # what the exporter table says a deployment that does not export the source should know (how it is built in)
    notes = [TABLES[name].not_exported for name in names if profile.source(name).status == "not-exported"]
    for note in (note for note in notes if note):
        lines += ["", note]
    lines += ["", "These panels would otherwise be empty; absent data here is a deployment fact, not a zero."]
    return text(key, title, "\n".join(lines), width=width, height=2 + len(names) + 3)
