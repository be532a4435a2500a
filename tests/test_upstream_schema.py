"""Developer check: every output gives zero errors against Grafana's own dashboard JSON Schema.

Grafana's schema (generated from Grafana 12.3 by the Foundation SDK) is not part of the project; this
test runs when a copy sits beside the checkout (``../shared/schemas``) and is skipped otherwise. The
project's own schema (dashgen/schema) enforces the same constraints for the fields dashgen emits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from dashgen.build import build_all
from dashgen.deployment.profile import load_profiles
from dashgen.render.v2.validate import any_valued_overrides

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT.parent / "shared" / "schemas" / "foundation-sdk__dashboard.jsonschema.json"


@pytest.mark.skipif(not UPSTREAM.exists(), reason="Grafana's JSON Schema is not beside this checkout")
def test_outputs_have_zero_errors_against_grafanas_schema():
    validator = Draft7Validator(any_valued_overrides(json.loads(UPSTREAM.read_text())))
    dashboards = build_all(load_profiles(directory=ROOT / "profiles"))
    assert len(dashboards) == len(list((ROOT / "profiles").glob("*.toml"))) >= 4
    for dashboard in dashboards:
        errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(dashboard.document)]
        assert errors == [], dashboard.uid
