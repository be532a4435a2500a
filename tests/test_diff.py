"""Semantic dashboard diff: UI-save noise is ignored, each real change kind is reported."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from diff_documents import generated, panel, write

from dashgen.cli.diff_cmd import diff_command
from dashgen.diff import canonicalise_for_diff, diff_dashboards
from dashgen.diff.compare import (
    ABSENT,
    count_leaf_differences,
    deepdiff_leaves,
    field_path,
    leaf_changes,
    leaves,
)
from dashgen.diff.noise import canonicalise_target, normalise_numbers, pruned_numbers
from dashgen.render.tables import ref


def ui_saved(doc: dict[str, Any]) -> dict[str, Any]:
    """What a Grafana 12 UI save gives back for ``doc`` (grafana-api.md §7.2), no semantic edit."""
    live = copy.deepcopy(doc)
    live.update(id=42, version=7, iteration=1712345678901, schemaVersion=42, fiscalYearStartMonth=0)
    live.update(graphTooltip=0, links=[], preload=False, editable=True, timepicker={"time_options": ["5m"]})
    live["annotations"] = {
        "list": [
            {
                "builtIn": 1,
                "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                "enable": True,
                "hide": True,
                "iconColor": "rgba(0, 211, 255, 1)",
                "name": "Annotations & Alerts",
                "type": "dashboard",
            }
        ]
    }
    for i, p in enumerate(live["panels"]):
        p["id"] = 100 + i
        p["pluginVersion"] = "12.0.0"
        p["datasource"] = {"type": "prometheus", "uid": "${datasource}"}
        p["fieldConfig"]["defaults"].update(
            color={"mode": "palette-classic"},
            mappings=[],
            thresholds={
                "mode": "absolute",
                "steps": [{"color": "green", "value": None}, {"color": "red", "value": 80}],
            },
            custom={"drawStyle": "line", "lineWidth": 1, "spanNulls": False, "fillOpacity": 0, "showPoints": "auto"},
            min=0.0,
        )
        p["fieldConfig"]["overrides"] = []
        p["options"] = {
            "legend": {"calcs": [], "displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "single", "sort": "none", "hideZeros": False},
        }
        p["gridPos"] = {k: float(v) for k, v in p["gridPos"].items()}
        for j, t in enumerate(p["targets"]):
            t.update(refId=chr(65 + j), datasource={"type": "prometheus", "uid": "${datasource}"}, editorMode="code")
            t.update(range=True, instant=False)
    for v in live["templating"]["list"]:
        v.update(hide=0, skipUrlSync=False, options=[])
        if "datasource" in v:
            v["datasource"] = {"type": "prometheus", "uid": "${datasource}"}
    # key order reversed everywhere
    return json.loads(json.dumps(live), object_pairs_hook=lambda kv: dict(reversed(kv)))


def test_noise_only_ui_save_has_no_semantic_change() -> None:
    d = diff_dashboards(generated(), ui_saved(generated()))
    assert not d.has_semantic_changes, d
    assert d.noise > 0


def test_canonical_forms_of_generated_and_ui_saved_are_equal() -> None:
    a, b = canonicalise_for_diff(generated()), canonicalise_for_diff(ui_saved(generated()))
    strip = [{k: v for k, v in p.items() if k not in {"_id", "_gridPos"}} for p in a["panels"]]
    assert strip == [{k: v for k, v in p.items() if k not in {"_id", "_gridPos"}} for p in b["panels"]]
    assert a["dashboard"] == b["dashboard"] and a["variables"] == b["variables"]


def test_k8s_wrapper_and_export_wrapper_are_unwrapped() -> None:
    wrapped = {"apiVersion": "dashboard.grafana.app/v1beta1", "kind": "Dashboard", "spec": ui_saved(generated())}
    assert not diff_dashboards({"dashboard": generated(), "meta": {"version": 3}}, wrapped).has_semantic_changes


def _changed(doc_edit: Any) -> Any:
    new = ui_saved(generated())
    doc_edit(new)
    return diff_dashboards(generated(), new)


def _categories(d: Any, title: str) -> list[str]:
    return [c.category for pc in d.changed_panels if pc.title == title for c in pc.changes]


def test_query_change_is_reported_with_panel_title() -> None:
    d = _changed(lambda n: n["panels"][0]["targets"][0].update(expr="sum(sglang:num_running_reqs)"))
    assert _categories(d, "Running requests") == ["query"]


def test_unit_change_is_reported() -> None:
    d = _changed(lambda n: n["panels"][1]["fieldConfig"]["defaults"].update(unit="reqps"))
    assert _categories(d, "Queued requests") == ["unit"]


def test_axis_change_is_reported() -> None:
    d = _changed(lambda n: n["panels"][2]["fieldConfig"]["defaults"].update(max=1))
    assert _categories(d, "KV usage") == ["axis"]


def test_mapping_change_is_reported() -> None:
    mapping = [{"type": "special", "options": {"match": "nan", "result": {"text": "No traffic"}}}]
    d = _changed(lambda n: n["panels"][0]["fieldConfig"]["defaults"].update(mappings=mapping))
    assert set(_categories(d, "Running requests")) == {"mapping"}


def test_threshold_and_span_nulls_edits_in_the_ui_are_real_changes() -> None:
    def edit(n: dict[str, Any]) -> None:
        n["panels"][0]["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"] = 95
        n["panels"][0]["fieldConfig"]["defaults"]["custom"]["spanNulls"] = True

    assert set(_categories(_changed(edit), "Running requests")) == {"thresholds", "other"}


def test_added_and_removed_panels_are_reported() -> None:
    def edit(n: dict[str, Any]) -> None:
        n["panels"].pop(1)
        n["panels"].append(panel(9, "Gateway inflight", "smg_admission_inflight", y=24))

    d = _changed(edit)
    assert [p.title for p in d.added_panels] == ["Gateway inflight"]
    assert [p.title for p in d.removed_panels] == ["Queued requests"]


def test_retitled_panel_matches_by_id() -> None:
    old, new = generated(), generated()
    new["panels"][0]["title"] = "Running requests per node"
    d = diff_dashboards(old, new)
    assert not d.added_panels and not d.removed_panels
    assert [c.category for c in d.changed_panels[0].changes] == ["title"]


def test_layout_move_is_reported_apart_from_content() -> None:
    d = _changed(lambda n: n["panels"][2]["gridPos"].update(y=30.0))
    assert not d.changed_panels
    assert [(m.title, m.old_grid["y"], m.new_grid["y"]) for m in d.layout_moves] == [("KV usage", 16, 30)]


def test_variable_definition_change_is_not_a_selection_change() -> None:
    d = _changed(lambda n: n["templating"]["list"][1].update(query="label_values(sglang:num_running_reqs, node)"))
    [vc] = d.changed_variables
    assert vc.name == "node" and vc.definition and not vc.selection


def test_variable_current_selection_change_is_separate() -> None:
    d = _changed(lambda n: n["templating"]["list"][1].update(current={"text": "n1", "value": ["n1"]}))
    [vc] = d.changed_variables
    assert vc.name == "node" and vc.selection and not vc.definition


def test_dashboard_level_changes_are_reported() -> None:
    d = _changed(lambda n: n.update(refresh="30s", tags=["dashgen", "gpu"]))
    assert {c.category for c in d.dashboard_changes} == {"refresh", "tags"}


def test_query_editor_state_of_a_ui_save_is_noise() -> None:
    def edit(n: dict[str, Any]) -> None:
        for p in n["panels"]:
            p["targets"][0].update(disableTextWrap=False, fullMetaSearch=False, includeNullMetadata=True)
            p["targets"][0].update(useBackend=False, editorMode="builder")

    d = _changed(edit)
    assert not d.has_semantic_changes, d
    assert d.noise >= 15


def test_added_target_is_reported_leaf_by_leaf_without_editor_state() -> None:
    target = {"expr": "up", "legendFormat": "{{job}}", "refId": "B", "useBackend": False, "fullMetaSearch": False}
    d = _changed(lambda n: n["panels"][0]["targets"].append(target))
    [pc] = d.changed_panels
    assert [(c.path, c.old is ABSENT, c.new, c.category) for c in pc.changes] == [
        ("targets[1].expr", True, "up", "query"),
        ("targets[1].legendFormat", True, "{{job}}", "query"),
    ]


def test_tag_order_is_not_a_change_but_a_new_tag_is() -> None:
    old, new = generated(), generated()
    old["tags"], new["tags"] = ["dashgen", "gpu", "sglang"], ["sglang", "dashgen", "gpu"]
    assert not diff_dashboards(old, new).has_semantic_changes
    new["tags"].append("cache")
    assert [(c.path, c.new, c.category) for c in diff_dashboards(old, new).dashboard_changes] == [
        ("tags[3]", "cache", "tags")
    ]


def test_a_removed_list_element_is_reported_as_removed_not_as_a_shift() -> None:
    old, new = generated(), generated()
    old["panels"][0]["options"] = {"legend": {"calcs": ["mean", "max", "lastNotNull"], "displayMode": "table"}}
    new["panels"][0]["options"] = {"legend": {"calcs": ["max", "lastNotNull"], "displayMode": "table"}}
    [pc] = diff_dashboards(old, new).changed_panels
    assert [(c.path, c.old, c.new is ABSENT) for c in pc.changes] == [("options.legend.calcs[0]", "mean", True)]


def test_leaf_paths_map_to_the_engines_field_paths() -> None:
    old = {"fieldConfig": {"defaults": {"unit": "short", "mappings": []}}, "targets": [{"expr": "a"}], "x": 1}
    new = {
        "fieldConfig": {"defaults": {"unit": "reqps", "mappings": [{"options": {"0": {"text": "idle"}}}]}},
        "targets": [{"expr": "b"}],
        "x": {"y": 1.0},
    }
    assert leaf_changes(old, new) == [
        ("fieldConfig.defaults.mappings[0].options.0.text", ABSENT, "idle"),
        ("fieldConfig.defaults.unit", "short", "reqps"),
        ("targets[0].expr", "a", "b"),
        ("x", 1, ABSENT),
        ("x.y", ABSENT, 1.0),
    ]
    assert leaf_changes({"min": 0, "max": 1.0, "show": True}, {"min": 0.0, "max": 1, "show": 1}) == []


def _flat_leaf_differences(old: Any, new: Any) -> int:
    """The noise count's definition: flatten both sides, count the paths whose leaves differ."""
    a, b = leaves(old), leaves(new)
    return sum(1 for path in a.keys() | b.keys() if a.get(path, ABSENT) != b.get(path, ABSENT))


