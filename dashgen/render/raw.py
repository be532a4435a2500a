"""The kit's one escape hatch: Grafana JSON the typed panel helpers cannot express, with the reason why.

A panel helper takes ``raw_options=RawOptions(reason, options=..., ...)``; nothing else passes raw Grafana
dicts. Each field lands in the ``PanelSpec`` field of the same name, laid over what the kit built (options
deep-merged, the rest replacing). ``dashgen import`` writes one for each imported panel that needs it; a
group module in ``panels/`` uses it rarely (a test counts them) and says why in a comment above the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RawOptions:
    """Raw Grafana JSON for one panel and the reason the kit cannot say it.

    ``options``: panel options, merged key by key over the kit's; ``custom``: ``fieldConfig.defaults.custom``;
    ``transformations``: Grafana's transformation list; ``field_defaults`` / ``overrides``: more of
    ``fieldConfig``; ``extra``: a JSON merge patch (RFC 7386) over the whole rendered panel."""

    reason: str
    options: Mapping[str, Any] = field(default_factory=dict)
    custom: Mapping[str, Any] = field(default_factory=dict)
    transformations: tuple[dict[str, Any], ...] = ()
    field_defaults: Mapping[str, Any] = field(default_factory=dict)
    overrides: tuple[dict[str, Any], ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise ValueError("RawOptions needs a reason: what the kit cannot express, and why")

    def fields(self) -> dict[str, Any]:
        """The ``PanelSpec`` fields this hatch sets (the non-empty ones); ``options`` unmerged."""
        found: dict[str, Any] = {}
        for name in ("options", "custom", "field_defaults", "extra"):
            value = getattr(self, name)
            if value:
                found[name] = dict(value)
        for name in ("transformations", "overrides"):
            value = getattr(self, name)
            if value:
                found[name] = tuple(value)
        return found


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base`` key by key where both hold objects; anything else replaces. A new dict."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = deep_merge(below, value)
        else:
            merged[key] = value
    return merged
