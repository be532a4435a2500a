"""Fault injection for the stand-in: which request gets which misbehaviour, and how often.

A ``Fault`` matches on HTTP method (``"*"`` = any) and a regex that must match the whole
request path (without the query string). Each request consumes at most one fault, the first
armed one that matches, in the order they were added.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

STATUS = "status"  # answer with a given status/body instead of handling the request
DELAY = "delay"  # sleep, then answer normally
CLOSE = "close"  # drop the connection without answering
TRUNCATE = "truncate"  # answer normally but cut the body short
STALE = "stale"  # answer a read as a lagging replica would: the object's metadata (and spec) as it was when armed


@dataclass
class Fault:
    kind: str
    method: str
    path_regex: str
    times: int | None = 1  # None = every matching request
    after_handling: bool = False  # True: the request takes effect (e.g. the save lands) first
    status: int = 500
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    keep_fraction: float = 0.5
    honest_length: bool = True
    stale_metadata: dict[str, Any] = field(default_factory=dict)
    stale_spec: Any = None  # None: the spec as stored now (only the metadata lags)
    hits: int = 0

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.path_regex)

    def matches(self, method: str, path: str) -> bool:
        armed = self.times is None or self.hits < self.times
        return armed and self.method in ("*", method.upper()) and self._pattern.fullmatch(path) is not None

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times


class FaultBook:
    """The armed faults of one stand-in; thread-safe."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path):
                    fault.hits += 1
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def pending(self) -> list[Fault]:
        with self._lock:
            return [f for f in self._faults if not f.exhausted]


def default_body(status: int, message: Any) -> bytes:
    if message is None:
        try:
            message = HTTPStatus(status).phrase
        except ValueError:
            message = "Error"
    return json.dumps({"message": message, "traceID": ""}, separators=(",", ":")).encode()
