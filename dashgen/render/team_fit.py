"""An imported dashboard made to fit a dashgen dashboard: what a public dashboard holds that the build refuses,
rewritten the one way it can be, each change said in a note the build prints.

Pure data -> data over an ``ImportedDashboard``'s rows and variables, applied when a profile lists the module in
``extra_modules`` (``dashgen.team_panels``); the module file itself stays as ``dashgen import`` wrote it, so its
round trip against the source still holds. What it does:

* a panel with an empty title gets one (its kind and key): Grafana shows none, the schema needs one;
* a ``percent`` / ``percentunit`` axis is fixed 0-100 / 0-1 (S5);
* a target's own hard-coded data source is dropped: every panel reads the dashboard's ``${datasource}``;
* a query variable stored as an object (``{"query": ..., "refId": ...}``) is written as its query string;
* a variable whose name dashgen's dashboard already uses differently (``$node``, ``$gpu``, ...) is renamed
  ``<module>_<name>``, in the variable and in every query, title, legend and link text that uses it;
* a panel type the build does not draw (``gauge``) is drawn as the kit kind ``dashgen import`` chose (a stat);
* a target field the build does not carry (``exemplar``, ``intervalFactor``, ``step``) is dropped;
* a row with no title (the panels Grafana shows above the first row) is titled by the imported dashboard;
* a ratio unit set by a field override gets that override's 0-100 / 0-1 bounds too (S5);
* a bounded panel (a ratio, an axis fixed at 0) gets S38's red mappings for the values it cannot take after its
  own, in its defaults and in an override that bounds a field (``dashgen.render.impossible``);
* a label name that plays a profile label role (``Hostname`` / ``node`` for the node, ``gpu``, ``UUID``, ...:
  ``dashgen.deployment.label_roles``) is written with the profile's name for that role, in matchers, ``by`` /
  ``on`` lists, label functions, legends, query variables and a table's column options (``dashgen.render
  .relabel``); a query where a label name is a Grafana variable is named in a note with the reason;
* every selector of every query, and of every query variable, gets the deployment's matcher
  (``dashgen.render.scope``), so the imported panels read this deployment's series on a shared store (S21); a
  query that cannot be scoped is named in a note with the reason;
* a zero fill ``or <number>`` / ``or vector(<number>)`` closing an expression or parenthesis is dropped: S7
  (it turns No Data into a number; the bare number is MetricsQL, which PromQL refuses), so no data reads as
  No Data. One inside an operand (``a or vector(0) * 2``) is left for the lint to name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from dashgen.deployment.label_roles import renames as role_renames
from dashgen.render.impossible import with_impossible_values
from dashgen.render.label_columns import LABEL_COLUMNS, label_override, with_label_mappings
from dashgen.render.relabel import Relabelled, relabel_expr, relabel_legend, relabel_variable_query
from dashgen.render.scope import Scoped, parses, scope_expr, scope_variable_query
from dashgen.render.spec import RATIO_UNITS, GroupSpec, PanelSpec, Target, scale_min
from dashgen.render.validate import panel_types, target_fields

# ``or 0`` / ``or vector(0)`` closing an expression or a parenthesis: the zero fill S7 forbids
ZERO_FILL = re.compile(r"\s*\bor\s+(?:vector\s*\(\s*-?\d+(?:\.\d+)?\s*\)|-?\d+(?:\.\d+)?)(?=\s*(?:\)|$))")


@dataclass(frozen=True)
class Fitted:
    """The rows and variables as the build accepts them, and one note per change made."""

    groups: tuple[GroupSpec, ...]
    variables: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]
    # the notes of queries that read beyond the deployment or by label names the profile does not use
    unscoped: tuple[str, ...] = ()


def _renamer(renames: dict[str, str]) -> Any:
    if not renames:
        return lambda text: text
    names = "|".join(re.escape(name) for name in sorted(renames, key=len, reverse=True))
    pattern = re.compile(r"\$\{(" + names + r")(?=[}:])|\[\[(" + names + r")(?=[\]:])|\$(" + names + r")\b")

    def rename(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            whole = match.group(0)
            old = match.group(1) or match.group(2) or match.group(3)
            return whole.replace(old, renames[old], 1)

        return pattern.sub(one, text)

    return rename


def _deep(value: Any, rename: Any) -> Any:
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, dict):
        return {key: _deep(item, rename) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_deep(item, rename) for item in value)
    return value


@dataclass
class _Scope:
    """The deployment matcher every imported query gets, the profile's label names (imported name -> the
    profile's), and how many queries got them; the notes of those that could not."""

    matcher: str
    renames: dict[str, str] = field(default_factory=dict)
    scoped: int = 0
    queries: int = 0
    relabelled: int = 0
    unscoped: list[str] = field(default_factory=list)

    def _unscoped(self, note: str, notes: list[str]) -> None:
        notes.append(note)
        self.unscoped.append(note)

    def relabel(self, relabelled: Relabelled, original: str, where: str, notes: list[str]) -> str:
        if not self.renames or not original.strip():
            return original
        if relabelled.reason:
            self._unscoped(f"{where}: label names not rewritten to the profile's: {relabelled.reason}", notes)
            return original
        if not parses(relabelled.expr) and parses(original):
            self._unscoped(f"{where}: label names not rewritten to the profile's: the rewrite would not parse", notes)
            return original
        self.relabelled += relabelled.renamed > 0
        return relabelled.expr

    def apply(self, scoped: Scoped, original: str, where: str, notes: list[str]) -> str:
        if not self.matcher or not original.strip():
            return original
        self.queries += 1
        if scoped.reason:
            self._unscoped(f"{where}: not scoped to {self.matcher}: {scoped.reason}; it reads every deployment", notes)
            return original
        if not parses(scoped.expr) and parses(original):
            self._unscoped(
                f"{where}: not scoped to {self.matcher}: the rewrite would not parse; it reads every deployment", notes
            )
            return original
        self.scoped += 1
        return scoped.expr


