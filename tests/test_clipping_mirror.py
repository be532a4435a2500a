"""The preview's script marks clipped table columns with its own copy of the clipping rule (``clippedColumns`` in
``preview.js``: it sees the columns Grafana's transformations computed, which only the page knows). That copy must
answer as ``dashgen.render.clipping`` does: the same panels, run through both, past the edge alike."""

from __future__ import annotations

import json
import random
import re
import subprocess
from importlib import resources

from clipped_columns import panel_clipped
from grafana_node import node_or_skip

from dashgen.render.clipping import clip_rule

SCRIPT = resources.files("dashgen").joinpath("data", "preview", "preview.js").read_text()


def _js_function() -> str:
    found = re.search(r"\n  function clippedColumns\(names, rule\) \{\n.*?\n  \}\n", SCRIPT, re.S)
    assert found, "preview.js has no clippedColumns(names, rule) at the script's top level"
    return found.group(0)


def _panels(count: int) -> list[tuple[dict, list[str]]]:
    """Tables of every width on the grid, few and many columns, with and without a floor, a width for every
    column and widths fixed by name (some for columns the table does not show)."""
    rng = random.Random(20261207)
    cases = []
    for index in range(count):
        columns = [f"c{i}" for i in range(rng.randint(1, 14))]
        custom: dict = {}
        if rng.random() < 0.4:
            custom["minWidth"] = rng.choice([40, 80, 100, 150, 220])
        if rng.random() < 0.15:
            custom["width"] = rng.choice([60, 120, 300])
        overrides = [
            {"matcher": {"id": "byName", "options": name}, "properties": [{"id": "custom.width", "value": width}]}
            for name, width in (
                (rng.choice([*columns, "absent"]), rng.choice([30, 90, 160, 400])) for _ in range(rng.randint(0, 3))
            )
        ]
        panel = {
            "type": "table",
            "title": f"t{index}",
            "gridPos": {"x": 0, "y": 0, "w": rng.randint(1, 24), "h": 8},
            "fieldConfig": {"defaults": {"custom": custom}, "overrides": overrides},
        }
        cases.append((panel, columns))
    return cases


def test_the_previews_clipping_answers_as_dashgens_rule_on_a_spread_of_tables():
    node = node_or_skip()
    cases = _panels(400)
    program = (
        _js_function()
        + "var cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        + "process.stdout.write(JSON.stringify(cases.map(function (c) { return clippedColumns(c[0], c[1]); })));\n"
    )
    sent = [[columns, clip_rule(panel)] for panel, columns in cases]
    run = subprocess.run(
        [node, "-e", program], input=json.dumps(sent), capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr[-800:]
    page = json.loads(run.stdout)
    python = [panel_clipped(panel, columns) for panel, columns in cases]
    assert len(page) == len(python) == 400
    differing = [(cases[i][0], cases[i][1], python[i], page[i]) for i in range(400) if python[i] != page[i]]
    assert not differing, differing[:3]
    # the spread reaches both answers, so agreeing is not agreeing on "nothing clipped"
    assert 50 < sum(1 for answer in python if answer) < 350