def _random_tree(rng: Any, atoms: list[Any], depth: int, leaf_share: float) -> Any:
    """A random JSON-like tree: an atom (at depth 0, or with probability ``leaf_share``), else an object of up to
    three keys from "pqrs" or a list of up to three values, each ``depth - 1`` deep."""
    kind = rng.random()
    if depth == 0 or kind < leaf_share:
        return rng.choice(atoms)
    if kind < 0.7:
        return {rng.choice("pqrs"): _random_tree(rng, atoms, depth - 1, leaf_share) for _ in range(rng.randint(0, 3))}
    return [_random_tree(rng, atoms, depth - 1, leaf_share) for _ in range(rng.randint(0, 3))]


def _prune(value: Any) -> Any:
    """The two-walk definition ``pruned_numbers`` is held to (after ``normalise_numbers``): None, ``{}`` and ``[]``
    values dropped from dicts, recursively."""
    if isinstance(value, dict):
        pruned = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if not (v is None or v == {} or v == [])}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def test_the_noise_count_skips_equal_subtrees_and_counts_as_flattening_both_sides_does() -> None:
    """count_leaf_differences descends only where the sides differ; its count is still the flattened one, for
    empty containers, a list against an object, lists of other lengths, 1 against 1.0 and keys on one side only."""
    import random

    rng = random.Random(42)
    atoms: list[Any] = [0, 1, 1.0, 2.5, True, None, "a", "b", "", {}, []]

    def value(depth: int) -> Any:
        return _random_tree(rng, atoms, depth, leaf_share=0.35)

    def mutated(v: Any) -> Any:
        if rng.random() < 0.3:
            return value(2)
        if isinstance(v, dict):
            return {k: mutated(x) for k, x in v.items() if rng.random() > 0.1} | (
                {"t": value(1)} if rng.random() < 0.2 else {}
            )
        if isinstance(v, list):
            return [mutated(x) for x in v] + ([value(1)] if rng.random() < 0.2 else [])
        return v

    differing = 0
    for _ in range(400):
        old = value(4)
        new = mutated(copy.deepcopy(old))
        assert count_leaf_differences(old, new) == _flat_leaf_differences(old, new), (old, new)
        differing += _flat_leaf_differences(old, new) > 0
    assert differing > 100  # the pairs are not all equal
    assert count_leaf_differences({"x": 1, "y": [1, 2]}, {"x": 1.0, "y": [1, 2, {}]}) == 1
    assert count_leaf_differences({"x": {}}, {"x": {"a": 1}}) == 2  # the empty object is a leaf of its own


