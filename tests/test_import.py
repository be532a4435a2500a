"""``dashgen import`` / ``dashgen render-module`` (issue 21): every fixture dashboard and every generated
dashboard comes back from the written module with no semantic change; the modules are ruff-clean and
import only dashgen; legacy shapes are migrated and reported; what the kit cannot say is carried raw,
marked TODO and reported, never dropped; a live edit can be written as one panel of code."""

from __future__ import annotations

import ast
import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from imported_dashboards import imported as imported_dashboard
from memo_state import emptied_memos
from standin import GrafanaStandin

from dashgen.cli.app import main
from dashgen.diff import diff_dashboards
from dashgen.importer import BadShape, import_dashboard, load_module, render_module_file
from dashgen.importer.keys import KeyRing, slug
from dashgen.importer.vocab import ImportedEvidence
from dashgen.render.ids import panel_id
from dashgen.render.memo import MEMOS
from dashgen.render.spec import PanelSpec

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "dashboards").glob("*.json"))
GENERATED = sorted((ROOT / "dashboards").glob("*/*.json"))
TOKEN = "glsa_test_Import_Token_0123456789abcdef"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Every fixture and generated dashboard imported once: name -> (result, module path)."""
    folder = tmp_path_factory.mktemp("modules")
    found = {}
    for path in [*FIXTURES, *GENERATED]:
        result = imported_dashboard(path)
        module = folder / f"{path.stem.replace('-', '_').replace('.', '_')}.py"
        module.write_text(result.text, encoding="utf-8")
        found[path.name] = (result, module)
    return found


def test_the_round_trip_cases_share_the_sessions_imports(imported):
    """Each fixture is imported once per session (``imported_dashboards``) for these cases and the scope cases
    (``test_import_scope``): were the module fixture to import them again, make test-fast would pay ~1 s more."""
    assert len(imported) == len(FIXTURES) + len(GENERATED) > 10
    assert all(imported[path.name][0] is imported_dashboard(path) for path in [*FIXTURES, *GENERATED])


def test_fixtures_are_there_with_their_licence_notice():
    assert len(FIXTURES) == 10 and GENERATED
    notice = (ROOT / "tests" / "fixtures" / "README.md").read_text(encoding="utf-8")
    assert all(f"`{path.name}`" in notice for path in FIXTURES)


@pytest.mark.parametrize("name", [p.name for p in [*FIXTURES, *GENERATED]])
def test_round_trip_finds_no_semantic_change(imported, name):
    result, module = imported[name]
    rendered = render_module_file(module)
    diff = diff_dashboards(result.source, rendered)
    assert not diff.has_semantic_changes, diff
    assert not result.plan.unequal
    for hatch in result.hatches:  # every escape hatch is listed in the module's header
        assert f"- {hatch.key}: {hatch.path}:" in " ".join(result.text.split())


def test_generated_dashboards_need_no_escape_hatch_and_keep_their_evidence(imported):
    assert len(GENERATED) == len(list((ROOT / "profiles").glob("*.toml"))) >= 4
    for path in GENERATED:
        result, _ = imported[path.name]
        assert result.hatches == () and result.migrations == ()
        specs = [p.spec for g in result.plan.groups for p in g.panels]
        assert not [s.key for s in specs if s.kind != "text" and isinstance(s.evidence, ImportedEvidence)]


def test_written_modules_are_ruff_clean(imported):
    folder = next(iter(imported.values()))[1].parent
    config = str(ROOT / "pyproject.toml")
    check = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--config", config, str(folder)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout[-3000:]
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--config", config, str(folder)],
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout[-3000:] + fmt.stderr[-3000:]


def test_written_modules_import_nothing_outside_dashgen(imported):
    assert len(imported) == len(FIXTURES) + len(GENERATED)
    for _, module in imported.values():
        nodes = list(ast.walk(ast.parse(module.read_text(encoding="utf-8"))))
        assert [n for n in nodes if isinstance(n, ast.ImportFrom)], f"{module.name} imports from dashgen"
        for node in nodes:
            if isinstance(node, ast.ImportFrom):
                assert node.module.startswith("dashgen."), (module.name, node.module)
            assert not isinstance(node, ast.Import), module.name


@pytest.mark.slow  # 2 s: the largest third-party dashboard imported and rendered back
def test_a_400_kb_dashboard_imports_and_round_trips():
    """Its time (about 1.2 s for this 444 KB dashboard) is a benchmark figure, not a test bound."""
    path = ROOT / "dashboards" / "long-context-64" / "dg-long-context-64-cluster.json"
    doc = _load(path)
    assert path.stat().st_size >= 400_000
    result = import_dashboard(doc, "speed")
    assert not result.round_trip.has_semantic_changes


@pytest.mark.parametrize(
    "name",
    [
        "etcd__etcd-2020.json",
        "victoriametrics__vmalert-2021.json",
        "nvidia-dcgm-exporter__dcgm-exporter-dashboard.json",
    ],
)
def test_against_the_unmigrated_source_only_reported_migrations_change(imported, name):
    result, module = imported[name]
    diff = diff_dashboards(_load(ROOT / "tests" / "fixtures" / "dashboards" / name), render_module_file(module))
    notes = " ".join(result.migrations)
    assert diff.changed_panels and not diff.added_panels and not diff.removed_panels
    assert [p.title for p in diff.changed_panels if repr(p.title) not in notes] == []
    if diff.layout_moves:
        assert "legacy rows[] laid out as grid panels" in notes


def test_legacy_panels_become_current_plugins_and_each_is_reported(imported):
    etcd, _ = imported["etcd__etcd-2020.json"]
    notes = "\n".join(etcd.migrations)
    assert "'Up' (id 28): singlestat -> stat" in notes and "'RPC Rate' (id 23): graph -> timeseries" in notes
    assert "schema 16: 4 legacy rows[]" in notes and "schema 33: string data sources" in notes
    assert "schemaVersion 13 -> 42" in notes and etcd.plan.schema_version == 42
    vmalert, module = imported["victoriametrics__vmalert-2021.json"]
    assert "'Uptime' (id 2): table-old -> table" in "\n".join(vmalert.migrations)
    kinds = {p["type"] for p in render_module_file(module)["panels"]}
    assert not kinds & {"graph", "singlestat", "table-old"}
    assert "graph" not in {p.spec.extra.get("type") for g in etcd.plan.groups for p in g.panels}


def test_an_unknown_plugin_is_carried_raw_with_a_todo_and_reported(imported):
    result, module = imported["sglang__sglang-dashboard.json"]
    hatch = next(h for h in result.hatches if h.path == "type")
    assert "'heatmap'" in hatch.reason
    text = module.read_text(encoding="utf-8")
    assert text.index("TODO(import): raw JSON, plugin 'heatmap'") < text.index('extra={"type": "heatmap"')
    assert [p["type"] for p in render_module_file(module)["panels"]].count("heatmap") == 2


def test_field_overrides_and_transformations_are_code_and_unknown_ones_are_reported(imported):
    result, module = imported["kube-prometheus__k8s-resources-cluster.json"]
    text = module.read_text(encoding="utf-8")
    assert "overrides=(" in text and "fieldConfig.overrides" not in " ".join(h.path for h in result.hatches)
    join = [h for h in result.hatches if h.path.startswith("transformations[")]
    assert join and all("'joinByField'" in h.reason for h in join)
    assert "TODO(import): raw JSON, transformation 'joinByField'" in text


def _synthetic() -> dict:
    """A dashboard with what real ones hold now and then: a library panel, a collapsed repeated row, an
    unknown transformation, a panel without id, duplicate titles, an HTML text panel, a k8s wrapper."""
    panel = {
        "type": "timeseries",
        "title": "Load",
        "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
        "id": 3,
        "datasource": {"type": "prometheus", "uid": "$ds"},
        "targets": [{"refId": "A", "expr": "up", "hide": True, "exemplar": True}],
        "transformations": [{"id": "someFuturePlugin", "options": {"x": 1}}],
    }
    return {
        "apiVersion": "dashboard.grafana.app/v1beta1",
        "kind": "Dashboard",
        "metadata": {"name": "syn"},
        "spec": {
            "title": "Synthetic",
            "uid": "syn",
            "schemaVersion": 41,
            "panels": [
                panel,
                {**copy.deepcopy(panel), "id": 4, "gridPos": {"x": 12, "y": 0, "w": 12, "h": 8}},
                {
                    "title": "Shared CPU",
                    "gridPos": {"x": 0, "y": 8, "w": 8, "h": 6},
                    "id": 5,
                    "libraryPanel": {"uid": "lib-cpu", "name": "Shared CPU"},
                },
                {
                    "type": "text",
                    "title": "",
                    "gridPos": {"x": 8, "y": 8, "w": 16, "h": 6},
                    "options": {"mode": "html", "content": "<b>hi</b>"},
                },
                {
                    "type": "row",
                    "title": "Per node",
                    "collapsed": True,
                    "repeat": "node",
                    "id": 9,
                    "gridPos": {"x": 0, "y": 14, "w": 24, "h": 1},
                    "panels": [
                        {
                            "type": "stat",
                            "title": "Up",
                            "id": 10,
                            "gridPos": {"x": 0, "y": 15, "w": 6, "h": 4},
                            "targets": [{"expr": 'up{node="$node"}', "refId": "A"}],
                        }
                    ],
                },
            ],
            "templating": {"list": [{"name": "ds", "type": "datasource", "query": "prometheus"}]},
        },
    }


def test_library_panel_repeat_and_unknown_transformation_are_kept_and_reported(tmp_path):
    result = import_dashboard(_synthetic(), "synthetic")
    assert not result.round_trip.has_semantic_changes
    paths = {(h.key, h.path) for h in result.hatches}
    assert ("top.shared_cpu", "libraryPanel.uid") in paths or ("top.shared_cpu", "libraryPanel") in paths
    assert ("row:per_node", "repeat") in paths
    assert ("top.load", "transformations[0]") in paths and ("top.load", "targets[0].hide") in paths
    module = tmp_path / "syn.py"
    module.write_text(result.text, encoding="utf-8")
    rendered = render_module_file(module)
    library = next(p for p in rendered["panels"] if p.get("title") == "Shared CPU")
    assert library["libraryPanel"] == {"uid": "lib-cpu", "name": "Shared CPU"}
    row = next(p for p in rendered["panels"] if p.get("type") == "row")
    assert row["repeat"] == "node" and [p["title"] for p in row["panels"]] == ["Up"]
    assert [p["id"] for p in rendered["panels"][:2]] == [3, 4]  # Grafana's ids kept, duplicate titles apart
    assert {g.key: [p.spec.key for p in g.panels] for g in result.plan.groups}["top"][:2] == ["top.load", "top.load_2"]


def test_keys_come_from_titles_and_are_stable_and_unique():
    ring = KeyRing()
    assert [ring.take(slug(t, "panel")) for t in ("CPU Busy %", "CPU Busy %", "", "1m load")] == [
        "cpu_busy",
        "cpu_busy_2",
        "panel",
        "panel_1m_load",
    ]
    texts = []
    for _ in range(2):
        with emptied_memos():  # two imports, not one import and its memo
            texts.append(import_dashboard(_load(FIXTURES[0]), "a").text)
    assert texts[0] == texts[1]


def test_an_export_with_meta_imports_as_its_dashboard(imported):
    plain, _ = imported["kube-prometheus__k8s-resources-cluster.json"]
    export, _ = imported["grafana-api-export__k8s-resources-cluster.json"]
    assert plain.text.split('"""', 2)[2] == export.text.split('"""', 2)[2]


def test_imported_evidence_is_for_imports_only_and_the_evidence_rule_holds():
    with pytest.raises(ValueError, match="states its evidence"):
        PanelSpec(key="g.p", title="T", kind="timeseries", evidence=None)
    offenders = [
        p.name
        for p in (ROOT / "panels").rglob("*.py")
        if "ImportedEvidence" in p.read_text(encoding="utf-8") or "imported(" in p.read_text()
    ]
    assert offenders == []


def _invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env or {})


def test_panel_key_writes_one_dashgen_panel_with_its_own_key(tmp_path):
    source = ROOT / "dashboards" / "h20-16" / "dg-h20-16-cluster.json"
    out = tmp_path / "one.py"
    result = _invoke("import", str(source), "--panel", "slo_health.health", "-o", str(out))
    assert result.exit_code == 0, result.output
    code = out.read_text(encoding="utf-8").split('"""', 2)[2]
    assert '"slo_health.health",' in code and "Evidence(" in code and "imported(" not in code
    dashboard = load_module(out)
    assert [p.key for g in dashboard.groups for p in g.panels] == ["slo_health.health"]
    rendered = render_module_file(out)
    assert panel_id("slo_health.health") in [q["id"] for p in rendered["panels"] for q in [p, *p.get("panels", [])]]
    assert "no semantic change" in result.output


