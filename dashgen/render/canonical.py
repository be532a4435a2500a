"""Canonical JSON: the byte encoding of files, and the content SHA used for read-back proof.

Files: sorted keys, two-space indentation, UTF-8, a trailing newline. The SHA is taken over the
compact form of the same canonical content (sorted keys, no whitespace; CPython's C encoder makes
it several times faster than the indented form) and ignores only the fields the Grafana server owns
(``id``, ``version``), so a read-back can be compared with the build. The SHA of a v2 resource
(``dashboard.grafana.app/v2…``) is that of its ``spec``: the metadata is Grafana's.

The SHA is *defined* by Python's encoder, and that never changes (the ledger holds SHAs of past
releases). :func:`content_sha_of_json` computes the same SHA about 10x faster for what a strict JSON
parse gives (:func:`loads_strict`: no ``NaN`` / ``Infinity``): orjson's sorted compact encoding is
byte for byte Python's for every such value except floats below 1e-4 in magnitude (``1e-05`` there,
``1e-5`` or ``0.00001`` in orjson) and integers beyond 64 bits (orjson refuses them); either falls
back to Python's encoder. orjson's float format has changed between releases (before 3.11.7 it wrote ``1e16``
for ``1e+16``), so the fast path is taken only when this orjson writes a fixed set of probe values as Python
does (checked once, at import). ``tests/test_canonical.py`` holds both encoders to all that, property-based.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import orjson

from dashgen.files.parsers import parse_json

SERVER_OWNED = ("id", "version")


def encode(doc: Any) -> bytes:
    """The file bytes: Python's ``json.dumps(sort_keys, indent=2, ensure_ascii=False)`` and a newline. Written by
    orjson where that gives the same bytes (see :func:`content_sha_of_json`; indented, Python's encoder is its
    pure-Python path, a fifth of a build's time), a float it writes otherwise laid in as Python's bytes for it."""
    if _FAST_PATH:
        try:
            fast = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # an integer beyond 64 bits, a lone surrogate, a non-JSON value
            fast = b""
        if fast and not _may_differ(fast) and _finite(doc):
            return fast
        if fast:  # a float Python writes otherwise (a false alarm: "1e-9" inside a query string), or NaN
            patched, changed = _python_floats(doc)
            if not changed:
                return fast
            try:
                return orjson.dumps(
                    patched, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
                )
            except TypeError:
                pass
    return python_encode(doc)


def _python_floats(tree: Any) -> tuple[Any, bool]:
    """``tree`` with each float orjson writes otherwise (below 1e-4 in magnitude but not zero, NaN, infinities)
    as Python's bytes for it (an ``orjson.Fragment``, written as is), and whether there was one; the parts without
    one are the tree's own. An imported dashboard's ``1e-09`` bucket bound no longer sends the whole document
    through Python's indented encoder (pure Python: ~0.3 s for a shipped dashboard with its team's rows)."""
    if isinstance(tree, float):
        if tree != tree or tree in (math.inf, -math.inf) or (tree != 0.0 and -1e-4 < tree < 1e-4):
            return orjson.Fragment(json.dumps(tree).encode("ascii")), True
        return tree, False
    if isinstance(tree, dict):
        changed = False
        out = {}
        for key, value in tree.items():
            out[key], one = _python_floats(value)
            changed = changed or one
        return (out, True) if changed else (tree, False)
    if isinstance(tree, list | tuple):
        items = [_python_floats(item) for item in tree]
        if any(one for _, one in items):
            return [item for item, _ in items], True
        return tree, False
    return tree, False


def _finite(doc: Any) -> bool:
    """No NaN or infinity anywhere (orjson writes them as ``null``, Python as ``NaN``): asked of CPython's C encoder,
    which refuses them with ``allow_nan=False`` and costs a tenth of the indented Python encoding."""
    try:
        json.dumps(doc, allow_nan=False)
    except ValueError:
        return False
    return True


def python_encode(doc: Any) -> bytes:
    """:func:`encode` by Python's own encoder, which defines the bytes."""
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


V2_API_PREFIX = "dashboard.grafana.app/v2"


