"""Every node of a Python syntax tree under one node, in ``ast.walk``'s order, as one list and without the
expression contexts (``Load``, ``Store``, ``Del``: no reader here looks at them): ``ast.walk`` yields the nodes
through ``ast.iter_child_nodes``, a generator per node and a Python step per field, about half of what the panel
index spent looking through its parsed trees."""

from __future__ import annotations

import ast

# Fields left out: names and flags (never a node), and the expression context (a Load or Store node no reader
# looks at); the node types' other fields, remembered per type.
_LEAF_FIELDS = frozenset({"ctx", "id", "name", "attr", "arg", "module", "level", "conversion", "type_comment"})
CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # read directly where a call per node would cost


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of the node type ``kind`` that may hold nodes."""
    fields = CHILD_FIELDS.get(kind)
    if fields is None:
        fields = CHILD_FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _LEAF_FIELDS)
    return fields


def nodes_under(root: ast.AST, contexts: bool = False) -> list[ast.AST]:
    """``root`` and every node below it but the expression contexts (with them: ``contexts``), breadth first, in
    the order ``ast.walk(root)`` yields them."""
    found = [root]
    for node in found:  # the list grows as it is read
        kind = type(node)
        for field in kind._fields if contexts else CHILD_FIELDS.get(kind) or child_fields(kind):
            value = getattr(node, field, None)
            if isinstance(value, list):
                found.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                found.append(value)
    return found