def test_one_walk_prunes_and_normalises_numbers_as_the_two_walks_do() -> None:
    """pruned_numbers is _prune(normalise_numbers(...)) on random JSON trees with floats, booleans, NaN, nulls and
    containers that become empty only once their own empty values are pruned."""
    import random

    rng = random.Random(11)
    atoms: list[Any] = [0, 1, 1.0, -0.0, 2.5, float("nan"), True, False, None, "a", "", {}, [], (1,)]
    emptied = 0
    for _ in range(2000):
        tree = _random_tree(rng, atoms, 5, leaf_share=0.3)
        expected, got = _prune(normalise_numbers(tree)), pruned_numbers(tree)
        assert json.dumps(got) == json.dumps(expected) and [got] == [expected], tree  # NaN: the same object
        assert [type(x) for x in leaves_of(got)] == [type(x) for x in leaves_of(expected)], tree
        emptied += isinstance(tree, dict) and got != tree
    assert emptied > 100


def leaves_of(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves_of(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in leaves_of(v)]
    return [value]


def test_lists_of_objects_pair_by_index_as_deepdiff_pairs_them() -> None:
    """leaf_changes descends itself into lists of one length whose differing elements are objects (a panel's
    targets, mappings, overrides), leaving DeepDiff the smallest part; the changes are DeepDiff's own over the
    whole list, for changed, added and removed keys, nested tags lists and elements that stop being objects."""
    import random

    rng = random.Random(7)

    def element() -> dict[str, Any]:
        return {
            "expr": rng.choice(["up", "sum(up)", "rate(x[5m])"]),
            "refId": rng.choice("AB"),
            "tags": rng.sample(["a", "b", "c"], rng.randint(0, 3)),
            **({"hide": rng.choice([True, False, 1, 1.0])} if rng.random() < 0.5 else {}),
            **({"legendFormat": "{{node}}"} if rng.random() < 0.3 else {}),
        }

    def changed(v: dict[str, Any]) -> Any:
        roll = rng.random()
        if roll < 0.1:
            return "not an object"
        if roll < 0.6:
            return element()
        return v

    compared = 0
    for _ in range(300):
        old = {"targets": [element() for _ in range(rng.randint(1, 4))], "title": "t"}
        new = {"targets": [changed(copy.deepcopy(v)) for v in old["targets"]], "title": "t"}
        if old == new:
            continue
        reference: dict[Any, list[Any]] = {}
        deepdiff_leaves(old["targets"], new["targets"], ("targets",), reference)
        want = sorted(((field_path(p), a, b) for p, (a, b) in reference.items()), key=lambda change: change[0])
        assert leaf_changes(old, new) == want, (old, new)
        compared += 1
    assert compared > 150


def test_two_140_panel_dashboards_find_exactly_the_one_real_change() -> None:
    """Speed is measured in make bench (bench/diff.py, a same-run ratio), not here."""
    big = generated()
    big["panels"] = [
        panel(i, f"panel {i}", f'max by (node) (sglang:num_running_reqs{{pp_rank="{i}"}})', y=i * 8)
        for i in range(1, 141)
    ]
    live = ui_saved(big)
    live["panels"][70]["targets"][0]["expr"] = "up"
    d = diff_dashboards(big, live)
    assert [pc.title for pc in d.changed_panels] == ["panel 71"]


# --- command ------------------------------------------------------------------------------


def test_cli_noise_only_exits_0_and_says_so(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", generated())
    new = write(tmp_path / "new.json", ui_saved(generated()))
    result = CliRunner().invoke(diff_command, [old, new])
    assert result.exit_code == 0
    assert result.output.startswith("no semantic changes (")
    assert "noise differences ignored)" in result.output


def test_cli_change_exits_1_and_names_panel(tmp_path: Path) -> None:
    live = ui_saved(generated())
    live["panels"][1]["fieldConfig"]["defaults"]["unit"] = "reqps"
    result = CliRunner().invoke(
        diff_command, [write(tmp_path / "a.json", generated()), write(tmp_path / "b.json", live)]
    )
    assert result.exit_code == 1
    assert 'panel "Queued requests"' in result.output and "[unit]" in result.output


def test_cli_markdown_has_collapsible_details_per_panel(tmp_path: Path) -> None:
    live = ui_saved(generated())
    live["panels"][0]["targets"][0]["expr"] = "up"
    live["panels"][2]["fieldConfig"]["defaults"]["max"] = 1
    args = ["--format", "markdown", write(tmp_path / "a.json", generated()), write(tmp_path / "b.json", live)]
    result = CliRunner().invoke(diff_command, args)
    assert result.exit_code == 1
    assert result.output.count("<details>") == 2
    assert (
        "<summary><b>query</b> · panel &quot;Running requests&quot; (id 100) · 1 field change(s) · in b.json</summary>"
    ) in result.output
    assert "| query | `targets[0].expr` |" in result.output
    assert result.output.index("<b>query</b>") < result.output.index("<b>axis</b>")  # most important first


def test_cli_json_shape(tmp_path: Path) -> None:
    live = ui_saved(generated())
    live["templating"]["list"][1]["current"] = {"value": "n3"}
    args = ["--format", "json", write(tmp_path / "a.json", generated()), write(tmp_path / "b.json", live)]
    result = CliRunner().invoke(diff_command, args)
    data = json.loads(result.output)["results"]
    assert result.exit_code == 1 and data["semantic_changes"] is True
    [f] = data["files"]
    assert set(f["diff"]) >= {"title", "uid", "noise", "dashboard", "panels", "layout", "variables"}
    [var] = f["diff"]["variables"]["changed"]
    assert var["name"] == "node" and var["definition"] == [] and var["selection"][0]["new"] == "n3"


def test_cli_folders_pair_by_path_then_uid_and_report_added_files(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    write(tmp_path / "old" / "cache.json", generated())
    write(tmp_path / "new" / "renamed.json", ui_saved(generated()))  # same uid
    other = generated()
    other["uid"] = "other"
    write(tmp_path / "new" / "other.json", other)
    result = CliRunner().invoke(diff_command, [str(tmp_path / "old"), str(tmp_path / "new")])
    assert result.exit_code == 1
    assert "other.json: dashboard added" in result.output
    assert "renamed.json" not in result.output  # paired by uid, noise only


@pytest.mark.parametrize("args", [["only-one.json"], ["missing-a.json", "missing-b.json"]])
def test_cli_bad_input_exits_2(tmp_path: Path, args: list[str]) -> None:
    result = CliRunner().invoke(diff_command, [str(tmp_path / a) for a in args])
    assert result.exit_code == 2


def test_cli_invalid_json_exits_2_naming_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    result = CliRunner().invoke(diff_command, [str(bad), write(tmp_path / "ok.json", generated())])
    assert result.exit_code == 2 and "bad.json" in result.output


def test_cli_base_ref_compares_committed_dashboards_with_working_tree(tmp_path: Path) -> None:
    def git(*a: str) -> None:
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "dashboards").mkdir()
    write(tmp_path / "dashboards" / "cache.json", generated())
    git("add", "dashboards")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "base")
    same = CliRunner().invoke(diff_command, ["--base", "HEAD", str(tmp_path / "dashboards")])
    assert same.exit_code == 0, same.output
    changed = generated()
    changed["panels"][0]["targets"][0]["expr"] = "up"
    write(tmp_path / "dashboards" / "cache.json", changed)
    result = CliRunner().invoke(diff_command, ["--base", "HEAD", str(tmp_path / "dashboards")])
    assert result.exit_code == 1 and 'panel "Running requests"' in result.output
    bad_ref = CliRunner().invoke(diff_command, ["--base", "no-such-ref", str(tmp_path / "dashboards")])
    assert bad_ref.exit_code == 2


@pytest.mark.parametrize("mode", ["grafana12", "grafana13"])
def test_a_ui_save_of_every_generated_dashboard_is_noise_only(mode):
    """What Grafana's UI writes on save (the stand-in's model of §7.2) is no semantic change for any profile."""
    from pathlib import Path

    from standin.ui_save import ui_normalise

    from dashgen.build import build_all
    from dashgen.deployment.profile import load_profiles

    profiles = Path(__file__).resolve().parent.parent / "profiles"
    dashboards = build_all(load_profiles(directory=profiles))
    assert len(dashboards) == len(list(profiles.glob("*.toml"))) >= 4
    for built in dashboards:
        saved = ui_normalise(
            built.document,  # not changed: the stand-in saves a copy
            grafana_version="12.3.0" if mode == "grafana12" else "13.1.0",
            latest_schema_version=41 if mode == "grafana12" else 42,
            datasources={"prometheus": {"type": "prometheus", "uid": "prometheus"}},
            default_datasource={"type": "prometheus", "uid": "prometheus"},
            drop_empty_tags=mode == "grafana13",
        )
        assert saved != built.document
        result = diff_dashboards(built.document, saved)
        assert not result.has_semantic_changes, (built.uid, result)
        assert result.noise > 0


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply"),
    ],
)
def test_an_unreadable_dashboard_file_is_named_in_one_line(tmp_path, content, fragment):
    """Hostile input: a non-UTF-8 or absurdly nested file stops diff with exit 2 and one line naming the file."""
    bad = tmp_path / "new" / "bad.json"
    bad.parent.mkdir()
    bad.write_bytes(content)
    (tmp_path / "old").mkdir()
    result = CliRunner().invoke(diff_command, [str(tmp_path / "old"), str(tmp_path / "new")])
    assert result.exit_code == 2 and f"{bad}: {fragment}" in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
