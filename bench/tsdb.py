"""TSDB work per dashboard: series fetched, samples scanned and bytes returned for the first screen and on open,
dashgen's long-context dashboard beside NVIDIA's dcgm-exporter dashboard (``bench/peers/``, Apache-2.0) on the same
VictoriaMetrics, at 64, 1,024 and 4,096 GPUs (``BENCH_TSDB_GPUS=64,1024`` to choose), as ratios in one run.

Each size gets its own stock VictoriaMetrics with one hour of the demo data (30 s spacing) of long-context-64 grown
to that size (``bench.dashboard_load.variant_profile``), the series the dcgm-exporter dashboard reads included,
and the layer-health records replayed as production's vmalert writes them. Every target of a top-level panel
(not inside a collapsed row) runs once, expanded as Grafana would at the dashboard's own default range with its
variables at All, with VictoriaMetrics' query trace on: the figures are the store's own
(``dashgen.live.cost.stats_from_answer``); bytes returned is the length of the answer's ``data`` as JSON.
The first screen is what a 1080p browser shows before scrolling: top-level panels starting in the first
``FIRST_SCREEN_UNITS`` grid units. dashgen's own budgets (``dashgen cost``) are checked at every size.

Each ratio issue 42 sets a target for is printed with its verdict (met / missed), and each size with the time it
took (building the store, then the queries): at 4,096 GPUs the store is most of the run. Beside the on-open ratio,
the same with dashgen's dashboard opened at the dcgm-exporter dashboard's default range (15 min instead of 1 h):
how much of the gap is the range each dashboard opens at, not what it reads.
"""

from __future__ import annotations

import json
import os
import time
from itertools import chain
from pathlib import Path
from typing import Any

from bench.harness import BenchResult, Row

PEER = Path(__file__).resolve().parent / "peers" / "nvidia-dcgm-exporter__dcgm-exporter-dashboard.json"
SIZES = tuple(int(n) for n in os.environ.get("BENCH_TSDB_GPUS", "64,1024,4096").split(","))
FIRST_SCREEN_UNITS = 19  # grid units (30 px + margin) a 1080p browser shows below Grafana's header
HOURS = 1.0
SPACING = 30.0
FIGURES = ("series_fetched", "samples_scanned", "series_returned", "bytes_returned")
GRAPHS = ("timeseries",)  # panel types that draw one line per series returned
GRAPH_SERIES_TARGET = 64  # issue 42: no graph that opens with the dashboard draws more


def _default_seconds(document: dict[str, Any]) -> float:
    from dashgen.live.expand import parse_duration

    return parse_duration(str(document.get("time", {}).get("from", "now-1h")).removeprefix("now-"))


def _queries(document: dict[str, Any], end: float, label_values) -> list[dict[str, Any]]:
    """Every target of the top-level panels, expanded at the dashboard's own default range; ``first`` for the
    panels of the first screen."""
    from dashgen.live.expand import Window, expand_target, variable_values

    window = Window(end=end, length=_default_seconds(document))
    values = variable_values(document["templating"]["list"], label_values)
    found = []
    for panel in document.get("panels") or []:
        if panel.get("type") == "row":
            continue
        first = (panel.get("gridPos") or {}).get("y", 0) < FIRST_SCREEN_UNITS
        for target in panel.get("targets") or []:
            for q in expand_target(panel, target, values, window, scrape_seconds=SPACING):
                found.append(
                    {
                        "expr": q.expr,
                        "kind": q.kind,
                        "start": q.start,
                        "end": q.end,
                        "step": q.step,
                        "first": first,
                        "title": str(panel.get("title")),
                        "graph": str(panel.get("title")) if panel.get("type") in GRAPHS else None,
                    }
                )
    return found


def _measure(datasource, queries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """The store's figures summed over the first screen and over everything on open, and under ``graphs`` the
    series each graph on open draws (the series its queries return), by title, and under ``first_fetched`` the
    series each first-screen panel fetches."""
    from dashgen.live.cost import stats_from_answer

    sums = {part: dict.fromkeys(FIGURES, 0) for part in ("first", "open")}
    graphs: dict[str, int] = {}
    first_fetched: dict[str, int] = {}
    for query in queries:
        step = query["step"] if query["kind"] == "range" else 0.0
        result, answer = datasource.query_with_stats(query["expr"], query["start"], query["end"], step, 300)
        stats = stats_from_answer(answer)
        figures = {
            "series_fetched": stats.series_fetched or 0,
            "samples_scanned": stats.samples_scanned or 0,
            "series_returned": result.series,
            "bytes_returned": len(json.dumps(answer.get("data"), separators=(",", ":"))),
        }
        for part in ("first", "open") if query["first"] else ("open",):
            for name, value in figures.items():
                sums[part][name] += value
        if query["first"]:
            first_fetched[query["title"]] = first_fetched.get(query["title"], 0) + figures["series_fetched"]
        if query["graph"] is not None:
            graphs[query["graph"]] = graphs.get(query["graph"], 0) + result.series
    return {**sums, "graphs": graphs, "first_fetched": first_fetched}


_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}


