"""dashgen.document: the one unwrapper, panel walker and variable-substitution core."""

from __future__ import annotations

import pytest

from dashgen.document import NotADashboard, Reference, iter_panels, raw_variables, substitute, unwrap
from dashgen.lint.promql import expand_variables
from dashgen.live.expand import expand_text

BODY = {
    "panels": [
        {"id": 1, "title": "top"},
        {"id": 2, "type": "row", "title": "Expanded", "collapsed": False},
        {"id": 3, "title": "under expanded"},
        {"id": 4, "type": "row", "title": "Collapsed", "collapsed": True, "panels": [{"id": 5, "title": "nested"}]},
        {"id": 6, "type": "row", "title": "", "collapsed": True, "panels": [{"id": 7, "title": "in untitled"}]},
        "not a panel",
    ],
    "rows": [{"title": "Legacy", "panels": [{"id": 8, "title": "legacy panel"}]}],
    "templating": {"list": [{"name": "node"}, "junk"]},
}


def test_unwrap_accepts_plain_export_and_k8s_shapes() -> None:
    assert unwrap(BODY) is BODY
    assert unwrap({"dashboard": BODY, "meta": {}}) is BODY
    assert unwrap({"apiVersion": "dashboard.grafana.app/v1beta1", "kind": "Dashboard", "spec": BODY}) is BODY
    with pytest.raises(NotADashboard):
        unwrap([BODY])


def test_walker_visits_rows_nested_and_legacy_panels_in_reading_order() -> None:
    sites = list(iter_panels(BODY))
    assert [s.raw["id"] for s in sites] == [1, 2, 3, 4, 5, 6, 7, 8]
    by_id = {s.raw["id"]: s for s in sites}
    # row: the object whose panels hold it; section: the row it reads under on screen.
    assert (by_id[3].row, by_id[3].section) == (None, "Expanded")
    assert (by_id[4].row, by_id[4].section) == (None, None)
    assert (by_id[5].row, by_id[5].section) == ("Collapsed", "Collapsed")
    assert (by_id[7].row, by_id[7].section) == (None, None)
    assert (by_id[8].row, by_id[8].section) == ("Legacy", "Legacy")
    assert raw_variables(BODY) == [{"name": "node"}]


def test_the_object_walk_visits_what_the_walker_visits_in_its_order() -> None:
    """iter_panel_objects (the publish plan's lookup by id) is iter_panels without the places, on this body and
    on every generated dashboard (nested panels of a panel that is not a row included)."""
    import json
    from pathlib import Path

    from dashgen.document import iter_panel_objects

    odd = {"panels": [{"id": 1, "panels": [{"id": 2}]}, {"id": 3, "type": "row", "panels": "junk"}, 4]}
    bodies = [BODY, odd]
    for path in sorted((Path(__file__).resolve().parent.parent / "dashboards").rglob("*.json")):
        bodies.append(unwrap(json.loads(path.read_text(encoding="utf-8"))))
    assert len(bodies) > 4
    for body in bodies:
        assert [id(p) for p in iter_panel_objects(body)] == [id(s.raw) for s in iter_panels(body)]


def test_references_split_name_and_format_at_the_first_colon() -> None:
    seen: list[Reference] = []
    substitute("$a ${b} ${c:csv} [[d:regex]] ${e:date:iso}", lambda ref: seen.append(ref) or "")
    assert [(r.name, r.format) for r in seen] == [
        ("a", None),
        ("b", None),
        ("c", "csv"),
        ("d", "regex"),
        ("e", "date:iso"),
    ]
    assert [r.is_plain for r in seen] == [True, True, True, True, False]


def test_a_declined_reference_stays_and_the_scan_resumes_inside_it() -> None:
    values = {"a": "A", "x": "X"}
    assert expand_text("${x $a} [[x y]] ${a.b} $missing", values) == "${x A} [[x y]] ${a.b} $missing"
    assert substitute('$a "$a"', lambda ref: "1", skip_double_quoted=True) == '1 "$a"'


def test_lint_and_live_policies_share_the_syntax_but_not_the_values() -> None:
    expr = 'rate(x{node=~"$node"}[$__rate_interval])'
    assert expand_text(expr, {"node": "n1", "__rate_interval": "1m"}) == 'rate(x{node=~"n1"}[1m])'
    assert expand_variables(expr, {}) == 'rate(x{node=~"$node"}[4234567890ms])'
