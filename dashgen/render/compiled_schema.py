"""A JSON Schema compiled to Python code by ``fastjsonschema``, once per process and schema, for the "is this
document valid" fast path of the build's checks (v1 dashboards, v2 resources): the compiled function raises
``fastjsonschema.JsonSchemaValueException`` on the first error and returns on none. Callers run ``jsonschema``
only on a rejected document, for the full list of errors in its words.

The generated code is large (~160 KB for the v1 schema, more for v2) and ``compile()`` of it costs tens of
milliseconds; its code object is kept (``marshal``) in the user's cache, keyed by the schema, the compile
options, fastjsonschema's version and the Python version. Any problem with the cache just means compiling again.

The error list of a rejected document is jsonschema's, but jsonschema need not walk what the compiled code accepts:
:func:`error_lister` is a ``Draft7Validator`` whose ``$ref`` first asks the compiled function of the referenced
definition (the generated module holds one per definition) and descends only where that function refuses the
instance. The same errors, paths and messages as a plain ``Draft7Validator`` (the two validators agree on what is
valid, which the build's fast path already relies on), about a tenth of its time on a dashboard with one error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import stat
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fastjsonschema

from dashgen.files import cache_dir


def _trusted(path: Path) -> bool:
    """A cache file this user owns and no one else can write: only then is its code loaded."""
    info = path.stat()
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def compiled_validator(schema: dict[str, Any], name: str, *, pure: bool = False) -> Callable[[Any], Any]:
    """``schema`` compiled to a validating function; ``name`` names the cache file and the code object.

    ``pure=True`` validates as ``jsonschema``'s ``Draft7Validator`` does by default: the schema's ``default``
    values are not written into the document (fastjsonschema fills them in unless told not to) and ``format``
    is not checked."""
    text = json.dumps(schema, sort_keys=True)
    key = hashlib.sha256(f"{text}|{pure}|{fastjsonschema.VERSION}|{sys.version}".encode()).hexdigest()[:24]
    folder = cache_dir()
    path = folder / f"{name}-validator-{key}.marshal" if folder else None
    code = None
    if path is not None:
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
            if path.is_file() and _trusted(path):
                code = marshal.loads(path.read_bytes())
    if code is None:
        source = fastjsonschema.compile_to_code(schema, use_default=not pure, use_formats=not pure)
        code = compile(source, f"<dashgen {name} schema>", "exec")
        if path is not None:
            with contextlib.suppress(OSError):
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{name}-")
                with os.fdopen(handle, "wb") as stream:
                    stream.write(marshal.dumps(code))
                os.replace(temporary, path)
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # the code fastjsonschema generated from one of our own schema files
    # the generated module defines the root schema's function first (then one per definition)
    root = next(name for name in code.co_names if name.startswith("validate_"))
    validate: Callable[[Any], Any] = namespace[root]
    return validate


def _refs(node: Any, found: set[str]) -> set[str]:
    """Every ``$ref`` value of a schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value)
            else:
                _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)
    return found


def error_lister(schema: dict[str, Any], compiled: Callable[[Any], Any]) -> Any:
    """A ``jsonschema`` Draft 7 validator of ``schema`` that skips each ``$ref`` subtree ``compiled`` (this schema's
    :func:`compiled_validator`) accepts; jsonschema is imported on use (only a rejected document needs it)."""
    from fastjsonschema.ref_resolver import RefResolver
    from jsonschema import Draft7Validator, validators

    resolver = RefResolver.from_schema(schema, store={})
    names: dict[str, str] = {}
    for ref in _refs(schema, set()):
        with resolver.in_scope(ref):  # how fastjsonschema names the function of a reference
            names[ref] = resolver.get_scope_name()
    taken = Counter(names.values())
    namespace = getattr(compiled, "__globals__", {})
    accepts = {
        ref: namespace[name] for ref, name in names.items() if taken[name] == 1 and callable(namespace.get(name))
    }
    descend = Draft7Validator.VALIDATORS["$ref"]

    def skipping_ref(validator: Any, ref: str, instance: Any, subschema: dict[str, Any]) -> Iterator[Any]:
        accept = accepts.get(ref)
        if accept is not None:
            try:
                accept(instance)
            except Exception:  # refused, or code that cannot judge this value: jsonschema says why
                pass
            else:
                return
        yield from descend(validator, ref, instance, subschema)

    return validators.extend(Draft7Validator, {"$ref": skipping_ref})(schema)