def _target(target: Target, rename: Any, notes: list[str], key: str, scope: _Scope) -> Target:
    expr = ZERO_FILL.sub("", rename(target.expr))
    if expr != rename(target.expr):
        notes.append(f"panel {key}: zero fill `or vector(...)` dropped, no data reads as No Data (S7)")
    where = f"panel {key} query {target.ref_id or expr!r}"
    refused = len(scope.unscoped)
    relabelled = scope.relabel(relabel_expr(expr, scope.renames), expr, where, notes)
    # a query left with the imported names keeps the legend that names them
    legend = relabel_legend(rename(target.legend), scope.renames if len(scope.unscoped) == refused else {})
    expr = scope.apply(scope_expr(relabelled, scope.matcher), relabelled, where, notes)
    carried = target_fields() - {"datasource"}
    extra = {key: value for key, value in target.extra.items() if key in carried}
    return replace(target, expr=expr, legend=legend, extra=_deep(extra, rename))


def _field_names(value: Any, renames: dict[str, str]) -> Any:
    """A table's column options with the profile's label names: keys of ``organize``'s by-name maps, a
    ``byName`` override's field, and ``${__field.labels.<name>}`` in links and display names. A renamed column
    keeps the header it had (``renameByName``) unless the author renamed it already."""
    if not renames:
        return value
    if isinstance(value, str):
        return re.sub(
            r"(__field\.labels\.)([A-Za-z_][A-Za-z0-9_]*)",
            lambda m: m.group(1) + renames.get(m.group(2), m.group(2)),
            value,
        )
    if isinstance(value, list | tuple):
        return type(value)(_field_names(item, renames) for item in value)
    if not isinstance(value, dict):
        return value
    fitted = {key: _field_names(item, renames) for key, item in value.items()}
    matcher = fitted.get("matcher")
    if isinstance(matcher, dict) and matcher.get("id") == "byName" and matcher.get("options") in renames:
        fitted["matcher"] = {**matcher, "options": renames[str(matcher["options"])]}
    if fitted.get("id") == "organize" and isinstance(fitted.get("options"), dict):
        options = dict(fitted["options"])
        maps = [
            name for name in ("excludeByName", "indexByName", "renameByName") if isinstance(options.get(name), dict)
        ]
        named = {key for name in maps for key in options[name]}
        headers = {old: old for old in renames if old in named}  # a column the author placed keeps its header
        for name in maps:
            options[name] = {renames.get(k, k): v for k, v in options[name].items()}
        headers = {
            renames[old]: title
            for old, title in {**headers, **(fitted["options"].get("renameByName") or {})}.items()
            if old in renames
        }
        if headers:
            options["renameByName"] = {**options.get("renameByName", {}), **headers}
        fitted["options"] = options
    return fitted


