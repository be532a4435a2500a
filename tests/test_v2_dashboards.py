"""v2 dashboards (issue 30): every shipped profile renders a v2 resource that validates against Grafana's v2 /
v2beta1 schema with 0 errors, holds exactly the v1 build's panels (same keys, queries, units, thresholds,
mappings, descriptions, links), lays them out in tabs by question with the first screen first, reads back
as the v1 content through its classic view, and diffs against the v1 build with no content change."""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import replace
from pathlib import Path

import fastjsonschema
import pytest
from click.testing import CliRunner

from dashgen.build import build_profile, schema_of
from dashgen.cli.app import main
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profiles, profile_from_dict
from dashgen.diff import diff_dashboards
from dashgen.document import classic_view, iter_panels, load_dashboard
from dashgen.document.copying import tree_copy
from dashgen.errors import ProfileError
from dashgen.render.document import render_dashboard
from dashgen.render.ids import panel_id
from dashgen.render.v2 import render_v2, validate_v2
from dashgen.render.v2 import validate as v2_validate
from dashgen.render.v2.validate import SCHEMA_FILES

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {p.name: p for p in load_profiles()}
V2_PROFILES = sorted(name for name, p in PROFILES.items() if p.dashboard.grafana >= (12, 2))
SCHEMA_BLOBS = {  # the Foundation SDK's git blob ids (dashgen/render/schema/README.md)
    "dashboardv2.schema.json": "a0f5efe930b30646b8b36346259420f4a1f83aea",
    "dashboardv2beta1.schema.json": "5f1a96fe1624f9006b611b1409cb3b678f6d14d7",
}


def _v2(name: str, api_version: str = "v2beta1") -> tuple[dict, dict, dict]:
    """(spec-less v1 document, v2 resource, DashboardSpec) of a shipped profile's cluster dashboard."""
    spec = dashboard_specs(PROFILES[name])[0]
    document = render_dashboard(spec)
    return document, render_v2(spec, api_version), spec


def _panels(body: dict) -> dict:
    return {site.raw["id"]: dict(site.raw) for site in iter_panels(body) if site.raw.get("type") != "row"}


def _content(panel: dict) -> dict:
    """A panel without its position, its links as a v2 panel link holds them (title, url, targetBlank)."""
    out = {k: v for k, v in panel.items() if k != "gridPos"}
    if "links" in out:
        out["links"] = [
            {k: link[k] for k in ("title", "url", "targetBlank") if k in link and (k != "targetBlank" or link[k])}
            for link in out["links"]
        ]
    return out


