"""The typed view of any Grafana dashboard JSON, as lint reads it.

:func:`load_dashboard` unwraps the document and walks its panels (``dashgen.document.walk``), and
normalises what real dashboards vary in: data sources given as a string, ``$var`` or ``{type, uid}``,
variable queries given as a string or as ``{query: ...}``, selections given as a value or a list.
Pure: decoded JSON in, frozen dataclasses out (each keeps its ``raw`` mapping).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dashgen.document.variables import variable_name
from dashgen.document.walk import NotADashboard, iter_panels, raw_variables, unwrap

# Data-source uids Grafana reserves for itself; they are never "hard-coded" choices.
BUILTIN_DATASOURCE_UIDS = frozenset({"-- Grafana --", "-- Mixed --", "-- Dashboard --", "grafana"})


@dataclass(frozen=True)
class DatasourceRef:
    """A data-source reference normalised from ``"name"``, ``"$var"`` or ``{type, uid}``."""

    uid: str | None
    type: str | None = None
    is_default: bool = False

    @property
    def variable(self) -> str | None:
        """The variable name when the uid is ``$name`` or ``${name}``, else None."""
        return variable_name(self.uid)

    @property
    def is_builtin(self) -> bool:
        return self.uid in BUILTIN_DATASOURCE_UIDS or self.type in {"grafana", "datasource"}


@dataclass(frozen=True)
class Target:
    """One query of a panel. ``expr`` is empty for non-PromQL targets."""

    index: int
    ref_id: str
    expr: str
    legend_format: str
    datasource: DatasourceRef | None
    instant: bool
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class Panel:
    """A panel anywhere in the dashboard (rows included, with ``type == "row"``)."""

    id: int | None
    title: str
    type: str
    description: str
    datasource: DatasourceRef | None
    targets: tuple[Target, ...]
    raw: Mapping[str, Any]
    row_title: str | None = None

    @property
    def field_defaults(self) -> Mapping[str, Any]:
        fc = self.raw.get("fieldConfig")
        defaults = fc.get("defaults") if isinstance(fc, Mapping) else None
        return defaults if isinstance(defaults, Mapping) else {}

    @property
    def field_overrides(self) -> list[Mapping[str, Any]]:
        fc = self.raw.get("fieldConfig")
        overrides = fc.get("overrides") if isinstance(fc, Mapping) else None
        return [o for o in overrides if isinstance(o, Mapping)] if isinstance(overrides, list) else []

    @property
    def options(self) -> Mapping[str, Any]:
        options = self.raw.get("options")
        return options if isinstance(options, Mapping) else {}


@dataclass(frozen=True)
class Variable:
    """A templating variable. ``current`` is the selected value(s), ``options`` the option values."""

    name: str
    type: str
    query: str
    current: tuple[str, ...]
    options: tuple[str, ...]
    datasource: DatasourceRef | None
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class Dashboard:
    """The loaded dashboard: title, uid, variables and every panel in reading order."""

    title: str
    uid: str | None
    variables: tuple[Variable, ...]
    panels: tuple[Panel, ...]
    raw: Mapping[str, Any] = field(repr=False)

    def variable(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)

    @property
    def datasource_variables(self) -> tuple[Variable, ...]:
        return tuple(v for v in self.variables if v.type == "datasource")


def datasource_ref(value: Any) -> DatasourceRef | None:
    """Normalise a data-source value (string name/uid, ``$var`` or ``{type, uid}``)."""
    if value is None:
        return None
    if isinstance(value, str):
        return DatasourceRef(uid=value)
    if isinstance(value, Mapping):
        uid = value.get("uid")
        return DatasourceRef(
            uid=str(uid) if uid is not None else None,
            type=value.get("type") if isinstance(value.get("type"), str) else None,
            is_default=bool(value.get("default")),
        )
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _values(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value if v is not None)
    if value is None:
        return ()
    return (str(value),)


def load_variable(raw: Mapping[str, Any]) -> Variable:
    query = raw.get("query")
    if isinstance(query, Mapping):
        query = query.get("query", "")
    current = raw.get("current")
    options = raw.get("options")
    option_values: list[str] = []
    for option in options if isinstance(options, list) else []:
        if isinstance(option, Mapping):
            option_values.extend(_values(option.get("value")))
    return Variable(
        name=_text(raw.get("name")),
        type=_text(raw.get("type")),
        query=_text(query),
        current=_values(current.get("value") if isinstance(current, Mapping) else None),
        options=tuple(option_values),
        datasource=datasource_ref(raw.get("datasource")),
        raw=raw,
    )


def load_target(index: int, raw: Mapping[str, Any]) -> Target:
    return Target(
        index=index,
        ref_id=_text(raw.get("refId")),
        expr=_text(raw.get("expr")),
        legend_format=_text(raw.get("legendFormat")),
        datasource=datasource_ref(raw.get("datasource")),
        instant=bool(raw.get("instant")),
        raw=raw,
    )


def load_panel(raw: Mapping[str, Any], row_title: str | None = None) -> Panel:
    targets = raw.get("targets")
    if not isinstance(targets, list):
        targets = []
    panel_id = raw.get("id")
    return Panel(
        id=panel_id if isinstance(panel_id, int) else None,
        title=_text(raw.get("title")),
        type=_text(raw.get("type")),
        description=_text(raw.get("description")),
        datasource=datasource_ref(raw.get("datasource")),
        targets=tuple(load_target(i, t) for i, t in enumerate(targets) if isinstance(t, Mapping)),
        raw=raw,
        row_title=row_title,
    )


def load_dashboard(doc: Any) -> Dashboard:
    """Load any supported dashboard JSON shape into a :class:`Dashboard`."""
    body = unwrap(doc)
    if "panels" not in body and "rows" not in body and "templating" not in body:
        raise NotADashboard("no panels, rows or templating: not a Grafana dashboard")
    variables = tuple(load_variable(v) for v in raw_variables(body))
    panels = tuple(load_panel(site.raw, site.row) for site in iter_panels(body))
    uid = body.get("uid")
    return Dashboard(
        title=_text(body.get("title")),
        uid=uid if isinstance(uid, str) else None,
        variables=variables,
        panels=panels,
        raw=body,
    )
