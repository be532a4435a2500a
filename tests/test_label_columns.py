"""A dashgen table's label columns (node, GPU index, PP stage, replica, a matrix's row names) show the label's text.

Grafana's display processor (@grafana/data ``getDisplayProcessor``) formats a string that reads as a number with
the field's unit and decimals unless its unit is ``string``, and a table's label columns inherit the table's
field defaults: GPU "6" read "6.0" in "Window mean and peak per GPU", "0x1f" read "31", a reason "1e3" "1 K".
The label columns are found here from the panel's transformations (organize's renames of the query labels,
groupingToMatrix's row field), not from the overrides the kit writes."""

from __future__ import annotations

import re
from typing import Any

import grafana_node
import pytest
from grafana_node import call
from group_checks import PROFILE_NAMES, document

from dashgen.live.expand import ExpandedQuery
from dashgen.preview.frames import Answer, request
from dashgen.preview.page import GRAFANA_DATA
from dashgen.render import kit
from dashgen.render.imported import imported
from dashgen.render.spec import Evidence, Target

# Labels that read as numbers: Grafana's toNumber takes a leading zero, an exponent and a hex prefix
NUMBER_LIKE = ("6", "06", "1e3", "0x1f")
VALUE_FIELD = re.compile(r"Time|Value( #[A-Z]+)?")  # organize's names of a query's own fields, not its labels


