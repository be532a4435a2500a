"""Typed reads from a parsed TOML table: every wrong field is a ``ProfileError`` naming file and dotted field."""

from __future__ import annotations

import difflib
import math
import re
from typing import Any

from dashgen.deployment.sizes import parse_size
from dashgen.errors import ProfileError

_DURATION_RE = re.compile(r"^([0-9]+)(ms|s|m|h)\Z")
_DURATION_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> float:
    """Seconds from a Prometheus-style duration with one unit (``"1s"``, ``"30s"``, ``"5m"``)."""
    match = _DURATION_RE.match(text)
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"expected a duration like '1s', '15s' or '5m', got {text!r}")
    return int(match.group(1)) * _DURATION_SECONDS[match.group(2)]


def _shown(value: Any) -> str:
    """A value for a message: its repr, cut to 80 characters (a huge number or string never floods the line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**40:
        return "a number with more than 40 digits"
    text = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


class TableReader:
    """Reads typed fields from a TOML table, raising ProfileError that names file and field.

    Every key read is remembered, so ``reject_unknown`` can refuse misspelt fields.
    """

    def __init__(self, path: str, table: dict[str, Any], prefix: str = "") -> None:
        self.path = path
        self.table = table
        self.prefix = prefix
        self.used: set[str] = set()

    def name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def fail(self, key: str, message: str) -> ProfileError:
        return ProfileError(self.path, self.name(key), message)

    def _get(self, key: str, default: Any, required: bool) -> Any:
        self.used.add(key)
        if key not in self.table:
            if required:
                raise self.fail(key, "missing required field")
            return default
        return self.table[key]

    def value(self, key: str, default: Any = None) -> Any:
        """The field as TOML gave it (the caller checks its type)."""
        return self._get(key, default, False)

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str:
        value = self._get(key, default, required)
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {type(value).__name__} {_shown(value)}")
        return value

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self._get(key, default, False)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {type(value).__name__} {_shown(value)}")
        return value

    def integer(
        self,
        key: str,
        default: int | None = None,
        *,
        required: bool = False,
        minimum: int = 1,
        maximum: int = 1_000_000,
    ) -> int:
        value = self._get(key, default, required)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {type(value).__name__} {_shown(value)}")
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum}, got {_shown(value)}")
        if value > maximum:
            raise self.fail(key, f"must be at most {maximum}, got {_shown(value)}")
        return value

    def number(self, key: str, default: float | None = None, *, required: bool = False) -> float | None:
        value = self._get(key, default, required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number, got {type(value).__name__} {_shown(value)}")
        if isinstance(value, int) and value > 10**15:
            raise self.fail(key, f"must be at most 1e15, got {_shown(value)}")
        if not math.isfinite(value) or value <= 0:
            raise self.fail(key, f"must be a positive, finite number, got {_shown(value)}")
        return float(value)

    def size(self, key: str, *, required: bool = False) -> int | None:
        value = self._get(key, None, required)
        if value is None:
            return None
        try:
            return parse_size(value)
        except ValueError as exc:
            raise self.fail(key, str(exc)) from None

    def table_at(self, key: str, *, required: bool = False) -> TableReader:
        value = self._get(key, {}, required)
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {type(value).__name__}")
        return TableReader(self.path, value, f"{self.name(key)}.")

    def tables(self, key: str, *, required: bool = False) -> list[TableReader]:
        value = self._get(key, [], required)
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.fail(key, "expected an array of tables ([[...]])")
        if required and not value:
            raise self.fail(key, "needs at least one entry")
        return [TableReader(self.path, item, f"{self.name(key)}[{i}].") for i, item in enumerate(value)]

    def reject_unknown(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            # every field this table knows was asked for by its parser, so the known names are ``used``
            close = difflib.get_close_matches(unknown[0], sorted(self.used - set(self.table)), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise self.fail(
                unknown[0],
                f"unknown field ({hint}known here: {', '.join(sorted(self.used))}; see docs/profiles.md)",
            )
