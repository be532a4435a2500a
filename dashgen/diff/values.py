"""How one changed value is shown: the part that changed, never two equal truncated prefixes.

:func:`describe_change` renders one ``(path, old, new)`` leaf change:

* a short value on both sides: one line, ``path: old -> new``;
* a query (a field named ``expr``, ``query`` or ``definition``) that parses as PromQL: both sides
  formatted one clause per line (``promql_format``), then a line diff (``-`` / ``+`` / context
  lines, long unchanged stretches folded to ``… N unchanged lines``) with the changed words of
  each replaced line marked: ``[-old-]`` / ``{+new+}``, or reverse video when ``color``;
* any other long string: the changed regions of both sides with 40 characters of context each
  side, unchanged stretches folded to ``…`` (a multi-line text is diffed line by line);
* with ``markdown`` the block is a fenced ``diff`` code block (GitHub colours its lines).

:func:`first_difference` names the first path at which two JSON documents differ and shows both
values around the difference, in one line (a publish's verify-failure message). Both are pure.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from dashgen.diff.compare import ABSENT
from dashgen.diff.promql_format import format_promql
from dashgen.escape import inline_text, markdown_code, markdown_fenced

SHORT_VALUE = 80  # a JSON text up to this long is shown whole, on one line
LONG_LINE = 120  # a diff line longer than this has its unchanged stretches folded
CONTEXT_CHARS = 40  # characters of unchanged text kept each side of a change in a folded line
CONTEXT_LINES = 2  # unchanged lines kept each side of a changed block
ONE_SIDED_LINES = 40  # an added or removed long value shows at most this many lines
QUERY_FIELDS = frozenset({"expr", "query", "definition"})

# A short label matcher (``node=~"$node"``) is one word, so a reordered or renamed matcher reads as one
# change; longer quoted values (node lists) and everything else split at word boundaries.
_TOKEN = re.compile(r'\w+\s*(?:=~|!~|!=|=)\s*"(?:[^"\\\n]|\\.){0,60}"|\w+|\s+|[^\w\s]')
_LAST_SEGMENT = re.compile(r"([A-Za-z_]\w*)(?:\[\d+\])*$")
_RED, _GREEN, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[0m"
_ON, _OFF = "\x1b[7m", "\x1b[27m"
COLOURS = (_RED, _GREEN, _RESET, _ON, _OFF)  # the only control sequences a coloured diff may carry


def json_text(value: Any) -> str:
    """A value as its JSON text (``(absent)`` for a missing side)."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _marks(color: bool, side: str) -> tuple[str, str]:
    if color:
        return _ON, _OFF
    return ("[-", "-]") if side == "old" else ("{+", "+}")


def _fold(text: str, first: bool, last: bool, context: int) -> str:
    """An unchanged stretch: kept whole when short, else its ends around ``…``."""
    if len(text) <= 2 * context + 1:
        return text
    if first and last:  # a line with no change in it: its two ends
        return f"{text[:context]}…{text[-context:]}"
    head = "" if first else text[:context]
    tail = "" if last else text[-context:]
    return f"{head}…{tail}"


def _tokens(lines: list[str], chars: bool = False) -> list[tuple[int, str]]:
    return [(n, token) for n, line in enumerate(lines) for token in (line if chars else _TOKEN.findall(line))]


Changes = tuple[set[int], set[int]]  # indexes of changed tokens, indexes of tokens the other side inserts before


