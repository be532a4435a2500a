"""The metric-name lexer (dashgen.render.metric_lexer) names what promql-parser's selectors name, wherever the parser
accepts the expression: on every panel query and rule expression of every profile (the shipped ones and the
10,000-GPU scale fixtures), on generated expressions that put PromQL's keywords where the parser reads them as metric
names or as keywords, and on mutations of the real queries. Where the lexer does not judge it says so (None) and
``metric_names`` asks the parser."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profiles
from dashgen.render import scope
from dashgen.render.metric_lexer import lexed_names
from dashgen.rules.render import rule_groups

ROOT = Path(__file__).resolve().parent.parent


def _parser_names(text: str) -> frozenset[str] | None:
    """What ``scope`` reads from the parser's tree of ``text`` (already filled), None when it does not parse."""
    tree = scope._tree(text)
    return None if tree is None else scope.tree_names(tree)


def _texts() -> list[str]:
    found: list[str] = []

    def walk(groups):
        for group in groups:
            for panel in group.panels:
                found.extend(target.expr for target in panel.targets)
            walk(group.rows)

    for profile in [*load_profiles(), *load_profiles([], ROOT / "tests" / "fixtures" / "profiles")]:
        for spec in dashboard_specs(profile):
            walk(spec.groups)
        found.extend(rule.expr for group in rule_groups(profile) for rule in group.rules)
    return list(dict.fromkeys(found))


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


def test_every_query_and_rule_of_every_profile_is_named_as_the_parser_names_it(texts):
    judged = 0
    for text in texts:
        filled = scope.filled(text)
        lexed = lexed_names(filled)
        assert lexed is None or lexed == _parser_names(filled), text
        judged += lexed is not None
    assert len(texts) > 2000
    assert judged == len(texts)  # the lexer judges every one of them: the parser is not asked


NAMES = ["up", "foo:bar:rate5m", "_x", ":colon", "sum", "count", "topk", "and", "or", "unless", "by", "without",
         "offset", "time", "start", "end", "step", "group", "rate", "vector", "inf", "NaN", "bool", "on", "ignoring",
         "group_left", "group_right", "atan2", "SUM", "By", "Offset", "x1"]  # fmt: skip
LABELS = ["job", "node", "__name__", "le", "by", "on", "offset", "sum"]
STRINGS = ['"a"', '"x\\"y"', "'b'", '"sc-node-1"', "`raw\\`", '"up"', '"#"', '"{"', '"(.*)"', "'a,b'"]
FUNCTIONS = ["rate", "abs", "vector", "time", "label_replace", "histogram_quantile", "clamp_max", "absent", "scalar"]
AGGREGATORS = ["sum", "max", "count", "topk", "quantile", "count_values", "group", "avg", "stddev"]
BINARY = ["+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<=", "and", "or", "unless", "atan2"]


def _matchers(rng: random.Random) -> str:
    items = []
    for _ in range(rng.randint(0, 3)):
        label = rng.choice(LABELS)
        items.append(f"{label}{rng.choice(['=', '!=', '=~', '!~'])}{rng.choice(STRINGS)}")
    if rng.random() < 0.1:
        items.insert(0, rng.choice(STRINGS))  # a quoted metric name
    return "{" + rng.choice([", ", ","]).join(items) + rng.choice(["", ","]) * bool(items) + "}"


def _selector(rng: random.Random) -> str:
    name = rng.choice(NAMES) if rng.random() < 0.85 else ""
    text = name + (_matchers(rng) if not name or rng.random() < 0.5 else "")
    if rng.random() < 0.2:
        text += f"[{rng.choice(['5m', '1h30m', '30s'])}]"
    if rng.random() < 0.15:
        text += f" offset {rng.choice(['5m', '-1h'])}"
    if rng.random() < 0.1:
        text += f" @ {rng.choice(['100', 'start()', 'end()'])}"
    return text


