"""An imported public dashboard builds and checks as the team's own panels: every fixture dashboard (real public
dashboards of several ages and shapes, tests/fixtures/README.md) imported into a team repository made by
``dashgen init``, listed together in a profile's ``extra_modules``: ``dashgen build`` and ``dashgen check`` exit 0.
Plus the rewrites of ``dashgen.render.team_fit`` one by one, so each can fail on its own."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner
from team_init import list_module, team  # noqa: F401 - the team fixture

from dashgen.cli.app import main
from dashgen.importer.vocab import imported
from dashgen.render.impossible import impossible_mappings
from dashgen.render.relabel import relabel_expr
from dashgen.render.scope import scope_expr
from dashgen.render.spec import GroupSpec, PanelSpec, Target
from dashgen.render.team_fit import fit_imported
from dashgen.render.validate import validate_dashboard

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "dashboards").glob("*.json"))


def dashgen(cwd: Path, *args: str):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), env={"GRAFANA_URL": ""})
    finally:
        os.chdir(old)


def test_every_fixture_dashboard_imported_builds_and_checks_as_team_panels(tmp_path: Path) -> None:
    assert dashgen(tmp_path, "init", "team").exit_code == 0
    team = tmp_path / "team"  # noqa: F811 - a local folder, not the fixture
    names = []
    for path in FIXTURES:
        name = re.sub(r"[^a-z0-9]+", "_", path.stem.lower())
        result = dashgen(team, "import", str(path), "-o", f"panels/{name}.py")
        assert result.exit_code == 0, f"{path.name}: {result.output[-2000:]}"
        names.append(name)
    (profile,) = sorted((team / "profiles").glob("*.toml"))
    text = profile.read_text(encoding="utf-8")
    assert "[dashboard]\n" in text
    profile.write_text(text.replace("[dashboard]\n", f"[dashboard]\nextra_modules = {json.dumps(names)}\n", 1))
    built = dashgen(team, "build")
    assert built.exit_code == 0, built.output[-3000:]
    assert dashgen(team, "rules").exit_code == 0
    checked = dashgen(team, "check")
    assert checked.exit_code == 0, "\n".join(line for line in checked.output.splitlines() if "[warning]" not in line)[
        -3000:
    ]
    dashboards = list((team / "dashboards").rglob("*.json"))
    titles = {p.get("title") for d in dashboards for p in _panels(json.loads(d.read_text(encoding="utf-8")))}
    assert {"GPU Avg. Temp", "Config error", "Cache Hit Rate"} <= titles  # dcgm, vmalert, sglang rows are there


def _panels(doc: dict) -> list[dict]:
    found = []
    for panel in doc.get("panels", []):
        found.append(panel)
        found.extend(panel.get("panels", []))
    return found


def _panel(**fields) -> PanelSpec:
    base = {"key": "top.p", "title": "P", "kind": "stat", "evidence": imported(None), "targets": (Target("up"),)}
    return PanelSpec(**{**base, **fields})


def test_fit_titles_rows_and_panels_fixes_ratio_axes_and_drops_what_the_build_refuses() -> None:
    panel = _panel(
        title=" ",
        unit="percentunit",
        targets=(Target('sum(x{a="1"}) or 0', extra={"exemplar": True, "datasource": {"uid": "abc"}, "hide": False}),),
        extra={"type": "gauge"},
        overrides=({"matcher": {"id": "byName", "options": "r"}, "properties": [{"id": "unit", "value": "percent"}]},),
    )
    fitted = fit_imported([GroupSpec("top", "", (panel,))], [], {}, "m", "Old dashboard")
    (group,) = fitted.groups
    (got,) = group.panels
    assert group.title == "Old dashboard"
    assert got.title == "Untitled stat (top.p)"
    assert (got.min, got.max) == (0, 1)
    assert got.extra == {}
    assert got.targets[0].expr == 'sum(x{a="1"})'
    assert got.targets[0].extra == {"hide": False}
    props = {p["id"]: p["value"] for p in got.overrides[0]["properties"]}
    assert props == {"unit": "percent", "min": 0, "max": 100, "mappings": list(impossible_mappings("percent", 0, 100))}
    assert got.mappings == impossible_mappings("percentunit", 0, 1)  # S38, after the panel's own (none here)
    assert len(fitted.notes) == 5  # title, axis, S38 mappings, gauge, zero fill: each said


def test_fit_keeps_a_zero_fill_inside_an_operand_and_a_heatmap() -> None:
    panel = _panel(targets=(Target("a or vector(0) * 2"),), extra={"type": "heatmap"})
    (got,) = fit_imported([GroupSpec("top", "T", (panel,))], [], {}, "m", "D").groups[0].panels
    assert got.targets[0].expr == "a or vector(0) * 2"
    assert got.extra == {"type": "heatmap"}


def test_fit_renames_a_variable_dashgen_defines_differently_everywhere_it_is_used() -> None:
    panel = _panel(
        title="GPU $gpu on ${node}",
        targets=(Target('x{gpu=~"$gpu", node="[[node]]", gpus="$gpus"}', legend="{{gpu}} ${gpu:raw}"),),
    )
    variables = [
        {"name": "gpu", "type": "query", "query": {"query": 'label_values(x{node="$node"}, gpu)', "refId": "A"}},
        {"name": "node", "type": "query", "query": "label_values(x, node)"},
        {"name": "gpus", "type": "custom", "query": "1,2"},
        {"name": "same", "type": "custom", "query": "1"},
    ]
    taken = {"gpu": {"name": "gpu"}, "node": {"name": "node"}, "same": {"name": "same", "type": "custom", "query": "1"}}
    fitted = fit_imported([GroupSpec("top", "T $node", (panel,))], variables, taken, "dcgm", "D")
    (group,) = fitted.groups
    (got,) = group.panels
    assert [v["name"] for v in fitted.variables] == ["dcgm_gpu", "dcgm_node", "gpus", "same"]
    assert fitted.variables[0]["query"] == 'label_values(x{node="$dcgm_node"}, gpu)'
    assert group.title == "T $dcgm_node"
    assert got.title == "GPU $dcgm_gpu on ${dcgm_node}"
    assert got.targets[0].expr == 'x{gpu=~"$dcgm_gpu", node="[[dcgm_node]]", gpus="$gpus"}'
    assert got.targets[0].legend == "{{gpu}} ${dcgm_gpu:raw}"


def test_the_schema_takes_the_string_override_values_grafana_stores() -> None:
    doc = json.loads((ROOT / "tests" / "fixtures" / "dashboards" / "dynamo__sglang-hicache.json").read_text())
    overrides = [o for p in _panels(doc) for o in (p.get("fieldConfig") or {}).get("overrides", [])]
    assert any(isinstance(o["matcher"].get("options"), str) for o in overrides)
    assert any(isinstance(p.get("value"), str) for o in overrides for p in o["properties"])
    assert not any("overrides" in problem for problem in validate_dashboard(doc, "hicache"))


def _dashboard(*exprs: str) -> dict:
    panels = [
        {
            "id": i + 1,
            "type": "timeseries",
            "title": f"Panel {i + 1}",
            "gridPos": {"x": 0, "y": 8 * i, "w": 12, "h": 8},
            "targets": [{"refId": "A", "expr": expr, "legendFormat": "{{Hostname}}"}],
        }
        for i, expr in enumerate(exprs)
    ]
    variables = [
        {"name": name, "type": "custom", "query": value, "current": {"text": value, "value": value}}
        for name, value in (("metric", "DCGM_FI_DEV_GPU_TEMP"), ("group", "gpu"))
    ]
    return {
        "title": "Team GPUs",
        "uid": "team-gpus",
        "schemaVersion": 39,
        "panels": panels,
        "templating": {"list": variables},
    }


def test_check_and_doctor_name_an_imported_query_that_cannot_be_fitted(team: Path, victoriametrics) -> None:  # noqa: F811
    """An imported query whose metric name or label list is a Grafana variable is named, with its reason, by
    ``check`` (a warning: the module's author decides) and by ``doctor`` (exit 1: on the shared store it reads
    other deployments' series); the query that can be rewritten reads the profile's label names."""
    source = team / "team-gpus.json"
    source.write_text(
        json.dumps(
            _dashboard(
                'avg by (Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP{gpu=~"$gpu"})',
                '$metric{job="dcgm"}',
                "sum by ($group) (DCGM_FI_DEV_POWER_USAGE)",
            )
        )
    )
    assert dashgen(team, "import", str(source), "-o", "panels/gpus.py").exit_code == 0
    (profile,) = sorted((team / "profiles").glob("*.toml"))
    list_module(team, profile.stem, "gpus")
    text = profile.read_text(encoding="utf-8")
    profile.write_text(text + '\n[labels]\nnode = "host"\n' if "[labels]" not in text else text)
    built = dashgen(team, "build")
    assert built.exit_code == 0, built.output[-2000:]
    assert dashgen(team, "rules").exit_code == 0
    documents = [json.loads(path.read_text(encoding="utf-8")) for path in (team / "dashboards").rglob("*.json")]
    exprs = [t.get("expr", "") for d in documents for p in _panels(d) for t in p.get("targets", [])]
    mine = [e for e in exprs if "DCGM_FI_DEV_GPU_TEMP{gpu" in e]
    assert mine and "by (host, gpu)" in mine[0] and "Hostname" not in mine[0], mine
    checked = dashgen(team, "check")
    assert checked.exit_code == 0, checked.output[-2000:]
    warned = [line for line in checked.output.splitlines() if line.startswith("[warning] imported query:")]
    assert len(warned) == 2, warned
    assert "extra_modules: gpus" in warned[0] and "Grafana variable $metric" in warned[0]
    assert "Grafana variable $group" in warned[1] and "label names not rewritten" in warned[1]
    doctor = dashgen(team, "doctor", "--datasource-url", victoriametrics.url, "--profile", profile.stem)
    assert doctor.exit_code == 1
    unscoped = [line for line in doctor.output.splitlines() if line.startswith("UNSCOPED ")]
    assert [line.removeprefix("UNSCOPED ") for line in unscoped] == [
        line.removeprefix("[warning] imported query: ") for line in warned
    ]
    assert "states what the store shows" not in doctor.output


def test_fit_writes_a_tables_label_columns_with_the_profiles_names_and_keeps_their_headers() -> None:
    """A table's columns are label names: the organize maps, a byName override and a link's
    ``${__field.labels.<name>}`` follow the profile's names; a column keeps the header it showed."""
    panel = _panel(
        kind="table",
        targets=(Target('max by (Hostname, gpu) (x{Hostname=~"$h"})', legend="{{Hostname}}"),),
        transformations=(
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True},
                    "indexByName": {"Hostname": 0, "gpu": 1, "Value": 2},
                    "renameByName": {"gpu": "GPU"},
                },
            },
        ),
        overrides=({"matcher": {"id": "byName", "options": "Hostname"}, "properties": [{"id": "custom.width"}]},),
        data_links=({"title": "node", "url": "/d/x?var-node=${__field.labels.Hostname}"},),
    )
    labels = {"node": "host", "gpu": "gpu_index"}
    (got,) = fit_imported([GroupSpec("top", "T", (panel,))], [], {}, "m", "D", "", labels).groups[0].panels
    assert got.targets[0].expr == 'max by (host, gpu_index) (x{host=~"$h"})'
    assert got.targets[0].legend == "{{host}}"
    options = got.transformations[0]["options"]
    assert options["indexByName"] == {"host": 0, "gpu_index": 1, "Value": 2}
    assert options["renameByName"] == {"gpu_index": "GPU", "host": "Hostname"}
    assert got.overrides[0]["matcher"]["options"] == "host"
    assert got.data_links[0]["url"].endswith("${__field.labels.host}")
    # a query that cannot be relabelled keeps the legend naming its own labels; one with nothing to rename does not
    kept_legend = _panel(targets=(Target("sum by ($by) (x)", legend="{{Hostname}}"), Target("x", legend="{{gpu}}")))
    fitted = fit_imported([GroupSpec("top", "T", (kept_legend,))], [], {}, "m", "D", "", labels)
    assert [t.legend for t in fitted.groups[0].panels[0].targets] == ["{{Hostname}}", "{{gpu_index}}"]
    assert len(fitted.unscoped) == 1 and "$by" in fitted.unscoped[0]
    # without the profile's names nothing moves
    (kept,) = fit_imported([GroupSpec("top", "T", (panel,))], [], {}, "m", "D").groups[0].panels
    assert kept.transformations == panel.transformations and kept.targets[0].expr == panel.targets[0].expr


def test_an_imported_query_is_relabelled_and_scoped_once_per_text() -> None:
    """Every build of a profile with imported modules fits their queries again (a team's build, rules and check
    each compose it): the rewrites are pure functions of the text, the renames and the matcher, remembered."""
    expr, renames = 'sum by (Hostname) (rate(x{Hostname=~"$h"}[5m]))', {"Hostname": "host"}
    relabelled = relabel_expr(expr, dict(renames))
    assert (
        relabelled is relabel_expr(expr, dict(renames)) and relabelled.expr == 'sum by (host) (rate(x{host=~"$h"}[5m]))'
    )
    scoped = scope_expr(relabelled.expr, 'deployment="a"')
    assert scoped is scope_expr(relabelled.expr, 'deployment="a"')
    assert scoped.expr == 'sum by (host) (rate(x{host=~"$h", deployment="a"}[5m]))'
    assert relabel_expr(expr, {"Hostname": "node"}).expr == 'sum by (node) (rate(x{node=~"$h"}[5m]))'
