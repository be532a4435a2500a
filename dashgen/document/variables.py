"""Grafana's variable syntax: the one substitution core every expander calls.

A reference is ``$name``, ``${name}``, ``${name:format}`` or ``[[name]]`` / ``[[name:format]]``.
:func:`substitute` finds each reference and asks a *policy* (a callable) for its replacement; the
policies live with their callers: lint's placeholder values (``dashgen.lint.promql``) and the
live data source's real Grafana values (``dashgen.live.expand``). A policy that answers None
declines the reference: its text stays and the scan resumes one character later, so a malformed
``${a b $c}`` still has ``$c`` expanded. :func:`variable_name` reads a whole string that is one
``$`` reference (a data-source uid such as ``${datasource}``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# ``${...}`` and ``[[...]]`` take any text up to the closing bracket; a policy decides what it accepts.
REFERENCE_RE = re.compile(r"\$(\w+)|\$\{([^}]+)\}|\[\[([^\[\]]+)\]\]")
_WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Reference:
    """One variable reference: ``name`` and ``format`` split at the first colon of the bracketed text."""

    text: str  # as written, e.g. "${node:regex}"
    name: str
    format: str | None  # None when there is no colon; "" for "${name:}"

    @property
    def is_plain(self) -> bool:
        """True when the name is a word and the format absent or a word (Grafana's backend accepts only these)."""
        return _WORD_RE.fullmatch(self.name) is not None and (
            self.format is None or _WORD_RE.fullmatch(self.format) is not None
        )


Policy = Callable[[Reference], str | None]


def reference(match: re.Match[str]) -> Reference:
    """The :class:`Reference` of a :data:`REFERENCE_RE` match."""
    token = match.group(1) or match.group(2) or match.group(3)
    name, colon, fmt = token.partition(":")
    return Reference(text=match.group(0), name=name, format=fmt if colon else None)


def _substitute(text: str, policy: Policy) -> str:
    pieces: list[str] = []
    kept = 0  # text[kept:] is not yet copied to pieces
    scan = 0
    while (match := REFERENCE_RE.search(text, scan)) is not None:
        value = policy(reference(match))
        if value is None:
            scan = match.start() + 1
            continue
        pieces += [text[kept : match.start()], value]
        kept = scan = match.end()
    pieces.append(text[kept:])
    return "".join(pieces)


def substitute(text: str, policy: Policy, *, skip_double_quoted: bool = False) -> str:
    """Replace every variable reference in ``text`` by ``policy(reference)`` (None keeps it as written).

    With ``skip_double_quoted`` the text between double quotes is left alone (dashboard-linter's rule:
    a matcher value such as ``node=~"$node"`` stays a valid string whatever the variable holds).
    """
    if not skip_double_quoted:
        return _substitute(text, policy)
    pieces = text.split('"')
    for i in range(0, len(pieces), 2):  # even pieces are outside double quotes
        pieces[i] = _substitute(pieces[i], policy)
    return '"'.join(pieces)


def variable_name(text: str | None) -> str | None:
    """``$name`` / ``${name}`` / ``${name:fmt}`` → ``name``; anything else → None."""
    if not text or not text.startswith("$"):
        return None
    if text.startswith("${") and text.endswith("}"):
        return text[2:-1].split(":", 1)[0]
    rest = text[1:]
    return rest if rest.replace("_", "a").isalnum() else None