def _selectors(expr: str) -> set[str]:
    """The series selectors ``expr`` reads, without their offset or ``@``: ``{__name__="x", a="b"}``."""
    import promql_parser as pp

    from dashgen.lint.promql import walk

    found = set()
    for node, _ in walk(pp.parse(expr)):
        if isinstance(node, pp.VectorSelector):
            matchers = [f"{m.name}{_OPS[str(m.op)]}{json.dumps(m.value)}" for m in node.matchers.matchers]
            if node.name:
                matchers.insert(0, f"__name__={json.dumps(node.name)}")
            found.add("{" + ", ".join(sorted(matchers)) + "}")
    return found


def distinct_series(url: str, queries: list[dict[str, Any]], lookback: float) -> int:
    """How many distinct series the queries' selectors match between the earliest start less ``lookback`` (range
    windows and offsets reach back) and the latest end: what reading every series once would fetch."""
    import requests

    selectors = sorted(set().union(*(_selectors(q["expr"]) for q in queries))) if queries else []
    start = min(q["start"] for q in queries) - lookback if queries else 0
    end = max(q["end"] for q in queries) if queries else 0
    keys: set[tuple[tuple[str, str], ...]] = set()
    for selector in selectors:
        answer = requests.post(
            f"{url}/api/v1/series", data={"match[]": selector, "start": start, "end": end}, timeout=300
        ).json()
        keys.update(tuple(sorted(series.items())) for series in answer.get("data") or [])
    return len(keys)


def _import(datasource, profile, documents: list[dict[str, Any]], end: float) -> int:
    """The demo series of ``profile`` that dashgen's dashboard and rules read, and those the peer reads."""
    from dashgen.demo.collector_series import collector_series
    from dashgen.demo.incidents import apply
    from dashgen.demo.run import demo_plan
    from dashgen.demo.series import generate
    from dashgen.demo.wanted import add_rule_expressions, resolve, wanted_from_dashboards
    from dashgen.rules.render import rule_groups_data

    wanted = wanted_from_dashboards(documents)
    add_rule_expressions(wanted, rule_groups_data(profile))
    models, _unknown = resolve(wanted, set(profile.labels.values()))
    plan = demo_plan(profile, "healthy", end, HOURS, SPACING)
    return datasource.import_series(apply(plan, chain(generate(plan, models), collector_series(plan))))


