"""Validate a Kubernetes custom resource against its real CustomResourceDefinition (``tests/fixtures/crds``).

The CRDs' ``openAPIV3Schema`` is checked with jsonschema, strictly: a field the schema does not declare is
an error (the API server would prune it silently, or ``kubectl apply --validate=strict`` refuse it), except
under ``x-kubernetes-preserve-unknown-fields``. The CEL rules (``x-kubernetes-validations``) are not
evaluated; the tests check the ones that concern dashgen's output by hand. Sources and licences of the CRDs:
``tests/fixtures/README.md``."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

CRDS = Path(__file__).resolve().parent / "fixtures" / "crds"
DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _strict(value) for key, value in schema.items()}
    if "x-kubernetes-int-or-string" in schema:
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (
        schema.get("type") == "object"
        and "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@cache
def _schemas() -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for path in sorted(CRDS.glob("*.crd.json")):
        crd = json.loads(path.read_text(encoding="utf-8"))
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            found[(f"{group}/{version['name']}", kind)] = _strict(version["schema"]["openAPIV3Schema"])
    return found


def crd_problems(resource: dict[str, Any]) -> list[str]:
    """What the CRD of ``resource`` (by apiVersion and kind) refuses in it; [] when it is valid."""
    key = (resource.get("apiVersion"), resource.get("kind"))
    schema = _schemas().get(key)  # type: ignore[arg-type]
    if schema is None:
        return [f"no served CRD version for {key}"]
    name = (resource.get("metadata") or {}).get("name", "")
    problems = [] if DNS_1123.match(name) and len(name) <= 253 else [f"metadata.name {name!r} is not DNS-1123"]
    body = {k: v for k, v in resource.items() if k != "metadata"}
    validator = jsonschema.Draft7Validator(schema)
    problems += [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message[:200]}"
        for error in validator.iter_errors(body)
    ]
    return problems