def content_view(doc: dict[str, Any]) -> dict[str, Any]:
    """The dashboard without the server-owned fields (a shallow copy; the input is not changed); a v2 resource's
    ``spec`` itself (it holds no server-owned field)."""
    version, spec = doc.get("apiVersion"), doc.get("spec")
    if isinstance(version, str) and version.startswith(V2_API_PREFIX) and isinstance(spec, dict):
        return spec
    return {key: value for key, value in doc.items() if key not in SERVER_OWNED}


def content_sha(doc: dict[str, Any]) -> str:
    """SHA-256 hex of the compact canonical encoding of the dashboard's content."""
    compact = json.dumps(content_view(doc), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(compact.encode("utf-8")).hexdigest()


# A float below 1e-4 in orjson's bytes: ``0.0000…`` or a negative exponent (``…5e-7``). The exponent is found
# by its literal ``e-`` and then checked for a digit before it: one regex with a leading digit class (or an
# alternation) scans about 15x slower, and would cost what this path saves.
_NEGATIVE_EXPONENT = re.compile(rb"e-[0-9]")
_DIGITS = frozenset(b"0123456789")


def _may_differ(compact: bytes) -> bool:
    """Whether orjson's ``compact`` may hold a float Python writes otherwise (a false alarm only costs time)."""
    if b"0.0000" in compact:
        return True
    return any(m.start() > 0 and compact[m.start() - 1] in _DIGITS for m in _NEGATIVE_EXPONENT.finditer(compact))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    """A JSON number as Python reads it, refused when it overflows to infinity (``1e400``: Go refuses it too)."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large for a float")
    return value


# A run of 19+ digits may be an integer beyond 64 bits, which orjson reads as a float: Python's parser reads those.
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def loads_strict(text: str | bytes) -> Any:
    """JSON as RFC 8259 defines it: ``NaN`` / ``Infinity``, and a number that overflows to infinity (``1e400``),
    which Python's parser accepts and Grafana, written in Go, never sends, raise ``ValueError`` like any other
    malformed JSON; otherwise the value ``json.loads`` gives. So a value it returns holds no NaN and no infinity.

    orjson parses (about 1.6x faster on a dashboard, and it refuses NaN itself); Python's parser decides whatever
    orjson would read otherwise (an integer beyond 64 bits) or refuses (a lone surrogate, nesting deeper than
    orjson's limit, not UTF-8), so the value and the errors are ``json.loads``'s, except that nesting too deep
    for Python's parser is a ``ValueError`` too, not a ``RecursionError``.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"0" * 19 not in raw.translate(_DIGITS_TO_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return parse_json(text, parse_constant=_refuse_constant, parse_float=_finite_float)


def _orjson_writes_as_python() -> bool:
    """Whether this orjson writes, outside floats below 1e-4, the bytes Python's encoder writes: checked once, on
    the values whose formatting has differed between orjson releases (before 3.11.7: ``1e16`` for ``1e+16``)."""
    probes: list[Any] = [
        1e16,
        1.2e30,
        1e22,
        1.7976931348623157e308,
        123456789.0,
        0.1,
        1e-4,
        -0.0,
        0.0,
        2**63 - 1,
        -(2**63),
        2**64 - 1,
        True,
        None,
        '\u2028\u2029\x7f\x00\x1f"\\/é\U0001f600',
        {"b": 1, "a": [], "é": {}, "\U0001f600": 2, "\uffff": 3},
    ]
    try:
        fast = orjson.dumps(probes, option=orjson.OPT_SORT_KEYS)
        indented = orjson.dumps(probes, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    except TypeError:
        return False
    compact = json.dumps(probes, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return fast == compact and indented == json.dumps(probes, sort_keys=True, indent=2, ensure_ascii=False).encode()


_FAST_PATH = _orjson_writes_as_python()


def content_sha_of_json(doc: dict[str, Any]) -> str:
    """:func:`content_sha` of a value :func:`loads_strict` parsed (it has no NaN or infinity), computed faster."""
    if not _FAST_PATH:
        return content_sha(doc)
    try:
        compact = orjson.dumps(content_view(doc), option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits, a lone surrogate, a non-JSON value
        return content_sha(doc)
    if _may_differ(compact):
        return content_sha(doc)
    return hashlib.sha256(compact).hexdigest()
