"""Fuzz (issue 18): hostile data-source answers. Random JSON bodies and near-valid Prometheus answers (any
field of a valid vector / matrix / scalar answer replaced) go through the data-source client and
validate-queries; every answer is a QueryResult of the shape it claims or a DatasourceError, never another
exception, and a malformed answer is never reported as ok.

No network: the transport is replaced by a function returning the fuzzed answer. Seeded and bounded:
``DASHGEN_FUZZ_EXAMPLES`` examples per property (default 300).
"""

from __future__ import annotations

import json
from typing import Any

from fuzzing import examples, fuzz_settings, paths
from hypothesis import given
from hypothesis import strategies as st

from dashgen.live.datasource import Datasource, DatasourceError
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan, run_checks
from dashgen.net.http import HttpResponse

EXAMPLES = examples(300)
FUZZ = fuzz_settings(EXAMPLES)
WINDOW = Window(end=1_790_000_000.0, length=3600.0)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["success", "error", "vector", "matrix", "scalar", "string", "seven"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10,
)
VALID = [
    {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {"node": "a"}, "value": [1, "1"]}]}},
    {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, "1"]]}]}},
    {"status": "success", "data": {"resultType": "scalar", "result": [1, "2"]}},
]


@st.composite
def answers(draw: st.DrawFn) -> tuple[int, bytes]:
    status = draw(st.sampled_from([200, 200, 200, 400, 422, 500, 503]))
    if draw(st.booleans()):
        body = json.loads(json.dumps(draw(st.sampled_from(VALID))))
        path = draw(st.sampled_from(paths(body)[1:]))
        parent = body
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = draw(JSON)
        return status, json.dumps(body).encode()
    if draw(st.booleans()):
        return status, json.dumps(draw(JSON)).encode()
    return status, draw(st.binary(max_size=80))


def _datasource(status: int, body: bytes) -> Datasource:
    datasource = Datasource("http://user:s3cret@127.0.0.1:9", timeout=5)

    def request(method: str, url: str, **kwargs: Any) -> HttpResponse:
        return HttpResponse(method, url, status, {"Content-Type": "application/json"}, body, 1, 0)

    datasource._http.request = request  # type: ignore[method-assign]
    return datasource


@FUZZ
@given(answers())
def test_a_fuzzed_answer_is_a_result_of_its_claimed_shape_or_a_datasource_error(answer):
    datasource = _datasource(*answer)
    for call in (lambda: datasource.query("up", 1.0), lambda: datasource.query_range("up", 0.0, 60.0, 15.0)):
        try:
            result = call()
        except DatasourceError as exc:
            assert "s3cret" not in str(exc)
            continue
        assert result.result_type in ("vector", "matrix", "scalar", "string")
        assert isinstance(result.result, list)
        if result.result_type in ("vector", "matrix"):
            assert all(isinstance(item, dict) for item in result.result)
    try:
        values = datasource.label_values("node")
        assert all(isinstance(value, str) for value in values)
    except DatasourceError:
        pass


@FUZZ
@given(answers())
def test_validate_queries_never_reports_a_malformed_answer_as_ok(answer):
    datasource = _datasource(*answer)
    document = {
        "uid": "f",
        "title": "f",
        "panels": [
            {"id": 1, "type": "timeseries", "title": "p", "targets": [{"refId": "A", "expr": "up", "instant": True}]}
        ],
    }
    planned = plan([DashboardInput("f", document)], WINDOW)
    (check,) = run_checks(datasource, planned, WINDOW, workers=1, timeout=5)
    status, body = answer
    target = check.targets[0]
    if target.status == "ok":  # only a well-formed answer with series is ok
        parsed = json.loads(body)
        assert status == 200 and parsed["status"] == "success", answer
        result = parsed["data"]["result"]
        assert isinstance(result, list) and result, answer
        if parsed["data"]["resultType"] in ("vector", "matrix"):
            assert all(isinstance(item, dict) and isinstance(item.get("metric", {}), dict) for item in result)
    assert all("s3cret" not in (t.error_message or "") for t in check.targets)
