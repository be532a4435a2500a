"""Coded states as a typed value: a query returns a number per entity (a reason code, a health state, a replica
state), and a ``States`` says what each number reads as and its colour. ``States.mappings()`` is the one place
that writes them as Grafana value mappings, so ``queries/`` holds codes and words, never Grafana JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class State:
    """One code: the text a cell shows for it and the colour it is painted."""

    code: int
    text: str
    colour: str


@dataclass(frozen=True)
class Beyond:
    """Every code from ``low`` to ``high`` that ``States`` does not list one by one: one text and colour."""

    low: int
    high: int
    text: str
    colour: str


@dataclass(frozen=True)
class States:
    """Codes in the order Grafana numbers them (it takes the first mapping that matches), and optionally one
    range for the codes past the listed ones."""

    listed: tuple[State, ...]
    beyond: Beyond | None = None

    @classmethod
    def by_code(cls, codes: Mapping[int, tuple[str, str]], beyond: Beyond | None = None) -> States:
        """From ``code -> (text, colour)``, in code order."""
        return cls(tuple(State(code, text, colour) for code, (text, colour) in sorted(codes.items())), beyond)

    @classmethod
    def of(cls, states: Iterable[State]) -> States:
        """As given, in their order."""
        return cls(tuple(states))

    def mappings(self) -> tuple[dict[str, Any], ...]:
        """Grafana's value mappings: one ``value`` mapping of every listed code, then the ``range`` past them."""
        options = {
            str(state.code): {"text": state.text, "color": state.colour, "index": index}
            for index, state in enumerate(self.listed)
        }
        value: dict[str, Any] = {"type": "value", "options": options}
        if self.beyond is None:
            return (value,)
        result = {"text": self.beyond.text, "color": self.beyond.colour, "index": len(options)}
        return (
            value,
            {"type": "range", "options": {"from": self.beyond.low, "to": self.beyond.high, "result": result}},
        )
