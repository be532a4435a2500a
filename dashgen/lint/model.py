"""The lint view of a Grafana dashboard: a loader that walks any dashboard JSON shape.

Accepts what real dashboards contain: top-level ``panels``, the nested ``panels`` of
collapsed rows, legacy ``rows[].panels``, the k8s ``{apiVersion, spec}`` wrapper, data
sources given as a string or as ``{type, uid}``, and variable queries given as a string or
as ``{query: ...}``. The loader is pure: it takes the decoded JSON and returns plain values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

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


class NotADashboard(ValueError):
    """The JSON document is not a Grafana dashboard."""


def variable_name(text: str | None) -> str | None:
    """``$name`` / ``${name}`` / ``${name:fmt}`` → ``name``; anything else → None."""
    if not text or not text.startswith("$"):
        return None
    if text.startswith("${") and text.endswith("}"):
        return text[2:-1].split(":", 1)[0]
    rest = text[1:]
    return rest if rest.replace("_", "a").isalnum() else None


def unwrap(doc: Any) -> Mapping[str, Any]:
    """Return the dashboard body: unwraps ``{apiVersion, spec}`` and ``{dashboard: ...}``."""
    if not isinstance(doc, Mapping):
        raise NotADashboard("top-level JSON value is not an object")
    if "spec" in doc and "apiVersion" in doc and isinstance(doc["spec"], Mapping):
        return doc["spec"]
    if "dashboard" in doc and isinstance(doc["dashboard"], Mapping) and "panels" not in doc:
        return doc["dashboard"]
    return doc


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
    current = raw.get("current") if isinstance(raw.get("current"), Mapping) else {}
    options = raw.get("options") if isinstance(raw.get("options"), list) else []
    option_values: list[str] = []
    for option in options:
        if isinstance(option, Mapping):
            option_values.extend(_values(option.get("value")))
    return Variable(
        name=_text(raw.get("name")),
        type=_text(raw.get("type")),
        query=_text(query),
        current=_values(current.get("value")),
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
    targets = raw.get("targets") if isinstance(raw.get("targets"), list) else []
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


def iter_raw_panels(body: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], str | None]]:
    """Every panel object with the title of the row that holds it (None at top level)."""

    def walk(panels: Any, row_title: str | None) -> Iterator[tuple[Mapping[str, Any], str | None]]:
        if not isinstance(panels, list):
            return
        for raw in panels:
            if not isinstance(raw, Mapping):
                continue
            yield raw, row_title
            if raw.get("type") == "row" or "panels" in raw:
                yield from walk(raw.get("panels"), _text(raw.get("title")) or row_title)

    yield from walk(body.get("panels"), None)
    rows = body.get("rows")
    if isinstance(rows, list):
        for row in rows:
            if isinstance(row, Mapping):
                yield from walk(row.get("panels"), _text(row.get("title")) or None)


def load_dashboard(doc: Any) -> Dashboard:
    """Load any supported dashboard JSON shape into a :class:`Dashboard`."""
    body = unwrap(doc)
    if "panels" not in body and "rows" not in body and "templating" not in body:
        raise NotADashboard("no panels, rows or templating: not a Grafana dashboard")
    templating = body.get("templating")
    raw_vars = templating.get("list") if isinstance(templating, Mapping) else None
    variables = tuple(load_variable(v) for v in raw_vars or [] if isinstance(v, Mapping))
    panels = tuple(load_panel(raw, row) for raw, row in iter_raw_panels(body))
    uid = body.get("uid")
    return Dashboard(
        title=_text(body.get("title")),
        uid=uid if isinstance(uid, str) else None,
        variables=variables,
        panels=panels,
        raw=body,
    )
