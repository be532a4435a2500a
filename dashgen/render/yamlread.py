"""YAML read exactly as ``yaml.safe_load`` reads it, the plain data built straight from the parser's events.

PyYAML's loaders first compose a graph of nodes (a Python object per node, with its start and end marks) and then
construct the values from it: for a GrafanaManifest holding a whole v2 dashboard (~100,000 nodes) that is about
four fifths of a read. Here the parser (libyaml where the wheel has it), the resolver of plain scalars and the
scalar constructors are PyYAML's own, as ``safe_load`` uses them; only the mappings and lists are filled in from the
events directly. Text beyond plain data (an anchor or alias, an unusual or application tag, a merge or ``=`` key,
a mapping or list as a key) and text that does not parse are read by the full loader instead, so the answer, or
the error, is always the full loader's.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it: 1 MB in milliseconds

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
# the scalars of plain data; any other tag (a timestamp, binary, merge, value, or an application tag) goes to the
# full loader
_SCALARS = frozenset(_TAG + name for name in ("str", "null", "bool", "int", "float"))


class _Unusual(Exception):
    """Text beyond plain data: the full loader reads it."""


def load(text: str) -> Any:
    """One YAML document, as ``yaml.load(text, Loader=LOADER)`` reads it (None for no document); raises
    ``yaml.YAMLError`` on bad input, the full loader's error."""
    documents = _read(text)
    if documents is None or len(documents) > 1:  # the full loader says why several documents are refused
        return yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader, chosen above
    return documents[0] if documents else None


def load_all(text: str) -> list[Any]:
    """Every YAML document of ``text``, as ``list(yaml.load_all(text, Loader=LOADER))`` reads them."""
    documents = _read(text)
    return list(yaml.load_all(text, Loader=LOADER)) if documents is None else documents  # noqa: S506 - safe loader


def _read(text: str) -> list[Any] | None:
    """The documents of ``text``, or None when the full loader must read it."""
    loader = LOADER(text)
    try:
        if loader.yaml_path_resolvers:
            return None
        return _documents(loader)
    except Exception:  # noqa: BLE001 - the full loader reads it again and raises its own error, as safe_load would
        return None
    finally:
        loader.dispose()


def _documents(loader: Any) -> list[Any]:
    if type(loader.get_event()) is not StreamStartEvent:
        raise _Unusual
    documents: list[Any] = []
    while True:
        event = loader.get_event()
        if type(event) is StreamEndEvent:
            return documents
        if type(event) is not DocumentStartEvent:
            raise _Unusual
        documents.append(_document(loader))
        if type(loader.get_event()) is not DocumentEndEvent:
            raise _Unusual


def _document(loader: Any) -> Any:
    """The value of one document's root node: the events up to its end, mappings and lists filled in order."""
    # each open collection: [the dict or list, is a mapping, its key waiting for a value, a key is waiting]
    open_: list[list[Any]] = []
    while True:
        event = loader.get_event()
        kind = type(event)
        if kind is ScalarEvent:
            value, collection = _scalar(loader, event), False
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            mapping = kind is MappingStartEvent
            _expect_plain(loader, event, MappingNode if mapping else SequenceNode, _MAP if mapping else _SEQ)
            open_.append([{} if mapping else [], mapping, None, False])
            continue
        elif (kind is MappingEndEvent or kind is SequenceEndEvent) and open_:
            value, collection = open_.pop()[0], True
        else:  # an alias, or an event a plain document does not hold here
            raise _Unusual
        if not open_:
            return value
        parent = open_[-1]
        if not parent[1]:
            parent[0].append(value)
        elif parent[3]:
            parent[0][parent[2]] = value  # a repeated key keeps its first place and takes the last value, as in PyYAML
            parent[3] = False
        elif collection:
            raise _Unusual  # a mapping or list as a key
        else:
            parent[2], parent[3] = value, True


def _tag(loader: Any, event: Any, node: type[Node], value: str | None) -> str:
    """The event's tag, resolved as PyYAML's composer resolves it; an anchor is for the full loader."""
    if event.anchor is not None:
        raise _Unusual
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(node, value, event.implicit)
    return str(tag)


def _expect_plain(loader: Any, event: Any, node: type[Node], expected: str) -> None:
    if _tag(loader, event, node, None) != expected:  # a !!set, !!omap, !!pairs or an application tag
        raise _Unusual


def _scalar(loader: Any, event: ScalarEvent) -> Any:
    tag = _tag(loader, event, ScalarNode, event.value)
    if tag == _STR:
        return event.value
    if tag not in _SCALARS:
        raise _Unusual
    return loader.yaml_constructors[tag](loader, ScalarNode(tag, event.value, style=event.style))
