"""The build's schema check (issue 19): the compiled fast validator and jsonschema judge every document
alike, and a rejected document's messages still name the panel and the field (jsonschema's words)."""

from __future__ import annotations

import json
from functools import cache

import fastjsonschema
import pytest

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.document.copying import tree_copy
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
    doc = tree_copy(documents()[0])
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
    doc = tree_copy(documents()[0])
    (row, *_) = _collapsed_rows(doc)
    first, second = row["panels"][:2]
    second["gridPos"] = dict(first["gridPos"])
    problems = validate.validate_dashboard(doc, "x")
    assert any("overlaps panel" in p and second["title"] in p for p in problems)


# --- a rejected document's errors: jsonschema's, over what the compiled validator refuses only -------------------


def _signature(error) -> tuple:
    """What a caller can read of one jsonschema error, its ``oneOf`` / ``anyOf`` branches' errors included."""
    context = tuple(sorted((_signature(e) for e in error.context), key=repr))
    return (list(error.absolute_path), error.message, error.validator, list(error.schema_path), context)


def _errors(validator, doc) -> list:
    return sorted((_signature(e) for e in validator.iter_errors(doc)), key=repr)


def _paths(node, here=()):
    yield here
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, (*here, key))


DELETE = object()


def _mutated(text: str, path: tuple, value) -> dict:
    doc = json.loads(text)
    *parent, last = path
    node = doc
    for part in parent:
        node = node[part]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return doc


def _small_v2_spec() -> dict:
    from dashgen.dashboard import dashboard_specs
    from dashgen.render.v2 import render_v2

    spec = render_v2(dashboard_specs(next(p for p in load_profiles() if p.name == "long-context-64"))[0], "v2")["spec"]
    spec["elements"] = dict(list(spec["elements"].items())[:2])
    tabs = spec["layout"]["spec"]["tabs"] = spec["layout"]["spec"]["tabs"][:1]  # one tab of one row
    tabs[0]["spec"]["layout"]["spec"]["rows"] = tabs[0]["spec"]["layout"]["spec"]["rows"][:1]
    return spec


# each mutation is compared with a plain jsonschema pass, which the oneOf unions of a v2 spec make slow (~0.07 s each
# with the lister's: the v2 case is over a second of CPU, so make test runs it and make test-fast does not)
@pytest.mark.parametrize(
    ("version", "mutations"), [("v1", 30), pytest.param("v2", 15, marks=pytest.mark.slow)], ids=["v1", "v2"]
)
def test_a_rejected_documents_errors_are_the_plain_jsonschema_errors_on_random_mutations(version, mutations):
    """The error lister skips each ``$ref`` subtree the compiled code accepts: on seeded mutations of a small
    document (a value replaced by one of another type, or a key deleted), anywhere in it, it reports exactly what
    a plain Draft7Validator reports (paths, messages, keywords, schema paths and the branches of a oneOf)."""
    import random

    from dashgen.render.v2 import validate as v2_validate

    if version == "v1":
        doc = tree_copy(documents()[0])
        doc["panels"] = doc["panels"][:4]
        plain, lister = validate._validator(), validate._errors_validator()
    else:
        doc = _small_v2_spec()
        plain, lister = v2_validate._validator("v2"), v2_validate._errors_validator("v2")
    text = json.dumps(doc)
    assert _errors(plain, doc) == [] and _errors(lister, doc) == []
    rng = random.Random(f"error lister {version}")
    paths = [path for path in _paths(doc) if path]
    compared = refused = 0
    for path in rng.sample(paths, mutations):
        value = rng.choice([None, 7, "x", True, [], {"bogus": 1}, DELETE])
        if value is DELETE and isinstance(path[-1], int):
            value = None
        mutated = _mutated(text, path, value)
        expected = _errors(plain, mutated)
        assert _errors(lister, mutated) == expected, path
        compared += 1
        refused += bool(expected)
    assert compared == mutations and refused >= mutations // 3, refused


def test_the_error_lister_walks_only_the_refused_panel(monkeypatch):
    """With one wrong panel title in a shipped dashboard, jsonschema descends through the references of that panel
    alone (a plain validator descends through every panel's, hundreds), and reports the same error."""
    from jsonschema import Draft7Validator

    from dashgen.render.compiled_schema import error_lister

    descended: list[str] = []
    real = Draft7Validator.VALIDATORS["$ref"]

    def counting(validator, ref, instance, schema):
        descended.append(ref.rsplit("/", 1)[-1])
        yield from real(validator, ref, instance, schema)

    monkeypatch.setitem(Draft7Validator.VALIDATORS, "$ref", counting)
    lister = error_lister(validate._schema(), validate._fast_validator())
    monkeypatch.undo()
    doc = tree_copy(documents()[0])
    doc["panels"][5]["title"] = 5
    assert _errors(lister, doc) == _errors(validate._validator(), doc) != []
    assert sorted(descended) == ["anyPanel", "panel"], descended
