"""Validation run on every build: the project's JSON Schema for the parts of Grafana's model
dashgen relies on, plus structural checks a schema cannot express (unique panel ids, unique
refIds, a 24-column grid without overlaps, resolvable datasource references, S5 ratio axes), and what
Grafana would rewrite on save (edge whitespace of title and uid), so the stored copy matches the build.

Every problem names profile, dashboard, panel title and JSON path.

The schema check runs twice as fast paths go (it was two thirds of a build): a validator compiled
once per process by ``fastjsonschema`` (Draft 7, the same schema file) answers "valid" for a valid document;
only when it rejects one does ``jsonschema`` run, to list every error with its path and message (the messages
the build has always printed), walking only the parts the compiled code refuses (``compiled_schema.error_lister``).
Should the two ever disagree, the fast validator's own message is reported, so nothing it refuses is let through.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema

from dashgen.document import iter_panels
from dashgen.render.compiled_schema import compiled_validator, error_lister
from dashgen.render.spec import ratio_axis_problem

GRAFANA_GLOBALS = frozenset(
    {
        "__rate_interval",
        "__range",
        "__interval",
        "__range_s",
        "__range_ms",
        "__interval_ms",
        "__all",
        "__from",
        "__to",
        "__auto",
        "__dashboard",
        "__name",
    }
)


@cache
def _schema() -> dict[str, Any]:
    return json.loads(resources.files("dashgen").joinpath("render/schema/dashboard.schema.json").read_text())


def panel_types() -> tuple[str, ...]:
    """The panel types the build accepts (the schema's one list)."""
    return tuple(_schema()["definitions"]["panel"]["properties"]["type"]["enum"])


def target_fields() -> frozenset[str]:
    """The fields of a query target the build accepts (the schema's one list)."""
    return frozenset(_schema()["definitions"]["target"]["properties"])


@cache
def _fast_validator() -> Any:
    """The schema compiled to Python code (``compiled_schema``): raises on the first error, returns on none."""
    return compiled_validator(_schema(), "schema")


@cache
def _validator() -> Any:
    """``jsonschema``'s Draft 7 validator (imported on use), the reference the fast path is held to."""
    from jsonschema import Draft7Validator

    Draft7Validator.check_schema(_schema())
    return Draft7Validator(_schema())


@cache
def _errors_validator() -> Any:
    """The full list of errors of a rejected document: jsonschema's, walking only what the fast validator refuses."""
    _validator()  # the schema checked once
    return error_lister(_schema(), _fast_validator())


def schema_errors(doc: dict[str, Any], where: str) -> list[str]:
    """Every schema error of ``doc``, each naming panel and JSON path; [] for a valid document."""
    try:
        _fast_validator()(doc)
    except fastjsonschema.JsonSchemaValueException as fast:
        errors = sorted(_errors_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        if not errors:  # the validators disagree: keep the refusal, with the fast validator's words
            path = [int(p) if p.isdigit() else p for p in fast.path[1:]] if fast.path else []
            return [f'{where}: panel "{_panel_title(doc, path)}": {_path(path)}: {fast.message}']
        return [
            f'{where}: panel "{_panel_title(doc, list(error.absolute_path))}": '
            f"{_path(list(error.absolute_path))}: {error.message}"
            for error in errors
        ]
    return []


def _path(parts: list[Any]) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _panel_title(doc: dict[str, Any], path: list[Any]) -> str:
    node: Any = doc
    title = "-"
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and "gridPos" in node and "title" in node:
            title = node["title"]
    return title


def validate_dashboard(doc: dict[str, Any], where: str) -> list[str]:
    """All problems of one rendered dashboard; ``where`` is ``profile/uid`` for the messages."""
    problems = schema_errors(doc, where)
    problems += _structural(doc, where)
    problems += _grafana_rewrites(doc, where)
    return problems


def _grafana_rewrites(doc: dict[str, Any], where: str) -> list[str]:
    """What Grafana would rewrite on save (grafana-api.md §7.1): it stores a trimmed title and uid, so a build
    with edge whitespace would never verify by SHA. (A refresh below the server's min_refresh_interval is
    refused with the profile's [dashboard] section, which knows the server's minimum.)"""
    problems = []
    for key in ("title", "uid"):
        value = doc.get(key)
        if isinstance(value, str) and value != value.strip():
            problems.append(
                f"{where}: dashboard: $.{key}: {value!r} has edge whitespace, which Grafana trims on save "
                "(the stored dashboard would never match the build)"
            )
    return problems


def _structural(doc: dict[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    variables = {var.get("name") for var in doc.get("templating", {}).get("list", [])}
    datasource_vars = {
        var.get("name") for var in doc.get("templating", {}).get("list", []) if var.get("type") == "datasource"
    }
    seen_ids: dict[object, str] = {}  # a panel's id as the JSON holds it (None when it has none)
    # Positions are compared within one container: the top level, or one collapsed row's own panels (their
    # gridPos is where they go when the row opens; Grafana moves everything below down by then).
    containers: dict[str, list[tuple[str, dict[str, int]]]] = {}
    for site in iter_panels(doc):
        path, panel = site.path, site.raw
        occupied = containers.setdefault(path.rsplit(".panels[", 1)[0] if path.count(".panels[") > 1 else "$", [])
        title = panel.get("title", "-")
        prefix = f'{where}: panel "{title}": {path}'
        panel_id = panel.get("id")
        if panel_id in seen_ids:
            problems.append(f'{prefix}.id: id {panel_id} also used by panel "{seen_ids[panel_id]}"')
        else:
            seen_ids[panel_id] = title
        pos = panel.get("gridPos") or {}
        if pos and pos.get("x", 0) + pos.get("w", 0) > 24:
            problems.append(f"{prefix}.gridPos: x {pos['x']} + w {pos['w']} exceeds the 24-column grid")
        if pos and panel.get("type") != "row":
            for other_title, other in occupied:
                if _overlap(pos, other):
                    problems.append(f'{prefix}.gridPos: overlaps panel "{other_title}"')
            occupied.append((title, pos))
        elif pos:
            occupied.append((title, pos))
        ref_ids = [target.get("refId") for target in panel.get("targets", []) or []]
        duplicates = sorted({ref for ref in ref_ids if ref_ids.count(ref) > 1})
        if duplicates:
            problems.append(f"{prefix}.targets: duplicate refId {', '.join(duplicates)}")
        for index, ref in enumerate(
            [panel.get("datasource")] + [target.get("datasource") for target in panel.get("targets", []) or []]
        ):
            problem = _unresolvable(ref, datasource_vars)
            if problem:
                where_ref = "datasource" if index == 0 else f"targets[{index - 1}].datasource"
                problems.append(f"{prefix}.{where_ref}: {problem}")
        problems += _ratio_axis(panel, prefix)
        problems += _unknown_variables(panel, prefix, variables)
    return problems


def _overlap(a: dict[str, int], b: dict[str, int]) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def _unresolvable(ref: Any, datasource_vars: set[str]) -> str:
    if ref is None:
        return ""
    uid = ref.get("uid", "") if isinstance(ref, dict) else str(ref)
    if uid.startswith("$"):
        name = uid.strip("${}")
        if name not in datasource_vars:
            return f"references ${{{name}}} but no datasource variable of that name exists"
        return ""
    if isinstance(ref, dict) and ref.get("type") == "grafana":
        return ""
    return f"hard-coded datasource uid {uid!r}; use the ${{datasource}} variable"


def _ratio_axis(panel: Mapping[str, Any], prefix: str) -> list[str]:
    defaults = (panel.get("fieldConfig") or {}).get("defaults") or {}
    problem = ratio_axis_problem(defaults.get("unit"), defaults.get("min"), defaults.get("max"))
    return [f"{prefix}.fieldConfig.defaults: {problem} (S5)"] if problem else []


def _unknown_variables(panel: Mapping[str, Any], prefix: str, variables: set[str]) -> list[str]:
    problems = []
    for index, target in enumerate(panel.get("targets", []) or []):
        for name in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", target.get("expr", "")):
            if name not in variables and name not in GRAFANA_GLOBALS and not name.isdigit():
                problems.append(f"{prefix}.targets[{index}].expr: unknown variable ${name}")
    return problems
