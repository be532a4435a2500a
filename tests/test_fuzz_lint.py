"""Fuzz (issue 18): hostile dashboard JSON for lint. Random type substitution at any path of a real
dashboard (the issue measured lint crashing on 7.7 % of such documents), and random JSON documents. Every
document gets findings or one NotADashboard / exit-2 line naming the file; never another exception, a
signal or a hang.

Seeded and bounded: ``DASHGEN_FUZZ_EXAMPLES`` examples per property (default 200).
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from fuzzing import examples, fuzz_settings, paths
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dashgen.build import build_profile
from dashgen.cli.app import main
from dashgen.deployment.profile import load_profiles
from dashgen.document import NotADashboard
from dashgen.lint.runner import lint_dashboard

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = examples(200)
FUZZ = fuzz_settings(EXAMPLES)
HANG_SECONDS = 30


def _base() -> dict:
    (profile,) = load_profiles(["h20-16"], ROOT / "profiles")
    document = copy.deepcopy(build_profile(profile)[0].document)
    document["panels"] = document["panels"][:14]  # the first rows: every panel kind, quick to lint
    return document


BASE = _base()
# Each example starts from a fresh parse of the base's JSON text: the same document at a quarter of a deepcopy's CPU
# (the base is what the renderer writes as JSON, so its text holds it whole).
BASE_TEXT = json.dumps(BASE)
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.sampled_from(["$node", "up" + " + up" * 3000, "(" * 300, "row", "timeseries", "prometheus", "${datasource}"]),
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)


PATHS = [p for p in paths(BASE) if p]


@st.composite
def substituted(draw: st.DrawFn) -> dict:
    document = json.loads(BASE_TEXT)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(PATHS))
        parent: Any = document
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = draw(JSON)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier substitution removed this path
    return document


def _lints_or_refuses(document: Any) -> None:
    began = time.monotonic()
    try:
        findings = lint_dashboard(document, "fuzz.json")
        assert all(f.file == "fuzz.json" and f.rule for f in findings)
        event("linted")
    except NotADashboard as exc:
        assert str(exc) and "\n" not in str(exc)
        event("refused with a clear line")
    assert time.monotonic() - began < HANG_SECONDS


def test_each_fuzzed_document_starts_from_the_whole_real_dashboard():
    assert json.loads(BASE_TEXT) == BASE and len(BASE["panels"]) == 14


@FUZZ
@given(substituted())
def test_type_substitution_in_a_real_dashboard_lints_or_is_refused_never_a_traceback(document):
    _lints_or_refuses(document)


@FUZZ
@given(JSON)
def test_random_json_lints_or_is_refused_never_a_traceback(document):
    _lints_or_refuses(document)


@settings(
    max_examples=max(EXAMPLES // 4, 10),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(substituted())
def test_the_lint_command_exits_0_1_or_2_on_fuzzed_files(tmp_path, document):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code in (0, 1, 2), result.output[-300:]
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
