"""S38's bounds as a panel states them: a legitimately signed quantity (an error budget left) keeps only the ratio's
top; a ratio unit without a fixed 0-100 / 0-1 axis (node-exporter's "Sys Load", node_load1 * 100 / cores, passes
100 %) is S5's finding, not an impossible value; a team panel's field override gets the mappings of its own unit on
the panel's fitted axis, never the defaults' ratio texts."""

from __future__ import annotations

from typing import Any

from bounded_panels import s38_findings

from dashgen.lint.findings import Severity
from dashgen.render.grafanalib_bridge import build_panel
from dashgen.render.imported import imported
from dashgen.render.impossible import ABOVE_FULL, BELOW_ZERO, NEGATIVE, impossible_mappings
from dashgen.render.kit import ratio_axis, stat, timeseries
from dashgen.render.layout import GridPos
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target
from dashgen.render.team_fit import fit_imported

EVIDENCE = Evidence("test source", "a share", "none")


def _texts(mappings: Any) -> list[str]:
    return [m["options"]["result"]["text"] for m in mappings or [] if m.get("type") == "range"]


def _rendered_texts(spec: PanelSpec) -> list[str]:
    return _texts(build_panel(spec, 1, GridPos(0, 0, 12, 8)).to_json_data()["fieldConfig"]["defaults"].get("mappings"))


def test_a_signed_ratio_keeps_only_the_value_above_its_top_impossible() -> None:
    budget = stat("t.b", "Budget left", EVIDENCE, [Target("m")], **ratio_axis("percentunit", signed=True))
    assert _rendered_texts(budget) == [ABOVE_FULL]
    assert impossible_mappings("reqps", 0, None, signed=True) == ()
    share = stat("t.s", "Share", EVIDENCE, [Target("m")], **ratio_axis("percentunit"))
    assert _rendered_texts(share) == [ABOVE_FULL, BELOW_ZERO]


def test_a_percent_without_a_fixed_top_is_no_share_s38_bounds_above() -> None:
    load = timeseries("t.l", "Sys Load", EVIDENCE, [Target("m")], unit="percent", min=0)
    assert _rendered_texts(load) == [NEGATIVE]  # still fixed at 0: a load is never negative
    assert impossible_mappings("percent", None, None) == () and impossible_mappings("percentunit", 0, 2) == (
        impossible_mappings("reqps", 0, None)
    )
    (finding,) = s38_findings({"unit": "percent", "min": 0})
    assert finding.severity is Severity.WARNING and ABOVE_FULL not in finding.message
    assert s38_findings({"unit": "percent"}) == [] and s38_findings({"unit": "percentunit", "max": 1}) == []


def _fitted_override(*properties: dict[str, Any]) -> dict[str, Any]:
    """The properties of one field override of an imported percentunit stat, as ``team_fit`` fits them."""
    override = {"matcher": {"id": "byName", "options": "rate"}, "properties": list(properties)}
    panel = PanelSpec(
        key="top.p",
        title="P",
        kind="stat",
        evidence=imported(None),
        targets=(Target("up"),),
        unit="percentunit",
        overrides=(override,),
    )
    (got,) = fit_imported([GroupSpec("top", "T", (panel,))], [], {}, "m", "Old").groups[0].panels
    assert (got.min, got.max) == (0, 1) and _texts(got.mappings) == [ABOVE_FULL, BELOW_ZERO]
    (fitted,) = got.overrides
    return {p["id"]: p["value"] for p in fitted["properties"]}


def test_a_team_override_with_its_own_unit_reads_the_fitted_axis_not_the_defaults_ratio_texts() -> None:
    # a req/s column on a percentunit panel: 5 req/s is no share above 100 %; the fitted min 0 still bounds it
    props = _fitted_override({"id": "unit", "value": "reqps"})
    assert _texts(props["mappings"]) == [NEGATIVE]
    # its own min above 0: nothing impossible, and an empty mappings of its own so the ratio texts are not inherited
    props = _fitted_override({"id": "unit", "value": "s"}, {"id": "min", "value": 5})
    assert props["mappings"] == []
    # a ratio override still gets its own bounds and texts
    props = _fitted_override({"id": "unit", "value": "percent"})
    assert (props["min"], props["max"]) == (0, 100) and _texts(props["mappings"]) == [ABOVE_FULL, BELOW_ZERO]


def _fitted(kind: str, unit: str, **fields: Any) -> PanelSpec:
    """An imported panel of ``kind`` and ``unit`` as ``team_fit`` fits it for a profile's build."""
    panel = PanelSpec(
        key="top.p", title="P", kind=kind, evidence=imported(None), targets=(Target("up"),), unit=unit, **fields
    )
    (got,) = fit_imported([GroupSpec("top", "T", (panel,))], [], {}, "m", "Old").groups[0].panels
    return got


def test_a_team_table_s_label_columns_keep_only_a_label_s_mappings_and_a_team_bar_gauge_starts_at_0() -> None:
    """A team table that gets the ratio texts gets the label columns' override too (a class "503" must not read as
    a share above 100 %), as dashgen's own tables; a team bar gauge without a min is drawn from 0, and that floor
    bounds it below as dashgen's own bar gauges are (``spec.scale_min``)."""
    from dashgen.render.label_columns import LABEL_COLUMNS

    table = _fitted("table", "percentunit")
    (labels,) = [o for o in table.overrides if o["matcher"] == LABEL_COLUMNS]
    assert {p["id"]: p["value"] for p in labels["properties"]} == {"unit": "string", "mappings": []}
    gauge = _fitted("bargauge", "bytes")
    assert gauge.min == 0 and _texts(gauge.mappings) == [NEGATIVE]


def test_only_a_ratio_fixed_at_both_bounds_reads_back_as_signed() -> None:
    """A panel with no impossible-value mapping at all is not a signed one: reading it back as signed would switch
    S38 off for it for good."""
    from dashgen.render.impossible import reads_signed

    assert not reads_signed([], "bytes", 0, None) and not reads_signed([], "percentunit", 0, 1)
    assert reads_signed(impossible_mappings("percentunit", 0, 1, signed=True), "percentunit", 0, 1)
