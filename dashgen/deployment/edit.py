"""Rewrite fields of a profile's ``[sources.<name>]`` or ``[labels]`` table in its TOML text, keeping every other
line (comments, order, spacing) as it is: ``dashgen doctor --write`` states what the store shows. Pure: text in,
text out."""

from __future__ import annotations

import re

from dashgen.errors import ProfileError
from dashgen.escape import report_json

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")


def toml_value(value: object) -> str:
    """A string or a list of strings as TOML writes it (TOML's basic strings are JSON's; DEL, which TOML wants
    escaped, and the C1 and bidi controls as ``\\u`` escapes: report_json)."""
    if isinstance(value, str):
        return report_json(value)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return "[" + ", ".join(report_json(item) for item in value) + "]"
    raise ValueError(f"cannot write {value!r} into a profile: a string or a list of strings")


def set_source_fields(text: str, path: str, source: str, fields: dict[str, object]) -> str:
    """``text`` with each of ``fields`` set in ``[sources.<source>]`` (replaced where the key is, else added after
    the table's last key). A profile that does not write the source as a ``[sources.<source>]`` table is refused,
    naming the field, rather than rewritten in a different shape."""
    return set_table_fields(text, path, f"sources.{source}", fields)


def set_label_names(text: str, path: str, names: dict[str, str]) -> str:
    """``text`` with each label role of ``names`` set in ``[labels]`` (the table is added at the end when absent)."""
    if not any((m := _HEADER.match(line)) and m.group(1) == "labels" for line in text.splitlines()):
        text = text + ("" if text.endswith("\n") or not text else "\n") + "\n[labels]\n"
    return set_table_fields(text, path, "labels", dict(names))


def set_table_fields(text: str, path: str, table: str, fields: dict[str, object]) -> str:
    """``text`` with each of ``fields`` set in the table ``[<table>]``, which must be written as a table header."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if (m := _HEADER.match(line)) and m.group(1) == table), None)
    if start is None:
        raise ProfileError(path, table, f"no [{table}] table in the file to write into")
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    last_key = start
    for key, value in fields.items():
        rendered = f"{key} = {toml_value(value)}\n"
        at = next((i for i in range(start + 1, end) if re.match(rf"^\s*{re.escape(key)}\s*=", lines[i])), None)
        if at is not None:
            lines[at] = rendered
            continue
        last_key = max([last_key, *(i for i in range(start + 1, end) if re.match(r"^\s*[A-Za-z0-9_-]+\s*=", lines[i]))])
        lines.insert(last_key + 1, rendered)
        end += 1
        last_key += 1
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines)
