"""The canonical encoding and its two SHA paths: :func:`content_sha_of_json` must give :func:`content_sha`'s
SHA (the definition the ledger holds) for every value a strict JSON parse can give, and strict parsing must
refuse what Python's parser accepts beyond JSON (``NaN``, ``Infinity``, a number overflowing to infinity), the
inputs where the fast path could not tell them from ``null``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashgen.grafana.answers import parse_json
from dashgen.grafana.errors import BadResponse
from dashgen.net.http import HttpResponse
from dashgen.render import canonical
from dashgen.render.canonical import content_sha, content_sha_of_json, loads_strict

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("DASHGEN_FUZZ_EXAMPLES", "300"))

# What a strict parse yields: no NaN / infinity; any integer (beyond 64 bits too), any float, any string.
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 1e-9, 1.5e-300, 1e16, 1e22, 5e-324, 123456.789])
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_fast_content_sha_is_the_defined_sha_for_every_strict_json_value(doc: dict) -> None:
    # through the text, as a Grafana answer comes: what is parsed is what the fast path sees
    try:
        text = json.dumps(doc, ensure_ascii=False)
    except ValueError:
        return
    parsed = loads_strict(text) if "\ud800" not in text else json.loads(text)
    assert content_sha_of_json(parsed) == content_sha(parsed)


@pytest.mark.parametrize("value", [1e-05, -2.5e-07, 0.00001234, 1e-300, 2**64, -(2**63) - 1, 10**30])
def test_fast_content_sha_falls_back_where_orjson_writes_other_bytes(value: object) -> None:
    doc = {"title": "t", "v": value, "nested": [{"x": value}]}
    assert content_sha_of_json(doc) == content_sha(doc)


def test_fast_content_sha_fails_as_the_defined_sha_does_on_a_lone_surrogate() -> None:
    doc = {"title": "lone \ud800"}  # json.loads accepts it; neither encoder can write it as UTF-8
    for sha in (content_sha, content_sha_of_json):
        with pytest.raises(UnicodeEncodeError):
            sha(doc)


def test_fast_content_sha_on_every_shipped_dashboard() -> None:
    paths = sorted((ROOT / "dashboards").glob("*/*.json"))
    assert paths
    for path in paths:
        doc = loads_strict(path.read_bytes())
        assert content_sha_of_json(doc) == content_sha(doc), path


def test_fast_content_sha_ignores_the_server_owned_fields_as_the_defined_sha_does() -> None:
    assert content_sha_of_json({"title": "a", "id": 7, "version": 9}) == content_sha({"title": "a"})


def test_the_installed_orjson_takes_the_fast_path() -> None:
    """Else every SHA test above would pass through Python's encoder alone and prove nothing about orjson."""
    assert canonical._orjson_writes_as_python()
    assert canonical._FAST_PATH


def test_an_orjson_writing_other_bytes_turns_the_fast_path_off(monkeypatch) -> None:
    real = canonical.orjson.dumps
    monkeypatch.setattr(canonical.orjson, "dumps", lambda v, option=0: real(v, option=option).replace(b"e+", b"e"))
    assert not canonical._orjson_writes_as_python()


@pytest.mark.parametrize("body", [b'{"a": NaN}', b'{"a": Infinity}', b"[-Infinity]", b'{"a": 1e400}', b"[-1e999]"])
def test_grafana_answer_with_nan_or_infinity_is_not_json(body: bytes) -> None:
    with pytest.raises(ValueError):
        loads_strict(body)
    resp = HttpResponse(
        "GET", "http://127.0.0.1:3000/api/dashboards/uid/x", 200, {"Content-Type": "application/json"}, body, 1, 0
    )
    with pytest.raises(BadResponse, match="not valid JSON"):
        parse_json(resp)


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None)
@given(json_values)
def test_strict_parse_gives_the_value_and_types_json_loads_gives(value: object) -> None:
    text = json.dumps({"v": value}, ensure_ascii=False)
    # content_sha tells 1 from 1.0 from True, and every float by its repr
    assert content_sha(loads_strict(text)) == content_sha(json.loads(text))
    assert content_sha(loads_strict(text.encode("utf-8", "surrogatepass"))) == content_sha(json.loads(text))


@pytest.mark.parametrize(
    "text", ["18446744073709551616", "-9223372036854775809", "[123456789012345678901234567890]", '"lone \\ud800"']
)
def test_strict_parse_reads_what_orjson_cannot_as_json_loads_does(text: str) -> None:
    expected = json.loads(text)
    assert loads_strict(text) == expected
    assert type(loads_strict(text)) is type(expected)


@pytest.mark.parametrize("text", ["{", "[1,]", "nul", '"\\x"', "[NaN]", "[" * 5000 + "]" * 5000])
def test_strict_parse_refuses_malformed_json_with_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        loads_strict(text)


FLOAT_DOCS = [
    {"a": 1e-9, "b": "rate(x[5m]) > 1e-9 or 0.00001", "c": [1e-5, 1e-4, 9.99e-5, 5e-324, -1e-7, (2e-9, "z")]},
    {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "zeros": [0.0, -0.0], "big": 1e16},
    {"query": "histogram_quantile(0.99, x) > 1e-9", "le": 1e-9, "nested": {"deep": [[{"x": 1.5e-300}]]}},
    [{"k": "é\u2028", "v": 0.0001}, True, None, 2**63 - 1, 1e22],
]


@pytest.mark.parametrize("doc", FLOAT_DOCS)
def test_file_bytes_of_small_floats_nan_and_false_alarms_are_pythons_without_pythons_encoder(doc, monkeypatch) -> None:
    """A float orjson writes otherwise (below 1e-4, NaN, infinities) is laid in as Python's bytes for it, and a
    query string holding ``1e-9`` (a false alarm) keeps orjson's bytes: Python's indented encoder, pure Python, is
    not asked, and the bytes are its bytes."""
    expected = canonical.python_encode(doc)

    def refused(doc):
        raise AssertionError("Python's indented encoder was asked")

    monkeypatch.setattr(canonical, "python_encode", refused)
    assert canonical.encode(doc) == expected


def test_file_bytes_of_every_fixture_dashboard_are_pythons() -> None:
    """The public fixtures hold real ``1e-09`` bucket bounds and ``1e-9`` in query strings."""
    paths = sorted((ROOT / "tests" / "fixtures" / "dashboards").glob("*.json"))
    for path in paths:
        doc = json.loads(path.read_bytes())
        assert canonical.encode(doc) == canonical.python_encode(doc), path
    assert len(paths) >= 10


@settings(max_examples=max(EXAMPLES // 3, 1), deadline=None, derandomize=True)  # ~2 s at 100
@given(
    st.recursive(
        scalars | st.floats() | st.sampled_from([float("nan"), float("inf"), -1e-9]),
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
        max_leaves=40,
    )
)
def test_file_bytes_are_pythons_for_every_json_value_with_nan_and_infinities(doc) -> None:
    assert canonical.encode(doc) == canonical.python_encode(doc)
