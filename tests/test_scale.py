"""Issue 19: at 1,000 and 10,000 GPUs (tests/fixtures/profiles, written by bench/scale.py) no generated
query carries the node list: every query Grafana would send stays under VictoriaMetrics' 16 KiB query
length and Mimir's 4 KiB regex sharding limit, and is the same text at both sizes."""

from __future__ import annotations

import re
import time
from functools import cache
from pathlib import Path

import promql_parser as pp
import pytest

from dashgen.build import build_profile
from dashgen.deployment.profile import load_profiles
from dashgen.lint.promql import func_name, walk
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "profiles"
VM_MAX_QUERY_BYTES = 16 * 1024  # VictoriaMetrics -search.maxQueryLen default
MIMIR_MAX_REGEX_BYTES = 4 * 1024  # Mimir stops sharding regex matchers above this
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")


@cache
def scale_profiles() -> dict:
    return {p.name: p for p in load_profiles(directory=FIXTURES)}


@cache
def expanded(name: str) -> dict[tuple[str, str, str], str]:
    """(dashboard, panel title, refId) -> the query Grafana sends at the default range (variables = All)."""
    profile = scale_profiles()[name]
    inputs = [DashboardInput(b.uid.replace(name, "<deployment>"), b.document, profile) for b in build_profile(profile)]
    queries = {}
    for panel in plan(inputs, Window(time.time(), 3600)):
        for query in panel.queries:
            queries[(panel.dashboard.name, str(panel.raw.get("title")), query.ref_id)] = query.expr
    return queries


def regexes(expr: str) -> list[str]:
    """Every regex of a query: =~ / !~ matcher values and label_replace patterns."""
    found = []
    for node, _ in walk(pp.parse(expr)):
        if isinstance(node, pp.VectorSelector):
            found += [m.value for m in node.matchers.matchers if str(m.op).endswith(("Re", "NotRe"))]
        if func_name(node) == "label_replace":
            found.append(node.args[4].val)
    return found


def test_scale_profiles_are_the_issue_sizes():
    sizes = {name: (p.nodes, p.total_gpus) for name, p in scale_profiles().items()}
    assert sizes == {"scale-1000": (125, 1000), "scale-10000": (1250, 10000)}


@pytest.mark.slow  # 1 s: every query of the 10 000-GPU profile expanded
def test_no_query_of_the_10000_gpu_profile_exceeds_16_kib_or_a_4_kib_regex():
    queries = expanded("scale-10000")
    assert len(queries) > 100
    too_long = {key: len(q.encode()) for key, q in queries.items() if len(q.encode()) > VM_MAX_QUERY_BYTES}
    assert not too_long
    long_regex = {
        key: max(map(len, found))
        for key, q in queries.items()
        if (found := regexes(q)) and max(map(len, found)) > MIMIR_MAX_REGEX_BYTES
    }
    assert not long_regex


def test_no_query_grows_with_the_node_count():
    """The same panels send the same query text at 125 and at 1,250 nodes: the deployment name aside, and
    numbers (a profile total such as the Store quota, ``vector(<bytes>)``, has more digits, not more terms)."""

    def shape(query: str, name: str) -> str:
        return NUMBER.sub("N", query.replace(name, "<deployment>"))

    small = {k: shape(q, "scale-1000") for k, q in expanded("scale-1000").items()}
    large = {k: shape(q, "scale-10000") for k, q in expanded("scale-10000").items()}
    assert set(small) == set(large)
    grown = {key: (len(small[key]), len(q)) for key, q in large.items() if q != small[key]}
    assert not grown


@pytest.mark.slow  # about 1 s per profile: the build of a 1000- and a 10 000-GPU cluster
@pytest.mark.parametrize("name", ["scale-1000", "scale-10000"])
def test_scale_profiles_build_without_the_parse_budget_refusing(name):
    """The build's syntax check (parse budget included) accepts every dashboard of the scale profiles."""
    (built,) = build_profile(scale_profiles()[name])
    assert built.document["panels"]


def test_the_cheap_parse_budget_bound_never_passes_an_expression_over_the_budget():
    """``surely_within_budget`` (the build's fast path) is an upper bound: whatever it passes, the exact
    token count passes too; over-budget expressions of every kind fall through to the exact count."""
    from dashgen_queries.promql import MAX_QUERY_DEPTH, MAX_QUERY_TERMS, query_size, surely_within_budget

    deep = "(" * (MAX_QUERY_DEPTH + 1) + "up" + ")" * (MAX_QUERY_DEPTH + 1)
    over = [
        " or ".join(["up"] * (MAX_QUERY_TERMS + 2)),
        deep,
        "+".join(["1"] * (MAX_QUERY_TERMS + 2)),
        "x[5m]" * (MAX_QUERY_TERMS + 1),
    ]
    for expr in over:
        assert query_size(expr).over_budget() is not None
        assert not surely_within_budget(expr)
    shipped = [q for name in ("scale-1000",) for q in expanded(name).values()]
    passed = [q for q in shipped if surely_within_budget(q)]
    assert passed and all(query_size(q).over_budget() is None for q in passed)
