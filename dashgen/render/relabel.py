"""Rewrite the label names of a PromQL expression written by someone else: an imported dashboard's ``Hostname``
or ``gpu`` becomes the name the profile gives that role (``[labels] node = "host"``, ``gpu = "gpu_index"``), so
its panels read a store whose series carry the profile's names, as dashgen's own queries do.

Text in, text out, the expression kept as written but for the renamed labels, with the lexer of
``dashgen.render.scope``. A label name stands in four places: a matcher's name inside ``{...}``; a ``by`` /
``without`` / ``on`` / ``ignoring`` / ``group_left`` / ``group_right`` list; a string argument that names a label
(``label_replace``'s destination and source, ``label_join``'s, ``count_values``'s, MetricsQL's
``sort_by_label``); a legend's ``{{name}}``. Where a label name is a Grafana variable (``by ($group)``) the
expression cannot be rewritten for certain, and the reason is returned so the caller says it per query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from dashgen.render.scope import IDENT, LABEL_LISTS, VARIABLE, block_end, inert_end, string_end

# function -> the positions (0-based) of its arguments that are label names; None: every one from the second on
LABEL_ARGUMENTS: dict[str, frozenset[int] | None] = {
    "label_replace": frozenset({1, 3}),
    "label_join": None,
    "count_values": frozenset({0}),
    "sort_by_label": None,
    "sort_by_label_desc": None,
}
MATCHER_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\s*(?:=~|!~|!=|=))")


@dataclass(frozen=True)
class Relabelled:
    """The expression with the profile's label names, how many names were rewritten, and why not ("")."""

    expr: str
    renamed: int
    reason: str = ""


def _label_argument(function: str, index: int) -> bool:
    if function not in LABEL_ARGUMENTS:
        return False
    positions = LABEL_ARGUMENTS[function]
    if positions is None:
        return index == 1 or index >= 3 if function == "label_join" else index >= 1
    return index in positions


def _block(block: str, renames: dict[str, str]) -> tuple[str, int]:
    """A ``{...}`` matcher block with its matchers' label names renamed (strings left alone)."""
    out, count, i = [], 0, 0
    while i < len(block):
        if block[i] in "\"'`":
            end = string_end(block, i)
            out.append(block[i:end])
            i = end
            continue
        found = MATCHER_NAME.match(block, i)
        if found and (i == 0 or not (block[i - 1].isalnum() or block[i - 1] == "_")):
            name = found.group(1)
            if name in renames:
                count += 1
            out.append(renames.get(name, name) + found.group(2))
            i = found.end()
            continue
        out.append(block[i])
        i += 1
    return "".join(out), count


def _label_list(text: str, renames: dict[str, str]) -> tuple[str, int, str]:
    """``(a, b)`` of a ``by`` / ``on`` list with its names renamed; a Grafana variable in it is the reason."""
    variable = VARIABLE.search(text)
    if variable:
        return text, 0, f"a label list names the Grafana variable {variable.group(0)}"
    count = 0

    def one(match: re.Match[str]) -> str:
        nonlocal count
        name = match.group(0)
        count += name in renames
        return renames.get(name, name)

    return IDENT.sub(one, text), count, ""


def relabel_expr(expr: str, renames: dict[str, str]) -> Relabelled:
    """``expr`` with each label name in ``renames`` written as its new name (see the module docstring). Remembered
    by text and renames: every build of a profile with a team's imported modules asks it of each of their queries
    again (``dashgen check``: the build, the rule files' links; a build, then rules, then check)."""
    if not renames:
        return Relabelled(expr, 0)
    return _relabelled(expr, tuple(renames.items()))


@lru_cache(maxsize=8192)
def _relabelled(expr: str, renaming: tuple[tuple[str, str], ...]) -> Relabelled:
    renames = dict(renaming)
    if re.match(r"\s*WITH\s*\(", expr, re.IGNORECASE):
        return Relabelled(expr, 0, "a MetricsQL WITH template: its label names are not plain PromQL")
    out: list[str] = []
    calls: list[list[object]] = []  # per open parenthesis: [function name or "", argument index]
    count, i, pending, after_list_keyword = 0, 0, "", False
    while i < len(expr):
        char = expr[i]
        if char in "\"'`":
            end = string_end(expr, i)
            literal = expr[i:end]
            if calls and _label_argument(str(calls[-1][0]), int(str(calls[-1][1]))):
                body = literal[1:-1]
                if VARIABLE.fullmatch(body):
                    return Relabelled(expr, 0, f"a label argument is the Grafana variable {body}")
                if body in renames:
                    literal, count = literal[0] + renames[body] + literal[-1], count + 1
            out.append(literal)
            i = end
            continue
        variable = VARIABLE.match(expr, i)
        if variable:
            out.append(variable.group(0))
            i = variable.end()
            continue
        if char == "{":
            end = block_end(expr, i)
            block, renamed = _block(expr[i:end], renames)
            out.append(block)
            count += renamed
            i = end
            continue
        skipped = inert_end(expr, i)
        if skipped is not None:
            out.append(expr[i:skipped])
            i = skipped
            continue
        ident = IDENT.match(expr, i)
        if ident:
            word = ident.group(0)
            after_list_keyword = word.lower() in LABEL_LISTS
            pending = word.lower() if expr[ident.end() :].lstrip().startswith("(") else ""
            out.append(word)
            i = ident.end()
            continue
        if char == "(" and after_list_keyword:
            end = expr.find(")", i)
            end = len(expr) if end < 0 else end + 1
            text, renamed, reason = _label_list(expr[i:end], renames)
            if reason:
                return Relabelled(expr, 0, reason)
            out.append(text)
            count += renamed
            i, after_list_keyword = end, False
            continue
        if char == "(":
            calls.append([pending, 0])
            pending = ""
        elif char == ")" and calls:
            calls.pop()
        elif char == "," and calls:
            calls[-1][1] = int(str(calls[-1][1])) + 1
        if not char.isspace():
            after_list_keyword = False
        out.append(char)
        i += 1
    return Relabelled("".join(out), count)


def relabel_legend(legend: str, renames: dict[str, str]) -> str:
    """A legend format's ``{{name}}`` written with the new label name."""
    if not renames:
        return legend
    return re.sub(
        r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}",
        lambda m: "{{" + renames.get(m.group(1), m.group(1)) + "}}" if m.group(1) in renames else m.group(0),
        legend,
    )


LABEL_VALUES = re.compile(r"^(?P<head>\s*label_values\s*\()(?P<args>.*)\)\s*$", re.DOTALL)


def relabel_variable_query(query: str, renames: dict[str, str]) -> Relabelled:
    """A Grafana variable query with the new label names: ``label_values(<selector>, label)``'s selector and
    label, ``query_result(...)``'s expression, a bare expression."""
    found = LABEL_VALUES.match(query)
    if not renames or not found:
        return relabel_expr(query, renames) if renames and query.strip() else Relabelled(query, 0)
    head, comma, label = found.group("args").rpartition(",")
    name = (label if comma else found.group("args")).strip()
    if VARIABLE.fullmatch(name):
        return Relabelled(query, 0, f"the label is the Grafana variable {name}")
    count = int(name in renames)
    new_label = renames.get(name, name)
    if not comma:
        return Relabelled(f"{found.group('head')}{new_label})", count)
    inner = relabel_expr(head, renames)
    if inner.reason:
        return inner
    return Relabelled(f"{found.group('head')}{inner.expr}, {new_label})", count + inner.renamed)
