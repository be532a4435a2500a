"""The read-back's YAML reader (``dashgen/render/yamlread.py``) reads every text as ``yaml.safe_load`` does: the same
values of the same types, the same documents, the same error; plain data is built from the parser's events without
PyYAML's node graph, anything else goes to the full loader."""

from __future__ import annotations

from functools import cache

import pytest
import yaml

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profiles
from dashgen.render import yamlread
from dashgen.render.v2 import render_v2
from dashgen.render.yamlemit import dump, dump_all
from dashgen.rules.render import rule_groups_data

TEXTS = {
    "empty": "",
    "a comment only": "# only\n",
    "a scalar root": "3\n",
    "a string root": "plain string\n",
    "a flow list root": "[1, 2]\n",
    "explicit document": "--- 1\n",
    "explicit end": "---\n...\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "nested block and flow": "- [1, 2]\n- {}\n- []\n- {a: [b, {c: d}]}\n- - x\n  - y\na_list:\n",
    "list under a key": "a:\n- 1\n- 2\n",
    "implicit scalars": "a: .inf\nb: -.Inf\nc: 1e3\nd: 1.5e+3\ne: 1_000\nf: 0x1F\ng: 0o17\nh: 1:30\ni: -0.0\nj: 017\n",
    "booleans and nulls": "y: yes\nn: No\no: on\nnull1: ~\nnull2: null\nnull3:\nt: True\nf: FALSE\n",
    "non-string keys": "1: one\n2.5: two\ntrue: three\n~: four\nno: five\n",
    "repeated keys": "k: 1\nk: 2\nj: 3\n",
    "literal blocks": "a: |\n  line\n  two\nb: |+\n  x\n\nc: |-\n  x\nd: >\n  folded\n  text\n",
    "quoted": "'single ''q''': \"v\\u0080\\t\\U0001F600\"\n\"quoted key\": ''\n",
    "explicit plain tags": "a: !!str 1\nb: !!int '3'\nc: !!float '1'\nd: !!bool 'yes'\ne: !!null ''\nf: ! 12\n",
    "non-specific tag": "! x\n",
    "anchor and alias": "a: &x 1\nb: *x\n",
    "recursive alias": "&a [*a]\n",
    "merge key": "base: &b {a: 1}\nm:\n  <<: *b\n  c: 3\n",
    "value key": "=: 1\n",
    "set": "s: !!set {a, b}\n",
    "omap": "o: !!omap [a: 1]\n",
    "timestamp": "t: 2001-12-14\nu: 2001-12-14 21:59:43.10 -5\n",
    "binary": "b: !!binary aGVsbG8=\n",
    "application tag": "x: !foo bar\n",
    "complex key": "? [a, b]\n: c\n",
    "flow complex key": "{[a]: b}\n",
    "two documents": "---\na: 1\n---\nb: 2\n",
    "unclosed flow": "a: [\n",
    "a mapping in a value": "a: b: c\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "tab indentation": "a:\n\tb: 1\n",
    "undefined alias": "a: *nothing\n",
    # a bad tagged scalar before a parse error: the full loader reads the whole text first, so its error is the parser's
    "bad tagged int, then a parse error": "a: !!int x\nb: [\n",
    "bad tagged bool": "a: !!bool maybe\n",
    "a bad tagged scalar in the first of two documents": "a: !!int x\n---\nb: 1\n",
}


def _outcome(read, text: str) -> tuple:
    try:
        return ("read", repr(read(text)))
    except yaml.YAMLError as exc:
        return ("refused", type(exc).__name__, str(exc))
    except Exception as exc:  # noqa: BLE001 - a constructor's own error (a bad tagged scalar) is an outcome too
        return ("raised", type(exc).__name__, str(exc))


@pytest.mark.parametrize("name", TEXTS)
def test_the_reader_gives_the_full_loaders_values_or_error(name):
    text = TEXTS[name]
    assert _outcome(yamlread.load, text) == _outcome(lambda t: yaml.load(t, Loader=yamlread.LOADER), text)
    assert _outcome(yamlread.load_all, text) == _outcome(lambda t: list(yaml.load_all(t, Loader=yamlread.LOADER)), text)


@cache
def _written() -> tuple[str, ...]:
    """A rule file and a manifest of a v2 dashboard, as the emitter writes them (the smallest shipped profile)."""
    (profile,) = load_profiles(["h20-16"])
    resource = render_v2(dashboard_specs(profile)[0], "v2")
    manifest = {
        "apiVersion": "grafana.integreatly.org/v1beta1",
        "kind": "GrafanaManifest",
        "spec": {"template": resource},
    }
    groups = {"groups": rule_groups_data(profile)}
    return (dump(groups, ["rules"]), dump_all([manifest, {"kind": "ConfigMap", "data": {"x.json": "{\n}\n"}}]))


def test_the_reader_reads_a_written_rule_file_and_manifest_as_the_full_loader_does():
    written = _written()
    assert len(written) == 2
    for text in written:
        assert repr(yamlread.load_all(text)) == repr(list(yaml.load_all(text, Loader=yamlread.LOADER)))


def test_plain_data_is_read_without_the_full_loader(monkeypatch):
    """The speed of the read-back rests on this: a manifest of plain data never reaches PyYAML's node graph (about
    four fifths of a full load of a v2 dashboard's GrafanaManifest)."""
    written = _written()

    def refuse(*args, **kwargs):
        raise AssertionError("the full loader ran")

    monkeypatch.setattr(yamlread.LOADER, "get_single_node", refuse)
    monkeypatch.setattr(yamlread.LOADER, "get_node", refuse)
    assert [len(yamlread.load_all(text)) for text in written] == [1, 2]
    with pytest.raises(AssertionError, match="full loader"):
        yamlread.load(TEXTS["anchor and alias"])
