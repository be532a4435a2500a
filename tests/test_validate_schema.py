"""The build's schema check (issue 19): the compiled fast validator and jsonschema judge every document
alike, and a rejected document's messages still name the panel and the field (jsonschema's words)."""

from __future__ import annotations

import copy
from functools import cache

import fastjsonschema
import pytest

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.render import validate


@cache
def documents() -> list[dict]:
    return [b.document for p in load_profiles() for b in build_profile(p)]


def _fast_accepts(doc: dict) -> bool:
    try:
        validate._fast_validator()(doc)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


def _set(path: list, value) -> callable:
    def mutate(doc: dict) -> None:
        node = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value

    return mutate


def _delete(path: list) -> callable:
    def mutate(doc: dict) -> None:
        node = doc
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]

    return mutate


BROKEN = {
    "target format not an enum value": (
        _set(["panels", 3, "targets", 0, "format"], "bogus"),
        "$.panels[3].targets[0].format",
    ),
    "panel title not a string": (_set(["panels", 5, "title"], 5), "$.panels[5].title"),
    "panel type missing": (_delete(["panels", 4, "type"]), "$.panels[4]"),
    "empty expr": (_set(["panels", 3, "targets", 0, "expr"], ""), "$.panels[3].targets[0].expr"),
    "dashboard uid missing": (_delete(["uid"]), "$"),
}


def test_fast_validator_accepts_every_shipped_dashboard_as_jsonschema_does():
    assert len(documents()) == len(load_profiles()) >= 4, "one dashboard per profile"
    for doc in documents():
        assert _fast_accepts(doc)
        assert list(validate._validator().iter_errors(doc)) == []


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_fast_validator_rejects_what_jsonschema_rejects_and_the_message_names_the_field(case):
    mutate, path = BROKEN[case]
    doc = copy.deepcopy(documents()[0])
    mutate(doc)
    assert not _fast_accepts(doc)
    assert next(iter(validate._validator().iter_errors(doc)), None) is not None  # jsonschema rejects it too
    problems = validate.schema_errors(doc, "h20-16/uid")
    assert problems and all(p.startswith("h20-16/uid: panel ") for p in problems)
    assert any(f": {path}: " in p or f": {path}." in p for p in problems), problems


def _collapsed_rows(doc: dict) -> list[dict]:
    return [p for p in doc["panels"] if p.get("type") == "row" and p.get("collapsed") and len(p.get("panels", [])) > 1]


def test_collapsed_rows_panels_are_placed_apart_from_the_panels_below():
    """A collapsed row's panels keep the positions they take when it opens (Grafana then moves the rest down):
    the per-GPU window statistics row is collapsed above expanded groups, and the dashboards validate."""
    assert len(documents()) == len(load_profiles()) >= 4, "one dashboard per profile"
    for doc in documents():
        rows = _collapsed_rows(doc)
        assert rows
        assert not [p for p in validate.validate_dashboard(doc, "x") if "overlaps" in p]


def test_overlap_inside_a_collapsed_row_is_refused():
    doc = copy.deepcopy(documents()[0])
    (row, *_) = _collapsed_rows(doc)
    first, second = row["panels"][:2]
    second["gridPos"] = dict(first["gridPos"])
    problems = validate.validate_dashboard(doc, "x")
    assert any("overlaps panel" in p and second["title"] in p for p in problems)
