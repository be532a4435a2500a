"""Parsing the TOML and JSON text a person gave dashgen, with nesting too deep to read as one more parse error.

Python's parsers recurse once per level of nesting, so ``[[[[...]]]]`` a hundred thousand deep raises
``RecursionError``, which no reader expects. :func:`parse_toml` and :func:`parse_json` turn it into
:class:`NestedTooDeeply`, a ``ValueError`` as ``tomllib.TOMLDecodeError`` and ``json.JSONDecodeError`` are: a
reader catches ``ValueError`` once and names its file, instead of a branch of its own for the recursion.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

NESTED_TOO_DEEPLY = "nested too deeply to read"


class NestedTooDeeply(ValueError):
    """The text nests deeper than Python's parser can recurse (its message: :data:`NESTED_TOO_DEEPLY`)."""

    def __init__(self) -> None:
        super().__init__(NESTED_TOO_DEEPLY)


def parse_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; raises ``tomllib.TOMLDecodeError`` or :class:`NestedTooDeeply` (both ValueError)."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise NestedTooDeeply() from None


def parse_json(text: str | bytes, **hooks: Any) -> Any:
    """``json.loads(text, **hooks)``; raises ``json.JSONDecodeError`` (or a hook's error), or
    :class:`NestedTooDeeply`: all ValueError unless a hook raises otherwise."""
    try:
        return json.loads(text, **hooks)
    except RecursionError:
        raise NestedTooDeeply() from None
