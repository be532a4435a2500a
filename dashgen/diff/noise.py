"""Canonicalise dashboard JSON so that only semantic differences remain (grafana-api.md §7.2, §7.4).

Removed as noise: ``id``, ``version``, ``iteration``, ``schemaVersion``, ``gnetId``, ``uid``,
export blocks, ``pluginVersion``, the built-in "Annotations & Alerts" annotation, the values a
Grafana UI save fills in by default (``fieldConfig`` / ``options`` / target / variable
defaults), nulls, empty objects and lists (absent ≡ empty), positional ``refId``\\ s, target
data sources equal to the panel's, and editor-only state (``editorMode``, ``fullMetaSearch``, …).
Normalised: data-source refs (string, ``$var``, ``{type, uid}`` → ``{"uid": "${var}"}``), integral
floats (``1.0`` → ``1``), ``legendFormat: "__auto"`` (≡ empty), single-element selections, override
properties (a list of ``{id, value}`` becomes a mapping keyed by ``id``). Key order never matters
(dicts). All functions are pure and return new values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashgen.document import iter_panels, raw_variables, unwrap, variable_name
from dashgen.render.memo import JsonCopies, Memo, faithful_json
from dashgen.render.tables import ref

DROP_DASHBOARD_KEYS = frozenset(
    {
        "id",
        "version",
        "iteration",
        "schemaVersion",
        "gnetId",
        "uid",
        "__inputs",
        "__requires",
        "__elements",
        "meta",
        "style",
        "sharedCrosshair",
        "hideControls",
        "rows",
        "panels",
        "templating",
    }
)
DROP_PANEL_KEYS = frozenset(
    {
        "id",
        "gridPos",
        "pluginVersion",
        "span",
        "minSpan",
        "height",
        "editable",
        "error",
        "panels",
        "collapsed",
        "libraryPanel",
    }
)
# ``editorMode`` and the rest of the Prometheus query editor's state that Grafana 10-11 write on a UI save
DROP_TARGET_KEYS = frozenset(
    {"editorMode", "disableTextWrap", "fullMetaSearch", "includeNullMetadata", "useBackend"}
    | {"key", "metric", "step", "target", "query", "queryType"}
)
DROP_VARIABLE_KEYS = frozenset({"options", "index", "tags", "useTags", "tagsQuery", "tagValuesQuery", "id"})

# key -> value Grafana assumes when the key is absent (removed on both sides before comparing)
DASHBOARD_DEFAULTS: Mapping[str, Any] = {
    "editable": True,
    "fiscalYearStartMonth": 0,
    "graphTooltip": 0,
    "preload": False,
    "liveNow": False,
    "timezone": "browser",
    "weekStart": "",
}
PANEL_DEFAULTS: Mapping[str, Any] = {"transparent": False, "hideTimeOverride": False}
TARGET_DEFAULTS: Mapping[str, Any] = {
    "hide": False,
    "instant": False,
    "range": True,
    "exemplar": False,
    "format": "time_series",
    "interval": "",
    "intervalFactor": 1,
    "legendFormat": "__auto",
}
VARIABLE_DEFAULTS: Mapping[str, Any] = {
    "hide": 0,
    "skipUrlSync": False,
    "multi": False,
    "includeAll": False,
    "regex": "",
    "sort": 0,
    "refresh": 1,
    "description": "",
    "label": "",
}
FIELD_DEFAULTS: Mapping[str, Any] = {
    "color": {"mode": "palette-classic"},
    "thresholds": {"mode": "absolute", "steps": [{"color": "green"}, {"color": "red", "value": 80}]},
}
CUSTOM_DEFAULTS: Mapping[str, Any] = {
    "axisBorderShow": False,
    "axisCenteredZero": False,
    "axisColorMode": "text",
    "axisLabel": "",
    "axisPlacement": "auto",
    "barAlignment": 0,
    "barWidthFactor": 0.6,
    "drawStyle": "line",
    "fillOpacity": 0,
    "gradientMode": "none",
    "hideFrom": {"legend": False, "tooltip": False, "viz": False},
    "insertNulls": False,
    "lineInterpolation": "linear",
    "lineWidth": 1,
    "pointSize": 5,
    "scaleDistribution": {"type": "linear"},
    "showPoints": "auto",
    "spanNulls": False,
    "stacking": {"group": "A", "mode": "none"},
    "thresholdsStyle": {"mode": "off"},
    "align": "auto",
    "cellOptions": {"type": "auto"},
    "displayMode": "auto",
    "inspect": False,
    "filterable": False,
}
OPTIONS_DEFAULTS: Mapping[str, Any] = {
    "legend": {"calcs": [], "displayMode": "list", "placement": "bottom", "showLegend": True},
    "tooltip": {"mode": "single", "sort": "none", "hideZeros": False},
    "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
    "footer": {"countRows": False, "fields": "", "reducer": ["sum"], "show": False},
    "showHeader": True,
    "cellHeight": "sm",
    "colorMode": "value",
    "graphMode": "area",
    "justifyMode": "auto",
    "orientation": "auto",
    "textMode": "auto",
    "wideLayout": True,
    "showPercentChange": False,
    "percentChangeColorMode": "standard",
    "showThresholdLabels": False,
    "showThresholdMarkers": True,
    "sizing": "auto",
    "minVizHeight": 75,
    "minVizWidth": 75,
    "namePlacement": "auto",
    "valueMode": "color",
    "displayMode": "gradient",
}

# Defaults that depend on the panel type (what a UI save writes for that plugin).
TYPE_FIELD_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "timeseries": {"color": {"mode": "palette-classic"}},
}
NON_TIMESERIES_FIELD_DEFAULTS: Mapping[str, Any] = {"color": {"mode": "thresholds"}}
TYPE_OPTIONS_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "bargauge": {"maxVizHeight": 300, "minVizHeight": 16, "minVizWidth": 8},
}


# The leaves of a JSON document, returned as they are before the (much slower) ``Mapping`` ABC check is reached:
# the two walks below visit every leaf of every panel of both sides of a diff.
_LEAVES = (str, int, type(None))


def normalise_numbers(value: Any) -> Any:
    """``1.0`` → ``1`` everywhere (booleans untouched); recurses into lists and dicts."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, _LEAVES):
        return value
    if isinstance(value, dict | Mapping):  # dict first: no ABC check for one
        return {k: normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v) for v in value]
    return value