def _at_range(document: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``document`` opening at ``other``'s default time range."""
    return {**document, "time": {**document.get("time", {}), "from": other.get("time", {}).get("from", "now-1h")}}


def measure_size(gpus: int, end: float) -> dict[str, Any]:
    from bench.dashboard_load import open_cost, variant_profile
    from dashgen.build import build_profile
    from dashgen.demo import recorder, vmlauncher
    from dashgen.live.datasource import Datasource

    profile = variant_profile(gpus)
    dashgen_doc = build_profile(profile)[0].document
    peer_doc = json.loads(PEER.read_text(encoding="utf-8"))
    server = vmlauncher.start()
    began = time.perf_counter()
    try:
        datasource = Datasource(server.url, timeout=300)
        series = _import(datasource, profile, [dashgen_doc, peer_doc], end)
        datasource.flush()
        recorder.replay_for_dashboards(server.url, [profile], end - HOURS * 3600, end)
        datasource.flush()
        loaded = time.perf_counter() - began

        def label_values(match: str, label: str) -> list[str]:
            return datasource.label_values(label, [match], end - HOURS * 3600, end)

        ours = _queries(dashgen_doc, end, label_values)
        figures = {
            "dashgen": _measure(datasource, ours),
            "dcgm-exporter": _measure(datasource, _queries(peer_doc, end, label_values)),
            "dashgen at the peer's range": _measure(
                datasource, _queries(_at_range(dashgen_doc, peer_doc), end, label_values)
            ),
        }
        first = [q for q in ours if q["first"]]
        figures["dashgen"]["first"]["series_distinct"] = distinct_series(
            server.url, first, _default_seconds(dashgen_doc)
        )
        cost = open_cost(datasource, profile, dashgen_doc, end)
    finally:
        server.stop()
    seconds = {"store": round(loaded, 1), "queries": round(time.perf_counter() - began - loaded, 1)}
    return {"gpus": gpus, "series_stored": series, "figures": figures, "cost": cost, "seconds": seconds}


def _verdict(value: float, target: float, note: str) -> str:
    return f"{note}: {'met' if value <= target else 'missed'}"


def profile_name(gpus: int) -> str:
    from bench.dashboard_load import variant_profile

    return variant_profile(gpus).name


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def run() -> BenchResult:
    result = BenchResult("tsdb")
    end = time.time() // 60 * 60
    details = {}
    for gpus in SIZES:
        measured = measure_size(gpus, end)
        details[str(gpus)] = measured
        ours, peer = measured["figures"]["dashgen"], measured["figures"]["dcgm-exporter"]
        for part, label in (("first", "first screen"), ("open", "on open")):
            for name in FIGURES:
                result.add(Row("tsdb", f"{gpus} GPUs: {label}, {name.replace('_', ' ')}", "count", [ours[part][name]]))
                result.add(
                    Row(
                        "tsdb",
                        f"{gpus} GPUs: dcgm-exporter {label}, {name.replace('_', ' ')}",
                        "count",
                        [peer[part][name]],
                    )
                )
        first = ours["first"]
        same_range = measured["figures"]["dashgen at the peer's range"]
        checks: tuple[tuple[str, float | None, float | None, str], ...] = (
            (
                "first screen: series fetched / series returned",
                _ratio(first["series_fetched"], first["series_returned"]),
                3,
                "target <= 3",
            ),
            (
                "first screen: series fetched / distinct series read",
                _ratio(first["series_fetched"], first.get("series_distinct", 0)),
                None,
                "each series read once: 1 (a healthy store returns almost nothing: the ratio above is no floor)",
            ),
            (
                "first screen samples / dcgm-exporter first screen",
                _ratio(first["samples_scanned"], peer["first"]["samples_scanned"]),
                1,
                "target <= 1",
            ),
            (
                "on open samples / dcgm-exporter whole dashboard",
                _ratio(ours["open"]["samples_scanned"], peer["open"]["samples_scanned"]),
                2,
                "target <= 2 (dashgen at its 1 h default range, dcgm-exporter at its 15 min)",
            ),
            (
                "on open samples at the dcgm-exporter range / dcgm-exporter whole dashboard",
                _ratio(same_range["open"]["samples_scanned"], peer["open"]["samples_scanned"]),
                None,
                "both at the dcgm-exporter dashboard's default range: the part of the ratio above that is the range",
            ),
            (
                "on open bytes / dcgm-exporter whole dashboard",
                _ratio(ours["open"]["bytes_returned"], peer["open"]["bytes_returned"]),
                None,
                "",
            ),
        )
        for case, value, target, note in checks:
            if value is not None:
                shown = _verdict(value, target, note) if target is not None else note
                result.add(Row("tsdb", f"{gpus} GPUs: {case}", "ratio", [value], note=shown))
        graphs = ours["graphs"]
        widest = max(graphs.items(), key=lambda item: item[1], default=("", 0))
        over = sorted((title for title, n in graphs.items() if n > GRAPH_SERIES_TARGET), key=lambda t: -graphs[t])
        result.add(
            Row(
                "tsdb",
                f"{gpus} GPUs: most series one graph on open draws",
                "count",
                [float(widest[1])],
                note=_verdict(widest[1], GRAPH_SERIES_TARGET, f"{widest[0]}; target <= {GRAPH_SERIES_TARGET}")
                + (f"; {len(over)} graphs over it: {', '.join(over[:3])}" if over else "; every graph within it"),
            )
        )
        cost = measured["cost"]
        result.add(
            Row(
                "tsdb",
                f"{gpus} GPUs: dashgen cost budgets",
                "count",
                [float(len(cost.get("over_budget", [])))],
                note=f"{profile_name(gpus)}, every panel (collapsed rows included): "
                + ("; ".join(cost.get("over_budget", [])[:3]) or "every panel and the total on open within budget"),
            )
        )
        seconds = measured["seconds"]
        result.add(
            Row(
                "tsdb",
                f"{gpus} GPUs: time to build the store and measure",
                "s",
                [seconds["store"] + seconds["queries"]],
                note=f"store {seconds['store']:g} s (generate, import, replay the rules), "
                f"queries {seconds['queries']:g} s",
            )
        )
    result.details = details
    return result
