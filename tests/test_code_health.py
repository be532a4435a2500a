"""Code-health rules that keep the code readable for the next person: one test of v2-ness, no function in the
command line over cyclomatic complexity 20, comments that say why rather than which tracker issue, the sets
of a release's outcomes and actions spelled once (in ``dashgen.publish.actions``), and test modules that share
helpers through helper modules, never by importing each other."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from source_trees import source, tree, walked

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("dashgen", "panels", "queries")


def _sources(*tops: str) -> list[Path]:
    return sorted(p for top in tops for p in (ROOT / top).rglob("*.py"))


def test_v2_ness_is_decided_in_one_place():
    """Every "is this API version v2" question goes through ``is_v2_version``; a second spelling drifts (v2alpha1)."""
    spelled = re.compile(r"""startswith\(\s*(?:V2_GROUP\s*\+\s*)?["']v2""")
    sources = _sources("dashgen")
    assert len(sources) > 100
    found = [
        str(path.relative_to(ROOT)) for path in sources for line in source(path).splitlines() if spelled.search(line)
    ]
    assert found == ["dashgen/document/v2view.py"], found  # the helper itself, once


def test_is_v2_version_reads_every_spelling():
    from dashgen.document.v2view import is_v2_version

    assert all(map(is_v2_version, ("v2", "v2beta1", "v2alpha1", "dashboard.grafana.app/v2")))
    assert not any(map(is_v2_version, ("v1beta1", "v0alpha1", "dashboard.grafana.app/v1", "")))


MAX_CLI_COMPLEXITY = 20  # a command is a list of steps; a longer decision tree belongs in a module of its own


def test_no_command_line_function_is_over_complexity_20():
    """ruff's mccabe check over ``dashgen/cli``: a long command is split into named steps."""
    ruff = Path(sys.executable).with_name("ruff")
    args = [str(ruff), "check", "--no-cache", "--select", "C901", "--output-format", "concise"]
    config = ["--config", f"lint.mccabe.max-complexity={MAX_CLI_COMPLEXITY}"]
    done = subprocess.run([*args, *config, "dashgen/cli"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # The check can fail: at a bound of 10 it names the longest commands.
    strict = ["--config", "lint.mccabe.max-complexity=10"]
    tight = subprocess.run([*args, *strict, "dashgen/cli"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert tight.returncode == 1 and "C901" in tight.stdout


TRACKER = re.compile(r"\b(?:issues?|tickets?) #?\d+\b|\bsee #\d+\b", re.I)


def test_product_code_says_why_not_which_issue():
    """A comment names the reason (a cost, a Grafana behaviour, a rule id), not the tracker entry that asked for it:
    the tracker is not where the next reader looks. Grafana's own issues (``grafana/grafana#127928``) are sources."""
    sources = _sources(*PRODUCT)
    assert len(sources) > 150
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sources
        for n, line in enumerate(source(path).splitlines(), start=1)
        if TRACKER.search(line)
    ]
    assert found == [], "\n".join(found)


def test_the_tracker_pattern_finds_references_and_spares_sources():
    hits = ("(issue 19)", "issue 30: v2", "see #42", "Issues 38-44", "ticket #7")
    spared = ("grafana/grafana#127928", "S35", "with ``#2``, ``#3``", "colour #ff0000", "an issue with 3 GPUs")
    assert [bool(TRACKER.search(text)) for text in hits] == [True] * len(hits)
    assert not any(TRACKER.search(text) for text in spared)


VOCABULARY = Path("dashgen/publish/actions.py")  # where the sets of outcomes and of actions are defined


def _vocabulary_word(node: ast.expr, words: frozenset[str]) -> bool:
    """``OutcomeKind.X`` / ``Action.X``, or a string that is one of their values."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id in ("OutcomeKind", "Action")
    return isinstance(node, ast.Constant) and node.value in words


def restated_sets(tree: ast.AST, words: frozenset[str]) -> list[int]:
    """Lines that list two or more outcomes or actions as a literal set: a membership test against one, or a
    named set made of nothing else. One of them is a second definition of a set ``actions.py`` names."""

    def listed(node: ast.expr) -> bool:
        elements = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else []
        return len(elements) >= 2 and all(_vocabulary_word(e, words) for e in elements)

    lines = []
    for node in walked(tree):
        if isinstance(node, ast.Compare):
            tested = [c for op, c in zip(node.ops, node.comparators, strict=True) if isinstance(op, ast.In | ast.NotIn)]
            lines += [node.lineno for c in tested if listed(c)]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and listed(node.value):
            lines.append(node.lineno)
    return lines


def test_outcome_and_action_sets_are_defined_once():
    """Which outcomes leave Grafana storing the build, which actions write, what is refused rather than failed:
    each set is named once in ``dashgen.publish.actions`` and used by name, so adding an outcome is one edit."""
    from dashgen.publish.actions import Action, OutcomeKind

    words = frozenset(str(w) for w in (*OutcomeKind, *Action))
    sources = [p for p in _sources("dashgen") if p.relative_to(ROOT) != VOCABULARY]
    assert len(sources) > 100
    found = [f"{path.relative_to(ROOT)}:{line}" for path in sources for line in restated_sets(tree(path), words)]
    assert found == [], found
    assert restated_sets(tree(ROOT / VOCABULARY), words)  # the definitions


def test_the_restated_set_finder_finds_the_spellings_seen():
    from dashgen.publish.actions import Action, OutcomeKind

    words = frozenset(str(w) for w in (*OutcomeKind, *Action))
    restated = (
        'ok = o.outcome in ("published", "unchanged")',
        "ok = o.outcome not in [OutcomeKind.REFUSED, OutcomeKind.HELD]",
        'STORED = ("published", "unchanged", "deleted")',
        "x = a in (Action.CREATE, Action.UPDATE, Action.MOVE) and b",
    )
    spared = (
        'ok = status in ("edited", "deleted")',
        'A, B = "pending", "published"',
        "ok = o.outcome in STORED_OUTCOMES",
        'ok = o.outcome == "published"',
    )
    assert [len(restated_sets(ast.parse(text), words)) for text in restated] == [1] * len(restated)
    assert not any(restated_sets(ast.parse(text), words) for text in spared)


def imported_modules(tree: ast.AST) -> set[str]:
    """The top-level names of every module ``tree`` imports (at any depth: a function's own import counts)."""
    names = set()
    for node in walked(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
    return names


def test_no_test_module_imports_another():
    """What two test modules share (documents, fixtures, servers) lives in a helper module under tests/ with public
    names; importing a test module runs its module-level set-up and ties one test file to another's internals."""
    tests = sorted((ROOT / "tests").glob("test_*.py"))
    assert len(tests) > 100
    found = [
        f"{path.name} imports {name}"
        for path in tests
        for name in sorted(imported_modules(tree(path)))
        if name.startswith("test_")
    ]
    assert found == [], found
    spelled = "def f():\n    from test_diff import panel\nimport test_x.y\nfrom diff_documents import panel\n"
    assert imported_modules(ast.parse(spelled)) == {"test_diff", "test_x", "diff_documents"}


CLOSED_FIELDS = (
    "action",
    "status",
    "outcome",
    "schema",
    "phase",
)  # fields that hold one of a few words, never free text
COMMENT_TYPED = re.compile(r":\s*str\b[^#]*#\s*[\w-]+\s*\|\s*[\w-]+")  # ``status: str = "ok"  # ok | empty | error``


def plain_str_fields(tree: ast.AST) -> list[str]:
    """Fields of a class named in ``CLOSED_FIELDS`` annotated plain ``str``, and properties of those names
    returning ``str``: each holds one of a closed set of words, which a ``Literal`` names and mypy checks."""
    found = []
    for cls in (node for node in walked(tree) if isinstance(node, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                name, annotation = item.target.id, item.annotation
            elif isinstance(item, ast.FunctionDef) and item.returns is not None:
                name, annotation = item.name, item.returns
            else:
                continue
            if name in CLOSED_FIELDS and isinstance(annotation, ast.Name) and annotation.id == "str":
                found.append(f"{cls.name}.{name}:{item.lineno}")
    return found


def test_closed_sets_of_words_are_literals():
    """A plan's action, a result's status, a dashboard's schema: each is one of a few words, typed as a ``Literal``
    (or an enum) so mypy refuses a misspelling, never ``str`` with the words in a comment."""
    sources = _sources("dashgen")
    found = []
    for path in sources:
        text = source(path)
        found += [f"{path.relative_to(ROOT)}: {where}" for where in plain_str_fields(tree(path))]
        found += [
            f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), start=1)
            if COMMENT_TYPED.search(line)
        ]
    assert found == [], "\n".join(found)


def test_the_plain_str_finder_finds_the_spellings_seen():
    seen = (
        "class A:\n    action: str\n",
        'class R:\n    status: str = "ok"\n',
        "class P:\n    @property\n    def status(self) -> str: ...\n",
    )
    spared = (
        "class A:\n    action: Action\n",
        'class R:\n    status: TargetStatus = "ok"\n',
        "class T:\n    title: str\n",
        "def status() -> str: ...\n",
    )
    assert [len(plain_str_fields(ast.parse(text))) for text in seen] == [1] * len(seen)
    assert not any(plain_str_fields(ast.parse(text)) for text in spared)
    assert COMMENT_TYPED.search('    status: str = "ok"  # ok | empty | error')
    assert not COMMENT_TYPED.search('    status: TargetStatus = "ok"  # ok | empty')
