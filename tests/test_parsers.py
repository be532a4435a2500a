"""dashgen.files.parsers: nesting too deep to read is one more parse error (a ValueError), for TOML and JSON alike, so
every reader names its file with the one ``except ValueError`` it has for malformed text."""

from __future__ import annotations

import json
import tomllib

import pytest

from dashgen.files.parsers import NESTED_TOO_DEEPLY, NestedTooDeeply, parse_json, parse_toml

DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_nesting_past_the_recursion_limit_is_a_value_error_for_toml_and_json():
    for parse, text in ((parse_toml, f"a = {DEEP_JSON}\n"), (parse_json, DEEP_JSON), (parse_json, DEEP_JSON.encode())):
        with pytest.raises(NestedTooDeeply) as caught:
            parse(text)
        assert isinstance(caught.value, ValueError) and str(caught.value) == NESTED_TOO_DEEPLY


def test_other_text_is_parsed_and_refused_as_the_standard_parsers_do():
    assert parse_toml('a = 1\nb = "x"\n') == {"a": 1, "b": "x"}
    assert parse_json('{"a": [1, 2.5]}', parse_float=str) == {"a": [1, "2.5"]}
    with pytest.raises(tomllib.TOMLDecodeError):
        parse_toml("a = ")
    with pytest.raises(json.JSONDecodeError):
        parse_json("{not json")


@pytest.mark.parametrize("reader", ["profile", "approved-plan", "exclusions", "bundle"])
def test_each_reader_names_its_file_when_the_text_nests_too_deeply(reader, tmp_path):
    from dashgen.deployment.profile import profile_from_text
    from dashgen.errors import InputError, ProfileError
    from dashgen.lint.exclusions import parse_exclusions
    from dashgen.publish import approved_plan, bundle

    deep_toml = f"a = {DEEP_JSON}\n"
    calls = {
        "profile": ("p.toml", lambda: profile_from_text(deep_toml, "p.toml")),
        "approved-plan": ("plan.toml", lambda: approved_plan.parse(deep_toml, "plan.toml")),
        "exclusions": ("lint.toml", lambda: parse_exclusions(deep_toml, tmp_path / "lint.toml")),
        "bundle": ("bundle.json", lambda: bundle.decode(DEEP_JSON.encode(), "bundle.json")),
    }
    name, call = calls[reader]
    with pytest.raises((InputError, ProfileError)) as caught:
        call()
    assert NESTED_TOO_DEEPLY in str(caught.value) and name in str(caught.value), str(caught.value)
