"""``dashgen export`` of v2 profiles: every deploy path carries v2, each valid against the real schema or CRD.

* file provisioning: the enveloped ``dashboard.grafana.app/v2beta1`` resource (Grafana 13 refuses a bare v2 spec),
  valid against the Foundation SDK's v2beta1 JSON Schema (``dashgen/render/schema``);
* the sidecar ConfigMap: that very file under ``<uid>.json``;
* grafana-operator: a ``GrafanaManifest`` valid against the operator's CRD (``tests/fixtures/crds/``), its template
  the v2 resource in the profile's API version (v2 on Grafana 13, v2beta1 on 12.x), valid against that schema;
  no ``GrafanaDashboard`` (the operator posts those through the legacy API, v1 only).
A v1 profile exported beside them is unchanged (``GrafanaDashboard``, v1 JSON)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from crds import crd_problems

from dashgen.cli import main
from dashgen.render import yamlcheck, yamlread
from dashgen.render.v2 import validate_v2

ROOT = Path(__file__).resolve().parent.parent
# profile -> the Grafana it is opted into v2 for, and the API version its GrafanaManifest carries
V2_PROFILES = {"long-context-64": ("13.0", "v2"), "pd-128": ("12.3", "v2beta1"), "video-200": ("13.0", "v2")}
V1_PROFILE = "h20-16"
UIDS = {name: f"dg-{name}-cluster" for name in [*V2_PROFILES, V1_PROFILE]}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("v2deploy")
    profiles = root / "profiles"
    profiles.mkdir()
    for path in (ROOT / "profiles").glob("*.toml"):
        text = path.read_text(encoding="utf-8")
        if path.stem in V2_PROFILES:
            version = V2_PROFILES[path.stem][0]
            text = text.replace('grafana_version = "12.3"', f'grafana_version = "{version}"\nschema = "v2"')
        (profiles / path.name).write_text(text, encoding="utf-8")
    out = root / "deploy"
    argv = ["--profiles-dir", str(profiles), "export", "--out", str(out), "--namespace", "monitoring"]
    argv += ["--folder", "LLM clusters", "--folder-uid", "llm", "--datasource", "VictoriaMetrics"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0, result.output
    return out, result.output


@cache
def _documents(path: Path) -> list[dict]:
    """The YAML documents of ``path``, parsed once (the manifests are large; no test changes them)."""
    return [doc for doc in yamlread.load_all(path.read_text(encoding="utf-8")) if doc is not None]


def _assert_enveloped_v2beta1(resource: dict, uid: str) -> None:
    assert (resource["apiVersion"], resource["kind"]) == ("dashboard.grafana.app/v2beta1", "Dashboard")
    assert resource["metadata"]["name"] == uid
    assert "elements" not in resource and "layout" not in resource  # not the bare spec Grafana refuses
    assert resource["spec"]["elements"] and resource["spec"]["layout"]["kind"] == "TabsLayout"
    assert validate_v2(resource, uid) == []


@pytest.mark.parametrize("profile", sorted(V2_PROFILES))
def test_file_provisioning_gets_the_enveloped_v2beta1_resource_valid_against_the_schema(exported, profile):
    out, _ = exported
    resource = json.loads((out / "provisioning" / profile / f"{UIDS[profile]}.json").read_text(encoding="utf-8"))
    _assert_enveloped_v2beta1(resource, UIDS[profile])
    (entry,) = yamlcheck.load((out / "provisioning" / f"dashgen-{profile}.yaml").read_text())["providers"]
    assert entry["type"] == "file" and entry["options"]["path"].endswith(f"/{profile}")


@pytest.mark.parametrize("profile", sorted(V2_PROFILES))
def test_the_sidecar_configmap_carries_exactly_the_provisioning_file(exported, profile):
    out, _ = exported
    (doc,) = _documents(out / "configmap" / f"{profile}.yaml")
    assert (doc["apiVersion"], doc["kind"]) == ("v1", "ConfigMap") and doc["metadata"]["labels"]["grafana_dashboard"]
    ((key, text),) = doc["data"].items()
    assert key == f"{UIDS[profile]}.json"
    assert text.encode("utf-8") == (out / "provisioning" / profile / key).read_bytes()
    _assert_enveloped_v2beta1(json.loads(text), UIDS[profile])


@pytest.mark.parametrize("profile", sorted(V2_PROFILES))
def test_grafana_operator_gets_a_grafanamanifest_valid_against_its_crd_carrying_v2(exported, profile):
    out, _ = exported
    (doc,) = _documents(out / "grafana-operator" / f"{profile}.yaml")
    assert (doc["apiVersion"], doc["kind"]) == ("grafana.integreatly.org/v1beta1", "GrafanaManifest")
    assert crd_problems(doc) == []
    assert doc["metadata"]["namespace"] == "monitoring"
    template = doc["spec"]["template"]
    assert template["apiVersion"] == f"dashboard.grafana.app/{V2_PROFILES[profile][1]}"
    assert template["metadata"]["name"] == UIDS[profile]
    assert template["metadata"]["annotations"]["grafana.app/folder"] == "llm"
    assert validate_v2(template, profile) == []


def test_a_v1_profile_beside_them_still_gets_a_grafanadashboard_with_v1_json(exported):
    out, output = exported
    (doc,) = _documents(out / "grafana-operator" / f"{V1_PROFILE}.yaml")
    assert doc["kind"] == "GrafanaDashboard" and crd_problems(doc) == []
    assert json.loads(doc["spec"]["json"])["uid"] == UIDS[V1_PROFILE]
    assert "apiVersion" not in json.loads((out / "provisioning" / V1_PROFILE / f"{UIDS[V1_PROFILE]}.json").read_text())
    kinds = {d["kind"] for p in (out / "grafana-operator").glob("*.yaml") for d in _documents(p)}
    assert kinds == {"GrafanaDashboard", "GrafanaManifest", "GrafanaFolder"}
    assert output.count("--datasource is not applied") == len(V2_PROFILES)  # said, per v2 profile


def test_the_checks_refuse_what_grafana_and_the_operator_would_refuse(exported):
    """The validators are real: a GrafanaManifest without a template, with an unknown field in the template's
    metadata or at the spec's top level, and a bare v2 spec without its envelope are each refused."""
    out, _ = exported
    (doc,) = _documents(out / "grafana-operator" / "pd-128.yaml")
    assert crd_problems(doc) == []
    spec = doc["spec"]
    assert crd_problems({**doc, "spec": {k: v for k, v in spec.items() if k != "template"}})
    assert crd_problems({**doc, "spec": {**spec, "json": "{}"}})
    bad_metadata = {**spec["template"], "metadata": {**spec["template"]["metadata"], "uid": "x"}}
    assert crd_problems({**doc, "spec": {**spec, "template": bad_metadata}})
    assert validate_v2(spec["template"]["spec"], "bare")
    broken = json.loads(json.dumps(spec["template"]))
    broken["spec"]["layout"]["kind"] = "NoSuchLayout"
    assert validate_v2(broken, "broken")
