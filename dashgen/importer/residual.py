"""What is left between a rendered panel and its source, as merge patches, and why each is raw.

Both sides are compared in the semantic diff's canonical form (``dashgen.diff.noise``), so only a
difference ``dashgen diff`` would report becomes a patch; a patch value is the canonical value (it
canonicalises to itself), a key the source lacks is patched to null (deleted). :func:`overlay` is the
readable variant used for ``options`` / ``custom`` / ``field_defaults``: a key the source lacks is set
to Grafana's default for it where one is known, so the module says ``"displayMode": "list"``, not null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REASONS: tuple[tuple[str, str], ...] = (
    ("type", "the plugin is not one of the panel kit's kinds"),
    ("libraryPanel", "a library panel: its model lives in Grafana's panel library"),
    ("fieldConfig.defaults.custom.spanNulls", "dashgen's renderer draws every gap as a gap (S7)"),
    ("fieldConfig.defaults.custom.insertNulls", "dashgen's renderer sets insertNulls itself (S7)"),
    (
        "fieldConfig.defaults.thresholds.steps",
        "dashgen writes the base step's value as null (Grafana reads the first step as the base whatever its value)",
    ),
    ("fieldConfig.defaults.thresholds", "a thresholds shape the spec's (colour, value) steps cannot state"),
    ("repeat", "panel repetition is not in the spec"),
    ("repeatDirection", "panel repetition is not in the spec"),
    ("maxPerRow", "panel repetition is not in the spec"),
    ("interval", "the panel's query options are not in the spec"),
    ("maxDataPoints", "the panel's query options are not in the spec"),
    ("timeFrom", "the panel's relative time is not in the spec"),
    ("timeShift", "the panel's time shift is not in the spec"),
    ("hideTimeOverride", "the panel's query options are not in the spec"),
    ("cacheTimeout", "the panel's query options are not in the spec"),
    ("transparent", "panel display options are not in the spec"),
    ("datasource", "the data source reference the spec cannot state"),
    ("targets.legendFormat", "an explicit empty legend, which the spec writes as none (dashgen diff tells them apart)"),
    ("targets.datasource", "a query's own data source (a Mixed panel)"),
    ("targets", "query fields the spec's Target does not model"),
)


def reason(path: str) -> str:
    """Why a patched path is raw JSON."""
    for prefix, why in REASONS:
        if path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "["):
            return why
    return "not representable in the panel kit"


def patch_between(rendered: Any, source: Any) -> Any:
    """The merge patch that turns ``rendered`` into ``source`` (both canonical); objects merge, lists replace."""
    if not isinstance(rendered, Mapping) or not isinstance(source, Mapping):
        return source
    out: dict[str, Any] = {}
    for key in rendered.keys() | source.keys():
        if key not in source:
            out[key] = None
        elif key not in rendered:
            out[key] = source[key]
        elif rendered[key] != source[key]:
            out[key] = patch_between(rendered[key], source[key])
    return dict(sorted(out.items()))


def overlay(rendered: Any, source: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Like :func:`patch_between`, with Grafana's default (from ``defaults``) instead of null where known."""
    if not isinstance(rendered, Mapping):
        rendered = {}
    if not isinstance(source, Mapping):
        source = {}
    out: dict[str, Any] = {}
    for key in rendered.keys() | source.keys():
        default = defaults.get(key) if isinstance(defaults, Mapping) else None
        if key not in source and isinstance(rendered[key], Mapping):
            # grafanalib's deep update ignores a null over an object: clear the object key by key
            nested = overlay(rendered[key], {}, default if isinstance(default, Mapping) else {})
            if nested:
                out[key] = nested
        elif key not in source:
            out[key] = default if default is not None and not isinstance(default, Mapping) else None
        elif key not in rendered:
            out[key] = source[key]
        elif rendered[key] != source[key]:
            if isinstance(rendered[key], Mapping) and isinstance(source[key], Mapping):
                out[key] = overlay(rendered[key], source[key], default if isinstance(default, Mapping) else {})
            elif not isinstance(rendered[key], Mapping):  # an object replaced by a value: only the raw patch can
                out[key] = source[key]
    return dict(sorted(out.items()))


def compose(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """One patch doing ``first`` then ``then`` (where ``then`` patches inside what ``first`` merged)."""
    out = dict(first)
    for key, value in then.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = compose(out[key], value)
        else:
            out[key] = value
    return out


def leaf_paths(patch: Any, prefix: str = "", depth: int = 4) -> list[str]:
    """The paths a patch sets, to ``depth`` levels (a deeper subtree is named by its top)."""
    if not isinstance(patch, dict) or not patch or depth == 0:
        return [prefix]
    paths = []
    for key, value in patch.items():
        paths += leaf_paths(value, f"{prefix}.{key}" if prefix else str(key), depth - 1)
    return paths
