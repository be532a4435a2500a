"""Fuzz (issue 18): hostile profiles. Random type substitution, deletion and unknown keys at any path of the
four shipped profiles, and random bytes as a profile file. Every input ends in a Profile that builds (or a
build error naming the profile), or in one ProfileError naming file and field; never another exception, a
hang, or a file written on failure.

Seeded (``derandomize``) and bounded: ``DASHGEN_FUZZ_EXAMPLES`` examples per property (default 200 here;
the issue's figures come from ``DASHGEN_FUZZ_EXAMPLES=1000``).
"""

from __future__ import annotations

import copy
import time
import tomllib
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from fuzzing import examples, fuzz_settings, paths
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dashgen.build import build_profile
from dashgen.cli.app import main
from dashgen.deployment.profile import profile_from_dict
from dashgen.errors import BuildValidationError, ProfileError

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("h20-16", "video-200", "pd-128", "long-context-64")
RAW = {name: tomllib.loads((ROOT / "profiles" / f"{name}.toml").read_text()) for name in NAMES}
EXAMPLES = examples(200)
FUZZ = fuzz_settings(EXAMPLES)
HANG_SECONDS = 30

HOSTILE_TEXT = st.sampled_from(
    [
        "",
        " ",
        '"',
        "'",
        "\\",
        'a"b',
        "n.*",
        ".*",
        "(?=x)",
        "a{1000000}",
        "$node",
        "${x}",
        "{index}",
        "{0}",
        "{index!r}",
        "{index:>999999}",
        "\u0000",
        "\n",
        "é",
        "🦀",
        "x" * 5000,
        "0s",
        "-1s",
        "15s",
        "1e309",
        "NaN",
        "256 GiB",
        "9" * 400,
        "not-exported",
        "exported",
        "not-deployed",
        "unified",
        "prefill",
        "12.3",
        "now-1h",
    ]
)
SCALARS = st.one_of(
    HOSTILE_TEXT,
    st.text(max_size=40),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**63, 10**7, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just([]),
    st.just({}),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8,
)


@st.composite
def mutated_profiles(draw: st.DrawFn) -> dict:
    data = copy.deepcopy(RAW[draw(st.sampled_from(NAMES))])
    for _ in range(draw(st.integers(1, 3))):
        every = [p for p in paths(data) if p]
        path = draw(st.sampled_from(every))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "unknown"]))
        if action == "replace":
            parent[path[-1]] = draw(VALUES)
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=10))] = draw(VALUES)
    return data


def _accepts_or_names_the_field(data: dict) -> None:
    began = time.monotonic()
    try:
        profile = profile_from_dict(data, "fuzz.toml")
    except ProfileError as exc:
        assert exc.path == "fuzz.toml" and exc.field and exc.detail, str(exc)
        assert "\n" not in str(exc) and len(str(exc)) < 1000, str(exc)[:300]
        event("refused with file and field")
        return
    finally:
        assert time.monotonic() - began < HANG_SECONDS
    try:
        build_profile(profile)
        event("accepted and built")
    except ProfileError as exc:  # a check only the query builders can make (histogram bucket bounds ...)
        assert exc.path == "fuzz.toml" and exc.field, str(exc)
        event("accepted, build refused with file and field")
    except BuildValidationError as exc:
        assert all(problem.startswith(("fuzz.toml", profile.name)) for problem in exc.problems), exc.problems[:3]
        event("accepted, build validation failed naming the profile")
    assert time.monotonic() - began < HANG_SECONDS


@FUZZ
@given(mutated_profiles())
def test_fuzzed_profiles_load_or_fail_naming_file_and_field_never_a_traceback(data):
    _accepts_or_names_the_field(data)


@FUZZ
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_fuzzed_profile_bytes_exit_2_with_one_line_and_write_nothing(tmp_path_factory, blob):
    folder = tmp_path_factory.mktemp("p")
    (folder / "x.toml").write_bytes(blob)
    out = folder / "out"
    result = CliRunner().invoke(main, ["--profiles-dir", str(folder), "build", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and result.output.startswith("error: "), result.output[:300]
    assert not out.exists()


@st.composite
def hostile_strings(draw: st.DrawFn) -> dict:
    """A shipped profile with one of its strings (job, node name format, regex, label, mount point ...)
    replaced by hostile text: the strings that reach PromQL."""
    data = copy.deepcopy(RAW[draw(st.sampled_from(NAMES))])
    strings = [p for p in paths(data) if p and isinstance(_at(data, p), str) and p[-1] not in ("name", "status")]
    path = draw(st.sampled_from(strings))
    _at(data, path[:-1])[path[-1]] = draw(
        HOSTILE_TEXT | st.text(max_size=30) | st.sampled_from(['sg"lang', "a\\", "x}", 'node-{index}"', "a|b"])
    )
    return data


def _at(data: Any, path: tuple) -> Any:
    for key in path:
        data = data[key]
    return data


@settings(FUZZ, max_examples=max(EXAMPLES // 2, 20))
@given(hostile_strings())
def test_hostile_profile_strings_never_reach_promql_unescaped(data):
    """Refused naming the field, or accepted and built: the build parses every generated query, so a string
    that broke a query (a quote in a job, ``n.*`` as a node, a lookahead) would fail here."""
    try:
        profile = profile_from_dict(data, "fuzz.toml")
    except ProfileError as exc:
        assert exc.path == "fuzz.toml" and exc.field and "\n" not in str(exc), str(exc)
        event("refused with file and field")
        return
    try:
        build_profile(profile)
        event("accepted and built")
    except ProfileError as exc:  # a check only the query builders can make (histogram bucket bounds ...)
        assert exc.path == "fuzz.toml" and exc.field, str(exc)
        event("accepted, build refused with file and field")