def pruned_numbers(value: Any) -> Any:
    """``1.0`` → ``1`` as ``normalise_numbers`` does, and None, ``{}`` and ``[]`` values dropped from dicts,
    recursively (absent ≡ empty ≡ null), in one walk instead of two (each side of every changed panel, variable
    and dashboard body is canonicalised twice; a plan diffs every changed panel of 50 dashboards)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, _LEAVES):
        return value
    if isinstance(value, dict | Mapping):  # dict first: no ABC check for one
        out = {}
        for k, v in value.items():
            if type(v) in _KEPT:  # most values: a string, an integer or a boolean is kept as it is, without a call
                out[k] = v
                continue
            v = pruned_numbers(v)
            if v is None or v == {} or v == []:
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [v if type(v) in _KEPT else pruned_numbers(v) for v in value]
    return value


_KEPT = frozenset({str, int, bool})  # exactly these types (a subclass goes through pruned_numbers' own checks)


def strip_defaults(value: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Remove keys equal to their default; nested dict defaults are stripped key by key."""
    out: dict[str, Any] = {}
    for key, v in value.items():
        default = defaults.get(key, _MISSING)
        if default is _MISSING:
            out[key] = v
        elif isinstance(default, Mapping) and isinstance(v, Mapping):
            rest = strip_defaults(v, default)
            if rest:
                out[key] = rest
        elif normalise_numbers(v) != default:
            out[key] = v
    return out


_MISSING = object()


