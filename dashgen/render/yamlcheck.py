"""Every YAML document dashgen writes is read back by a YAML parser before it leaves the emitter.

The emitter (``yamlemit``) writes YAML by hand so its bytes are deterministic; this module is the other side:
PyYAML (YAML 1.1, what Prometheus', vmalert's and Kubernetes' Go readers accept) loads the text and the result
must equal the data it was written from, key for key and type for type. A difference is a dashgen bug or an
input the emitter failed to escape; either way nothing is written and the message names where it differs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import yaml

from dashgen.errors import BuildValidationError
from dashgen.render import yamlread
from dashgen.render.yamlread import LOADER

__all__ = ["LOADER", "check_reads_back", "first_difference", "load"]


def load(text: str) -> Any:
    """One YAML document, read as ``yaml.safe_load`` reads it, by libyaml where the wheel has it (the pure-Python
    parser takes seconds on a dashboard manifest), plain data built from its events (``yamlread``); raises
    ``yaml.YAMLError`` on bad input."""
    return yamlread.load(text)


def first_difference(written: Any, loaded: Any, path: str = "") -> str | None:
    """Where ``loaded`` (what the parser read) differs from ``written`` (what the emitter was given)."""
    where = path or "the document"
    if isinstance(written, Mapping):
        if not isinstance(loaded, dict):
            return f"{where}: a mapping was written, {type(loaded).__name__} read"
        keys = [str(key) for key in written]
        if keys != [str(key) for key in loaded]:
            return f"{where}: keys {keys[:8]} written, {list(loaded)[:8]} read"
        for key, value in written.items():
            found = first_difference(value, loaded[str(key)], f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(written, list | tuple):
        if not isinstance(loaded, list) or len(loaded) != len(written):
            return f"{where}: a list of {len(written)} written, {_shape(loaded)} read"
        for index, (value, back) in enumerate(zip(written, loaded, strict=True)):
            found = first_difference(value, back, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(written, float) and isinstance(loaded, float) and math.isnan(written) and math.isnan(loaded):
        return None
    same_type = type(written) is type(loaded) or (isinstance(written, str) and isinstance(loaded, str))
    if not same_type or written != loaded:
        return f"{where}: {_shown(written)} written, {_shown(loaded)} read"
    return None


def _shape(value: Any) -> str:
    return f"a list of {len(value)}" if isinstance(value, list) else type(value).__name__


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# sha256 of (the text, the repr of what it was written from) of every text that read back as written: a process that
# writes the same rule file or manifest again (a test session: dozens of times) parses it once. The repr tells apart
# what the check tells apart (1 from 1.0 and True, "1" from 1), so an equal pair read back equal before.
_READ_BACK: set[bytes] = set()
_READ_BACK_MAX = 256


def check_reads_back(text: str, written: Mapping[str, Any]) -> None:
    """Refuse ``text`` unless a YAML parser reads it as exactly ``written``."""
    shown = repr(written)
    pair = hashlib.sha256(text.encode("utf-8", "surrogatepass") + b"\0" + shown.encode("utf-8", "surrogatepass"))
    if pair.digest() in _READ_BACK:
        return
    _check_reads_back(text, written, shown)
    if len(_READ_BACK) >= _READ_BACK_MAX:
        _READ_BACK.clear()
    _READ_BACK.add(pair.digest())


def _check_reads_back(text: str, written: Mapping[str, Any], shown: str) -> None:
    try:
        loaded = load(text)
    except yaml.YAMLError as exc:
        raise BuildValidationError([f"generated YAML does not parse ({exc}); nothing was written"]) from None
    # Equal reprs of plain data are equal trees of equal types (1, 1.0, True and "1" print apart, and so do a list
    # and a tuple, a dict and another mapping): nothing to walk. Any other pair is walked for where it differs.
    if repr(loaded) == shown:
        return
    difference = first_difference(written, {} if loaded is None else loaded)
    if difference:
        raise BuildValidationError([f"generated YAML does not read back as written: {difference}; nothing was written"])