def test_live_edit_is_written_as_code_through_the_grafana_client(tmp_path):
    dashboard = _load(ROOT / "dashboards" / "h20-16" / "dg-h20-16-cluster.json")
    edited = next(p for p in dashboard["panels"] if p.get("id") == panel_id("slo_health.health"))
    edited["title"] = "Health (edited in Grafana)"
    with GrafanaStandin(token=TOKEN) as grafana:
        grafana.seed_dashboard(dashboard)
        out = tmp_path / "live.py"
        result = _invoke(
            "import",
            "--live",
            dashboard["uid"],
            "--panel",
            "slo_health.health",
            "-o",
            str(out),
            "--grafana-url",
            grafana.url,
            "--format",
            "json",
            env={"GRAFANA_TOKEN": TOKEN},
        )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["results"]
    assert report["panels"] == 1 and report["round_trip"]["semantic_changes"] == 0
    assert '"Health (edited in Grafana)"' in out.read_text(encoding="utf-8")


def test_render_module_then_dashgen_diff_finds_the_source_equal(tmp_path):
    source = FIXTURES[0]
    module, rendered = tmp_path / "m.py", tmp_path / "m.json"
    assert _invoke("import", str(source), "-o", str(module)).exit_code == 0
    assert _invoke("render-module", str(module), "--out", str(rendered)).exit_code == 0
    diff = _invoke("diff", str(source), str(rendered))
    assert diff.exit_code == 0, diff.output


