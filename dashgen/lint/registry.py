"""The rule registry: every lint rule, in report order, and selection by id."""

from __future__ import annotations

from collections.abc import Iterable

from dashgen.lint import rules_evidence, rules_hygiene
from dashgen.lint.findings import Rule

ALL_RULES: tuple[Rule, ...] = (*rules_evidence.RULES, *rules_hygiene.RULES)


class UnknownRule(ValueError):
    """A rule id given to --rule / --ignore does not exist."""


def rule_ids() -> list[str]:
    return [r.id for r in ALL_RULES]


def select_rules(only: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
    """The rules to run: ``only`` (all when empty) minus ``ignore``; ids are case-insensitive."""
    by_id = {r.id.lower(): r for r in ALL_RULES}
    only_l, ignore_l = [i.lower() for i in only], [i.lower() for i in ignore]
    unknown = [i for i in (*only, *ignore) if i.lower() not in by_id]
    if unknown:
        raise UnknownRule(f"unknown rule id(s): {', '.join(unknown)}; known: {', '.join(rule_ids())}")
    chosen = [by_id[i] for i in only_l] if only_l else list(ALL_RULES)
    return tuple(r for r in chosen if r.id.lower() not in ignore_l)