def test_output_files_are_regular_files_never_a_symlink_fifo_or_device(tmp_path, kind):
    """Issue 32: ``--report`` and ``import -o --force`` replaced /dev/stdout, FIFOs and symlinks by regular files;
    now they are refused naming the path, and ``-`` is standard output."""
    import os as _os

    from dashgen.cli.app import main

    dashboard = Path(__file__).resolve().parent.parent / "dashboards" / "h20-16" / "dg-h20-16-cluster.json"
    target = tmp_path / "out"
    if kind == "symlink":
        (tmp_path / "real.md").write_text("keep")
        target.symlink_to(tmp_path / "real.md")
    elif kind == "fifo":
        _os.mkfifo(target)
    else:
        target = Path("/dev/null")
    result = CliRunner().invoke(main, ["diff", str(dashboard), str(dashboard), "--report", str(target)])
    assert result.exit_code == 2 and f"{target}: cannot write the report (is a" in result.output, result.output
    assert (target.is_symlink() or target.is_fifo() or target.is_char_device()) and "Traceback" not in result.output
    module = CliRunner().invoke(main, ["import", str(dashboard), "-o", str(target), "--force"])
    assert module.exit_code == 2 and "not a regular file" in module.output, module.output
    to_stdout = CliRunner().invoke(main, ["diff", str(dashboard), str(dashboard), "--report", "-"])
    assert to_stdout.exit_code == 0 and "## dashgen diff" in to_stdout.output, to_stdout.output[:300]


