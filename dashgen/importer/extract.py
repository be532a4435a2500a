"""One Grafana panel (already migrated) -> the ``PanelSpec`` that renders back to it, and what had to stay raw.

First the readable fields: kind, title, description (dashgen's own "Source: … Quantity: … Limit: …" read
back into an ``Evidence``, any other text as ``imported(...)``), targets, unit, axis, mappings, thresholds,
transformations, links, overrides, data source. Then the spec is rendered and compared, in the semantic
diff's canonical form, with the source: ``options``, ``custom`` and ``field_defaults`` say what differs from
the kit's defaults; whatever still differs becomes the raw escape hatch (``extra`` on the panel or a
target), each place listed as a :class:`Hatch`. The result is verified: ``equal`` is False only if even
the raw fallback could not reproduce the panel.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dashgen.diff.noise import (
    CUSTOM_DEFAULTS,
    FIELD_DEFAULTS,
    OPTIONS_DEFAULTS,
    canonical_datasource,
    canonicalise_panel,
)
from dashgen.document.shape import BadShape
from dashgen.importer.render import render_panel
from dashgen.importer.residual import compose, leaf_paths, overlay, patch_between, reason
from dashgen.importer.vocab import Place, imported
from dashgen.render.grafanalib_bridge import DATASOURCE
from dashgen.render.ids import panel_id
from dashgen.render.impossible import TIMESERIES_NOTE, reads_signed, renderer_adds, without_impossible_values
from dashgen.render.layout import GridPos
from dashgen.render.spec import PANEL_KINDS, Evidence, PanelKind, PanelSpec, Target
from dashgen.render.tables import ref as ref_id

BASE_KIND: dict[str, PanelKind] = {
    "gauge": "stat",
    "piechart": "stat",
    "status-history": "state-timeline",
    "barchart": "timeseries",
    "heatmap": "timeseries",
    "histogram": "timeseries",
    "trend": "timeseries",
    "xychart": "timeseries",
}
KIT_TRANSFORMATIONS = frozenset({"merge", "organize", "groupingToMatrix"})
DEFAULT_THRESHOLDS = (("green", None), ("red", 80))
# fieldConfig.defaults keys the spec states as fields of its own
SPEC_DEFAULTS = frozenset({"unit", "min", "max", "decimals", "noValue", "mappings", "thresholds", "links", "custom"})
_EVIDENCE = re.compile(
    r"(?:Evidence layer: (?P<layer>.*?)\. )?Source: (?P<source>.*?)\. Quantity: "
    r"(?P<quantity>.*?)\. Limit: (?P<limit>.*)\.",
    re.DOTALL,
)
_DOTS = re.compile(r"\.{2,}")


@dataclass(frozen=True)
class Hatch:
    """One place carried as raw JSON: panel title and key, the patched path, and why."""

    title: str
    key: str
    path: str
    reason: str


@dataclass(frozen=True)
class Extracted:
    spec: PanelSpec
    place: Place
    hatches: tuple[Hatch, ...]
    equal: bool


def evidence_of(description: Any) -> Evidence:
    """dashgen's own evidence when the description is exactly what an Evidence describes, else imported."""
    if not isinstance(description, str):
        return imported(None)
    own = description.removesuffix(f" {TIMESERIES_NOTE}.")  # what a bounded time series adds (S38), added again
    match = _EVIDENCE.fullmatch(own)
    if match:
        parts = {name: match[name] or "" for name in ("source", "quantity", "limit", "layer")}
        # describe() writes each ".." as ".": a run of m dots it wrote came from 2m - 1
        for undo in (lambda text: text, lambda text: _DOTS.sub(lambda m: "." * (2 * len(m[0]) - 1), text)):
            evidence = Evidence(**{name: undo(text) for name, text in parts.items()})
            if evidence.describe() == own:
                return evidence
    return imported(description)


def own_mappings(
    mappings: tuple[Any, ...], evidence: Evidence | None, unit: Any, low: Any, high: Any
) -> tuple[Any, ...]:
    """A panel's mappings less the impossible-value ones the renderer adds again to a panel of this evidence."""
    return without_impossible_values(mappings, unit, low, high) if renderer_adds(evidence) else mappings


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list) else ()


def targets_of(raw: Any) -> tuple[Target, ...]:
    targets = []
    for index, target in enumerate(raw if isinstance(raw, list) else []):
        target = _dict(target)
        ref, interval = target.get("refId"), target.get("interval")
        targets.append(
            Target(
                expr=target["expr"] if isinstance(target.get("expr"), str) else "",
                legend=target["legendFormat"] if isinstance(target.get("legendFormat"), str) else "",
                instant=target.get("instant") is True,
                table=target.get("format") == "table",
                ref_id=ref if isinstance(ref, str) and ref != ref_id(index) else "",
                interval=interval if isinstance(interval, str) else "",
            )
        )
    return tuple(targets)


