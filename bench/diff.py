"""Diff benchmark: ``dashgen diff`` of two 140-panel dashboards — one as a Grafana UI save leaves it (noise),
one with ten real changes — against a plain ``deepdiff.DeepDiff`` of the raw JSON.

The long-context-64 build has fewer than 140 panels, so the 140-panel dashboard is synthesised from it:
its panels plus copies of its first data panels (new ids, titles suffixed ``(copy N)``) in an extra row.
The benchmark asserts the diff reports exactly the ten changes, and nothing else, before timing it.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import DASHGEN, PYTHON, ROOT, BenchResult, Row, checked, interleaved, run_child

PANELS = 140
REPEAT = 3
PROCESS_REPEAT = 3
PROFILE = "long-context-64"
GRAFANA_VERSION = "12.3.0"
DEEPDIFF_SCRIPT = (
    "import json, sys\nfrom deepdiff import DeepDiff\n"
    "d = DeepDiff(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))\n"
    "print(d.pretty())\n"
)


def _data_panels(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in document["panels"]:
        if panel.get("type") != "row":
            found.append(panel)
        found += [child for child in panel.get("panels") or [] if child.get("type") != "row"]
    return found


def synthesise(document: dict[str, Any], panels: int = PANELS) -> tuple[dict[str, Any], int]:
    """The dashboard with ``panels`` data panels; returns it and how many panels were copies."""
    doc = copy.deepcopy(document)
    originals = [p for p in _data_panels(doc) if p.get("targets")]
    missing = panels - len(_data_panels(doc))
    if missing <= 0:
        return doc, 0
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in doc["panels"])
    next_id = max(p["id"] for p in _data_panels(doc) + doc["panels"]) + 1
    doc["panels"].append(
        {
            "type": "row",
            "title": "Bench copies",
            "id": next_id,
            "collapsed": False,
            "panels": [],
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": bottom},
        }
    )
    for index in range(missing):
        source = originals[index % len(originals)]
        clone = copy.deepcopy(source)
        clone["id"] = next_id + 1 + index
        clone["title"] = f"{source['title']} (copy {index + 1})"
        clone["gridPos"] = {"h": 8, "w": 12, "x": 12 * (index % 2), "y": bottom + 1 + 8 * (index // 2)}
        doc["panels"].append(clone)
    return doc, missing


def _reorder(value: Any) -> Any:
    """Every object's keys in reverse order (what a different serialiser does); values untouched."""
    if isinstance(value, dict):
        return {k: _reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reorder(v) for v in value]
    return value


def _floats(value: Any) -> Any:
    """Integers as ``1.0`` (a frontend round-trip through JS numbers and back)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


# UI-save defaults the stand-in writes that dashgen.diff.noise does not canonicalise yet (a finding of this
# benchmark, see docs/bench.md): the strict run leaves them out, the full run counts the false changes they cause.
LEAKS = (
    "fieldConfig.defaults.color = thresholds on non-timeseries panels",
    "bargauge options maxVizHeight/minVizHeight/minVizWidth",
    "the default data source written into panels that have none",
)


def _drop_leaks(saved: dict[str, Any], original: dict[str, Any]) -> None:
    before = {p["id"]: p for p in _data_panels(original)}
    for panel in _data_panels(saved):
        source = before[panel["id"]]
        defaults = panel.get("fieldConfig", {}).get("defaults", {})
        if "color" not in source.get("fieldConfig", {}).get("defaults", {}) and panel.get("type") != "timeseries":
            defaults.pop("color", None)
        for key in ("maxVizHeight", "minVizHeight", "minVizWidth"):
            if key not in source.get("options", {}) and panel.get("type") == "bargauge":
                panel.get("options", {}).pop(key, None)
        if "datasource" not in source:
            panel.pop("datasource", None)


def ui_saved(document: dict[str, Any], full: bool = False) -> dict[str, Any]:
    """The dashboard as Grafana stores it after a UI save: the stand-in's ui_normalise (pluginVersion, defaulted
    fieldConfig/options, data-source objects, built-in annotation, schemaVersion bump) plus renumbered ids,
    string data sources on every other panel's targets, 1 -> 1.0 in fieldConfig, and reordered keys.
    Without ``full``, the LEAKS are taken out again."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from standin.ui_save import ui_normalise
    finally:
        sys.path.remove(str(ROOT / "tests"))
    doc = ui_normalise(
        document,
        grafana_version=GRAFANA_VERSION,
        latest_schema_version=int(document.get("schemaVersion", 41)) + 1,
        datasources={"prometheus": {"type": "prometheus", "uid": "prometheus"}},
        default_datasource={"type": "prometheus", "uid": "prometheus"},
        drop_empty_tags=False,
    )
    if not full:
        _drop_leaks(doc, document)
    number = 1
    for panel in doc["panels"]:
        for p in [panel, *(panel.get("panels") or [])]:
            p["id"] = number
            number += 1
    for index, panel in enumerate(_data_panels(doc)):
        if index % 2 == 0:
            for target in panel.get("targets") or []:
                if isinstance(target.get("datasource"), dict):
                    target["datasource"] = "$datasource"
        if "fieldConfig" in panel:
            panel["fieldConfig"] = _floats(panel["fieldConfig"])
    doc["version"] = 7
    return _reorder(doc)


