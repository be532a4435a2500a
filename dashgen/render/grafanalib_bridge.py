"""Turn PanelSpecs into grafanalib objects. grafanalib is the rendering vocabulary; what it gets
wrong for a current Grafana (legacy keys, nulls, harmful defaults) is fixed in normalise.py, in
one place, not here panel by panel.

The bar gauge, which grafanalib only knows in its pre-Grafana-7 shape, is emitted by
``ModernPanel``, a thin subclass that writes the current model.
"""

from __future__ import annotations

from typing import Any

import attr
import grafanalib.core as G

from dashgen.document.copying import tree_copy
from dashgen.render.impossible import TIMESERIES_NOTE, is_bounded, renderer_adds, with_impossible_values
from dashgen.render.label_columns import with_label_mappings
from dashgen.render.layout import GridPos
from dashgen.render.raw import deep_merge
from dashgen.render.spec import PanelSpec, Target, scale_min
from dashgen.render.tables import ref as ref_id

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# A time series legend's columns. "last" (not "lastNotNull") so that a series that stopped before the range
# end (a node whose Store segments were lost, an engine that died) shows an empty Last instead of its old value
# as if current: Grafana inserts a null after a series' last sample when the gap to the range end exceeds the
# query step (applyNullInsertThreshold with the time field's interval), and "last" reads that null; a live
# series has a sample within one step of the end and keeps its value. "median" is there for a second reason:
# Grafana caches the standard calculations (mean, max, last, ...) on the field while it finds the axis range,
# before the null is inserted, and reuses that cache when every requested calculation is in it; a calculation
# outside the standard set (median) makes the legend compute them all again on the series it draws.
LEGEND_CALCS = ("mean", "median", "max", "last")


@attr.s
class PromTarget(G.Target):
    """A Prometheus query in the shape Grafana 11/12 saves: code editor, explicit range/instant."""

    extra: dict = attr.ib(factory=dict)

    def to_json_data(self) -> dict[str, Any]:
        data = super().to_json_data()
        for legacy in ("query", "target", "metric", "step", "intervalFactor"):
            data.pop(legacy, None)
        data["editorMode"] = "code"
        data["range"] = not self.instant
        return merge_patch(data, self.extra) if self.extra else data


@attr.s
class ModernPanel(G.Panel):
    """A current panel type grafanalib emits in a legacy shape (the bar gauge)."""

    panelType: str = attr.ib(default="bargauge")
    options: dict = attr.ib(factory=dict)
    fieldDefaults: dict = attr.ib(factory=dict)
    overrides: list = attr.ib(factory=list)

    def to_json_data(self) -> dict[str, Any]:
        return self.panel_json(
            {
                "type": self.panelType,
                "options": self.options,
                "fieldConfig": {"defaults": self.fieldDefaults, "overrides": self.overrides},
            }
        )


def _targets(spec: PanelSpec) -> list[PromTarget]:
    targets = []
    for index, target in enumerate(spec.targets):
        assert isinstance(target, Target)
        targets.append(
            # grafanalib is untyped: mypy's attrs plugin sees only the fields PromTarget adds, not G.Target's
            PromTarget(  # type: ignore[call-arg]
                expr=target.expr,
                legendFormat=target.legend,
                refId=target.ref_id or ref_id(index),
                instant=target.instant,
                format="table" if target.table else "time_series",
                interval=target.interval,
                datasource=_datasource(spec),
                extra=target.extra,
            )
        )
    return targets


def _datasource(spec: PanelSpec) -> dict[str, Any]:
    return tree_copy(spec.datasource) if spec.datasource is not None else DATASOURCE


def _field_defaults(spec: PanelSpec) -> dict[str, Any]:
    defaults: dict[str, Any] = {"unit": spec.unit}
    low = scale_min(spec.kind, spec.min)
    if low is not None:
        defaults["min"] = low
    if spec.max is not None:
        defaults["max"] = spec.max
    if spec.decimals is not None:
        defaults["decimals"] = spec.decimals
    if spec.no_value is not None:
        defaults["noValue"] = spec.no_value
    mappings = spec.mappings
    if renderer_adds(spec.evidence):
        mappings = with_impossible_values(spec.mappings, spec.unit, low, spec.max, spec.signed)
    if mappings:
        defaults["mappings"] = tree_copy(list(mappings))
    if spec.data_links:
        defaults["links"] = tree_copy(list(spec.data_links))
    return deep_merge(defaults, tree_copy(spec.field_defaults))


def _thresholds(spec: PanelSpec) -> list[dict[str, Any]]:
    return [{"color": color, "value": value} for color, value in spec.thresholds]


def _description(spec: PanelSpec) -> str:
    """The evidence; a bounded time series adds how it shows a value its fixed axis cannot draw (S38)."""
    if (
        spec.kind == "timeseries"
        and is_bounded(spec.unit, spec.min, spec.max, spec.signed)
        and renderer_adds(spec.evidence)
    ):
        return f"{spec.description} {TIMESERIES_NOTE}."
    return spec.description


def _common(spec: PanelSpec, panel_id: int, pos: GridPos) -> dict[str, Any]:
    return {
        "title": spec.title,
        "description": _description(spec),
        "dataSource": _datasource(spec),
        "targets": _targets(spec),
        "gridPos": G.GridPos(h=pos.h, w=pos.w, x=pos.x, y=pos.y),
        "id": panel_id,
        "links": tree_copy(list(spec.links)),
        "transformations": tree_copy(list(spec.transformations)),
    }