def test_a_special_output_path_is_refused_before_any_work(tmp_path, monkeypatch):
    """A FIFO given to ``--report`` or ``import -o`` is refused before the dashboards are compared or imported (the
    refusal used to come after seconds of work)."""
    import os as _os

    import dashgen.cli.diff_cmd
    import dashgen.cli.import_cmd
    from dashgen.cli.app import main

    def refuse(*args, **kwargs):
        raise AssertionError("the work ran before the output path was refused")

    monkeypatch.setattr(dashgen.cli.diff_cmd, "compare", refuse)
    monkeypatch.setattr(dashgen.cli.import_cmd, "import_dashboard", refuse)
    dashboard = Path(__file__).resolve().parent.parent / "dashboards" / "h20-16" / "dg-h20-16-cluster.json"
    target = tmp_path / "fifo"
    _os.mkfifo(target)
    report = CliRunner().invoke(main, ["diff", str(dashboard), str(dashboard), "--report", str(target)])
    assert report.exit_code == 2 and f"{target}: cannot write the report (is a FIFO" in report.output, report.output
    module = CliRunner().invoke(
        main, ["import", str(dashboard), "-o", str(tmp_path / "m.py"), "--migrated-out", str(target)]
    )
    assert module.exit_code == 2 and f"{target}: cannot write (is a FIFO" in module.output, module.output