def ten_changes(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The build side with ten real changes; returns it and what the diff must report."""
    doc = copy.deepcopy(document)
    panels = [p for p in _data_panels(doc) if p.get("targets") and not p["title"].endswith(")")]
    graphs = [p for p in panels if p.get("type") == "timeseries"]
    chosen: list[dict[str, Any]] = []

    def pick(candidates: list[dict[str, Any]], accept=lambda p: True) -> dict[str, Any]:
        panel = next(p for p in candidates if p not in chosen and accept(p))
        chosen.append(panel)
        return panel

    expected_panels: dict[str, str] = {}
    for _ in range(3):
        panel = pick(panels, lambda p: bool(p["targets"][0].get("expr")))
        panel["targets"][0]["expr"] = f"({panel['targets'][0]['expr']}) > 0"
        expected_panels[panel["title"]] = "query"
    for _ in range(2):
        panel = pick(panels, lambda p: p.get("fieldConfig", {}).get("defaults", {}).get("unit") not in (None, "short"))
        panel["fieldConfig"]["defaults"]["unit"] = "short"
        expected_panels[panel["title"]] = "unit"
    panel = pick(graphs)
    panel.setdefault("fieldConfig", {}).setdefault("defaults", {}).setdefault("custom", {})["axisSoftMax"] = 123
    expected_panels[panel["title"]] = "axis"
    panel = pick(panels, lambda p: not p.get("fieldConfig", {}).get("defaults", {}).get("mappings"))
    panel.setdefault("fieldConfig", {}).setdefault("defaults", {})["mappings"] = [
        {"type": "value", "options": {"0": {"text": "idle", "index": 0}}}
    ]
    expected_panels[panel["title"]] = "mapping"

    copies = [p for p in doc["panels"] if p.get("type") != "row" and p["title"].endswith(")")]
    removed = copies[-1]
    doc["panels"].remove(removed)
    added = copy.deepcopy(copies[0])
    added["id"] = max(p["id"] for p in _data_panels(doc)) + 1
    added["title"] = "Bench: a new panel"
    added["gridPos"] = {**removed["gridPos"]}
    doc["panels"].append(added)

    variable = next(v for v in doc["templating"]["list"] if v["name"] == "gpu")
    variable["query"] = variable["query"].replace("gpm_power_watts", "DCGM_FI_DEV_POWER_USAGE")
    if "definition" in variable:
        variable["definition"] = variable["query"]
    expected = {
        "changed_panels": expected_panels,
        "added": [added["title"]],
        "removed": [removed["title"]],
        "changed_variables": ["gpu"],
    }
    return doc, expected


def check_report(diff, expected: dict[str, Any]) -> None:
    """The sanity assertion: exactly the ten changes, each in its category, and nothing else."""
    got = {c.title: c.categories for c in diff.changed_panels}
    problems = []
    if got != {title: [category] for title, category in expected["changed_panels"].items()}:
        problems.append(f"changed panels {got} != expected {expected['changed_panels']}")
    if [p.title for p in diff.added_panels] != expected["added"]:
        problems.append(f"added {diff.added_panels}")
    if [p.title for p in diff.removed_panels] != expected["removed"]:
        problems.append(f"removed {diff.removed_panels}")
    if [v.name for v in diff.changed_variables] != expected["changed_variables"] or diff.changed_variables[0].selection:
        problems.append(f"variables {diff.changed_variables}")
    if diff.layout_moves or diff.dashboard_changes or diff.added_variables or diff.removed_variables:
        problems.append(
            f"unexpected: moves {diff.layout_moves} dashboard {diff.dashboard_changes} "
            f"variables +{diff.added_variables} -{diff.removed_variables}"
        )
    if diff.change_count != 10:
        problems.append(f"change_count {diff.change_count} != 10")
    if problems:
        raise AssertionError("dashgen diff does not report exactly the ten changes: " + "; ".join(problems))


def _deepdiff_items(result) -> int:
    return sum(len(v) if hasattr(v, "__len__") else 1 for v in result.values())


def run(repeat: int = REPEAT) -> BenchResult:
    from deepdiff import DeepDiff

    from dashgen.build import build_profile
    from dashgen.deployment.profile import load_profiles, profiles_dir
    from dashgen.diff import diff_dashboards
    from dashgen.diff.comment import render_markdown
    from dashgen.diff.promql_format import clear_cache as clear_format_cache
    from dashgen.diff.render import FileDiff, render_text

    result = BenchResult("diff")
    (profile,) = load_profiles([PROFILE], profiles_dir())
    built = build_profile(profile)[0].document
    synthetic, copies = synthesise(built)
    old_doc = ui_saved(synthetic)
    new_doc, expected = ten_changes(synthetic)
    work = Path(tempfile.mkdtemp(prefix="dashgen-bench-diff-"))
    try:
        old_path, new_path = work / "old.json", work / "new.json"
        old_text = json.dumps(old_doc, indent=2)
        new_text = json.dumps(new_doc, indent=2, sort_keys=True)
        old_path.write_text(old_text)
        new_path.write_text(new_text)

        report = diff_dashboards(json.loads(old_text), json.loads(new_text))
        check_report(report, expected)
        leaky = diff_dashboards(ui_saved(synthetic, full=True), new_doc)
        false_changes = leaky.change_count - report.change_count
        deep = DeepDiff(json.loads(old_text), json.loads(new_text))
        deep_items = _deepdiff_items(deep)

        def dashgen_in_process() -> None:
            clear_format_cache()  # as cold as a fresh process: every changed query is formatted again
            files = [FileDiff("old.json", diff_dashboards(json.loads(old_text), json.loads(new_text)))]
            render_text(files)
            render_markdown(files)  # the bounded pull-request comment too, PromQL formatted and word-diffed

        def deepdiff_in_process() -> None:
            DeepDiff(json.loads(old_text), json.loads(new_text)).to_dict()

        runs = interleaved(
            [("DeepDiff (in process)", deepdiff_in_process), ("dashgen diff (in process)", dashgen_in_process)], repeat
        )
        note = (
            f"{len(_data_panels(new_doc))} panels ({copies} synthesised copies of long-context-64's); reports "
            f"exactly the 10 changes, {report.noise} noisy leaves dropped; with the stand-in's full UI save "
            f"it reports {leaky.change_count} ({false_changes} false, see docs/bench.md)"
        )
        result.add(
            Row(
                "diff",
                "DeepDiff (in process)",
                "s",
                runs["DeepDiff (in process)"],
                note=f"baseline; json.loads + DeepDiff; reports {deep_items} differences",
            )
        )
        result.add(
            Row(
                "diff",
                "dashgen diff (in process)",
                "s",
                runs["dashgen diff (in process)"],
                baseline="DeepDiff (in process)",
                note=note + "; renders the text and the markdown comment",
            )
        )

        def dashgen_process() -> float:
            run_ = run_child([DASHGEN, "diff", str(old_path), str(new_path)])
            if run_.returncode != 1:  # 1 = semantic changes found
                raise RuntimeError(f"dashgen diff exited {run_.returncode}: {run_.stderr[-1000:]}")
            return run_.seconds

        def deepdiff_process() -> float:
            return checked(run_child([PYTHON, "-c", DEEPDIFF_SCRIPT, str(old_path), str(new_path)]), "deepdiff").seconds

        process_runs = interleaved(
            [("DeepDiff (process)", deepdiff_process), ("dashgen diff (process)", dashgen_process)],
            PROCESS_REPEAT,
            warmup=0,
        )
        result.add(
            Row(
                "diff",
                "DeepDiff (process)",
                "s",
                process_runs["DeepDiff (process)"],
                note="baseline; python -c: json.load x2 + DeepDiff + pretty()",
            )
        )
        result.add(
            Row(
                "diff",
                "dashgen diff (process)",
                "s",
                process_runs["dashgen diff (process)"],
                baseline="DeepDiff (process)",
                note="`dashgen diff old.json new.json`, text output",
            )
        )
        text = subprocess.run(
            [DASHGEN, "diff", str(old_path), str(new_path)], capture_output=True, text=True, cwd=ROOT, timeout=120
        ).stdout
        result.details = {
            "panels": len(_data_panels(new_doc)),
            "synthesised_copies": copies,
            "source_profile": PROFILE,
            "expected": expected,
            "dashgen_noise_leaves": report.noise,
            "deepdiff_reported_items": deep_items,
            "deepdiff_categories": {k: (len(v) if hasattr(v, "__len__") else 1) for k, v in deep.items()},
            "dashgen_output_lines": len(text.splitlines()),
            "full_ui_save_noise": {
                "leaks_left_out_of_the_strict_run": list(LEAKS),
                "change_count_with_them": leaky.change_count,
                "false_changes": false_changes,
            },
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.resolve_ratios()
    return result
