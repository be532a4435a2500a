"""``dashgen import`` of hostile or odd JSON: NaN / Infinity, a 5,000-digit integer and an overflowing float are
input errors naming the file; a lone surrogate one naming its JSON path; a NUL in the uid, 800 targets (refIds
past ZZ) and bidi controls import, and the generated code shows no character that does not show as itself
(Trojan Source)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dashgen.cli import main
from dashgen.render.tables import ref

BASE = {
    "title": "t",
    "uid": "abc",
    "panels": [
        {
            "id": 1,
            "type": "timeseries",
            "title": "p",
            "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
            "targets": [{"refId": "A", "expr": "up"}],
        }
    ],
}


def _import(tmp_path, text: str):
    source = tmp_path / "board.json"
    source.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["import", str(source), "-o", str(tmp_path / "board.py")])
    return result, tmp_path / "board.py"


@pytest.mark.parametrize(
    ("replace", "fragment"),
    [
        (('"x": 0', '"x": NaN'), "NaN is not JSON"),
        (('"w": 12', '"w": Infinity'), "Infinity is not JSON"),
        (('"w": 12', '"w": -Infinity'), "-Infinity is not JSON"),
        (('"h": 8', '"h": ' + "9" * 5000), "5,000 digits"),
        (('"h": 8', '"h": 1e999'), "out of range"),
        (('"title": "p"', '"title": "p\\ud800x"'), "$.panels[0].title: a lone surrogate"),
    ],
    ids=["nan", "infinity", "minus-infinity", "5000-digits", "1e999", "lone-surrogate"],
)
def test_json_that_is_no_dashboard_s_is_an_input_error_naming_the_file(tmp_path, replace, fragment):
    result, out = _import(tmp_path, json.dumps(BASE).replace(*replace))
    assert result.exit_code == 2, result.output
    assert "board.json" in result.output and fragment in result.output and "internal error" not in result.output
    assert not out.exists()


def _shown_characters_only(text: str) -> None:
    hidden = {f"U+{ord(ch):04X}" for ch in text if ch != "\n" and not ch.isprintable()}
    assert not hidden, hidden


def test_a_nul_in_the_uid_imports_and_the_code_compiles(tmp_path):
    result, out = _import(tmp_path, json.dumps({**BASE, "uid": "a\u0000b"}))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    compile(text, str(out), "exec")
    _shown_characters_only(text)


def test_bidi_controls_and_separators_are_written_as_escapes(tmp_path):
    sneaky = "ok\u202e )(lave \u2066x\u2069\u200b\u2028\u00a0y"
    panel = {**BASE["panels"][0], "title": sneaky, "description": f'# {sneaky}\n"""x', "targets": []}
    result, out = _import(tmp_path, json.dumps({**BASE, "title": sneaky, "panels": [panel]}))
    assert result.exit_code == 0 and "no semantic change" in result.output, result.output
    text = out.read_text(encoding="utf-8")
    _shown_characters_only(text)
    assert "\\u202e" in text


def test_the_module_s_docstring_holds_no_control_or_bidi_character_when_read(tmp_path):
    """The docstring is read as well as shown (``help()``, pydoc, an editor's hover): the uid's ESC and bidi
    override are escapes in the source and stay escapes, as text, in ``__doc__``."""
    import ast

    result, out = _import(tmp_path, json.dumps({**BASE, "uid": "a\x1b]8;;https://evil.example\x07b\u202ec"}))
    assert result.exit_code == 0, result.output
    doc = ast.get_docstring(ast.parse(out.read_text(encoding="utf-8")), clean=False) or ""
    assert "uid a\\x1b]8;;https://evil.example\\x07b\\u202ec" in doc, doc
    _shown_characters_only(doc)


def test_eight_hundred_targets_import_with_refids_past_zz(tmp_path):
    targets = [{"refId": ref(i), "expr": f'up{{i="{i}"}}'} for i in range(800)]
    panel = {**BASE["panels"][0], "targets": targets}
    result, out = _import(tmp_path, json.dumps({**BASE, "panels": [panel]}))
    assert result.exit_code == 0 and "no semantic change" in result.output, result.output[-2000:]


def test_refids_follow_grafana_s_sequence_without_end():
    assert [ref(i) for i in (0, 25, 26, 51, 52, 701, 702, 799)] == ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA", "ADT"]
    assert len({ref(i) for i in range(20_000)}) == 20_000