def test_a_legacy_dashboard_s_migrated_source_is_written_so_anyone_can_check_the_round_trip(tmp_path):
    """``--migrated-out``: the legacy etcd dashboard (schema 13, rows[]) differs from its source by the migrations,
    so the source itself cannot show the round trip; the migrated copy written beside the module can."""
    source = ROOT / "tests" / "fixtures" / "dashboards" / "etcd__etcd-2020.json"
    module, migrated, rendered = tmp_path / "e.py", tmp_path / "migrated.json", tmp_path / "e.json"
    assert _invoke("import", str(source), "-o", str(module), "--migrated-out", str(migrated)).exit_code == 0
    assert _invoke("render-module", str(module), "--out", str(rendered)).exit_code == 0
    assert _invoke("diff", str(migrated), str(rendered)).exit_code == 0
    assert json.loads(migrated.read_text())["schemaVersion"] > json.loads(source.read_text())["schemaVersion"]
    assert _invoke("diff", str(source), str(rendered)).exit_code == 1  # the migrations are changes against it


def test_import_json_report_lists_migrations_and_escape_hatches(tmp_path):
    source = ROOT / "tests" / "fixtures" / "dashboards" / "etcd__etcd-2020.json"
    result = _invoke("import", str(source), "-o", str(tmp_path / "e.py"), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["results"]
    assert any("graph -> timeseries" in m for m in report["migrations"])
    assert {"key", "title", "path", "reason"} <= set(report["escape_hatches"][0])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "not JSON (line 1"),
        ("[1, 2]", "top-level JSON value is not an object"),
        ('{"title": "x"}', "not a Grafana dashboard"),
        ('{"panels": {"a": 1}}', "panels: expected a list"),
        ('{"panels": [], "templating": {"list": [{"name": 5, "type": "custom"}]}}', "list[0].name: expected a string"),
        ('{"panels": [], "templating": {"list": [{"name": "a"}]}}', "templating.list[0].type: missing"),
        ('{"panels": [], "templating": {"list": [{"name": "a", "type": "custom", "options": [1]}]}}', "options[0]"),
        ('{"apiVersion": "dashboard.grafana.app/v2beta1", "spec": {"elements": {}, "layout": {}}}', "v2 dashboard"),
    ],
)
def test_bad_source_is_one_line_and_exit_2(tmp_path, content, message):
    source = tmp_path / "in.json"
    if content is not None:
        source.write_text(content, encoding="utf-8")
    result = _invoke("import", str(source), "-o", str(tmp_path / "out.py"))
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_usage_errors_are_exit_2(tmp_path):
    source = str(FIXTURES[0])
    existing = tmp_path / "exists.py"
    existing.write_text("x = 1\n", encoding="utf-8")
    assert "exists; use --force" in _invoke("import", source, "-o", str(existing)).output
    assert _invoke("import", "-o", str(tmp_path / "a.py")).exit_code == 2
    nothing = _invoke("import", source, "--panel", "no.such_panel", "-o", str(tmp_path / "b.py"))
    assert nothing.exit_code == 2 and "--panel no.such_panel: no panel" in nothing.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def broken(:\n", "not valid Python"),
        ("DASHBOARD = 1\n", "DASHBOARD: expected an ImportedDashboard"),
        ("raise RuntimeError('boom')\n", "fails on load: RuntimeError: boom"),
    ],
)
def test_a_bad_module_is_one_line_and_exit_2(tmp_path, text, message):
    module = tmp_path / "bad.py"
    module.write_text(text, encoding="utf-8")
    result = _invoke("render-module", str(module), "--out", str(tmp_path / "x.json"))
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.slow  # 3 s: 80 seeded mutations, each imported and rendered back
def test_a_malformed_dashboard_is_a_bad_shape_or_round_trips():
    """Seeded mutations of the small fixtures (a value made null, a string, a number, a list, an object): the
    import either names the bad field or round-trips; it never fails inside rendering or the diff."""
    rng = random.Random(21)
    # each mutation starts from a fresh parse of the fixture's text (a quarter of a deepcopy's CPU), and the paths of
    # a fixture are listed once: a fresh copy has the same paths in the same order, so the seeded draws are unchanged
    texts = [p.read_text(encoding="utf-8") for p in FIXTURES if p.stat().st_size < 70_000]
    junk = [None, "x", 3, 2.5, True, [], {}, [1, "a"], {"a": 1}, -1]

    def paths(value, at=()):
        yield at
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            yield from paths(item, (*at, key))

    every_path = {text: list(paths(json.loads(text)))[1:] for text in texts}
    for _ in range(80):
        text = rng.choice(texts)
        doc = json.loads(text)
        path = rng.choice(every_path[text])
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = rng.choice(junk)
        try:
            result = import_dashboard(doc, "fuzz")
        except BadShape as exc:
            assert ":" in str(exc)
            continue
        assert not result.round_trip.has_semantic_changes and not result.plan.unequal, path