def test_a_query_of_thousands_of_terms_diffs_without_crashing(tmp_path):
    """Issue 32: the PromQL prettifier recurses on the native stack, and an 8,000-term chain crashed the process
    (SIGSEGV); its word diff was quadratic. Over the parse budget the query is diffed as text, and the diff marks
    exactly the two changed words (run as a process, so a crash would show as its exit status)."""
    import sys as _sys

    source = Path(__file__).resolve().parent.parent / "dashboards" / "h20-16" / "dg-h20-16-cluster.json"
    document = json.loads(source.read_text())
    panel = next(p for p in document["panels"] if p.get("targets"))
    expr = " + ".join(f'metric_{i}{{a="{i}"}}' for i in range(8000))
    panel["targets"][0]["expr"] = expr
    (tmp_path / "old.json").write_text(json.dumps(document))
    panel["targets"][0]["expr"] = expr.replace("metric_5{", "metric_5x{").replace("metric_7000{", "metric_7000y{")
    (tmp_path / "new.json").write_text(json.dumps(document))
    done = subprocess.run(
        [_sys.executable, "-m", "dashgen", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert "[-metric_5-]" in done.stdout and "{+metric_7000y+}" in done.stdout


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a b c d", "a x c d"),
        ("a b", "a b c"),
        ("", "a"),
        ("a b a b", "b a b a"),
        ("x y z", "x y z"),
        ("p q r s t", "q r s"),
    ],
)
def test_the_trimmed_word_matcher_gives_difflib_s_opcodes(old, new):
    import difflib

    from dashgen.diff.values import _opcodes

    a, b = old.split(), new.split()
    want = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    changed = lambda ops: [(t, i1, i2, j1, j2) for t, i1, i2, j1, j2 in ops if t != "equal"]  # noqa: E731
    assert changed(_opcodes(a, b)) == changed(want)