def _override(
    override: dict[str, Any], panel: PanelSpec, low: Any, high: Any, inherited: tuple[Any, ...]
) -> dict[str, Any]:
    """An override whose ``unit`` property is a ratio, with that ratio's min and max set (S5); one that sets a unit
    or a min, with S38's mappings for its own field after the field's own: the panel's fitted axis ``low`` -
    ``high`` where it sets none, and its own mappings property whenever they differ from the ``inherited`` ones of
    the defaults (an empty one too: a field with its own unit must not show the defaults' ratio texts)."""
    properties = [p for p in override.get("properties") or () if isinstance(p, dict)]
    props = {p.get("id"): p.get("value") for p in properties}
    if "unit" not in props and "min" not in props:
        return override
    unit = props.get("unit", panel.unit)
    ratio = "unit" in props and unit in RATIO_UNITS
    if ratio:
        low, high = RATIO_UNITS[str(unit)]
    else:
        low, high = props.get("min", low), props.get("max", high)
    own = props.get("mappings", list(panel.mappings))
    own = own if isinstance(own, list) else []  # a malformed value is replaced only if the field is bounded
    mappings = list(with_impossible_values(own, unit, low, high, panel.signed))
    kept = properties
    if not ("mappings" in props and mappings == own):
        kept = [p for p in properties if p.get("id") != "mappings"]
        if "mappings" in props or mappings != list(inherited):
            kept.append({"id": "mappings", "value": mappings})
    if not ratio:
        return {**override, "properties": kept}
    kept = [p for p in kept if p.get("id") not in ("min", "max")]
    return {**override, "properties": [*kept, {"id": "min", "value": low}, {"id": "max", "value": high}]}


def _labels_as_text(overrides: tuple[Any, ...], mappings: Iterable[Any]) -> tuple[Any, ...]:
    """A table's overrides with its label columns' override (added if it has none) holding only the mappings meant
    for a label (``label_columns``), as dashgen's own tables have it."""
    has = any(isinstance(o, dict) and o.get("matcher") == LABEL_COLUMNS for o in overrides)
    return tuple(with_label_mappings((*overrides, *(() if has else (label_override(),))), mappings))


def _panel(panel: PanelSpec, rename: Any, notes: list[str], scope: _Scope) -> PanelSpec:
    title = rename(panel.title)
    if not title.strip():
        title = f"Untitled {panel.kind} ({panel.key})"
        notes.append(f"panel {panel.key}: no title: titled {title!r}")
    extra = panel.extra
    if "type" in extra and extra["type"] not in panel_types():
        extra = {key: value for key, value in extra.items() if key != "type"}
        notes.append(
            f"panel {panel.key}: {panel.extra['type']!r} is no panel type the build draws: drawn as a {panel.kind}"
        )
    low, high = scale_min(panel.kind, panel.min), panel.max
    if panel.unit in RATIO_UNITS and (low, high) != RATIO_UNITS[str(panel.unit)]:
        low, high = (float(bound) for bound in RATIO_UNITS[str(panel.unit)])
        notes.append(f"panel {panel.key}: {panel.unit} axis fixed to {low:g}-{high:g} (S5)")
    mappings = with_impossible_values(panel.mappings, panel.unit, low, high, panel.signed)
    overrides = tuple(
        _override(o, panel, low, high, mappings) for o in _field_names(_deep(panel.overrides, rename), scope.renames)
    )
    if len(mappings) > len(panel.mappings):
        notes.append(f"panel {panel.key}: red mappings for the values its unit or axis makes impossible (S38)")
        if panel.kind == "table":  # a label that reads as a number must not meet them: its columns keep their own
            overrides = _labels_as_text(overrides, mappings)
            notes.append(f"panel {panel.key}: its label columns shown as text, without the value mappings")
    return replace(
        panel,
        title=title,
        extra=extra,
        min=low,
        max=high,
        mappings=mappings,
        targets=tuple(_target(t, rename, notes, panel.key, scope) for t in panel.targets),
        overrides=overrides,
        transformations=_field_names(panel.transformations, scope.renames),
        field_defaults=_field_names(panel.field_defaults, scope.renames),
        links=_deep(panel.links, rename),
        data_links=_field_names(_deep(panel.data_links, rename), scope.renames),
        content=rename(panel.content),
    )