def test_imported_modules_pass_ruff_format_and_ruff_check(imported):
    """What ``dashgen import`` writes is code a team commits: ``ruff format --check`` and ``ruff check`` (the
    line length dashgen and ``dashgen init`` use, 120) accept every module unchanged."""
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this Python (pip install -e '.[test]')")
    folder = {module.parent for _, module in imported.values()}.pop()
    for command in (["format", "--check"], ["check"]):
        done = subprocess.run(
            [str(ruff), *command, "--isolated", "--line-length", "120", str(folder)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_long_description_imports_in_linear_work(monkeypatch):
    """Issue 32: splitting a long string into literals quoted every longer head (a 100 KB description took 20 s,
    1 MB over 120 s). The characters quoted now grow linearly with the string: 10 x the text, about 10 x the work."""
    from dashgen.importer import pyfmt

    quoted = [0]
    real = pyfmt.quote

    def counting(value: str) -> str:
        quoted[0] += len(value)
        return real(value)

    monkeypatch.setattr(pyfmt, "quote", counting)
    work = []
    for size in (10_000, 100_000):
        quoted[0] = 0
        pyfmt._split("word, (and) more " * (size // 17), 100)
        work.append(quoted[0])
    assert work[1] < 15 * work[0], work


def test_a_document_is_imported_once_per_process_by_its_value_whatever_its_origin(tmp_path):
    """The session's fixtures are imported by the function and again through ``dashgen import`` (the team's round
    trip, the command's own cases): the second import of an equal document is the memo's, with its own docstring
    naming its origin and its own migrated source; the module written is the one a fresh import writes."""
    (memo,) = [m for m in MEMOS if m.name == "imports"]
    source = ROOT / "tests" / "fixtures" / "dashboards" / "etcd__etcd-2020.json"
    module = tmp_path / "e.py"
    with emptied_memos():
        misses = memo.misses
        first = import_dashboard(_load(source), "first")
        assert _invoke("import", str(source), "-o", str(module)).exit_code == 0
        again = import_dashboard(_load(source), "again")
        assert memo.misses == misses + 1
        assert again.plan is first.plan and again.round_trip is first.round_trip
        assert again.source == first.source and again.source is not first.source
        assert again.text == first.text.replace("Source: first.", "Source: again.", 1) != first.text
        again.source["title"] = "changed by a caller"
        assert import_dashboard(_load(source), "x").source == first.source
        changed = _load(source)
        changed["title"] = "Another title"
        assert "'Another title'" in import_dashboard(changed, "first").text and memo.misses == misses + 2
    with emptied_memos():
        assert import_dashboard(_load(source), str(source)).text == module.read_text(encoding="utf-8")
    export = {"meta": {"slug": "etcd", "version": 3}, "dashboard": _load(source)}  # as Grafana's API gives it
    with emptied_memos():
        misses = memo.misses
        import_dashboard(_load(source), "plain")
        assert import_dashboard(export, "first").text == first.text and memo.misses == misses + 1  # its dashboard's


@pytest.mark.parametrize("title", [{}, {"title": None}, {"title": ""}])
def test_a_dashboard_without_a_title_is_named_so_in_the_module_s_docstring(title):
    doc = {"uid": "untitled", "panels": [], **title}
    first_line = import_dashboard(doc, "untitled.json").text.splitlines()[0]
    assert first_line == '"""Imported from Grafana by ``dashgen import``: a dashboard with no title (uid untitled).'
    assert "None" not in first_line


@pytest.mark.parametrize("mode", ["thresholds", "fixed"])
def test_an_imported_state_timeline_keeps_the_colour_mode_grafana_stored(tmp_path, mode):
    """dashgen colours its own state timelines by their value mappings ("fixed"); an imported one renders with the
    colour mode it was stored with, which the round trip compares (a thresholds-coloured timeline came back
    palette-classic once, with the diff calling it noise)."""
    panel = {
        "id": 1,
        "type": "state-timeline",
        "title": "Backend state",
        "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
        "targets": [{"refId": "A", "expr": "up"}],
        "fieldConfig": {
            "defaults": {
                "color": {"mode": mode},
                "mappings": [{"type": "value", "options": {"1": {"text": "up", "color": "green"}}}],
                "thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None}]},
            },
            "overrides": [],
        },
        "options": {"mergeValues": True},
    }
    result = import_dashboard({"uid": "timeline", "title": "Timeline", "panels": [panel]}, "timeline")
    module = tmp_path / "timeline.py"
    module.write_text(result.text, encoding="utf-8")
    (rendered,) = render_module_file(module)["panels"]
    assert rendered["fieldConfig"]["defaults"]["color"]["mode"] == mode
    assert not result.round_trip.has_semantic_changes