EXACT_TOKENS = 4000  # a longer changed middle is matched with difflib's popular-token heuristic (autojunk)


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes of ``a`` against ``b``: the common head and tail are matched by a linear scan, and only
    the middle goes to SequenceMatcher — exactly up to ``EXACT_TOKENS`` tokens a side, with autojunk beyond (its
    exact search is quadratic: a 16,000-token expression took 18 s, 40,000 over a minute)."""
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    exact = max(len(mid_a), len(mid_b)) <= EXACT_TOKENS
    out = [("equal", 0, head, 0, head)] if head else []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=not exact).get_opcodes():
        out.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        out.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return out


def _changed_tokens(
    a: list[tuple[int, str]], b: list[tuple[int, str]], spaces: bool = False
) -> tuple[Changes, Changes]:
    """Per side: the tokens that are not matched (whitespace compared as nothing unless ``spaces``), and
    the insertion points."""
    keep_a = [i for i, (_, t) in enumerate(a) if spaces or not t.isspace()]
    keep_b = [j for j, (_, t) in enumerate(b) if spaces or not t.isspace()]
    changed_a: set[int] = set()
    changed_b: set[int] = set()
    points_a: set[int] = set()
    points_b: set[int] = set()
    for tag, i1, i2, j1, j2 in _opcodes([a[i][1] for i in keep_a], [b[j][1] for j in keep_b]):
        if tag == "equal":
            continue
        changed_a.update(keep_a[i1:i2])
        changed_b.update(keep_b[j1:j2])
        if i1 == i2:
            points_a.add(keep_a[i1] if i1 < len(keep_a) else len(a))
        if j1 == j2:
            points_b.add(keep_b[j1] if j1 < len(keep_b) else len(b))
    return (changed_a, points_a), (changed_b, points_b)


def _rebuild(
    lines: list[str],
    tokens: list[tuple[int, str]],
    changes: Changes,
    marks: tuple[str, str],
    fold: bool | None,
    context: int,
) -> list[str]:
    """Each line from its tokens: runs of changed tokens (and the spaces between them) inside ``marks``;
    where the other side inserts, the unchanged text is split so the fold keeps context around it."""
    on, off = marks
    changed, points = changes
    pieces: list[list[tuple[str, bool]]] = [[] for _ in lines]
    for index, (line, token) in enumerate(tokens):
        marked = index in changed
        run = pieces[line]
        if index in points:
            run.append(("", True))
        if token.isspace() and run and run[-1][1] and index + 1 in changed and tokens[index + 1][0] == line:
            marked = True  # a space between two changed words stays inside the mark
        if run and run[-1][1] == marked and run[-1][0]:
            run[-1] = (run[-1][0] + token, marked)
        else:
            run.append((token, marked))
    if len(tokens) in points and lines:
        pieces[-1].append(("", True))
    out = []
    for source_line, run in zip(lines, pieces, strict=True):
        folding = len(source_line) > LONG_LINE if fold is None else fold
        text = []
        for k, (piece, marked) in enumerate(run):
            if marked:
                text.append(on + piece + off if piece else "")
            else:
                text.append(_fold(piece, k == 0, k == len(run) - 1, context) if folding else piece)
        out.append("".join(text))
    return out


def mark_lines(
    old_lines: list[str],
    new_lines: list[str],
    *,
    color: bool = False,
    fold: bool | None = None,
    context: int = CONTEXT_CHARS,
) -> tuple[list[str], list[str]]:
    """Both blocks with their changed words marked, compared across line breaks (a query re-wrapped by the
    formatter marks only what changed); a long line has its unchanged stretches folded. When words are
    too coarse (a long run of letters with one changed), characters are compared instead."""
    a, b = _tokens(old_lines), _tokens(new_lines)
    changes_a, changes_b = _changed_tokens(a, b)
    if not (changes_a[0] or changes_b[0] or changes_a[1] or changes_b[1]) and old_lines != new_lines:
        changes_a, changes_b = _changed_tokens(a, b, spaces=True)  # only spacing differs: show where
    size = sum(map(len, old_lines)) + sum(map(len, new_lines))
    marked = sum(len(a[i][1]) for i in changes_a[0]) + sum(len(b[j][1]) for j in changes_b[0])
    if size > LONG_LINE and marked > size / 2 and size < 20_000:
        a, b = _tokens(old_lines, chars=True), _tokens(new_lines, chars=True)
        changes_a, changes_b = _changed_tokens(a, b)
    return (
        _rebuild(old_lines, a, changes_a, _marks(color, "old"), fold, context),
        _rebuild(new_lines, b, changes_b, _marks(color, "new"), fold, context),
    )


def inline_pair(
    old: str, new: str, *, color: bool = False, fold: bool | None = None, context: int = CONTEXT_CHARS
) -> tuple[str, str]:
    """Both texts with their changed words marked and, when long, their unchanged stretches folded."""
    (marked_old,), (marked_new,) = mark_lines([old], [new], color=color, fold=fold, context=context)
    return marked_old, marked_new


def _paint(line: str, sign: str, color: bool) -> str:
    text = f"{sign} {line}"
    if not color or sign == " ":
        return text
    return f"{_RED if sign == '-' else _GREEN}{text}{_RESET}"


def block_diff(
    old_lines: list[str],
    new_lines: list[str],
    *,
    color: bool = False,
    context: int = CONTEXT_LINES,
    ignore_indent: bool = False,
) -> list[str]:
    """A line diff: ``- `` / ``+ `` / ``  `` lines, replaced lines with their changed words marked.

    With ``ignore_indent`` (formatted PromQL, where a new outer operator re-indents the whole query)
    lines are matched without their indentation and an unchanged line is shown as it is on the new side.
    """
    out: list[str] = []
    keys_old = [line.strip() for line in old_lines] if ignore_indent else old_lines
    keys_new = [line.strip() for line in new_lines] if ignore_indent else new_lines
    opcodes = difflib.SequenceMatcher(None, keys_old, keys_new, autojunk=False).get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            same = new_lines[j1:j2]
            keep_head = 0 if index == 0 else context
            keep_tail = 0 if index == len(opcodes) - 1 else context
            if len(same) <= keep_head + keep_tail + 1:
                out += [_paint(line, " ", color) for line in same]
                continue
            out += [_paint(line, " ", color) for line in same[:keep_head]]
            out.append(f"  … {len(same) - keep_head - keep_tail} unchanged line(s)")
            out += [_paint(line, " ", color) for line in same[len(same) - keep_tail :]]
            continue
        olds, news = old_lines[i1:i2], new_lines[j1:j2]
        if olds and news:
            olds, news = mark_lines(olds, news, color=color)
        out += [_paint(line, "-", color) for line in olds]
        out += [_paint(line, "+", color) for line in news]
    return out


def _field_name(path: str) -> str:
    match = _LAST_SEGMENT.search(path)
    return match.group(1) if match else ""


def _as_lines(value: str, query: bool) -> tuple[list[str], bool]:
    """(lines, formatted as PromQL)."""
    if query and (formatted := format_promql(value)) is not None:
        return formatted, True
    return (value.splitlines() or [""]) if "\n" in value else [value], False


def _value_lines(path: str, old: Any, new: Any, color: bool) -> list[str] | None:
    """The diff lines of a change that needs more than one line, or None when one line shows it whole."""
    old_text, new_text = json_text(old), json_text(new)
    if len(old_text) <= SHORT_VALUE and len(new_text) <= SHORT_VALUE and "\\n" not in old_text + new_text:
        return None
    query = _field_name(path) in QUERY_FIELDS
    if isinstance(old, str) and isinstance(new, str):
        old_lines, old_query = _as_lines(old, query)
        new_lines, new_query = _as_lines(new, query)
        promql = old_query and new_query
        if not promql or [x.strip() for x in old_lines] == [x.strip() for x in new_lines]:
            # one side is not PromQL, or both format alike (only spacing or spelling differs): the text itself
            old_lines, new_lines, promql = _as_lines(old, False)[0], _as_lines(new, False)[0], False
        if len(old_lines) == len(new_lines) == 1:
            marked_old, marked_new = inline_pair(old_lines[0], new_lines[0], color=color)
            return [_paint(marked_old, "-", color), _paint(marked_new, "+", color)]
        return block_diff(old_lines, new_lines, color=color, ignore_indent=promql)
    one_sided = new if old is ABSENT or old is None else old if new is ABSENT or new is None else None
    if isinstance(one_sided, str):
        sign = "+" if one_sided is new else "-"
        lines = _as_lines(one_sided, query)[0]
        shown = [_paint(line, sign, color) for line in lines[:ONE_SIDED_LINES]]
        if len(lines) > ONE_SIDED_LINES:
            shown.append(f"  … {len(lines) - ONE_SIDED_LINES} more line(s)")
        other = json_text(old if one_sided is new else new)
        return [_paint(other, "+" if sign == "-" else "-", color), *shown]
    marked_old, marked_new = inline_pair(old_text, new_text, color=color)
    return [_paint(marked_old, "-", color), _paint(marked_new, "+", color)]


def describe_change(
    path: str, old: Any, new: Any, *, markdown: bool = False, color: bool = False, label: str = ""
) -> list[str]:
    """One changed value as lines: a single ``path: old -> new`` line, or a header and a diff block.

    ``label`` (for example ``[query]``) is put before the path; ``color`` adds ANSI colours (text
    only, for a terminal); ``markdown`` gives inline code for short values and a fenced ``diff``
    block for long ones. The caller indents the lines.
    """
    prefix = f"{label} " if label else ""
    lines = _value_lines(path, old, new, color and not markdown)
    if markdown:
        if lines is None:
            return [f"{prefix}{markdown_code(path)}: {markdown_code(json_text(old))} → {markdown_code(json_text(new))}"]
        return [f"{prefix}{markdown_code(path)}:", "```diff", *(markdown_fenced(line) for line in lines), "```"]
    if lines is None:
        return [f"{prefix}{inline_text(path)}: {json_text(old)} -> {json_text(new)}"]
    return [f"{prefix}{inline_text(path)}:", *lines]


def _join(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"


def _first(old: Any, new: Any, path: str) -> tuple[str, Any, Any] | None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            found = _first(old.get(key, ABSENT), new.get(key, ABSENT), _join(path, str(key)))
            if found is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            a = old[index] if index < len(old) else ABSENT
            b = new[index] if index < len(new) else ABSENT
            found = _first(a, b, _join(path, index))
            if found is not None:
                return found
        return None
    if type(old) is type(new) and old == new:  # 1 vs 1.0 and 1 vs true differ in the bytes, so here too
        return None
    return path, old, new


def _plain(value: Any) -> str:
    """A string in quotes as it is (no JSON escaping, so a query reads as written); anything else as JSON."""
    return f'"{value}"' if isinstance(value, str) else json_text(value)


def first_difference(
    old_doc: Any,
    new_doc: Any,
    *,
    old_label: str = "old",
    new_label: str = "new",
    ignore: Collection[str] = ("id", "version"),
) -> str:
    """The first path (in sorted key order) where two JSON documents differ, with both values around it.

    One line, for example ``$.panels[3].targets[0].expr: sent "…x[-2-]" stored "…x{+3+}"``; a long
    value is cut to its changed region with context. Top-level ``ignore`` keys (the server-owned
    ``id`` and ``version``) are skipped. ``""`` when the documents are equal.
    """
    if isinstance(old_doc, Mapping) and isinstance(new_doc, Mapping):
        old_doc = {k: v for k, v in old_doc.items() if k not in ignore}
        new_doc = {k: v for k, v in new_doc.items() if k not in ignore}
    found = _first(old_doc, new_doc, "$")
    if found is None:
        return ""
    path, old, new = found
    old_text, new_text = _plain(old), _plain(new)
    if max(len(old_text), len(new_text)) > SHORT_VALUE:
        old_text, new_text = inline_pair(old_text, new_text, fold=True)
    return f"{path}: {old_label} {old_text} {new_label} {new_text}"