def test_the_schema_copies_are_the_foundation_sdks_files_unchanged():
    for name, blob in SCHEMA_BLOBS.items():
        data = (ROOT / "dashgen" / "render" / "schema" / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name
    assert set(SCHEMA_FILES.values()) == set(SCHEMA_BLOBS)


@pytest.mark.parametrize("api_version", ["v2", "v2beta1"])
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_shipped_profile_renders_a_schema_valid_v2_resource(name, api_version):
    _, resource, spec = _v2(name, api_version)
    assert validate_v2(resource, name) == []
    assert resource["apiVersion"] == f"dashboard.grafana.app/{api_version}"
    assert resource["kind"] == "Dashboard"
    assert resource["metadata"]["name"] == spec.uid
    assert list(resource["spec"]["elements"]) == [p.key for p in spec.panels()]


def test_the_validator_names_the_path_of_a_schema_error_and_a_missing_element():
    _, resource, _ = _v2("long-context-64")
    broken = tree_copy(resource)
    first = broken["spec"]["layout"]["spec"]["tabs"][0]["spec"]["layout"]["spec"]["rows"][0]["spec"]
    first["collapse"] = "no"
    key = next(iter(broken["spec"]["elements"]))
    del broken["spec"]["elements"][key]
    problems = validate_v2(broken, "lc")
    assert any("$.spec.layout.spec.tabs[0].spec.layout.spec.rows[0].spec.collapse" in p for p in problems)
    assert any(f"element {key!r} is not in spec.elements" in p for p in problems)


def _fast_accepts(spec: dict, api_version: str) -> bool:
    try:
        v2_validate._fast_validator(api_version)(spec)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


@pytest.mark.slow  # jsonschema over every shipped v2 spec: ~1.7 s of CPU each
@pytest.mark.parametrize("api_version", ["v2", "v2beta1"])
def test_the_compiled_validator_accepts_what_jsonschema_accepts_and_writes_nothing_into_the_spec(api_version):
    """The build's fast path (fastjsonschema) answers "valid" only where jsonschema finds no error, and leaves
    the spec as it was (the schema has ``default`` values fastjsonschema would otherwise fill in)."""
    checked = 0
    for name in sorted(PROFILES):
        spec = _v2(name, api_version)[1]["spec"]
        before = json.dumps(spec, sort_keys=True)
        assert _fast_accepts(spec, api_version), name
        assert json.dumps(spec, sort_keys=True) == before, f"{name}: the validator changed the spec"
        assert list(v2_validate._validator(api_version).iter_errors(spec)) == [], name
        checked += 1
    assert checked == len(PROFILES) >= 4


def test_a_valid_resource_never_reaches_jsonschema(monkeypatch):
    """The fast path holds: jsonschema (~1.7 s a spec) runs only for a spec the compiled validator rejects."""

    def refuse(spec, api_version):
        raise AssertionError("jsonschema ran on a valid spec")

    monkeypatch.setattr(v2_validate, "_jsonschema_errors", refuse)
    _, resource, _ = _v2("long-context-64", "v2")
    assert validate_v2(resource, "lc") == []
    broken = tree_copy(resource)
    broken["spec"]["title"] = 7
    with pytest.raises(AssertionError, match="jsonschema ran"):
        validate_v2(broken, "lc")


def _first_row(spec: dict) -> dict:
    return spec["layout"]["spec"]["tabs"][0]["spec"]["layout"]["spec"]["rows"][0]["spec"]


def _first_element(spec: dict) -> dict:
    return next(iter(spec["elements"].values()))


BROKEN_V2 = {  # what a build must refuse: the mutation, and the JSON path jsonschema's message names
    "row collapse not a boolean": (lambda s: _first_row(s).update(collapse="no"), ".rows[0].spec.collapse"),
    "title not a string": (lambda s: s.update(title=7), "$.spec.title"),
    "element of an unknown kind": (lambda s: _first_element(s).update(kind="Gauge"), "$.spec.elements."),
    "panel id a string": (lambda s: _first_element(s)["spec"].update(id="1"), ".spec.id"),
    "layout of an unknown kind": (lambda s: s["layout"].update(kind="FlowLayout"), "$.spec.layout"),
    "no elements": (lambda s: s.pop("elements"), "$.spec"),
}


@pytest.mark.slow  # jsonschema lists every error of a whole spec: ~1.5 s of CPU a case
@pytest.mark.parametrize("api_version", ["v2", "v2beta1"])
@pytest.mark.parametrize("case", BROKEN_V2, ids=list(BROKEN_V2))
def test_the_compiled_validator_rejects_what_jsonschema_rejects_and_the_message_names_the_path(
    case, api_version, monkeypatch
):
    mutate, path = BROKEN_V2[case]
    spec = tree_copy(_v2("long-context-64", api_version)[1]["spec"])
    mutate(spec)
    assert not _fast_accepts(spec, api_version)
    # jsonschema's own errors, as schema_errors asks for them (one pass of jsonschema over the spec, not two)
    asked: list[list[str]] = []
    errors = v2_validate._jsonschema_errors
    monkeypatch.setattr(v2_validate, "_jsonschema_errors", lambda s, v: asked.append(errors(s, v)) or asked[-1])
    problems = v2_validate.schema_errors(spec, api_version)
    assert len(asked) == 1 and asked[0], "jsonschema accepts what the compiled validator refuses"
    assert problems and all(p.startswith("$.spec") for p in problems), problems
    assert any(path in p.split(": ", 1)[0] for p in problems), problems


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_v2_holds_exactly_the_v1_panels_content_by_key(name):
    document, resource, spec = _v2(name)
    v1, back = _panels(document), _panels(classic_view(resource))
    assert set(v1) == set(back) == {panel_id(p.key) for p in spec.panels()}
    for pid, panel in v1.items():
        assert _content(back[pid]) == _content(panel), panel["title"]
    elements = resource["spec"]["elements"]
    for p in spec.panels():
        element, panel = elements[p.key]["spec"], v1[panel_id(p.key)]
        exprs = [q["spec"]["query"]["spec"]["expr"] for q in element["data"]["spec"]["queries"]]
        assert exprs == [t["expr"] for t in panel.get("targets", [])]
        defaults = element["vizConfig"]["spec"]["fieldConfig"]["defaults"]
        assert defaults.get("unit") == (panel.get("fieldConfig") or {}).get("defaults", {}).get("unit")
        assert defaults.get("thresholds") == (panel.get("fieldConfig") or {}).get("defaults", {}).get("thresholds")
        assert element["description"] == panel["description"]


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_v2_variables_annotations_and_time_read_back_as_v1(name):
    document, resource, _ = _v2(name)
    view = classic_view(resource)
    inert = {"custom": {"sort", "refresh"}, "datasource": {"sort"}}  # v2 has no such field on these kinds
    for old, new in zip(document["templating"]["list"], view["templating"]["list"], strict=True):
        assert {k: v for k, v in old.items() if k not in inert.get(old["type"], ())} == new
    for key in ("annotations", "time", "timepicker", "refresh", "timezone", "graphTooltip", "tags", "title", "uid"):
        assert view[key] == document[key], key


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_tabs_by_question_first_screen_first_rows_collapsed_and_placed_as_in_v1(name):
    document, resource, spec = _v2(name)
    tabs = resource["spec"]["layout"]["spec"]["tabs"]
    assert resource["spec"]["layout"]["kind"] == "TabsLayout"
    assert tabs[0]["spec"]["title"] == "Now"
    first_rows = tabs[0]["spec"]["layout"]["spec"]["rows"]
    assert [r["spec"]["title"] for r in first_rows] == [spec.groups[0].title]
    first_items = first_rows[0]["spec"]["layout"]["spec"]["items"]
    assert [i["spec"]["element"]["name"] for i in first_items] == [p.key for p in spec.groups[0].panels]
    rows = {r["spec"]["title"]: r["spec"] for t in tabs for r in t["spec"]["layout"]["spec"]["rows"]}
    assert len(rows) == len(spec.groups)
    v1 = _panels(document)
    for group in spec.groups:
        row = rows[group.title]
        assert row["collapse"] == group.collapsed
        top = min(v1[panel_id(p.key)]["gridPos"]["y"] for p in group.panels)
        for item, panel in zip(row["layout"]["spec"]["items"], group.panels, strict=True):
            grid = v1[panel_id(panel.key)]["gridPos"]
            at = item["spec"]
            assert (at["x"], at["y"], at["width"], at["height"]) == (grid["x"], grid["y"] - top, grid["w"], grid["h"])


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_diff_of_the_v1_and_v2_builds_reports_no_content_change_only_the_layout(name):
    document, resource, _ = _v2(name)
    diff = diff_dashboards(document, resource)
    assert not diff.changed_panels and not diff.added_panels and not diff.removed_panels
    assert not diff.changed_variables and not diff.added_variables and not diff.removed_variables
    assert not diff.layout_moves  # every panel keeps its place in its row
    assert {c.category for c in diff.dashboard_changes} == {"layout"}
    assert [c.path for c in diff.dashboard_changes] == ["schema", "layout"]


def test_diff_of_two_v2_builds_reports_a_panel_moved_to_another_tab():
    _, resource, _ = _v2("long-context-64")
    moved = tree_copy(resource)
    tabs = moved["spec"]["layout"]["spec"]["tabs"]
    row = tabs[1]["spec"]["layout"]["spec"]["rows"].pop(0)
    tabs[2]["spec"]["layout"]["spec"]["rows"].append(row)
    diff = diff_dashboards(resource, moved)
    assert not diff.changed_panels
    assert diff.layout_moves and all(m.old_row.startswith("SLO and health ›") for m in diff.layout_moves)
    assert all(m.new_row.startswith("Requests and gateway ›") for m in diff.layout_moves)


def test_lint_reads_a_v2_resource_like_its_v1_dashboard():
    document, resource, _ = _v2("pd-128")
    v1, v2 = load_dashboard(document), load_dashboard(resource)
    # the same panels and queries; the order is the tabs' (cache evidence before KV cache, Store and disks)
    assert sorted(p.title for p in v1.panels if p.type != "row") == sorted(
        p.title for p in v2.panels if p.type != "row"
    )
    assert sorted(t.expr for p in v1.panels for t in p.targets) == sorted(t.expr for p in v2.panels for t in p.targets)
    assert v1.uid == v2.uid and [v.name for v in v1.variables] == [v.name for v in v2.variables]


def _profile(name: str, **dashboard: str):
    data = tomllib.loads((ROOT / "profiles" / f"{name}.toml").read_text())
    data["dashboard"] = {**data.get("dashboard", {}), **dashboard}
    return profile_from_dict(data, f"profiles/{name}.toml")


def test_profile_schema_v2_is_refused_below_grafana_12_2_naming_the_field():
    with pytest.raises(ProfileError) as refused:
        _profile("h20-16", schema="v2")
    assert refused.value.field == "dashboard.schema" and "grafana_version" in refused.value.detail
    with pytest.raises(ProfileError, match="dashboard.schema"):
        _profile("long-context-64", schema="v3")
    with pytest.raises(ProfileError) as overridden:
        schema_of(PROFILES["h20-16"], "v2")
    assert overridden.value.field == "dashboard.grafana_version"


def test_profile_schema_v2_writes_v2beta1_for_grafana_12_and_v2_for_13():
    assert schema_of(PROFILES["long-context-64"]) == "v1"
    (built,) = build_profile(_profile("long-context-64", schema="v2"))
    assert built.schema == "v2" and built.document["apiVersion"] == "dashboard.grafana.app/v2beta1"
    (built13,) = build_profile(_profile("long-context-64", schema="v2", grafana_version="13.0"))
    assert built13.document["apiVersion"] == "dashboard.grafana.app/v2"
    assert (
        built13.sha256
        == hashlib.sha256(
            json.dumps(built13.document["spec"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest()
    )


def test_a_team_module_without_a_tab_gets_the_last_tab():
    spec = dashboard_specs(PROFILES["video-200"])[0]
    team = replace(spec.groups[-1], key="our_board", title="Our board")
    spec = replace(spec, groups=(*spec.groups[:-1], team), tabs=())
    from dashgen.dashboard import tabs_of

    tabs = tabs_of(spec.groups)
    assert tabs[0][0] == "Now" and tabs[-1] == ("Team panels", ("our_board",))


def test_cli_build_schema_v2_writes_the_resource_and_refuses_h20_16_with_exit_2(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(
        main, ["build", "--schema", "v2", "--profile", "video-200", "--out", str(tmp_path)], catch_exceptions=False
    )
    assert ok.exit_code == 0, ok.output
    written = json.loads((tmp_path / "video-200" / "dg-video-200-cluster.json").read_text())
    assert written["apiVersion"] == "dashboard.grafana.app/v2beta1" and validate_v2(written, "video-200") == []
    refused = runner.invoke(main, ["build", "--schema", "v2", "--profile", "h20-16", "--out", str(tmp_path)])
    assert refused.exit_code == 2
    assert "dashboard.grafana_version" in refused.output and not (tmp_path / "h20-16").exists()


def test_import_of_a_v2_resource_writes_a_panel_module_that_renders_back_without_change():
    from dashgen.importer import import_dashboard

    _, resource, spec = _v2("video-200")
    result = import_dashboard(resource, "video-200 v2")
    assert "DASHBOARD" in result.text
    assert not result.round_trip.has_semantic_changes
    assert len(
        [p for p in result.source["panels"] for p in [p, *p.get("panels", [])] if p.get("type") != "row"]
    ) == len(spec.panels())


def test_cli_import_refuses_a_bare_v2_spec_naming_the_missing_wrapper(tmp_path):
    _, resource, _ = _v2("video-200")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(resource["spec"]))
    refused = CliRunner().invoke(main, ["import", str(bare), "-o", str(tmp_path / "x.py")])
    assert refused.exit_code == 2 and "apiVersion" in refused.output


def test_export_of_a_v2_profile_writes_the_enveloped_v2beta1_resource_file_provisioning_accepts(tmp_path):
    """Grafana 13's file provisioning refuses a bare v2 spec and 13.0 had no ``v2`` kind registered there: the
    file is the enveloped ``v2beta1`` resource even for a profile publishing through ``v2`` (more:
    tests/test_deploy_outputs_v2.py)."""
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    text = (ROOT / "profiles" / "video-200.toml").read_text()
    (profiles / "video-200.toml").write_text(
        text.replace('grafana_version = "12.3"', 'grafana_version = "13.0"\nschema = "v2"')
    )
    out = tmp_path / "deploy"
    result = CliRunner().invoke(
        main, ["--profiles-dir", str(profiles), "export", "--format", "provisioning", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    written = json.loads((out / "provisioning" / "video-200" / "dg-video-200-cluster.json").read_text())
    assert written["apiVersion"] == "dashboard.grafana.app/v2beta1" and written["kind"] == "Dashboard"
    assert written["metadata"]["name"] == "dg-video-200-cluster" and "panels" not in written["spec"]
    assert validate_v2(written, "video-200") == []


@pytest.mark.parametrize("name", ["long-context-64", "pd-128"])
def test_lint_finds_the_same_findings_on_the_v2_elements_as_on_the_v1_panels(name):
    from dashgen.lint.runner import lint_dashboard

    document, resource, _ = _v2(name)

    def found(doc: dict) -> list[tuple[str, str, str]]:
        return sorted((f.rule, f.panel or "", f.message) for f in lint_dashboard(doc, "dashboards/x.json"))

    v1 = found(document)
    assert v1 and found(resource) == v1  # these profiles have findings (the exclusions file accepts them)
    broken = tree_copy(resource)
    element = next(e for e in broken["spec"]["elements"].values() if e["spec"]["data"]["spec"]["queries"])
    element["spec"]["data"]["spec"]["queries"][0]["spec"]["query"]["spec"]["expr"] = "rate(up[5m])"
    assert found(broken) != v1  # a v2 element's query is what lint reads


def test_a_v2_file_of_a_removed_profile_is_recognised_as_dashgens(tmp_path):
    from dashgen.build import removed_profile_files

    _, resource, _ = _v2("video-200")
    (tmp_path / "video-200").mkdir()
    written = tmp_path / "video-200" / "dg-video-200-cluster.json"
    written.write_text(json.dumps(resource))
    assert removed_profile_files(tmp_path, {"video-200"}) == []
    assert removed_profile_files(tmp_path, set()) == [written]


def test_dashboard_links_and_other_variable_types_become_valid_v2_and_read_back():
    spec = dashboard_specs(PROFILES["video-200"])[0]
    link = {"title": "Runbook", "type": "link", "url": "https://runbooks.example/gpu", "targetBlank": True}
    links = (link, {"title": "Cluster", "type": "dashboards", "tags": ["dashgen"], "asDropdown": True})
    extra = [
        {"type": "textbox", "name": "filter", "label": "Filter", "query": "", "current": {"text": "", "value": ""}},
        {"type": "constant", "name": "site", "query": "eu-1", "hide": 2, "current": {"text": "eu-1", "value": "eu-1"}},
        {"type": "interval", "name": "step", "query": "1m,5m", "current": {"text": "1m", "value": "1m"}},
    ]
    spec = replace(spec, links=links, variables=(*spec.variables, *extra))
    resource = render_v2(spec, "v2")
    assert validate_v2(resource, "video-200") == []
    kinds = [v["kind"] for v in resource["spec"]["variables"][-3:]]
    assert kinds == ["TextVariable", "ConstantVariable", "IntervalVariable"]
    view = classic_view(resource)
    assert [v["type"] for v in view["templating"]["list"][-3:]] == ["textbox", "constant", "interval"]
    assert view["templating"]["list"][-2]["hide"] == 2
    assert view["links"][0]["url"] == link["url"] and view["links"][1]["type"] == "dashboards"
    with pytest.raises(ValueError, match="'filters'"):
        render_v2(replace(spec, variables=(*spec.variables, {"type": "adhoc", "name": "filters"})), "v2")


def test_a_malformed_v2_file_is_not_a_dashboard_with_a_reason_not_a_crash(tmp_path):
    from dashgen.document import NotADashboard, unwrap

    bad = {"apiVersion": "dashboard.grafana.app/v2", "kind": "Dashboard", "metadata": {"name": "x"}}
    bad["spec"] = {"elements": {"a": []}, "layout": {"kind": "RowsLayout", "spec": {"rows": ["not a row"]}}}
    with pytest.raises(NotADashboard, match="v2 dashboard of an unexpected shape"):
        unwrap(bad)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    linted = CliRunner().invoke(main, ["lint", str(path)])
    assert linted.exit_code == 2 and "Traceback" not in linted.output and "unexpected shape" in linted.output


@pytest.mark.parametrize(("api_version", "module"), [("v2", "dashboardv2"), ("v2beta1", "dashboardv2beta1")])
@pytest.mark.parametrize("name", V2_PROFILES)
def test_the_foundation_sdk_decodes_the_v2_spec_to_the_same_panels_queries_units_and_tabs(name, api_version, module):
    """An independent decoder (the Foundation SDK's Python models, ``pip install grafana-foundation-sdk>=0.0.18``;
    skipped without it): every element decodes as a panel with the v1 panel's title, queries, unit, thresholds."""
    models = pytest.importorskip(f"grafana_foundation_sdk.models.{module}")
    document, resource, spec = _v2(name, api_version)
    decoded = models.Dashboard.from_json(resource["spec"])
    assert type(decoded.layout).__name__ == "TabsLayoutKind" and decoded.layout.spec.tabs[0].spec.title == "Now"
    assert list(decoded.elements) == [p.key for p in spec.panels()]
    v1 = _panels(document)
    for key, element in decoded.elements.items():
        panel = v1[panel_id(key)]
        assert element.spec.title == panel["title"] and element.spec.id_val == panel["id"]
        queries = [q.spec.query.spec.data.get("expr") for q in element.spec.data.spec.queries]
        assert queries == [t["expr"] for t in panel.get("targets", [])]
        defaults = element.spec.viz_config.spec.field_config.defaults
        expected = (panel.get("fieldConfig") or {}).get("defaults", {})
        assert defaults.unit == expected.get("unit")
        steps = [(s.color, s.value) for s in defaults.thresholds.steps] if defaults.thresholds else None
        want = [(s["color"], s["value"]) for s in expected["thresholds"]["steps"]] if "thresholds" in expected else None
        assert steps == want


def test_a_shared_panel_stays_a_library_reference_in_every_v2_deploy_form():
    """``dashgen export`` renders v2 from the spec as ``dashgen build`` does: a panel the profile shares as a library
    panel is a ``LibraryPanel`` element in the provisioning file and the operator's manifest, the others panels."""
    from dashgen.manifests.v2_files import v2_dashboards

    base = PROFILES["pd-128"]
    key = dashboard_specs(base)[0].panels()[3].key
    profile = replace(base, dashboard=replace(base.dashboard, library_panels=(key,)))
    (built,) = build_profile(profile, schema="v1")
    (v2,) = v2_dashboards([built], {"pd-128": "v2"})
    for resource in (json.loads(v2.file_data), v2.manifest):
        elements = resource["spec"]["elements"]
        assert elements[key]["kind"] == "LibraryPanel", elements[key]
        assert elements[key]["spec"]["libraryPanel"]["uid"] == built.library[0].uid
        assert sum(element["kind"] == "Panel" for element in elements.values()) == len(elements) - 1
        assert validate_v2(resource, "pd-128") == []