def canonical_datasource(value: Any) -> Any:
    """``"$ds"``, ``"${ds}"``, ``{"type": t, "uid": "$ds"}`` → ``{"uid": "${ds}"}``; names kept as uid."""
    if value is None:
        return None
    uid = value.get("uid") if isinstance(value, Mapping) else value
    if uid is None:
        return {"default": True} if isinstance(value, Mapping) else None
    uid = str(uid)
    if (name := variable_name(uid)) is not None:
        uid = "${" + name + "}"
    return {"uid": uid}


def _builtin_annotation(annotation: Any) -> bool:
    return isinstance(annotation, Mapping) and annotation.get("builtIn") in (1, True)


def canonicalise_field_config(fc: Mapping[str, Any], panel_type: str = "") -> dict[str, Any]:
    defaults = dict(fc.get("defaults") or {})
    if panel_type and panel_type != "timeseries":
        defaults = strip_defaults(defaults, NON_TIMESERIES_FIELD_DEFAULTS)
    if isinstance(defaults.get("custom"), Mapping):
        custom = dict(defaults["custom"])
        if "displayMode" in custom and "cellOptions" not in custom:  # schema v38 migration
            custom["cellOptions"] = {"type": custom.pop("displayMode")}
        defaults["custom"] = strip_defaults(custom, CUSTOM_DEFAULTS)
    defaults = strip_defaults(defaults, FIELD_DEFAULTS)
    overrides = []
    for override in fc.get("overrides") or []:
        if not isinstance(override, Mapping):
            continue
        props = {
            p["id"]: p.get("value") for p in override.get("properties") or [] if isinstance(p, Mapping) and "id" in p
        }
        overrides.append({"matcher": override.get("matcher"), "properties": props})
    return {"defaults": defaults, "overrides": overrides}


def canonicalise_target(target: Mapping[str, Any], index: int, panel_ds: Any) -> dict[str, Any]:
    out = {k: v for k, v in target.items() if k not in DROP_TARGET_KEYS}
    if out.get("refId") in (ref(index), ""):  # the name dashgen and Grafana give the index-th query
        out.pop("refId")
    if "datasource" in out:
        ds = canonical_datasource(out["datasource"])
        if ds == panel_ds or ds is None:
            out.pop("datasource")
        else:
            out["datasource"] = ds
    if out.get("instant") is True:
        out.pop("range", None) if out.get("range") is False else None
    return strip_defaults(out, TARGET_DEFAULTS)


# exact JSON text of a panel -> its canonical form's copies: the importer canonicalises each panel it reads and
# renders, the diff each panel of both sides, and a process that imports and then diffs, or diffs the same dashboards
# again (a test session: the generated dashboards against their UI saves, imports and plans), canonicalised the same
# panel many times
_CANONICAL: Memo[bytes, JsonCopies] = Memo("canonical panels", 8_192)


def canonicalise_panel(panel: Mapping[str, Any]) -> dict[str, Any]:
    """A panel without identity, layout and defaults (its ``id`` and ``gridPos`` are compared elsewhere); once per
    exact JSON text per process, each caller its own copy (a panel that is not plain JSON is canonicalised each time:
    a tuple or NaN would read back from its text as another value)."""
    key = faithful_json(panel)
    if key is not None and (kept := _CANONICAL.get(key)) is not None:
        return kept.copy()
    out = _canonical_panel(panel)
    if key is not None and (copies := JsonCopies.of(out)) is not None:
        _CANONICAL.put(key, copies)
    return out