def test_default_ref_ids_are_noise_past_26_queries_as_the_renderer_names_them() -> None:
    """The 27th query is AA, as the renderer and Grafana name it: leaving it out or writing it is no change, and a
    refId that is not the default one stays (the diff and the renderer share one naming rule)."""
    assert [ref(i) for i in (0, 25, 26, 27, 701, 702)] == ["A", "Z", "AA", "AB", "ZZ", "AAA"]
    for index in (0, 25, 26, 40):
        named = canonicalise_target({"refId": ref(index), "expr": "up"}, index, None)
        assert named == canonicalise_target({"expr": "up"}, index, None) == {"expr": "up"}, index
    assert canonicalise_target({"refId": "[", "expr": "up"}, 26, None)["refId"] == "["


def test_a_panel_is_canonicalised_once_per_exact_text_and_each_caller_gets_its_own_copy() -> None:
    """The importer and the diff share each panel's canonical form by the panel's exact JSON text: an equal panel
    (another object) is not canonicalised again, each caller can change its copy, and a panel whose text would read
    back as another value (a tuple, 1.0 written as 1.0 but equal to 1) is told apart. Were the memo lost, importing
    the fixtures and diffing them back would canonicalise each panel three times (issue 42: ~6 s of make
    test-fast's CPU)."""
    from dashgen.diff import noise

    base = {"type": "timeseries", "title": "t", "id": 3, "gridPos": {"x": 0}, "targets": [{"expr": "up", "refId": "A"}]}
    first = noise.canonicalise_panel(copy.deepcopy(base))
    misses = noise._CANONICAL.misses
    second = noise.canonicalise_panel(copy.deepcopy(base))
    assert second == first and second is not first and noise._CANONICAL.misses == misses
    second["title"] = "changed by a caller"
    assert noise.canonicalise_panel(base)["title"] == "t"
    as_tuple = {**base, "targets": ({"expr": "up", "refId": "A"},)}  # not JSON: canonicalised, never remembered
    assert noise.canonicalise_panel(as_tuple) == noise._canonical_panel(as_tuple) and noise._CANONICAL.misses == misses
    floats = {**base, "options": {"a": 1.0}}
    assert noise.canonicalise_panel(floats) == noise._canonical_panel(floats) == {**first, "options": {"a": 1}}
    assert noise.canonicalise_panel({**base, "title": "u"})["title"] == "u" and noise._CANONICAL.misses == misses + 2
