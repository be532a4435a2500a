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


def _mutable_ids(tree: object) -> list[int]:
    if isinstance(tree, dict):
        return [id(tree), *(i for value in tree.values() for i in _mutable_ids(value))]
    if isinstance(tree, list | tuple):
        return [id(tree)] * isinstance(tree, list) + [i for value in tree for i in _mutable_ids(value)]
    return []


def test_tree_copy_equals_deepcopy_and_shares_nothing_mutable() -> None:
    """``tree_copy`` (what the renderers and the v2 classic view copy trees with, ~3x faster than ``copy.deepcopy``)
    gives deepcopy's value for every shipped dashboard and for the odd shapes, shares no dict or list with the
    original, and copies what it does not know (a subclass of dict) by deepcopy."""
    import copy
    import json
    from collections import OrderedDict
    from pathlib import Path

    from dashgen.document.copying import tree_copy

    shared = [1, {"a": None}]
    odd = {"t": (1, [2.5, "x"], (True,)), "twice": [shared, shared], "od": OrderedDict(b=[1]), "n": -0.0, "k": {}}
    paths = sorted(Path(__file__).resolve().parent.parent.glob("dashboards/**/*.json"))
    trees = [odd, *(json.loads(path.read_text(encoding="utf-8")) for path in paths)]
    for tree in trees:
        copied = tree_copy(tree)
        assert copied == copy.deepcopy(tree) == tree
        assert not set(_mutable_ids(copied)) & set(_mutable_ids(tree))
    assert len(trees) > 4
    copied = tree_copy(odd)
    assert type(copied["od"]) is OrderedDict and copied["od"] is not odd["od"] and type(copied["t"]) is tuple
    assert copied["twice"][0] is not copied["twice"][1]  # two copies: a change to one cannot show in the other


def test_the_renderers_copy_trees_without_deepcopy() -> None:
    """The v2 render, the grafanalib bridge and the v2 classic view copy every tree with ``tree_copy``: deepcopy was
    ~8 % of make test-fast's CPU (issue 42), two thirds of it in these modules."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "dashgen"
    modules = [
        root / "document/v2view.py",
        root / "render/grafanalib_bridge.py",
        *sorted((root / "render/v2").glob("*.py")),
    ]
    found = [path.name for path in modules if "deepcopy(" in path.read_text(encoding="utf-8")]
    assert found == [] and len(modules) > 4, found