def _canonical_panel(panel: Mapping[str, Any]) -> dict[str, Any]:
    out = pruned_numbers({k: v for k, v in panel.items() if k not in DROP_PANEL_KEYS})
    out = strip_defaults(out, PANEL_DEFAULTS)
    ds = canonical_datasource(out.get("datasource"))
    if ds is None:
        out.pop("datasource", None)
    else:
        out["datasource"] = ds
    targets = out.get("targets")
    if isinstance(targets, list):
        out["targets"] = [canonicalise_target(t, i, ds) for i, t in enumerate(targets) if isinstance(t, Mapping)]
    if not any(isinstance(t, Mapping) and t.get("expr") for t in out.get("targets") or []):
        # A panel without queries (text) has no use for a data source or for the empty target a UI save
        # adds; a UI save writes the default data source and ``[{"refId": "A"}]`` into it.
        out.pop("datasource", None)
        out.pop("targets", None)
    if isinstance(out.get("links"), list):
        out["links"] = [_panel_link(link) for link in out["links"]]
    panel_type = str(out.get("type", ""))
    if isinstance(out.get("fieldConfig"), Mapping):
        out["fieldConfig"] = canonicalise_field_config(out["fieldConfig"], panel_type)
    if isinstance(out.get("options"), Mapping):
        options = strip_defaults(out["options"], TYPE_OPTIONS_DEFAULTS.get(panel_type, {}))
        out["options"] = strip_defaults(options, OPTIONS_DEFAULTS)
    return pruned_numbers(out)


def _panel_link(link: Any) -> Any:
    """A panel link as Grafana reads it (title, url, targetBlank): the dashboard-link fields some tools write into
    panel links (icon, tooltip, keepTime, ...) do nothing there, and v2's panel links cannot hold them."""
    if not isinstance(link, Mapping):
        return link
    return {k: link[k] for k in ("title", "url", "targetBlank") if k in link and (k != "targetBlank" or link[k])}


def _selection(current: Any) -> Any:
    if not isinstance(current, Mapping):
        return None
    value = current.get("value")
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return {"value": value} if value not in (None, "", []) else None


def canonicalise_variable(variable: Mapping[str, Any]) -> dict[str, Any]:
    out = pruned_numbers({k: v for k, v in variable.items() if k not in DROP_VARIABLE_KEYS})
    if "datasource" in out:
        out["datasource"] = canonical_datasource(out["datasource"])
    if isinstance(out.get("query"), Mapping) and set(out["query"]) <= {"query", "refId", "qryType"}:
        out["query"] = out["query"].get("query")
    if out.get("definition") == out.get("query"):
        out.pop("definition", None)
    out["current"] = _selection(out.get("current"))
    if variable.get("type") != "query":
        out.pop("sort", None)  # Grafana sorts only a query variable's options (v2 has no sort on the others)
    return pruned_numbers(strip_defaults(out, VARIABLE_DEFAULTS))


def canonicalise_dashboard_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """Dashboard-level fields (title, tags, time, refresh, links, …) without panels and variables."""
    out = pruned_numbers({k: v for k, v in body.items() if k not in DROP_DASHBOARD_KEYS})
    annotations = out.get("annotations")
    if isinstance(annotations, Mapping):
        out["annotations"] = {
            **annotations,
            "list": [a for a in annotations.get("list") or [] if not _builtin_annotation(a)],
        }
    timepicker = out.get("timepicker")
    if isinstance(timepicker, Mapping):
        out["timepicker"] = {k: v for k, v in timepicker.items() if k not in {"time_options", "hidden"}} | (
            {"hidden": True} if timepicker.get("hidden") else {}
        )
    if "refresh" in out and out["refresh"] in (False, ""):
        out.pop("refresh")
    return pruned_numbers(strip_defaults(out, DASHBOARD_DEFAULTS))


def canonicalise_for_diff(doc: Any) -> dict[str, Any]:
    """The whole dashboard in canonical form: ``{"dashboard", "panels", "variables"}``.

    Panels are listed flat in reading order (rows included) with ``id``/``gridPos`` kept under
    ``"_id"``/``"_gridPos"`` so callers can match and lay them out.
    """
    body = unwrap(doc)
    return {
        "dashboard": canonicalise_dashboard_fields(body),
        "panels": [
            {**canonicalise_panel(site.raw), "_id": site.raw.get("id"), "_gridPos": site.raw.get("gridPos")}
            for site in iter_panels(body)
        ],
        "variables": [canonicalise_variable(v) for v in raw_variables(body)],
    }