def _every(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for panel in panels:
        found.append(panel)
        found.extend(_every(panel.get("panels") or []))
    return found


def _tables() -> list[tuple[str, dict[str, Any]]]:
    return [
        (profile, panel)
        for profile in PROFILE_NAMES
        for panel in _every(document(profile)["panels"])
        if panel.get("type") == "table"
    ]


TABLES = _tables()


def _label_columns(panel: dict[str, Any]) -> dict[str, str]:
    """Query label name -> the title Grafana shows its column under, from the panel's transformations: a matrix's
    row field, or the labels a merged table's organize step places; each as organize renames it."""
    steps = panel.get("transformations") or []
    organize = next((s.get("options") or {} for s in steps if s["id"] == "organize"), {})
    rename = organize.get("renameByName") or {}
    matrix = [s["options"] for s in steps if s["id"] == "groupingToMatrix"]
    if matrix:
        field = f"{matrix[0]['rowField']}\\{matrix[0]['columnField']}"
        return {matrix[0]["rowField"]: rename.get(field) or field}
    hidden = organize.get("excludeByName") or {}
    placed = [*(organize.get("indexByName") or {}), *rename]
    return {
        name: rename.get(name) or name for name in placed if not VALUE_FIELD.fullmatch(name) and not hidden.get(name)
    }


def _matrix_columns(panel: dict[str, Any]) -> list[str]:
    return [s["options"]["columnField"] for s in panel.get("transformations") or [] if s["id"] == "groupingToMatrix"]


def test_the_shipped_profiles_have_tables_of_both_kinds():
    kinds = {step["id"] for _, panel in TABLES for step in panel.get("transformations") or []}
    assert {"organize", "groupingToMatrix"} <= kinds
    assert all(_label_columns(panel) for _, panel in TABLES), "a table whose label columns this test cannot find"


@pytest.mark.parametrize(("profile", "panel"), TABLES, ids=[f"{p}:{t['title'][:40]}" for p, t in TABLES])
def test_every_label_column_of_a_dashgen_table_has_the_string_unit(profile, panel):
    overrides = panel["fieldConfig"]["overrides"]
    as_text = {
        o["matcher"]["options"]
        for o in overrides
        if o["matcher"]["id"] == "byName" and {"id": "unit", "value": "string"} in o["properties"]
    }
    text_by_type = any(
        o["matcher"] == {"id": "byType", "options": "string"} and {"id": "unit", "value": "string"} in o["properties"]
        for o in overrides
    )
    missing = [title for title in _label_columns(panel).values() if title not in as_text and not text_by_type]
    assert not missing, (profile, panel["title"], missing)


def _answer(ref: str, rows: list[dict[str, str]]) -> Answer:
    query = ExpandedQuery(ref, "instant", "m", "m", 0, 60, 0, 15, 60)
    result = [{"metric": labels, "value": [60, "1"]} for labels in rows]
    return Answer(query, {"expr": "m", "refId": ref, "format": "table", "instant": True}, "vector", result)


@pytest.mark.parametrize("minor", GRAFANA_DATA)
def test_grafana_shows_every_label_column_s_text_unchanged(minor):
    """Every table of every profile, its queries answering rows whose labels all read as numbers: each label
    column's cells, through the bundled @grafana/data's transformations and display processor, read as the label:
    neither the field's unit nor its value mappings (a reason code, an impossible-value range) change a label."""
    grafana_node.use(minor)
    try:
        wrong = []
        for profile, shipped in TABLES:
            panel = shipped
            labels = _label_columns(panel)
            rows = [
                {**dict.fromkeys(labels, value), **dict.fromkeys(_matrix_columns(panel), "n1")} for value in NUMBER_LIKE
            ]
            answers = [_answer(target["refId"], rows) for target in panel["targets"]]
            (result,) = call("applyPanels", [request(panel, answers, 600)])
            assert result["kind"] == "table", (profile, panel["title"], result)
            columns = [column["name"] for column in result["columns"]]
            for title in labels.values():
                assert title in columns, (profile, panel["title"], title, columns)
                texts = sorted(row[columns.index(title)]["text"] for row in result["rows"])
                if texts != sorted(NUMBER_LIKE):
                    wrong.append((profile, panel["title"], title, texts))
        assert not wrong, "\n".join(map(str, wrong))
    finally:
        grafana_node.use(GRAFANA_DATA[-1])


def test_an_imported_table_keeps_its_own_overrides_unless_its_values_are_dates():
    """The kit adds the string unit to dashgen's own tables only: an imported table renders as Grafana stored it
    (the import's round trip), but for the date-unit case where its labels would read "NaN"."""
    query = (Target("m", instant=True, table=True),)
    as_text = {"matcher": {"id": "byType", "options": "string"}, "properties": [{"id": "unit", "value": "string"}]}
    imported_table = kit.table("t.imported", "Imported", imported("stored"), targets=query, unit="short")
    dated = kit.table("t.dated", "Dated", imported(None), targets=query, unit="dateTimeFromNow")
    own = kit.table("t.own", "Own", Evidence(source="s", quantity="q", limit="l"), targets=query, unit="short")
    assert imported_table.overrides == () and dated.overrides == (as_text,) and own.overrides == (as_text,)


def test_a_label_column_keeps_only_the_mappings_meant_for_a_label():
    """A table's range mappings (S38's impossible values) and number-keyed value mappings (reason and state codes)
    are about its values; Grafana matches them against a label that reads as a number too (node "6" read as reason
    6, class "503" as "impossible: above 100 %"). The label columns' override of every shipped table holds none."""
    from dashgen.render.label_columns import LABEL_COLUMNS, label_mappings

    checked = 0
    for profile, panel in TABLES:
        (override,) = [o for o in panel["fieldConfig"]["overrides"] if o["matcher"] == LABEL_COLUMNS]
        (mappings,) = [p["value"] for p in override["properties"] if p["id"] == "mappings"]
        assert all(m["type"] != "range" for m in mappings), (profile, panel["title"])
        keys = [key for m in mappings if m["type"] == "value" for key in m["options"]]
        assert not [key for key in keys if re.fullmatch(r"[-+0-9.e]+", key)], (profile, panel["title"])
        checked += 1
    assert checked == len(TABLES) >= 60
    given = [
        {"type": "value", "options": {"6": {"text": "reason 6"}, "vid-node-00": {"text": "replica 0"}}},
        {"type": "range", "options": {"from": 1.0, "to": 2.0, "result": {"text": "impossible"}}},
        {"type": "special", "options": {"match": "null", "result": {"text": "—"}}},
    ]
    assert label_mappings(given) == [
        {"type": "value", "options": {"vid-node-00": {"text": "replica 0"}}},
        {"type": "special", "options": {"match": "null", "result": {"text": "—"}}},
    ]


def test_an_imported_date_table_keeps_the_mappings_it_stored_on_its_label_columns(tmp_path):
    """The renderer adds the label columns' mappings to dashgen's own tables only; an imported table (here one whose
    values are dates, so the kit gives its labels the text unit) keeps the mappings it stored on them."""
    from dashgen.importer import import_dashboard, render_module_file
    from dashgen.render.label_columns import LABEL_COLUMNS

    stored = [{"type": "value", "options": {"6": {"text": "the sixth"}}}]
    panel = {
        "id": 1,
        "type": "table",
        "title": "Last restart per node",
        "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
        "targets": [{"refId": "A", "expr": "process_start_time_seconds * 1000", "instant": True}],
        "fieldConfig": {
            "defaults": {"unit": "dateTimeAsIso"},
            "overrides": [
                {
                    "matcher": dict(LABEL_COLUMNS),
                    "properties": [{"id": "unit", "value": "string"}, {"id": "mappings", "value": stored}],
                }
            ],
        },
    }
    result = import_dashboard({"uid": "restarts", "title": "Restarts", "panels": [panel]}, "restarts")
    module = tmp_path / "restarts.py"
    module.write_text(result.text, encoding="utf-8")
    (rendered,) = render_module_file(module)["panels"]
    (labels,) = [o for o in rendered["fieldConfig"]["overrides"] if o["matcher"] == LABEL_COLUMNS]
    assert {p["id"]: p["value"] for p in labels["properties"]}["mappings"] == stored
    assert not result.round_trip.has_semantic_changes, result.round_trip