def _expr(rng: random.Random, depth: int = 0) -> str:
    choice = rng.random() if depth < 4 else 0.0
    if choice < 0.35:
        return _selector(rng)
    if choice < 0.42:
        return rng.choice(["1", "2.5", "0x1f", "1e3", "Inf", "-NaN", ".5", '"text"'])
    if choice < 0.55:
        function = rng.choice(FUNCTIONS)
        args = [_expr(rng, depth + 1) for _ in range(rng.randint(0, 3))]
        if function == "label_replace":
            args = [_expr(rng, depth + 1), '"dst"', '"$1"', '"src"', '"(.*)"']
        return f"{function}{rng.choice(['', ' '])}({', '.join(args)})"
    if choice < 0.7:
        op = rng.choice(AGGREGATORS)
        inner = _expr(rng, depth + 1)
        if op in {"topk", "quantile", "count_values"}:
            inner = rng.choice(["5", "0.9", '"label"']) + f", {inner}"
        grouping = f"{rng.choice(['by', 'without', 'BY'])} ({', '.join(rng.sample(LABELS, rng.randint(0, 2)))})"
        where = rng.random()
        if where < 0.4:
            return f"{op} {grouping} ({inner})"
        if where < 0.7:
            return f"{op}({inner}) {grouping}"
        return f"{op}({inner})"
    if choice < 0.9:
        op = rng.choice(BINARY)
        modifier = ""
        if op in {"==", "!=", ">", "<", ">=", "<="} and rng.random() < 0.4:
            modifier += " bool"
        if rng.random() < 0.4:
            modifier += f" {rng.choice(['on', 'ignoring'])}({', '.join(rng.sample(LABELS, rng.randint(0, 2)))})"
            if rng.random() < 0.5:
                modifier += f" {rng.choice(['group_left', 'group_right'])}"
                modifier += rng.choice(["", "(le)", "()"])
        return f"{_expr(rng, depth + 1)} {op}{modifier} {_expr(rng, depth + 1)}"
    if choice < 0.95:
        return f"({_expr(rng, depth + 1)})" + rng.choice(["", "[30m:1m]", "[1h:]"])
    return f"-{_expr(rng, depth + 1)}" + rng.choice(["", " # a comment\n"])


def _compare(texts: list[str]) -> tuple[int, int]:
    """(parsed, judged): how many the parser accepts, and of those how many the lexer judged (equal to the parser)."""
    parsed = judged = 0
    for text in texts:
        expected = _parser_names(text)
        if expected is None:
            continue
        parsed += 1
        lexed = lexed_names(text)
        assert lexed is None or lexed == expected, text
        judged += lexed is not None
    return parsed, judged


def test_generated_expressions_are_named_as_the_parser_names_them():
    rng = random.Random(42)
    parsed, judged = _compare([_expr(rng) for _ in range(4000)])
    assert parsed > 1000 and judged > 0.8 * parsed, (parsed, judged)


def test_mutated_queries_are_named_as_the_parser_names_them(texts):
    """Real queries cut, doubled or with a word swapped for a keyword: wherever the parser still accepts them."""
    rng = random.Random(7)
    words = [*NAMES, "(", ")", "{", "}", ",", "by", "[5m]", '"', "#", "@", "=", "offset 5m"]
    mutated = []
    for text in rng.sample(texts, 400):
        text = scope.filled(text)
        for _ in range(5):
            at = rng.randrange(len(text) + 1)
            what = rng.random()
            if what < 0.3:
                mutated.append(text[:at] + text[at + rng.randint(1, 12) :])
            elif what < 0.7:
                mutated.append(f"{text[:at]} {rng.choice(words)} {text[at:]}")
            else:
                mutated.append(f"{text} {rng.choice(BINARY)} {text[at:]}")
    parsed, judged = _compare(mutated)
    assert parsed > 100 and judged > 0.5 * parsed, (parsed, judged)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("sum", {"sum"}),  # promql-parser reads an aggregation's name standing alone as a metric
        ("sum by (job) (up)", {"up"}),
        ("sum(up) without (job) * on(node) group_left count", {"up", "count"}),
        ('{__name__="up", job="x"} offset 5m', {"up"}),
        ('{"up"}[5m:1m]', {"up"}),
        ('rate(foo:bar[5m] @ start()) > bool 1 # {__name__="no"}', {"foo:bar"}),
        ('label_replace(vector(1), "node", "sc-node-1", "", "")', set()),
    ],
)
def test_examples(text, names):
    assert lexed_names(text) == names == _parser_names(text)


@pytest.mark.parametrize("text", ['up{job="x', "up $", "up bar", 'up{__name__="x"}', "up{job=1}", "on"])
def test_what_the_lexer_does_not_judge(text):
    assert lexed_names(text) is None