def _extra(spec: PanelSpec, options: dict[str, Any] | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {"fieldConfig": {"defaults": _field_defaults(spec)}}
    if spec.custom:
        extra["fieldConfig"]["defaults"]["custom"] = tree_copy(spec.custom)
    merged_options = deep_merge(tree_copy(options or {}), tree_copy(spec.options))
    if merged_options:
        extra["options"] = merged_options
    return extra


@attr.s
class PatchedPanel:
    """A panel with the spec's raw escape hatch laid over its JSON (a JSON merge patch, RFC 7386)."""

    panel: G.Panel = attr.ib()
    patch: dict = attr.ib(factory=dict)

    @property
    def id(self) -> int | None:
        return self.panel.id

    def _map_panels(self, f: Any) -> Any:
        return f(self)

    def to_json_data(self) -> dict[str, Any]:
        return merge_patch(self.panel.to_json_data(), self.patch)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: an object patch merges key by key (null deletes), anything else replaces. Returns a new value."""
    if not isinstance(patch, dict):
        return tree_copy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def build_panel(spec: PanelSpec, panel_id: int, pos: GridPos) -> G.Panel | PatchedPanel:
    """The grafanalib object for one spec at its computed position (with its raw ``extra``, if any)."""
    panel = _build_panel(spec, panel_id, pos)
    return PatchedPanel(panel, tree_copy(spec.extra)) if spec.extra else panel


def _build_panel(spec: PanelSpec, panel_id: int, pos: GridPos) -> G.Panel:
    common = _common(spec, panel_id, pos)
    if spec.kind == "timeseries":
        return G.TimeSeries(
            **common,
            unit=spec.unit or "",
            thresholds=_thresholds(spec),
            mappings=[],
            overrides=_overrides(spec),
            spanNulls=False,
            legendDisplayMode="table",
            legendPlacement="bottom",
            tooltipMode="multi",
            tooltipSort="desc",
            # through the JSON: grafanalib's legendCalcs validator does not know "median"
            extraJson=_extra(spec, {"legend": {"showLegend": True, "calcs": list(LEGEND_CALCS)}}),
        )
    if spec.kind == "table":
        return G.Table(
            **common,
            unit=spec.unit or "",
            thresholds=_thresholds(spec),
            overrides=_overrides(spec),
            filterable=True,
            extraJson=_extra(
                spec,
                {
                    "cellHeight": "sm",
                    "frameIndex": 0,
                    "footer": {"show": False, "reducer": [], "countRows": False, "enablePagination": True},
                    "showHeader": True,
                },
            ),
        )
    if spec.kind == "stat":
        return G.Stat(
            **common,
            format=spec.unit,
            decimals=spec.decimals,
            noValue=spec.no_value or "No data",
            thresholds=_thresholds(spec),
            mappings=[],
            overrides=_overrides(spec),
            reduceCalc="lastNotNull",
            graphMode="none",
            colorMode="value",
            extraJson=_extra(
                spec,
                {"wideLayout": True, "showPercentChange": False, "percentChangeColorMode": "standard"},
            ),
        )
    if spec.kind == "text":
        common.pop("targets")
        text_extra = tree_copy({"options": spec.options}) if spec.options else None
        return G.Text(**common, content=spec.content, mode="markdown", extraJson=text_extra)
    if spec.kind == "state-timeline":
        # Coloured by its value mappings, never by thresholds: Grafana's timeline, with mergeValues on and the
        # field's colour mode "thresholds", replaces each value by its threshold step's label and reads no
        # mapping (prepareTimelineFields / mergeThresholdValues), so every state would be one base-step bar.
        # In "fixed" mode equal neighbours still merge and each keeps its mapping's text and colour. An imported
        # panel keeps the colour mode Grafana stored (the import's round trip): lint names the combination there.
        return G.StateTimeline(
            **common,
            colorMode="fixed" if renderer_adds(spec.evidence) else "thresholds",
            thresholds=_thresholds(spec),
            overrides=_overrides(spec),
            mappings=[],
            extraJson=_extra(spec),
        )
    # bargauge: the current model via ModernPanel (its scale from 0 unless the spec says: spec.scale_min)
    defaults = _field_defaults(spec)
    defaults["thresholds"] = {"mode": "absolute", "steps": _thresholds(spec)}
    if spec.custom:
        defaults["custom"] = tree_copy(spec.custom)
    base_options = {
        "displayMode": "gradient",
        "orientation": "horizontal",
        "showUnfilled": True,
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
    }
    base_options = deep_merge(base_options, tree_copy(spec.options))
    return ModernPanel(
        **common,
        panelType=spec.kind,
        options=base_options,
        fieldDefaults=defaults,
        overrides=_overrides(spec),
    )


def _overrides(spec: PanelSpec) -> list[dict[str, Any]]:
    overrides = tree_copy(list(spec.overrides))
    if spec.kind == "table" and renderer_adds(spec.evidence):  # the label columns keep only a label's mappings
        return with_label_mappings(overrides, _field_defaults(spec).get("mappings", []))
    return overrides


def build_row(
    title: str, row_id: int, pos: GridPos, collapsed: bool, nested: list[G.Panel | PatchedPanel]
) -> G.RowPanel:
    return G.RowPanel(
        title=title,
        id=row_id,
        gridPos=G.GridPos(h=pos.h, w=pos.w, x=pos.x, y=pos.y),
        collapsed=collapsed,
        panels=nested if collapsed else [],
    )
