"""Shape checks of the profile strings that reach PromQL, and the bounds of every count.

A profile string that ends up inside a query is either checked against a safe alphabet here
(node names, node addresses, job names, mount points) or escaped where it is written
(``queries.promql.matcher`` / ``string_literal``); a regex field is compiled with the RE2 syntax
Prometheus and VictoriaMetrics use: constructs Python's ``re`` accepts but RE2 refuses (look-arounds,
back-references, atomic groups, possessive quantifiers, conditionals) are rejected by name. Every
check is linear in the size of what it checks.
"""

from __future__ import annotations

import re

# node names and segment addresses: host names, IPs (v4 / v6) and the usual separators, no quotes or regex
NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,252}\Z")
NODE_FORM = "letters, digits and . _ : - (a host name or an IP), starting with a letter or digit, ≤ 253 characters"
# scrape job names: what Prometheus configs and Kubernetes service monitors write (namespace/name ...)
JOB_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:/@+-]{0,127}\Z")
JOB_FORM = "letters, digits and . _ : / @ + - , ≤ 128 characters"
MOUNT_RE = re.compile(r"^/[A-Za-z0-9_.@+/-]{0,255}\Z")
MOUNT_FORM = "an absolute path of letters, digits and . _ @ + - /, ≤ 256 characters"

MAX_NODES = 100_000
MAX_GPUS_PER_NODE = 64
MAX_COUNT = 1_000_000  # replicas, tp, pp
MAX_REGEX = 512

# (what Python's re accepts, what it is called) that RE2 refuses
_RE2_REFUSED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\(\?="), "a lookahead (?=...)"),
    (re.compile(r"\(\?!"), "a negative lookahead (?!...)"),
    (re.compile(r"\(\?<="), "a lookbehind (?<=...)"),
    (re.compile(r"\(\?<!"), "a negative lookbehind (?<!...)"),
    (re.compile(r"\(\?>"), "an atomic group (?>...)"),
    (re.compile(r"\(\?\("), "a conditional (?(...)...)"),
    (re.compile(r"\(\?P="), "a named back-reference (?P=...)"),
    (re.compile(r"\\[1-9]"), "a back-reference \\1..\\9"),
    (re.compile(r"\\Z"), "\\Z (RE2 writes \\z)"),
    (re.compile(r"(?<!\\)[*+?}]\+"), "a possessive quantifier (*+, ++, ?+)"),
    (re.compile(r"\(\?#"), "a comment group (?#...)"),
)


def re2_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression Prometheus (RE2) accepts, or None when it is."""
    if len(pattern) > MAX_REGEX:
        return f"{len(pattern)} characters, over the limit of {MAX_REGEX}"
    if any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in pattern):
        return "contains control characters"
    if '"' in pattern or "`" in pattern:
        return "contains a quote: a device name never does, and the regex is written inside a PromQL string"
    if "$" in pattern:
        return (
            "contains '$': Grafana reads it as a variable, and PromQL matchers are anchored already "
            "(write 'nvme[0-9]+n1', not '^nvme[0-9]+n1$')"
        )
    unescaped = re.sub(r"\\\\", "", pattern)  # an escaped backslash cannot start a construct
    for construct, name in _RE2_REFUSED:
        if construct.search(unescaped):
            return f"uses {name}, which RE2 (Prometheus, VictoriaMetrics) does not support"
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        return f"not a valid regular expression: {exc}"
    return None


def name_problem(value: object, pattern: re.Pattern[str], form: str) -> str | None:
    """Why ``value`` is not a string of ``pattern``'s alphabet (``form`` says which), or None."""
    if not isinstance(value, str):
        return f"expected a string ({form}), got {type(value).__name__}"
    if not pattern.match(value):
        shown = value if len(value) <= 80 else value[:77] + "..."
        return f"{shown!r} is not allowed: use {form}"
    return None


def first_duplicate(values: list[str]) -> str | None:
    """The first value that occurs twice, in one pass."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None