def _group(group: GroupSpec, rename: Any, notes: list[str], heading: str, scope: _Scope) -> GroupSpec:
    return replace(
        group,
        title=rename(group.title) if group.title.strip() else heading,
        panels=tuple(_panel(p, rename, notes, scope) for p in group.panels),
        rows=tuple(_group(r, rename, notes, heading, scope) for r in group.rows),
    )


def _variable(
    variable: dict[str, Any], renames: dict[str, str], rename: Any, scope: _Scope, notes: list[str]
) -> dict[str, Any]:
    fitted = dict(variable)
    name = str(fitted.get("name"))
    if name in renames:
        fitted["name"] = renames[name]
    query = fitted.get("query")
    if isinstance(query, dict):
        query = query.get("query", "")
    if isinstance(query, str):
        query = rename(query)
        if fitted.get("type") == "query":  # its choices come from the deployment's series, by the profile's names
            where = f"variable ${name}"
            query = scope.relabel(relabel_variable_query(query, scope.renames), query, where, notes)
            query = scope.apply(scope_variable_query(query, scope.matcher), query, where, notes)
        fitted["query"] = query
    if isinstance(fitted.get("definition"), str):
        fitted["definition"] = rename(fitted["definition"])
    return fitted


def fit_imported(
    groups: Iterable[GroupSpec],
    variables: Iterable[dict[str, Any]],
    taken: dict[str, dict[str, Any]],
    module: str,
    heading: str,
    scope: str = "",
    labels: dict[str, str] | None = None,
) -> Fitted:
    """``groups`` and ``variables`` of the imported module ``module`` as a dashboard whose own variables are
    ``taken`` (name -> variable) accepts them; ``heading`` titles a row that has no title; ``scope`` is the
    deployment matcher every query and query variable gets ("" for a store holding one deployment); ``labels``
    the profile's label names by role (None: the imported names are kept)."""
    notes: list[str] = []
    variables = tuple(variables)
    renames = {
        str(v.get("name")): f"{module}_{v.get('name')}"
        for v in variables
        if str(v.get("name")) in taken and str(v.get("name")) != "datasource" and taken[str(v.get("name"))] != v
    }
    for old, new in renames.items():
        notes.append(f"variable ${old} is dashgen's own: renamed ${new} in the module's variables and queries")
    rename = _renamer(renames)
    scoping = _Scope(scope, role_renames(labels) if labels else {})
    fitted_groups = tuple(_group(g, rename, notes, heading, scoping) for g in groups)
    fitted_variables = tuple(_variable(v, renames, rename, scoping, notes) for v in variables)
    if scoping.queries:
        notes.append(f"{scoping.scoped} of {scoping.queries} queries scoped to the deployment ({scope})")
    if scoping.relabelled:
        named = ", ".join(f"{old} -> {new}" for old, new in sorted(scoping.renames.items()))
        notes.append(f"{scoping.relabelled} queries read with the profile's label names ({named})")
    return Fitted(fitted_groups, fitted_variables, tuple(notes), tuple(scoping.unscoped))
