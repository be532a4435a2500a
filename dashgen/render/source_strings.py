"""Whether a test module can select any panel of the index, read by a lexer instead of the parser: an uncached
panel index parsed every test module (~1.4 MB, most of a first ``check``'s extra CPU), and most of them name no
panel at all.

A test selects a panel by a whole string equal to its key or title, a ``startswith`` argument or an f-string's
leading text that begins one, or an f-string whose placeholders expand to one (``dashgen.panel_index``). Every such
string is made of the module's string literals, so the lexer reads only those: each string token (prefixes, triple
quotes, escapes) and each run of adjacent tokens (implicit concatenation, both ways where a line break may end the
statement between them), evaluated by Python's own parser as one small list expression. From them it answers
conservatively: False only when no literal equals a key or title, no ``startswith`` literal (or, where an argument
is a collection or a name a loop or a module-level statement binds, no literal at all) begins one, and no f-string
can begin or expand to one. Where it cannot tell (a quote outside a token, an identifier that is not ASCII, a
coding line, a run Python refuses), the module may select: the caller parses it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass

from dashgen.render.syntax_nodes import nodes_under

SHORTEST_FSTRING_PREFIX = 6  # an f-string's leading text selects only from this length (dashgen.panel_index)

# A comment, or a string token without its prefix (read from the code before it): triple-quoted first (else ``''``
# would end ``'''``), escapes taken whole. Split on these, a module alternates code, comment, string.
_TOKEN = re.compile(
    r"(#[^\r\n]*)|('''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\r\n])*'|\"(?:\\.|[^\"\\\r\n])*\")",
    re.DOTALL,
)
_PREFIX = re.compile(r"(?<!\w)(?:[uU]|[rR][fFbB]?|[fFbB][rR]?)$")
_BLANK = re.compile(r"(?:[ \t\f]|\\\r?\n)*")  # between two tokens of one statement
_SOFT = re.compile(r"(?:\s|\\\r?\n)*")  # a line break too: maybe one statement (in brackets), maybe two
_BLANKS = r"(?:\s|\\\r?\n)*"
# a startswith call's first argument as the code outside strings shows it: a name, or a tuple / list / set. Each
# pattern that looks for a word starts with the word itself and checks the character before it after (``\w`` +
# the word behind): a leading look-behind made the regex engine try it at every character of every module (most of
# an uncached index's lexing), where a leading literal lets it jump from one occurrence of the word to the next
_STARTSWITH = re.compile(rf"startswith(?<!\wstartswith){_BLANKS}\({_BLANKS}(?:([A-Za-z_]\w*){_BLANKS}[,)]|([(\[{{]))")
_CALL_OPENS = re.compile(r"startswith(?<!\wstartswith)\s*\(\s*$")
_ARG_ENDS = re.compile(r"\s*[,)]")
_PREFIX_LETTERS = frozenset("rRbBuUfF")
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.M)


@dataclass(frozen=True)
class Strings:
    """The string literals of one module: every str value (f-string pieces too), its f-strings, the literal first
    arguments of its ``startswith`` calls, and whether some call's argument may hold other strings (a collection,
    a name a loop or a module-level statement binds)."""

    values: frozenset[str]
    fstrings: tuple[ast.JoinedStr, ...]
    starts: frozenset[str]
    other_starts: bool
    code: str = ""  # the module's text outside its strings and comments


def _spans(segments: list[list[int]]) -> list[tuple[int, int]]:
    """Every run of tokens (first, last index) that one group of adjacent tokens may concatenate: the segments
    between its line breaks are each whole (tokens on one line always concatenate), and a line break may end the
    statement or sit inside brackets, so every span of whole segments is a run."""
    return [(segments[i][0], segments[j][-1]) for i in range(len(segments)) for j in range(i, len(segments))]


def strings_of(source: bytes) -> Strings | None:
    """The module's string literals, or None where the lexer does not judge (see the module docstring)."""
    if _CODING.search(b"\n".join(source.split(b"\n", 2)[:2])):
        return None
    try:
        text = source.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    parts = _TOKEN.split(text)
    tokens: list[str] = []  # each with its prefix
    code: list[str] = []  # the code before each string token (comments blanked), then the code after the last one
    pending: list[str] = []
    for at in range(0, len(parts) - 1, 3):
        before, comment, string = parts[at], parts[at + 1], parts[at + 2]
        if comment is not None:
            pending += (before, " ")
            continue
        if before[-1:] in _PREFIX_LETTERS and (prefix := _PREFIX.search(before)):
            before, string = before[: prefix.start()], prefix.group() + string
        code.append("".join((*pending, before)))
        pending = []
        tokens.append(string)
    code.append("".join((*pending, parts[-1])))
    every_code = "".join(code)
    if "'" in every_code or '"' in every_code or not every_code.isascii():
        return None  # an unclosed string, or an identifier Python reads after normalising it
    groups: list[list[list[int]]] = []  # adjacent tokens, as segments between line breaks
    for index in range(len(tokens)):
        gap = code[index]
        if index and (not gap or gap.isspace() or "\\" in gap) and _SOFT.fullmatch(gap):
            if _BLANK.fullmatch(gap):
                groups[-1][-1].append(index)
            else:
                groups[-1].append([index])
        else:
            groups.append([[index]])
    values: set[str] = set()
    hard: list[tuple[int, int]] = []  # runs read by Python's parser: an f-string, an escape, bytes
    plains = [_plain(token) for token in tokens]
    for segments in groups:
        if len(segments) == 1 and len(segments[0]) == 1:  # most tokens stand alone
            index = segments[0][0]
            if plains[index] is not None:
                values.add(plains[index])  # type: ignore[arg-type]
            else:
                hard.append((index, index))
            continue
        for first, last in _spans(segments):
            plain = plains[first : last + 1]
            if None not in plain:
                values.add("".join(plain))  # type: ignore[arg-type]
            elif len({_is_bytes(token) for token in tokens[first : last + 1]}) == 1:  # bytes and str never concatenate
                hard.append((first, last))
    listing = "[\n" + ",\n".join("(" + "\n".join(tokens[first : last + 1]) + ")" for first, last in hard) + "\n]"
    try:
        parsed = ast.parse(listing, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    element = dict(zip(hard, parsed.elts if isinstance(parsed, ast.List) else [], strict=True))
    fstrings: list[ast.JoinedStr] = []
    inner_calls: list[ast.expr] = []  # the first arguments of startswith calls inside f-string placeholders
    for node in element.values():
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                values.add(node.value)
            continue
        for inner in nodes_under(node):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                values.add(inner.value)
            elif isinstance(inner, ast.JoinedStr):
                fstrings.append(inner)
            elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.args:
                inner_calls += [inner.args[0]] if inner.func.attr == "startswith" else []
    starts: set[str] = {
        arg.value for arg in inner_calls if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }
    for segments in groups:  # a whole group right after ``startswith(`` and before ``,`` or ``)``: its first argument
        first, last = segments[0][0], segments[-1][-1]
        if "startswith" in code[first] and _CALL_OPENS.search(code[first]) and _ARG_ENDS.match(code[last + 1]):
            plain = plains[first : last + 1]
            found = element.get((first, last))
            argument = "".join(plain) if None not in plain else found.value if isinstance(found, ast.Constant) else None  # type: ignore[arg-type]
            if isinstance(argument, str):
                starts.add(argument)
    # an argument the index reads strings from, other than a literal: a collection, or a name bound to strings (a
    # parameter or any other expression gives it none; a literal, whole, is read above)
    arguments = _STARTSWITH.findall(every_code)
    other = any(collection for _, collection in arguments) or any(not isinstance(a, ast.Constant) for a in inner_calls)
    if not other and any(name for name, _ in arguments):
        other = bool({name for name, _ in arguments} & _string_names(every_code))
    return Strings(frozenset(values), tuple(fstrings), frozenset(starts), other, every_code)


def _is_bytes(token: str) -> bool:
    return "b" in token[: token.find(token[-1])].lower()


def _plain(token: str) -> str | None:
    """The value of a str token Python would read as written (no f-string, no escape unless raw), else None."""
    first = token[0]
    if first in "'\"" and "\\" not in token:  # most tokens: no prefix, no escape
        return token[3:-3] if len(token) >= 6 and token.startswith(first * 3) else token[1:-1]
    quote = token.find(token[-1])
    prefix = token[:quote].lower()
    if "f" in prefix or "b" in prefix or ("\\" in token and "r" not in prefix):
        return None
    width = 3 if token[quote : quote + 3] in ("'''", '"""') and len(token) - quote >= 6 else 1
    return token[quote + width : -width]


def heads_of(names: Collection[str]) -> frozenset[str]:
    """Every non-empty prefix of every name."""
    return frozenset(name[:end] for name in names for end in range(1, len(name) + 1))


def may_select(source: bytes, names: frozenset[str], heads: frozenset[str]) -> bool:
    """Whether the module ``source`` can select a panel whose key or title is one of ``names`` (``heads``: their
    prefixes, :func:`heads_of`). False only where it surely cannot."""
    found = strings_of(source)
    if found is None:
        return True
    values = found.values
    if values & names or found.starts & heads or (found.other_starts and values & heads):
        return True
    joined = "\n".join(names)
    some_head = bool(values & heads)
    bound: frozenset[str] | None = None  # read once, when an f-string needs it
    for fstring in found.fstrings:
        if not fstring.values:
            continue
        first = fstring.values[0]
        lead = str(first.value) if isinstance(first, ast.Constant) else None
        if lead is not None and len(lead) >= SHORTEST_FSTRING_PREFIX and lead in heads:
            return True
        expands = all(
            isinstance(part, ast.Constant)
            or (
                isinstance(part, ast.FormattedValue)
                and isinstance(part.value, ast.Name)
                and part.format_spec is None
                and part.value.id in (bound := _string_names(found.code) if bound is None else bound)
            )
            for part in fstring.values
        )
        if not expands or not (lead in heads if lead is not None else some_head):
            continue
        pieces = [str(part.value) for part in fstring.values if isinstance(part, ast.Constant) and part.value]
        if all(piece in joined for piece in pieces) and _expands_to_one(fstring, joined):
            return True
    return False


def _expands_to_one(fstring: ast.JoinedStr, joined: str) -> bool:
    """Whether some line of ``joined`` (one name a line) is the f-string with each placeholder replaced by any text
    without a line break (what the index expands it to is one of the module's strings: any text, conservatively)."""
    pattern = "".join(
        re.escape(str(part.value)) if isinstance(part, ast.Constant) else "[^\n]*" for part in fstring.values
    )
    return re.search(f"^{pattern}$", joined, re.M) is not None


_LOOP_TARGET = re.compile(r"for(?<!\wfor)\b[\s(\\]*([A-Za-z_]\w*)[\s)\\]*\bin(?!\w)")
# a module-level statement starts a line (no indent) or follows a ``;``; its target may stand in brackets
# (``(GROUP) = "slo_health"`` is a constant to the index too), across lines within them. Read from the line break
# before the line (the text gets one in front): a pattern starting with one of two characters is tried only where
# they stand, ``^`` at every character
_STATEMENT_TARGET = re.compile(r"(?:\n|;[ \t]*)(?:\\\r?\n)*(?:\([\s(\\]*)?([A-Za-z_]\w*)[\s)\\]*(?::|=(?!=))")


def _string_names(code: str) -> frozenset[str]:
    """The names a placeholder can expand by where the index expands it: loop variables (``for name in``, anywhere)
    and module constants (``name =`` or ``name: T =`` starting a statement at the module's level; any line or ``;``
    that starts so counts, conservatively). A parameter, an imported name, or a name assigned only inside a
    function leaves the f-string unexpanded."""
    return frozenset(_LOOP_TARGET.findall(code)) | frozenset(_STATEMENT_TARGET.findall("\n" + code))