def _thresholds(defaults: Mapping[str, Any]) -> tuple[tuple[str, float | None], ...]:
    if "thresholds" not in defaults:
        return DEFAULT_THRESHOLDS
    steps = _dict(defaults.get("thresholds")).get("steps")
    found = []
    for step in steps if isinstance(steps, list) else []:
        step = _dict(step)
        colour = step.get("color")
        found.append((colour if isinstance(colour, str) else "green", _number(step.get("value"))))
    return tuple(found) or (("green", None),)


def kind_of(raw: Mapping[str, Any]) -> PanelKind:
    plugin = raw.get("type")
    kit_kind = next((kind for kind in PANEL_KINDS if kind == plugin), None)
    if kit_kind is not None:
        return kit_kind
    if plugin in BASE_KIND:
        return BASE_KIND[str(plugin)]
    has_query = any(isinstance(t, Mapping) and t.get("expr") for t in raw.get("targets") or [])
    return "timeseries" if has_query else "text"


def _datasource(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    value = raw.get("datasource")
    if value is None:
        return {}
    if canonical_datasource(value) == canonical_datasource(DATASOURCE):
        return None
    return dict(value) if isinstance(value, Mapping) else {"uid": str(value)}


def readable_spec(raw: Mapping[str, Any], key: str) -> PanelSpec:
    """The spec of the fields the vocabulary names, before the overlays."""
    kind = kind_of(raw)
    field_config = _dict(raw.get("fieldConfig"))
    defaults = _dict(field_config.get("defaults"))
    pos = _dict(raw.get("gridPos"))
    w, h = pos.get("w"), pos.get("h")
    width = w if isinstance(w, int) and 1 <= w <= 24 else 12
    height = h if isinstance(h, int) and h >= 0 else 8
    decimals = _number(defaults.get("decimals"))
    unit = defaults.get("unit")
    content = _dict(raw.get("options")).get("content")
    description = raw.get("description")
    evidence: Evidence | None = None if kind == "text" and description is None else evidence_of(description)
    mappings, low, high = _tuple(defaults.get("mappings")), defaults.get("min"), defaults.get("max")
    extra: dict[str, Any] = {}
    if raw.get("type") != kind:
        extra["type"] = raw.get("type")
    if "libraryPanel" in raw:  # the semantic diff ignores it; the reference is what the panel is
        extra["libraryPanel"] = raw["libraryPanel"]
    return PanelSpec(
        key=key,
        title=raw["title"] if isinstance(raw.get("title"), str) else "",
        kind=kind,
        evidence=evidence,
        targets=targets_of(raw.get("targets")) if kind != "text" else (),
        unit=unit if isinstance(unit, str) else None,
        min=_number(defaults.get("min")),
        max=_number(defaults.get("max")),
        decimals=decimals if isinstance(decimals, int) else None,
        width=width,
        height=height,
        no_value=defaults["noValue"] if isinstance(defaults.get("noValue"), str) else None,
        mappings=own_mappings(mappings, evidence, unit, low, high),
        signed=renderer_adds(evidence) and reads_signed(mappings, unit, low, high),
        thresholds=_thresholds(defaults),
        transformations=_tuple(raw.get("transformations")),
        content=content if isinstance(content, str) and kind == "text" else "",
        links=_tuple(raw.get("links")),
        data_links=_tuple(defaults.get("links")),
        overrides=_tuple(field_config.get("overrides")),
        datasource=_datasource(raw),
        extra=extra,
    )


def _defaults_of(canonical: Mapping[str, Any]) -> dict[str, Any]:
    return _dict(_dict(canonical.get("fieldConfig")).get("defaults"))


def _overlays(spec: PanelSpec, rendered: Mapping[str, Any], source: Mapping[str, Any]) -> PanelSpec:
    r_defaults, s_defaults = _defaults_of(rendered), _defaults_of(source)
    options = overlay(rendered.get("options"), source.get("options"), OPTIONS_DEFAULTS)
    if spec.kind == "text":
        options.pop("content", None)
    custom = overlay(r_defaults.get("custom"), s_defaults.get("custom"), CUSTOM_DEFAULTS)
    stated = SPEC_DEFAULTS - ({"noValue"} if spec.no_value is None else set())  # a stat's kit default "No data"
    others = overlay(
        {k: v for k, v in r_defaults.items() if k not in stated},
        {k: v for k, v in s_defaults.items() if k not in stated},
        FIELD_DEFAULTS,
    )
    return replace(spec, options=options, custom=custom, field_defaults=others)


def _with_patch(spec: PanelSpec, patch: dict[str, Any]) -> PanelSpec:
    target_patch = patch.pop("targets", None)
    targets = spec.targets
    if isinstance(target_patch, dict):
        targets = tuple(replace(t, extra=compose(t.extra, target_patch.get(i) or {})) for i, t in enumerate(targets))
    elif target_patch is not None:
        patch["targets"] = target_patch
    return replace(spec, targets=targets, extra=compose(spec.extra, patch))


def _target_patches(rendered: list[Any], source: list[Any]) -> dict[int, Any] | list[Any]:
    if len(rendered) != len(source):
        return source
    return {i: p for i, (r, s) in enumerate(zip(rendered, source, strict=True)) if (p := patch_between(r, s))}


def _residual(rendered: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    r_targets, s_targets = rendered.get("targets") or [], source.get("targets") or []
    patch = patch_between(
        {k: v for k, v in rendered.items() if k != "targets"}, {k: v for k, v in source.items() if k != "targets"}
    )
    if r_targets != s_targets:
        patch["targets"] = _target_patches(list(r_targets), list(s_targets))
    return patch


def _hatches(spec: PanelSpec) -> list[Hatch]:
    title = spec.title
    found = []
    if spec.extra.get("type") is not None:
        found.append(
            Hatch(
                title,
                spec.key,
                "type",
                f"plugin {spec.extra['type']!r}: {reason('type')}; rendered as a {spec.kind} with its own JSON",
            )
        )
    for path in leaf_paths({k: v for k, v in spec.extra.items() if k != "type"}, depth=4):
        if path:
            found.append(Hatch(title, spec.key, path, reason(path)))
    for index, target in enumerate(spec.targets):
        for path in leaf_paths(target.extra, depth=2):
            if path:
                found.append(Hatch(title, spec.key, f"targets[{index}].{path}", reason(f"targets.{path}")))
    for index, transformation in enumerate(spec.transformations):
        name = transformation.get("id") if isinstance(transformation, Mapping) else None
        if name not in KIT_TRANSFORMATIONS:
            found.append(
                Hatch(
                    title,
                    spec.key,
                    f"transformations[{index}]",
                    f"transformation {name!r} is not one the panel kit builds; carried verbatim",
                )
            )
    return found


def _drop(overlay_value: dict[str, Any], patch: Any) -> dict[str, Any]:
    """``overlay_value`` without the leaves ``patch`` sets anyway."""
    if not isinstance(patch, dict):
        return dict(overlay_value)
    out = {}
    for key, value in overlay_value.items():
        if key not in patch:
            out[key] = value
        elif isinstance(value, dict) and isinstance(patch[key], dict) and (rest := _drop(value, patch[key])):
            out[key] = rest
    return out


def _without_shadowed(spec: PanelSpec) -> PanelSpec:
    """The overlays without what the escape hatch sets after normalisation (it would say it twice)."""
    defaults = _dict(_dict(spec.extra.get("fieldConfig")).get("defaults"))
    if not defaults and "options" not in spec.extra:
        return spec
    return replace(
        spec,
        custom=_drop(spec.custom, defaults.get("custom")),
        field_defaults=_drop(spec.field_defaults, {k: v for k, v in defaults.items() if k != "custom"}),
        options=_drop(spec.options, spec.extra.get("options")),
    )


def extract_panel(raw: Mapping[str, Any], key: str) -> Extracted:
    """The spec, place and escape hatches of one panel."""
    pos = _dict(raw.get("gridPos"))
    x = pos["x"] if isinstance(pos.get("x"), int) else 0
    y = pos["y"] if isinstance(pos.get("y"), int) else 0
    source_id = raw.get("id") if isinstance(raw.get("id"), int) and not isinstance(raw.get("id"), bool) else None
    pid = source_id if source_id is not None else panel_id(key)
    place = Place(x, y, None if pid == panel_id(key) else pid)
    source = canonicalise_panel(raw)
    spec = readable_spec(raw, key)

    seen: list[
        tuple[PanelSpec, dict[str, Any]]
    ] = []  # the last candidate rendered: tried, then kept, it is asked again

    def canonical(candidate: PanelSpec) -> dict[str, Any]:
        if seen and seen[-1][0] is candidate:
            return seen[-1][1]
        rendered = canonicalise_panel(render_panel(candidate, GridPos(x, y, candidate.width, candidate.height), pid))
        seen.append((candidate, rendered))
        return rendered

    try:
        base = canonical(spec)
    except (TypeError, AttributeError, ValueError) as exc:
        raise BadShape(f"panel {spec.title!r} (id {source_id}): cannot be rendered: {exc}") from None
    with_overlays = _overlays(spec, base, source)
    try:  # grafanalib merges an overlay into its own objects: a value where it has an object is for the raw patch
        canonical(with_overlays)
        spec = with_overlays
    except (TypeError, AttributeError):
        pass
    for _ in range(3):
        rendered = canonical(spec)
        if rendered == source:
            tidy = _without_shadowed(spec)
            if tidy != spec and canonical(tidy) == source:
                spec = tidy
            return Extracted(spec, place, tuple(_hatches(spec)), True)
        spec = _with_patch(spec, _residual(rendered, source))
    rendered = canonical(spec)
    if rendered != source:  # the last resort: the differing top-level keys as Grafana stored them
        fallback = {k: raw.get(k) for k in rendered.keys() | source.keys() if rendered.get(k) != source.get(k)}
        spec = replace(spec, extra=compose(spec.extra, fallback))
        rendered = canonical(spec)
    return Extracted(spec, place, tuple(_hatches(spec)), rendered == source)
