"""The test modules the panel index does not parse: ``source_strings.may_select`` is False only for a module whose
parsed selectors select none of the panels (held to ``panel_index.file_selectors`` on every test module, on them with
a selecting test appended in each form a test can select by, and on hand-written modules), and it is False for most.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from source_trees import tree

from dashgen import panel_index as index
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profiles
from dashgen.panel_index import file_selectors, panel_tests, selectors_of
from dashgen.render.source_strings import heads_of, may_select, strings_of

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted((ROOT / "tests").glob("test_*.py"))


def _panels(folder: Path) -> frozenset[tuple[str, str]]:
    return frozenset(
        (panel.key, panel.title)
        for profile in load_profiles([], folder)
        for dashboard in dashboard_specs(profile)
        for panel in dashboard.panels()
    )


PANELS = {"profiles": _panels(ROOT / "profiles"), "scale": _panels(ROOT / "tests" / "fixtures" / "profiles")}
NAMES = {name: frozenset(text for pair in pairs for text in pair) for name, pairs in PANELS.items()}


def _selects(source: bytes | ast.Module, names: frozenset[str], heads: frozenset[str]) -> bool:
    """The definition: some test of the parsed module (its bytes, or a test module's shared tree) names a panel whole,
    or by a prefix of its key or title."""
    return any(
        any(text in names for text in literals) or any(text in heads for text in prefixes)
        for literals, prefixes in file_selectors(source).values()
    )


@pytest.mark.parametrize("profiles", sorted(NAMES))
def test_every_test_module_it_skips_selects_no_panel_and_it_skips_most(profiles):
    names = NAMES[profiles]
    heads = heads_of(names)
    skipped = 0
    for path in MODULES:
        source = path.read_bytes()
        if not may_select(source, names, heads):
            assert not _selects(tree(path), names, heads), path.name
            skipped += 1
    assert skipped > len(MODULES) / 3


def _title(names: frozenset[str]) -> str:
    return next(n for n in sorted(names) if " " in n and "." not in n and len(n) > 12 and n.isascii())


def _key(names: frozenset[str]) -> str:
    return next(n for n in sorted(names) if n.count(".") == 1 and " " not in n and "_" in n.split(".")[1])


def _forms(names: frozenset[str]) -> list[str]:
    """A test function selecting a panel in each way the index reads (and ways of writing the string)."""
    key, title = _key(names), _title(names)
    group, rest = key.split(".")
    cut = len(title) // 2
    first, others = title.split(" ", 1)
    escaped = "".join(f"\\u{ord(c):04x}" if i == 2 else c for i, c in enumerate(title))
    return [
        f'def test_x():\n    assert "{key}"\n',
        f"def test_x():\n    assert '{title}'\n",
        f'def test_x():\n    assert ("{title[:cut]}"\n        "{title[cut:]}")\n',
        f'def test_x():\n    assert "{title[:cut]}" \\\n        "{title[cut:]}"\n',
        f'def test_x():\n    assert "{escaped}"\n',
        f'def test_x():\n    assert r"{key}" and b"x"\n',
        f'def test_x():\n    assert """{title}"""\n',
        f'def test_x(t):\n    assert t.startswith("{title[:3]}")\n',
        f'def test_x(t):\n    assert t.startswith(  # why\n        "{title[:2]}", 0)\n',
        f'HEAD = "{title[:4]}"\n\n\ndef test_x(t):\n    assert t.startswith(HEAD)\n',
        f'def test_x(t):\n    assert t.startswith(("zzz", "{title[:4]}"))\n',
        f"def test_x(t):\n    assert f\"{{t.startswith('{title[:3]}')}}\"\n",
        f'HEAD = "{title[:3]}"\n\n\ndef test_x(t):\n    assert f"{{t.startswith(HEAD)}}"\n',
        f'def test_x(t):\n    for h in ("{title[:3]}",):\n        assert t . startswith(h)\n',
        f'HEAD: str = "{title[:2]}"\n\n\ndef test_x(t):\n    assert t.startswith(\\\n        HEAD\n    )\n',
        f'def test_x(w):\n    assert f"{key[:7]}{{w}}"\n',
        f'def test_x():\n    for r in ("{rest}",):\n        assert f"{group}.{{r}}"\n',
        f'def test_x():\n    for g in ("{group}",):\n        assert f"{{g}}.{rest}"\n',
        f'def test_x():\n    for g in ("{group}",):\n        assert f"{{g!r}}" f".{rest}"\n',
        f'def test_x():\n    for a, b in [("x", "y")]:\n        assert f"{{a}}" "{title}"\n',
        f'def test_x():\n    assert f"{{0}}{title}"\n',
        f'GROUP: str = "{group}"\n\n\ndef test_x():\n    assert f"{{GROUP}}.{rest}"\n',
        f'x = 1; GROUP = "{group}"\n\n\ndef test_x():\n    assert f"{{GROUP}}.{rest}"\n',
        f'(GROUP) = "{group}"\n\n\ndef test_x():\n    assert f"{{GROUP}}.{rest}"\n',
        f'(\n    HEAD\n) = "{title[:4]}"\n\n\ndef test_x(t):\n    assert t.startswith(HEAD)\n',
        f'def test_x():\n    assert [f"{{g}}.{rest}" for (g) in ("{group}",)]\n',
        f'def test_x():\n    for w in ("{first}",):\n        assert f"{{w}} {others}"\n',
        f'def test_x():\n    assert {{"k": "{key}"}}["k"]\n',
    ]


# Text where the lexer does not judge (then the module is parsed): a quote it cannot place, a normalised
# identifier, a coding line, bytes it cannot decode.
UNJUDGED = [
    b"x = 'open\n",
    "def test_x(t):\n    assert t.\uff53tartswith('A')\n".encode(),
    b"# -*- coding: latin-1 -*-\nx = 1\n",
    b"x = '\xff'\n",
]


@pytest.mark.slow  # ~2 s a profile set: every form appended to every test module, each lexed and parsed
@pytest.mark.parametrize("profiles", sorted(NAMES))
def test_a_module_that_selects_in_any_form_is_never_skipped(profiles):
    """Each form appended to every test module and to an empty one, placed before or after the module's text:
    wherever the definition selects a panel, the module is read."""
    names = NAMES[profiles]
    heads = heads_of(names)
    sources = [b"", *(path.read_bytes() for path in random.Random(42).sample(MODULES, 3))]
    checked = 0
    for form in _forms(names):
        for source in sources:
            for mutated in (source + b"\n\n" + form.encode(), form.encode() + b"\n\n" + source):
                assert _selects(mutated, names, heads), form
                assert may_select(mutated, names, heads), form
                checked += 1
    assert checked > 150
    for text in UNJUDGED:
        assert strings_of(text) is None and may_select(text, names, heads)


def test_it_skips_a_module_that_names_no_panel():
    names = NAMES["scale"]
    heads = heads_of(names)
    letter = _title(names)[:1]  # the head of a title: a prefix only where the index reads it as one
    for source in (
        b"def test_x():\n    assert 'hello' and \"world\" and f'{1}x' and b'gpu_health.faults'\n",
        b"def test_x(t):\n    # 'gpu_health.faults' in a comment\n    assert t.startswith('zz')\n",
        b"def test_x(t):\n    assert r'\\d+' and '''\nmulti'''\n",
        b"def test_x(group, key):\n    assert f'{group}.{key}' and f'{group}'\n",  # parameters: not expanded
        # a parameter, an attribute, a call or a sum is no prefix: only a literal, a collection or a bound name is
        f"def test_x(t, prefix):\n    assert t.startswith(prefix) and t.startswith(t.x) and '{letter}'\n".encode(),
        f"def test_x(t):\n    assert t.startswith(t.lower()) or t.startswith('{letter}' + t)\n".encode(),
        b"def test_x():\n    group = 'slo_health'\n    assert f'{group}.{group}'\n",  # a function's own name: neither
    ):
        assert strings_of(source) is not None
        assert not _selects(source, names, heads) and not may_select(source, names, heads), source


@pytest.mark.slow  # ~2 s: the index of every test module, read whole and with skipping, for both profile sets
def test_the_index_reads_the_same_tests_for_every_panel_with_modules_skipped(tmp_path, monkeypatch):
    """``selectors_of`` given the panels' names: the same tests for every panel of every profile as reading every
    module, and its verdicts kept in the cache folder for the same names only."""
    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path / "every"))
    every = selectors_of(ROOT / "tests")
    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path / "cache"))
    scanned: list[int] = []
    monkeypatch.setattr(index, "may_select", lambda *args: scanned.append(1) or may_select(*args))
    assert sorted(PANELS) == ["profiles", "scale"] and all(PANELS.values())
    for profiles, panels in PANELS.items():
        (tmp_path / "cache").mkdir(exist_ok=True)
        for run in range(2):  # the verdicts kept from the first run are used by the second
            scanned.clear()
            some = selectors_of(ROOT / "tests", NAMES[profiles])
            assert (len(scanned) > len(MODULES) / 3) if run == 0 else not scanned
            assert len(some.literals) < len(every.literals)
            for key, title in panels:
                assert panel_tests(key, (title,), some) == panel_tests(key, (title,), every), key
        scanned.clear()
        selectors_of(
            ROOT / "tests", NAMES[profiles] | {"another.panel"}
        )  # other names: every skipped module read again
        assert len(scanned) > len(MODULES) / 3
        for cached in (tmp_path / "cache").iterdir():
            cached.unlink()


def test_on_shuffled_modules_a_module_skipped_still_selects_no_panel():
    """Top-level blocks (functions, constants, imports) of test modules dropped and copied across modules: wherever
    the result still parses, a module the lexer skips selects nothing by the definition."""
    names = NAMES["profiles"]
    heads = heads_of(names)
    draw = random.Random(7)
    blocks = [block for path in MODULES for block in path.read_text(encoding="utf-8").split("\n\n\n")]
    compared = selecting = 0
    for path in draw.sample(MODULES, 20):
        own = path.read_text(encoding="utf-8").split("\n\n\n")
        for _ in range(4):
            mutated = list(own)
            del mutated[draw.randrange(len(mutated))]
            for _ in range(draw.randint(1, 3)):
                mutated.insert(draw.randrange(len(mutated) + 1), draw.choice(blocks))
            source = "\n\n\n".join(mutated).encode()
            try:
                selects = _selects(source, names, heads)
            except SyntaxError:
                continue
            compared += 1
            selecting += selects
            assert selects <= may_select(source, names, heads), path.name
    assert compared > 40 and 0 < selecting < compared
