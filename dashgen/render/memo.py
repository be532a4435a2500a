"""Bounded, process-wide memos of pure functions keyed by the value of their inputs, and the key of a profile.

A profile's dashboards and build depend only on its content (and, for a team's modules, on files: those are never
memoised here), so a process that composes or builds the same profile again (``dashgen check``: the build, the rule
files' links and the panel index; a test session: hundreds of tests over four shipped profiles, or over copies of
them in temporary folders) gets the earlier answer. What a caller may change is handed out as a fresh copy:
:class:`JsonCopies` keeps a JSON tree as orjson bytes and parses a new tree on each read (a twentieth of
``copy.deepcopy``'s time), and only trees that read back equal to themselves (no tuple, NaN or non-string key)
are kept."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Generic, TypeVar

import orjson

from dashgen.deployment.model import Profile

K = TypeVar("K")
V = TypeVar("V")

MEMOS: list[Memo[Any, Any]] = []  # every memo of the process (a test that counts work empties them first)


class Memo(Generic[K, V]):
    """A least-recently-used map of at most ``size`` answers; ``misses`` counts the answers computed (what a test
    reads to prove that the answer is shared)."""

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self.misses = 0
        self._answers: OrderedDict[K, V] = OrderedDict()
        MEMOS.append(self)

    def get(self, key: K) -> V | None:
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    def put(self, key: K, answer: V) -> None:
        self.misses += 1
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self.size:
            self._answers.popitem(last=False)

    def clear(self) -> None:
        self._answers.clear()


def profile_key(profile: Profile) -> str:
    """The profile's content: every field but the path it was read from (which only error messages name, and a
    failed composition or build is never memoised)."""
    return repr(replace(profile, path=""))


def faithful_json(tree: Any) -> bytes | None:
    """The tree's JSON bytes (orjson: keys in their order, an integer never written as a float), or None when they
    would not read back equal to it (a tuple, NaN, a non-string key, an integer beyond 64 bits). Two trees with the
    same bytes are the same value, types and key order included: what a memo keyed by a JSON tree compares."""
    try:
        data = orjson.dumps(tree)
    except TypeError:
        return None
    return data if orjson.loads(data) == tree else None


class JsonCopies:
    """A JSON tree kept as bytes; :meth:`copy` parses a fresh, equal tree with the same key order."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    @classmethod
    def of(cls, tree: Any) -> JsonCopies | None:
        """The tree's copies, or None when a parsed copy would not equal it (a tuple, NaN, a non-string key, an
        integer beyond 64 bits)."""
        data = faithful_json(tree)
        return None if data is None else cls(data)

    def copy(self) -> Any:
        return orjson.loads(self._data)


# (id of the subject, the other arguments) -> (the subject, held so that its id stays its own; the answer's copies)
JsonMemo = Memo[tuple[Any, ...], tuple[Any, JsonCopies]]


def json_answer(memo: JsonMemo, subject: Any, arguments: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, a JSON tree, once per immutable ``subject`` object (a frozen DashboardSpec: the composed
    dashboards are shared, so the same spec comes back) and ``arguments``; each call gets its own copy."""
    key = (id(subject), *arguments)
    hit = memo.get(key)
    if hit is not None and hit[0] is subject:
        return hit[1].copy()
    answer = compute()
    if (copies := JsonCopies.of(answer)) is not None:
        memo.put(key, (subject, copies))
    return answer
