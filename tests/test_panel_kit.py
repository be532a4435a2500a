"""The typed panel kit: group modules pass raw Grafana JSON only through ``raw_options=RawOptions(reason, ...)``,
at most ``MAX_RAW_OPTIONS`` times, each under a comment saying why the kit cannot say it; the table kit builds
the merge / organize / pivot transformations and header units a hand-built table used to spell out."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from source_trees import tree, walked

from dashgen.render import kit
from dashgen.render.kit import Column, Matrix, RawOptions, Sort, stat, table, text, timeseries
from dashgen.render.spec import Evidence, Target

ROOT = Path(__file__).resolve().parent.parent
MAX_RAW_OPTIONS = 5
# Keywords that once passed raw Grafana dicts to the kit; each is now a typed parameter or part of RawOptions.
RAW_KEYWORDS = {"options", "custom", "transformations", "field_defaults", "overrides", "extra"}
KIT_HELPERS = {"timeseries", "table", "stat", "state_timeline", "bargauge", "text"}
EVIDENCE = Evidence(source="s", quantity="q", limit="l")


def _calls(path: Path) -> list[ast.Call]:
    return [node for node in walked(tree(path)) if isinstance(node, ast.Call)]


def _name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _raw_sites() -> list[tuple[Path, int]]:
    return [
        (path, keyword.lineno)
        for path in sorted((ROOT / "panels").glob("*.py"))
        for call in _calls(path)
        for keyword in call.keywords
        if keyword.arg == "raw_options"
    ]


def test_group_modules_pass_at_most_five_raw_option_dicts_each_with_a_reason() -> None:
    sites = _raw_sites()
    assert 1 <= len(sites) <= MAX_RAW_OPTIONS, [f"{p.name}:{line}" for p, line in sites]
    for path, line in sites:
        above = path.read_text().splitlines()[line - 2].strip()
        assert above.startswith("#"), f"{path.name}:{line}: raw_options needs a comment above saying why"


def test_group_modules_pass_no_raw_grafana_keyword_to_the_kit() -> None:
    found = [
        f"{path.name}:{keyword.lineno}: {_name(call)}({keyword.arg}=...)"
        for path in sorted((ROOT / "panels").glob("*.py"))
        for call in _calls(path)
        if _name(call) in KIT_HELPERS
        for keyword in call.keywords
        if keyword.arg in RAW_KEYWORDS
    ]
    checked = sum(1 for p in (ROOT / "panels").glob("*.py") for c in _calls(p) if _name(c) in KIT_HELPERS)
    assert checked > 50  # the scan saw the group modules' kit calls
    assert found == []


def test_raw_options_need_a_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        RawOptions(" ", options={"x": 1})


def test_a_merged_table_builds_its_queries_transformations_and_header_units() -> None:
    spec = table(
        "g.t",
        "T",
        EVIDENCE,
        labels={"node": "Node"},
        columns=[Column("Used", "a", "GiB"), Column("UUID", "b", hidden=True), Column("State", "c", aliases=("x",))],
        sort=(Sort("Used (GiB)", descending=True),),
        cells="color-text",
    )
    assert spec.targets == (
        Target("a", instant=True, table=True, ref_id="A"),
        Target("b", instant=True, table=True, ref_id="B"),
        Target("c", instant=True, table=True, ref_id="C"),
    )
    merge, organize = spec.transformations
    assert merge == {"id": "merge", "options": {}}
    assert organize["options"] == {
        "excludeByName": {"Time": True, "Value #B": True},
        "indexByName": {"node": 0, "Value #A": 1, "Value #C": 2, "x": 3},
        "renameByName": {"node": "Node", "Value #A": "Used (GiB)", "Value #C": "State", "x": "State"},
    }
    assert spec.options == {"sortBy": [{"displayName": "Used (GiB)", "desc": True}]}
    assert spec.custom == {"cellOptions": {"type": "color-text"}}


def test_a_matrix_table_pivots_and_titles_its_columns_in_order() -> None:
    target = Target("q", instant=True, table=True, ref_id="A")
    plain = table("g.m", "M", EVIDENCE, targets=(target,), matrix=Matrix(rows="reason", columns="node"))
    assert [t["id"] for t in plain.transformations] == ["groupingToMatrix"]
    headers = {"01 b": "B", "00 a": "A", "as is": "as is"}
    titled = table("g.m", "M", EVIDENCE, targets=(target,), matrix=Matrix("node", "layer", "Node", headers))
    organize = titled.transformations[1]["options"]
    # Grafana orders by the fields' own names, then renames; a value shown as itself is only ordered
    assert organize["renameByName"] == {"node\\layer": "Node", "01 b": "B", "00 a": "A"}
    assert organize["indexByName"] == {"node\\layer": 0, "01 b": 1, "00 a": 2, "as is": 3}


def test_a_table_has_columns_or_targets_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        table("g.t", "T", EVIDENCE, {"n": "N"}, [Column("A", "a")], targets=(Target("b"),))
    with pytest.raises(ValueError, match="give the columns"):
        table("g.t", "T", EVIDENCE, {"n": "N"})


def test_typed_options_land_where_grafana_reads_them() -> None:
    number = stat("g.s", "S", EVIDENCE, (Target("a"),), color_mode="background", text_mode="value_and_name")
    assert number.options == {
        "colorMode": "background",
        "textMode": "value_and_name",
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
    }
    graph = timeseries("g.g", "G", EVIDENCE, (Target("a"),), threshold_style="line", log_scale=10)
    assert graph.custom == {"thresholdsStyle": {"mode": "line"}, "scaleDistribution": {"type": "log", "log": 10}}


def test_raw_options_are_laid_over_what_the_kit_built() -> None:
    spec = stat(
        "g.s",
        "S",
        EVIDENCE,
        (Target("a"),),
        color_mode="value",
        raw_options=RawOptions("test", options={"reduceOptions": {"calcs": ["mean"]}}, extra={"pluginVersion": "1"}),
    )
    assert spec.options == {"colorMode": "value", "reduceOptions": {"calcs": ["mean"], "fields": "", "values": False}}
    assert spec.extra == {"pluginVersion": "1"}
    note = text("g.t", "T", "hello", raw_options=RawOptions("html", options={"mode": "html"}))
    assert note.options == {"mode": "html"} and note.content == "hello"


DATA_HELPERS = ("timeseries", "stat", "table", "state_timeline", "bargauge")


def test_the_common_panel_fields_are_named_once_and_every_data_kind_takes_them() -> None:
    """A field every data kind shows (unit, axis bounds, size, thresholds, links, ...) is declared once, in
    ``Common``: no helper restates it as its own parameter, and each passes it through to the panel unchanged."""
    common = set(kit.Common.__annotations__)
    assert len(common) >= 12 and set(kit.COMMON_DEFAULTS) == common
    target = Target(expr="up", legend="{{node}}")
    given: kit.Common = {
        "unit": "s",
        "min": 0,
        "max": 9,
        "signed": True,
        "decimals": 2,
        "width": 6,
        "height": 5,
        "no_value": "none seen",
        "thresholds": (("green", None), ("red", 1.0)),
        "mappings": ({"type": "value", "options": {}},),
        "links": (kit.link("a", "/d/a"),),
        "data_links": (kit.link("b", "/d/b"),),
        "datasource": {"type": "prometheus", "uid": "x"},
    }
    assert set(given) == common
    for name in DATA_HELPERS:
        helper = getattr(kit, name)
        own = {p.name for p in inspect.signature(helper).parameters.values() if p.kind is not p.VAR_KEYWORD}
        assert not own & common, f"{name} restates {sorted(own & common)}"
        spec = helper("k.x", "X", EVIDENCE, targets=[target], **given)
        for field, value in given.items():
            shown = getattr(spec, field)
            assert shown == (tuple(dict(v) for v in value) if field.endswith(("links", "mappings")) else value), (
                name,
                field,
            )
        default = helper("k.y", "Y", EVIDENCE, targets=[target])
        assert all(getattr(default, field) == value for field, value in kit.COMMON_DEFAULTS.items()), name
    assert {name for name in kit.__all__ if name in DATA_HELPERS} == set(DATA_HELPERS)
    assert all(common <= kit.parameter_names(name) for name in DATA_HELPERS)
    assert "unit" not in kit.parameter_names("text") and "width" in kit.parameter_names("text")


def test_coded_states_are_a_typed_value_and_queries_write_no_grafana_mapping() -> None:
    """A query module says which code means what (``States``); only ``States.mappings()`` writes Grafana's value
    mapping JSON, numbered in the order Grafana matches, with the range past the listed codes last."""
    states = kit.States.by_code({3: ("c", "red"), 1: ("a", "green")}, kit.Beyond(10, 99, "many", "blue"))
    value, beyond = states.mappings()
    assert value == {
        "type": "value",
        "options": {"1": {"text": "a", "color": "green", "index": 0}, "3": {"text": "c", "color": "red", "index": 1}},
    }
    assert beyond == {
        "type": "range",
        "options": {"from": 10, "to": 99, "result": {"text": "many", "color": "blue", "index": 2}},
    }
    in_order = kit.States.of([kit.State(5, "e", "red"), kit.State(2, "b", "green")]).mappings()
    assert list(in_order[0]["options"]) == ["5", "2"] and len(in_order) == 1
    raw = [
        f"{path.name}:{node.lineno}"
        for path in sorted((ROOT / "queries").glob("*.py"))
        for node in walked(tree(path))
        if isinstance(node, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value == "type" for k in node.keys)
        and any(isinstance(v, ast.Constant) and v.value in ("value", "range", "special") for v in node.values)
    ]
    assert not raw, f"Grafana value mappings written in queries/: {raw}; return a States"


def test_a_source_not_exported_gets_the_kit_text_with_the_exporter_tables_note():
    """Every "not available" text is the kit's (S15): the source's state, the exporter table's note where it has one
    (how TENT is built in, and the port it shares), then the closing line, the same for every group."""
    from dashgen.deployment.profile import load_profiles
    from dashgen.exporters.table import TABLES

    (profile,) = load_profiles(["long-context-64"])
    assert profile.source("mooncake_tent").status == "not-exported" and TABLES["mooncake_tent"].not_exported
    panel = kit.source_status_panel("g.unavailable", profile, ["mooncake_tent"], "TENT metrics: not available")
    lines = panel.content.splitlines()
    assert lines[0] == "**TENT metrics** is not shown for this deployment (long-context-64):"
    assert lines[2].startswith("- ") and "(`mooncake_tent`): not exported in this deployment." in lines[2]
    assert lines[4] == TABLES["mooncake_tent"].not_exported
    assert lines[-1].startswith("These panels would otherwise be empty")
    assert [name for name, table in TABLES.items() if table.not_exported] == ["mooncake_tent"]


def test_no_group_writes_its_own_not_available_text():
    """A group shows a missing source through ``kit.source_status_panel``, never a text of its own: one shape for
    the reader, and the exporter table's note in it."""
    found = []
    for path in sorted(Path(__file__).resolve().parent.parent.joinpath("panels").glob("*.py")):
        for node in walked(tree(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "text":
                titles = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
                if any(str(t).endswith(kit.NOT_AVAILABLE) for t in titles):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == [], found
