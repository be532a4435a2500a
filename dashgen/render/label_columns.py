"""How a dashgen table shows its label columns (node, GPU index, PP stage, class; the string fields of a frame
whose values are numbers): as the label's text. One override matches them by type, whatever the table's
transformations name them; it gives them the ``string`` unit (Grafana's display processor formats a string that
reads as a number with the field's unit and decimals otherwise: GPU "6" read "6.0") and the mappings that may apply
to a label (Grafana matches a range or a number-keyed value mapping against a label that reads as a number too: a
node named "6" read as reason code 6, an HTTP class "503" in a ratio table as "impossible: above 100 %")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dashgen.render.impossible import TEXT_UNIT

LABEL_COLUMNS = {"id": "byType", "options": "string"}  # the string fields: a frame's labels


def label_override() -> dict[str, Any]:
    """The override of a dashgen table's label columns, before the renderer adds their mappings."""
    return {"matcher": dict(LABEL_COLUMNS), "properties": [{"id": "unit", "value": TEXT_UNIT}]}


def _reads_as_number(key: object) -> bool:
    try:
        float(str(key))
    except ValueError:
        return False
    return True


def label_mappings(mappings: Iterable[Any]) -> list[Any]:
    """Of a table's value mappings, those meant for a label: value mappings by text (a node's name to its replica
    and stage), regex and special ones (null, empty); not a range, nor a value mapping keyed by a number (a reason
    or state code), which are about the values."""
    kept: list[Any] = []
    for mapping in mappings:
        if not isinstance(mapping, Mapping) or mapping.get("type") == "range":
            continue
        if mapping.get("type") == "value":
            options = mapping.get("options")
            if not isinstance(options, Mapping):
                continue
            textual = {key: result for key, result in options.items() if not _reads_as_number(key)}
            if textual:
                kept.append({**mapping, "options": textual})
            continue
        kept.append(mapping)
    return kept


def with_label_mappings(overrides: Iterable[Any], mappings: Iterable[Any]) -> list[Any]:
    """``overrides`` with the label columns' override given :func:`label_mappings` of the field's ``mappings`` (an
    override's ``mappings`` replaces the field's for the columns it matches; none kept is an empty list)."""
    shown = label_mappings(mappings)
    out: list[Any] = []
    for override in overrides:
        if isinstance(override, Mapping) and override.get("matcher") == LABEL_COLUMNS:
            properties = [
                p for p in override.get("properties", []) if not (isinstance(p, Mapping) and p.get("id") == "mappings")
            ]
            override = {**override, "properties": [*properties, {"id": "mappings", "value": shown}]}
        out.append(override)
    return out


def rendered_from(override: Any, kit_override: Mapping[str, Any], mappings_added: bool) -> bool:
    """Whether an imported ``override`` is ``kit_override`` as the renderer wrote it out: equal, or, for the label
    columns' override of a panel whose label mappings the renderer adds (``mappings_added``: dashgen's own, not an
    imported one's, which keep what they stored), equal but for those ``mappings``."""
    if override == kit_override:
        return True
    if not mappings_added or not isinstance(override, Mapping) or kit_override.get("matcher") != LABEL_COLUMNS:
        return False
    properties = [
        p for p in override.get("properties", []) if not (isinstance(p, Mapping) and p.get("id") == "mappings")
    ]
    return {**override, "properties": properties} == kit_override


def holds(override: Any, kit_override: Mapping[str, Any]) -> bool:
    """Whether ``override`` matches what ``kit_override`` matches and sets every property it sets, as it sets it
    (and may set more): an imported table's own label override, which then stands for the kit's."""
    if not isinstance(override, Mapping) or override.get("matcher") != kit_override.get("matcher"):
        return False
    properties = override.get("properties")
    return isinstance(properties, list) and all(p in properties for p in kit_override.get("properties", []))
