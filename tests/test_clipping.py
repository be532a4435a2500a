"""No table column past its panel's edge at 1920 px: Grafana's column sizing as a pure calculation
(``dashgen.render.clipping``), checked against numbers worked out by hand, and every profile's first screen (the
panels above the first collapsed row) held to 0 clipped columns, every table of every profile to no clipped
verdict column; the preview marks a clipped column."""

from __future__ import annotations

from pathlib import Path

import pytest
from clipped_columns import panel_clipped

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.document import iter_panels
from dashgen.render.clipping import (
    Sizing,
    clipped,
    column_widths,
    panel_pixels,
    table_pixels,
    verdict_columns,
    visible_columns,
)

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {p.name: p for p in load_profiles([], ROOT / "profiles")}


def test_the_grid_at_1920_px() -> None:
    # 1920 - 2 x 16 page padding = 1888 px for 24 columns with 7 px... 8 px gaps: 71 px a column
    assert panel_pixels(24) == 1888
    assert panel_pixels(1) == 71
    assert panel_pixels(12) == 12 * 71 + 11 * 8
    assert table_pixels(4) == 308 - 18 - 10  # padding and border each side, the scrollbar


def test_grafana_sizes_auto_columns_to_the_larger_of_the_share_and_150_px() -> None:
    assert column_widths(["a", "b"], 600) == [300, 300]
    assert column_widths(["a", "b", "c"], 300) == [150, 150, 150]
    assert column_widths(["a", "b"], 300, Sizing(fixed={"a": 200})) == [200, 150]


def test_columns_past_the_edge_are_clipped_a_partly_hidden_one_too() -> None:
    assert clipped(["a", "b"], 300) == []
    assert clipped(["a", "b"], 299) == ["b"]  # 1 px of b hidden
    assert clipped(list("abcdefg"), 912) == ["g"]  # 7 x 150 in a w=12 panel
    assert clipped(list("abcdefg"), 912, Sizing(min_width=120)) == []


def _table(width: int, custom: dict | None = None, transformations: list | None = None) -> dict:
    return {
        "type": "table",
        "gridPos": {"x": 0, "y": 0, "w": width, "h": 8},
        "fieldConfig": {"defaults": {"custom": custom or {}}, "overrides": []},
        "transformations": transformations or [],
    }


def test_a_panel_reads_its_floor_and_fixed_width_from_the_field_config() -> None:
    columns = ["Node", "Layer", "State"]
    assert panel_clipped(_table(4), columns) == ["Layer", "State"]
    assert panel_clipped(_table(4, {"minWidth": 90}), columns) == []
    assert panel_clipped(_table(12, {"width": 400}), columns) == ["State"]


def test_visible_columns_follow_organize_and_leave_out_the_excluded() -> None:
    organize = {
        "id": "organize",
        "options": {
            "excludeByName": {"Time": True, "job": True},
            "indexByName": {"node": 0, "Value #A": 1, "Value": 2},
            "renameByName": {"node": "Node", "Value #A": "State", "Value": "State"},
        },
    }
    assert visible_columns(_table(4, transformations=[{"id": "merge"}, organize])) == ["Node", "State"]
    assert visible_columns(_table(4)) is None  # shown as queried: only the data says


def _first_screen(document: dict) -> list[dict]:
    shown = []
    for panel in document["panels"][1:]:
        if panel["type"] == "row" and panel.get("collapsed"):
            break
        if panel["type"] != "row":
            shown.append(panel)
    return shown


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_table_of_the_first_screen_shows_every_column_at_1920_px(name: str) -> None:
    tables = [p for p in _first_screen(build_profile(PROFILES[name])[0].document) if p["type"] == "table"]
    assert len(tables) >= 4
    for panel in tables:
        columns = visible_columns(panel)
        assert columns, f"{name}: {panel['title']!r} declares no columns (only the data would say)"
        assert panel_clipped(panel, columns) == [], (name, panel["title"], panel["gridPos"]["w"], columns)


def _organized(custom: dict, defaults: dict | None = None) -> dict:
    table = _table(4, custom, [{"id": "merge"}, _ORGANIZE])
    table["fieldConfig"]["defaults"].update(defaults or {})
    return table


_ORGANIZE = {
    "id": "organize",
    "options": {
        "indexByName": {"node": 0, "Value #A": 1, "Value #B": 2},
        "renameByName": {"node": "Node", "Value #A": "Power (W)", "Value #B": "Last Xid"},
    },
}
_COLUMNS = ["Node", "Power (W)", "Last Xid"]


def test_a_verdict_column_is_colour_coded_or_named_as_a_state() -> None:
    """Colour cells with thresholds past the base step, or with a mapping that colours, make every value column
    a verdict (the entity's name column is not one); a column named as a state or a fault code is one anyway."""
    plain = _organized({"cellOptions": {"type": "auto"}})
    assert verdict_columns(plain, _COLUMNS) == ["Last Xid"]
    assert verdict_columns(plain, ["Node", "State", "Replica status", "Health"]) == [
        "State",
        "Replica status",
        "Health",
    ]
    steps = {
        "thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 1}]}
    }
    coloured = _organized({"cellOptions": {"type": "color-text"}}, steps)
    assert verdict_columns(coloured, _COLUMNS) == ["Power (W)", "Last Xid"]
    mapped = {"mappings": [{"type": "value", "options": {"1": {"text": "down", "color": "red"}}}]}
    assert (
        verdict_columns(_organized({"cellOptions": {"type": "color-background"}}, mapped), _COLUMNS)[0] == "Power (W)"
    )
    one_step = _organized({"cellOptions": {"type": "color-text"}})  # one colour for every value: no verdict in it
    assert verdict_columns(one_step, ["Node", "Power (W)"]) == []


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_no_verdict_column_of_any_table_is_past_its_panel_s_edge_at_1920_px(name: str) -> None:
    """S37 whatever the row: a table wider than its panel scrolls sideways, and a verdict past the edge is not
    seen on open; every table whose columns its JSON declares (a table shown as queried is the preview's)."""
    clipped_verdicts, checked = [], 0
    for site in iter_panels(build_profile(PROFILES[name])[0].document):
        panel = site.raw
        columns = visible_columns(panel) if panel.get("type") == "table" else None
        if not columns:
            continue
        checked += 1
        hidden = set(panel_clipped(panel, columns))
        clipped_verdicts += [(panel["title"], c) for c in verdict_columns(panel, columns) if c in hidden]
    assert checked >= 10 and clipped_verdicts == [], clipped_verdicts
