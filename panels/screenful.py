"""Graphs that stay legible at any cluster size. A panel that draws one series per PP stage, DP group or GPU
(``PanelSpec.fan_out``) and opens with the dashboard is narrowed, when the deployment has more than a screenful
of such series (``SCREENFUL``), to the ``WORST`` worst ones and a min / median / max band per pool: at 4,096
GPUs the per-stage graphs drew 512 lines each, unreadable and most of what opening the dashboard sent. Where each
entity draws several series (``FanOut.split``: an instance's series per pipeline stage) the graph draws the
``WORST_SPLIT`` worst entities and no band: every band is three more evaluations of the whole query, and one per
split value would not fit a screen either. The
full set stays one click away: the same panels, unnarrowed, in a collapsed row right below ("<row>: every
stage"), which runs no query until it is opened; and the Node variable narrows every graph to chosen nodes.
Each narrowed panel says so in its description. Pure: rows -> rows.
"""

from __future__ import annotations

from dataclasses import replace

from dashgen_queries.promql import BAND_LABEL, band, worst_series
from dashgen_queries.stage_bands import GROUP as BAND_GROUP

from dashgen.deployment.topology import Topology
from dashgen.render.fanout import SCREENFUL, series_count
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

WORST = 10  # the worst series a narrowed graph draws beside its band
WORST_SPLIT = 5  # the worst entities where each draws several series (one per status, per pipeline stage)
EVERY_ROW = "every_series"  # row key suffix of the collapsed row holding the full panels
NOUNS = {"stage": "stage", "dp_group": "DP group", "gpu": "GPU", "node": "node", "instance": "instance"}
WORST_WORDS = {"top": "highest", "bottom": "lowest"}


def narrowed(panel: PanelSpec, count: int, every_row: str) -> PanelSpec:
    """``panel`` drawing its ``WORST`` worst series (and, for a graph, the band of all of them), saying so."""
    fan = panel.fan_out
    assert fan is not None and panel.evidence is not None
    noun = NOUNS[fan.per]
    k = WORST_SPLIT if fan.split else WORST
    targets: list[Target] = [
        replace(target, expr=worst_series(target.expr, fan.labels, k, fan.worst, fan.split)) for target in panel.targets
    ]
    drawn = f"the {k} {noun}s with the {WORST_WORDS[fan.worst]} value at the end of the range"
    if panel.kind == "timeseries" and not fan.split:  # split: already several series an entity; no band on top
        legend = f"{{{{{BAND_LABEL}}}}} of every {noun}"
        if fan.band:  # recorded: one read of three series a pool instead of three reads of every entity
            (target,) = panel.targets
            targets.append(replace(target, expr=fan.band, legend=legend))
        else:
            targets += [replace(target, expr=band(target.expr, fan.labels), legend=legend) for target in panel.targets]
        drawn += f", and the min / median / max of all {count} (a band per pool: any {noun}'s spike shows in max)"
        if fan.band:
            drawn += (
                f"; the band is recorded at each stored sample (rule group {BAND_GROUP}) and covers every {noun} "
                "of the pool whatever the Node variable chooses; without the rules loaded it reads nothing"
            )
    note = (
        f"at this deployment's {count} {noun}s (more than a screenful of {SCREENFUL}) the panel draws {drawn}; "
        f"every {noun}: the collapsed row '{every_row}' right below, or choose nodes in the Node variable"
    )
    evidence = panel.evidence
    return replace(
        panel,
        targets=tuple(replace(t, ref_id="") for t in targets),
        evidence=Evidence(evidence.source, evidence.quantity, f"{evidence.limit}; {note}", evidence.layer),
    )


def legible_rows(rows: tuple[GroupSpec, ...], topology: Topology) -> tuple[GroupSpec, ...]:
    """Every open row's fan-out panels narrowed where they would draw more than ``SCREENFUL`` series, each such
    row followed by a collapsed row with the full panels (keys ``<key>.every``). Collapsed rows are left as
    they are: they run nothing until opened, and whoever opens one asked for every series."""
    out: list[GroupSpec] = []
    for row in rows:
        counts = {
            panel.key: count
            for panel in row.panels
            if panel.fan_out and not row.collapsed and (count := series_count(panel.fan_out, topology)) > SCREENFUL
        }
        if not counts:
            out.append(row)
            continue
        nouns = {NOUNS[p.fan_out.per] for p in row.panels if p.key in counts and p.fan_out}
        every_title = f"{row.title}: every {' and '.join(sorted(nouns))}"
        out.append(
            replace(
                row, panels=tuple(narrowed(p, counts[p.key], every_title) if p.key in counts else p for p in row.panels)
            )
        )
        full = tuple(replace(p, key=f"{p.key}.every", fan_out=None) for p in row.panels if p.key in counts)
        out.append(GroupSpec(key=f"{row.key}:{EVERY_ROW}", title=every_title, panels=full, collapsed=True))
    return tuple(out)
